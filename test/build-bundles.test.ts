/**
 * The build's plugin bundles (scripts/bundle-plugins.mjs): each bundled plugin's entry is one
 * module holding the plugin's own code, and everything it shares with the rest of claw (the
 * SDK) is imported from the one place every plugin and the CLI import it from.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claw, REPO, tempDir } from './helpers.js';

const DIST = join(REPO, 'dist');
const PLUGINS = join(DIST, 'plugins');

/** The relative specifiers a built module imports, statically or dynamically. */
function relativeImports(file: string): string[] {
  const code = readFileSync(file, 'utf8');
  const found = new Set<string>();
  for (const match of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g))
    found.add(match[1]!);
  return [...found];
}

/** An entry and every chunk it reaches, following relative imports inside the plugin's folder. */
function reached(entry: string, dir: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of relativeImports(file)) {
      const target = resolve(dirname(file), spec);
      if (target.startsWith(dir + sep)) visit(target);
    }
  };
  visit(entry);
  return seen;
}

const plugins = readdirSync(PLUGINS)
  .filter((id) => statSync(join(PLUGINS, id)).isDirectory())
  .map((id) => {
    const dir = join(PLUGINS, id);
    const manifest = JSON.parse(readFileSync(join(dir, 'openclaw.plugin.json'), 'utf8')) as { entry?: string };
    return { id, dir, entry: manifest.entry ? resolve(dir, manifest.entry) : undefined };
  })
  .filter((plugin): plugin is { id: string; dir: string; entry: string } => plugin.entry !== undefined);

describe('built plugin bundles', () => {
  it('covers every bundled plugin', () => {
    expect(plugins.length).toBeGreaterThanOrEqual(40);
  });

  it('loads a plugin from its entry and chunks beside it, and shared code from dist/sdk only', () => {
    const problems: string[] = [];
    for (const { id, dir, entry } of plugins) {
      for (const file of reached(entry, dir)) {
        if (file !== entry && !/[\\/]chunk-[A-Z0-9]+\.js$/.test(file))
          problems.push(`${id}: loads ${relative(dir, file)}`);
        if (dirname(file) !== dirname(entry)) problems.push(`${id}: ${relative(dir, file)} is not beside the entry`);
        if (!existsSync(file)) problems.push(`${id}: ${relative(dir, file)} is missing`);
        for (const spec of relativeImports(file)) {
          const target = resolve(dirname(file), spec);
          if (target.startsWith(dir + sep)) continue;
          if (!target.startsWith(join(DIST, 'sdk') + sep)) problems.push(`${id}: imports ${relative(DIST, target)}`);
          else if (!existsSync(target)) problems.push(`${id}: imports missing ${relative(DIST, target)}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('keeps no copy of SDK code inside a plugin bundle', () => {
    // definePlugin is the SDK's: a bundle that inlined the SDK would define it again.
    const copies = plugins.filter(({ dir, entry }) =>
      [...reached(entry, dir)].some((file) => /function definePlugin\(/.test(readFileSync(file, 'utf8'))),
    );
    expect(copies.map(({ id }) => id)).toEqual([]);
  });

  it('starts the gateway from a handful of files instead of one per module', () => {
    const gateway = plugins.find(({ id }) => id === 'gateway')!;
    const atRegister = new Set<string>();
    const visitStatic = (file: string) => {
      if (atRegister.has(file)) return;
      atRegister.add(file);
      const code = readFileSync(file, 'utf8');
      for (const match of code.matchAll(/\bfrom\s*["'](\.\/[^"']+)["']/g))
        visitStatic(resolve(dirname(file), match[1]!));
    };
    visitStatic(gateway.entry);
    // 75 modules before bundling; chunks shared with code loaded later make up the rest.
    expect(atRegister.size).toBeLessThanOrEqual(10);
  });
});

describe('built core and validators', () => {
  it('gives every SDK export a file that re-exports one shared module in dist/core', () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { exports: Record<string, string> };
    for (const [name, target] of Object.entries(pkg.exports)) {
      if (!target.endsWith('.js')) continue;
      const facade = readFileSync(join(REPO, target), 'utf8');
      expect(facade, name).toMatch(/^export \* from "(\.\.\/)+core\/[\w.-]+\.js";$/m);
    }
    // The modules bundled away are gone: none can be loaded a second time by path.
    expect(existsSync(join(DIST, 'kernel', 'kernel.js'))).toBe(false);
    expect(existsSync(join(DIST, 'host', 'policy.js'))).toBe(false);
  });

  it('records, for each bundled schema, exactly what its validator makes of {}', () => {
    const require = createRequire(import.meta.url);
    const empty = require(join(DIST, 'validators', 'empty.json')) as Record<string, unknown>;
    expect(Object.keys(empty).length).toBeGreaterThan(10);
    for (const [key, expected] of Object.entries(empty)) {
      const validate = require(join(DIST, 'validators', `${key}.cjs`)) as (data: unknown) => boolean;
      const data = {};
      expect(validate(data), key).toBe(true);
      expect(data, key).toEqual(expected);
    }
  });

  it('still checks a configured section with its validator', async () => {
    const home = tempDir('claw-validators-');
    const dir = join(home, '.openclaw');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(dir, 'openclaw.json'),
      JSON.stringify({ gateway: { port: 'nope' }, cron: { maxConcurrentRuns: 'x' } }),
    );
    const result = await claw(['config', 'validate'], { HOME: home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('gateway.port: must be integer');
    expect(result.stderr).toContain('cron.maxConcurrentRuns: must be integer');
  });
});
