import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sources(path);
    return /\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Relative import targets of a file, resolved to repository-relative paths. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g)].map((match) => match[1]!);
  return specs.filter((spec) => spec.startsWith('.')).map((spec) => relative(REPO, resolve(dirname(file), spec)));
}

describe('dependency direction: apps → plugins → sdk → kernel', () => {
  it('kernel/ imports nothing from plugins/, sdk/ or apps/', () => {
    const offenders = sources(join(REPO, 'kernel')).flatMap((file) =>
      imports(file)
        .filter((target) => /^(plugins|apps|sdk)\//.test(target))
        .map((target) => `${relative(REPO, file)} → ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  it('sdk/ imports nothing from plugins/ or apps/', () => {
    const offenders = sources(join(REPO, 'sdk')).flatMap((file) =>
      imports(file)
        .filter((target) => /^(plugins|apps)\//.test(target))
        .map((target) => `${relative(REPO, file)} → ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  it('a plugin imports no other plugin and nothing from apps/', () => {
    const offenders: string[] = [];
    for (const plugin of readdirSync(join(REPO, 'plugins'))) {
      for (const file of sources(join(REPO, 'plugins', plugin))) {
        for (const target of imports(file)) {
          const otherPlugin = target.startsWith('plugins/') && !target.startsWith(`plugins/${plugin}/`);
          if (otherPlugin || target.startsWith('apps/')) offenders.push(`${relative(REPO, file)} → ${target}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the runtime kernel never imports TypeBox (schemas are generated at build time)', () => {
    const offenders = sources(join(REPO, 'kernel'))
      .filter((file) => !/schema\.ts$/.test(file))
      .filter((file) => /from\s+['"]typebox['"]/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(REPO, file));
    expect(offenders).toEqual([]);
    // The TypeBox sources themselves are only ever imported for their types.
    const valueImports = sources(join(REPO, 'kernel'))
      .filter((file) => /^\s*import\s+(?!type\b)[^;]*from\s+['"][^'"]*\/(schema|manifest-schema)\.js['"]/m.test(readFileSync(file, 'utf8')))
      .map((file) => relative(REPO, file));
    expect(valueImports).toEqual([]);
  });
});

/** Import circles among the files under `dir` (type-only imports count), each as a list of files. */
function circles(dir: string): string[][] {
  const files = sources(join(REPO, dir)).map((file) => relative(REPO, file));
  const known = new Set(files);
  const edges = new Map(files.map((file) => [file, imports(join(REPO, file)).map((target) => target.replace(/\.js$/, '.ts')).filter((target) => known.has(target))]));
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const target of edges.get(file)!) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (stack.includes(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || edges.get(file)!.includes(file)) found.push(component.sort());
    }
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return found;
}

describe('no import circles', () => {
  it.each(['kernel', 'plugins/channels'])('in %s/', (dir) => {
    expect(circles(dir)).toEqual([]);
  });
});

describe('plugin management lives in the CLI app', () => {
  it('kernel/ holds no install, uninstall, enable or disable code', () => {
    const files = sources(join(REPO, 'kernel')).map((file) => relative(REPO, file));
    expect(files.filter((file) => /plugin-host\/(install|manage|describe)\.ts$/.test(file))).toEqual([]);
    const kernelIndex = readFileSync(join(REPO, 'kernel', 'index.ts'), 'utf8');
    for (const name of ['installPlugin', 'enablePlugin', 'disablePlugin', 'forgetPlugin', 'PluginManageError']) {
      expect(kernelIndex).not.toContain(name);
    }
  });
});
