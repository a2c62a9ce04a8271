// After tsc: each bundled plugin's own modules become one ES module per entry point (its
// manifest entry; code it imports on demand lands in chunks beside it), because on Node 20 the
// ES module loader spends about 0.3 ms on every file it resolves, reads and links, and the
// gateway alone was 75 files before it could listen.
//
// What stays outside a plugin's bundle is imported exactly as before, so there is still one
// instance of it per process: the SDK, kernel and host (shared with every other plugin and the
// CLI) and npm packages. Every output file sits in the plugin's own folder, at the depth its
// entry had, so paths a module builds from import.meta.url (templates, bundled hooks, generated
// validators) point where they did; the build refuses a plugin whose module below the folder's
// top uses import.meta.url, since that one would move. The per-file modules stay beside the
// bundle, unused by claw itself: the benchmarks import single functions from them.
//
// npm packages stay outside too, loaded from node_modules, except the few a plugin needs to
// start and that are many small CommonJS files: those are bundled in (ws was 10 files and
// 17 ms to require). Their optional native add-ons stay optional.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { build } from 'esbuild';

/** Bundles every plugin folder in `pluginsDir` (dist/plugins) in place; returns the file counts. */
export async function bundlePlugins(pluginsDir) {
  const counts = [];
  for (const id of readdirSync(pluginsDir).sort()) {
    const dir = join(pluginsDir, id);
    if (!statSync(dir).isDirectory()) continue;
    const manifest = JSON.parse(readFileSync(join(dir, 'openclaw.plugin.json'), 'utf8'));
    if (typeof manifest.entry !== 'string') continue;
    counts.push({ id, ...(await bundleOne(dir, resolve(dir, manifest.entry))) });
  }
  return counts;
}

/** Packages bundled into the plugins that import them. */
const BUNDLED_PACKAGES = new Set(['ws']);
/** Optional native speed-ups some of them try to require; absent, they fall back. */
const OPTIONAL_NATIVE = new Set(['bufferutil', 'utf-8-validate']);

const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

async function bundleOne(dir, entry) {
  const inside = (path) => path === dir || path.startsWith(dir + sep);
  const result = await build({
    entryPoints: [entry],
    outdir: dirname(entry),
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    allowOverwrite: true,
    // A bundled CommonJS package requires Node's built-ins; an ES module has no require of its own.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module';\nconst require = __bundleRequire(import.meta.url);",
    },
    metafile: true,
    write: true,
    logLevel: 'warning',
    plugins: [
      {
        name: 'outside-the-plugin-stays-shared',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => {
            if (args.path.startsWith('node:') || OPTIONAL_NATIVE.has(packageName(args.path))) return { external: true };
            // A bundled package's own dependencies come with it; our code's other imports stay outside.
            if (!inside(args.importer) || BUNDLED_PACKAGES.has(packageName(args.path))) return undefined;
            return { external: true };
          });
          b.onResolve({ filter: /^\.\.?\// }, (args) => {
            if (!inside(args.importer)) return undefined; // inside a bundled package
            const target = resolve(args.resolveDir, args.path);
            if (inside(target)) return undefined;
            // Written from the entry's folder, where every output file of this plugin sits.
            const path = relative(dirname(entry), target).split(sep).join('/');
            return { path: path.startsWith('.') ? path : `./${path}`, external: true };
          });
        },
      },
    ],
  });
  const outputs = new Set(Object.keys(result.metafile.outputs).map((file) => resolve(file)));
  const inputs = Object.keys(result.metafile.inputs).map((file) => resolve(file));
  for (const input of inputs) {
    if (inside(input) && dirname(input) !== dirname(entry) && /import\.meta\.url/.test(readFileSync(input, 'utf8')))
      throw new Error(
        `${relative(dir, input)} uses import.meta.url below its plugin's top folder; bundling would move it`,
      );
  }
  return { modules: inputs.length, files: outputs.size };
}
