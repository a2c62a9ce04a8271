// After tsc: give dist/plugins/<id>/ its manifest (entry rewritten from .ts to the emitted
// .js) and every non-TypeScript file, so dist/ runs without any source next to it.
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import JSON5 from 'json5';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'plugins');
const target = join(root, 'dist', 'plugins');

for (const id of readdirSync(source)) {
  const dir = join(source, id);
  if (!statSync(dir).isDirectory()) continue;
  const out = join(target, id);
  mkdirSync(out, { recursive: true });
  cpSync(dir, out, {
    recursive: true,
    filter: (path) => statSync(path).isDirectory() || !/\.(m|c)?ts$/.test(path) || path.endsWith('.d.ts'),
  });
  const manifestPath = join(dir, 'openclaw.plugin.json');
  const manifest = JSON5.parse(readFileSync(manifestPath, 'utf8'));
  if (typeof manifest.entry === 'string') manifest.entry = manifest.entry.replace(/\.(m|c)?ts$/, (ext) => ext.replace('ts', 'js'));
  writeFileSync(join(out, 'openclaw.plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

chmodSync(join(root, 'dist', 'apps', 'cli', 'bin.js'), 0o755);
