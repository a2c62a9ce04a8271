// After tsc: the CLI, kernel, host and SDK (dist/apps/cli, kernel, host, sdk) become a few ES
// modules in dist/core, because on Node 20 the ES module loader spends about 0.3 ms on every
// file it resolves, reads and links, and `claw gateway` went through ~130 of them before it
// could boot a kernel.
//
// One build with code splitting, so each module exists once in the output whatever imports it.
// Every path something outside this code loads by name keeps a file: the CLI's main.js (bin.cjs
// imports it), the SDK's public entries (plugins, bundled and installed, import them), the
// OpenClaw plugin-sdk shims, and what the compiled tests and benchmarks import. Each of those
// files becomes a one-line facade that re-exports its module from dist/core, and every other
// compiled module is deleted: nothing can load a second copy of kernel or SDK state by path.
//
// Modules find files next to themselves through import.meta.url (validators, plugins, the
// package root), and their code now runs from dist/core: each use is rewritten to the URL the
// module had before, so every such path still resolves where it did.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { build } from 'esbuild';

const CORE_DIRS = ['apps/cli', 'kernel', 'host', 'sdk'];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

const posix = (path) => path.split(sep).join('/');
const dotted = (path) => (path.startsWith('.') ? path : `./${path}`);

/** Bundles the core of `dist` into dist/core; returns the module and file counts. */
export async function bundleCore(dist, packageJson) {
  const coreDirs = CORE_DIRS.map((dir) => join(dist, dir));
  const inCore = (path) => coreDirs.some((dir) => path.startsWith(dir + sep)) && path.endsWith('.js');
  const modules = coreDirs.flatMap((dir) => walk(dir)).filter(inCore);

  const entries = new Set([join(dist, 'apps/cli/main.js')]);
  for (const target of Object.values(packageJson.exports ?? {}))
    if (typeof target === 'string' && target.startsWith('./dist/') && target.endsWith('.js'))
      entries.add(resolve(dist, '..', target));
  for (const file of walk(join(dist, 'host/openclaw/plugin-sdk'))) if (file.endsWith('.js')) entries.add(file);
  // What the compiled tests and benchmarks (dist/test) import from the core.
  for (const file of walk(join(dist, 'test')).filter((path) => path.endsWith('.js'))) {
    const code = readFileSync(file, 'utf8');
    for (const match of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
      const target = resolve(dirname(file), match[1]);
      if (inCore(target)) entries.add(target);
    }
  }

  const outdir = join(dist, 'core');
  const names = new Map(
    [...entries].map((file) => [file, posix(relative(dist, file)).replace(/\.js$/, '').replace(/\//g, '_')]),
  );
  const result = await build({
    entryPoints: Object.fromEntries([...names].map(([file, name]) => [name, file])),
    outdir,
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    metafile: true,
    logLevel: 'warning',
    plugins: [
      {
        name: 'import-meta-url-where-it-was',
        setup(b) {
          b.onLoad({ filter: /\.js$/ }, (args) => {
            const code = readFileSync(args.path, 'utf8');
            if (!code.includes('import.meta.url')) return undefined;
            const was = JSON.stringify(dotted(posix(relative(outdir, args.path))));
            return {
              contents: code.replaceAll('import.meta.url', `new URL(${was}, import.meta.url).href`),
              loader: 'js',
            };
          });
        },
      },
    ],
  });

  const bundled = new Set(Object.keys(result.metafile.inputs).map((file) => resolve(file)));
  const outside = [...bundled].filter((file) => !inCore(file));
  if (outside.length > 0) throw new Error(`the core bundle reached files outside the core: ${outside.join(', ')}`);
  for (const file of modules) if (!entries.has(file)) rmSync(file);
  for (const [file, name] of names) {
    const output = Object.entries(result.metafile.outputs).find(
      ([, meta]) => meta.entryPoint && resolve(meta.entryPoint) === file,
    );
    const target = JSON.stringify(dotted(posix(relative(dirname(file), join(outdir, `${name}.js`)))));
    const exports = output?.[1].exports ?? [];
    const lines = [`export * from ${target};`];
    if (exports.includes('default')) lines.push(`export { default } from ${target};`);
    writeFileSync(file, `${lines.join('\n')}\n`);
  }
  return { modules: bundled.size, entries: entries.size, files: Object.keys(result.metafile.outputs).length };
}
