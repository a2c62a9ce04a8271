#!/usr/bin/env node
// Builds the browser app (WebChat + Control UI) into apps/web/dist:
//   index.html, assets/app-<hash>.js, assets/styles-<hash>.css, the chunks the app loads on demand
//   (e.g. the QR code drawer of the setup view), and bundle.json listing them
// (the channel-webchat plugin serves exactly the files bundle.json lists). The same sources
// give the same bytes: esbuild is deterministic and nothing here writes a date.
//
//   node apps/web/build.mjs                 build once (about 50 ms)
//   node apps/web/build.mjs --out <dir>     somewhere else
//   node apps/web/build.mjs --watch         rebuild on change (a running gateway picks it up)
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const outIndex = args.indexOf('--out');
const out = resolve(outIndex >= 0 ? args[outIndex + 1] : join(here, 'dist'));
const watch = args.includes('--watch');

/** index.html and bundle.json, from what esbuild wrote. */
function writePage(metafile) {
  const outputs = Object.entries(metafile.outputs).map(([path, info]) => ({
    path: relative(out, resolve(path)).split('\\').join('/'),
    entry: info.entryPoint,
  }));
  // Chunks loaded by import() have an entry point too: pick the page's two by name.
  const find = (name, ext) =>
    outputs.find((output) => output.path.startsWith(`assets/${name}-`) && output.path.endsWith(ext))?.path;
  const js = find('app', '.js');
  const css = find('styles', '.css');
  if (!js || !css) throw new Error('esbuild produced no app bundle');
  const html = readFileSync(join(here, 'src', 'index.html'), 'utf8')
    .replace('%JS%', js)
    .replace('%CSS%', css);
  writeFileSync(join(out, 'index.html'), html);
  const files = ['index.html', ...outputs.map((output) => output.path)].sort();
  writeFileSync(join(out, 'bundle.json'), `${JSON.stringify({ files }, null, 2)}\n`);
  return files;
}

// Only what this build writes is replaced: `out` may be a folder others write into too.
mkdirSync(out, { recursive: true });
const started = Date.now();
const ctx = await context({
  entryPoints: { app: join(here, 'src', 'main.ts'), styles: join(here, 'src', 'styles.css') },
  outdir: join(out, 'assets'),
  entryNames: '[name]-[hash]',
  bundle: true,
  format: 'esm',
  splitting: true,
  platform: 'browser',
  target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
  minify: true,
  legalComments: 'none',
  charset: 'utf8',
  metafile: true,
  logLevel: 'warning',
  tsconfig: join(here, 'tsconfig.json'),
  plugins: [
    {
      name: 'page',
      setup(build) {
        build.onStart(() => {
          // Hashed names change with content: drop the previous build's files.
          rmSync(join(out, 'assets'), { recursive: true, force: true });
        });
        build.onEnd((result) => {
          if (result.errors.length || !result.metafile) return;
          const files = writePage(result.metafile);
          if (watch) console.log(`web app rebuilt: ${files.join(', ')}`);
        });
      },
    },
  ],
});

if (watch) {
  await ctx.watch();
  console.log(`watching apps/web/src → ${relative(process.cwd(), out) || '.'}`);
} else {
  const result = await ctx.rebuild().catch(() => undefined);
  await ctx.dispose();
  if (!result || result.errors.length) process.exit(1);
  console.log(`web app built in ${Date.now() - started} ms → ${relative(process.cwd(), out) || '.'}`);
}
