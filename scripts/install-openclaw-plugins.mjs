#!/usr/bin/env node
// Fetches the OpenClaw community plugins the compatibility tests install (test/openclaw-plugins.test.ts)
// as npm tarballs into .cache/openclaw-plugins/, so the tests themselves need no network:
// they run `claw plugins install <tarball>` like a user would with the npm spec.
//
// Idempotent: a tarball already there is kept.
//   node scripts/install-openclaw-plugins.mjs [--force] [--quiet]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Pinned: a test asserts what these versions register. */
export const OPENCLAW_PLUGIN_SPECS = ['@ollama/openclaw-web-search@0.2.2', 'jasper-context-compactor@0.4.1'];

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const OPENCLAW_PLUGIN_CACHE = join(repo, '.cache', 'openclaw-plugins');

/** `@scope/name@1.2.3` → `scope-name-1.2.3.tgz`, the file name `npm pack` writes. */
export function tarballName(spec) {
  const at = spec.lastIndexOf('@');
  return `${spec.slice(0, at).replace(/^@/, '').replace('/', '-')}-${spec.slice(at + 1)}.tgz`;
}

function main() {
  const args = new Set(process.argv.slice(2));
  const say = (message) => args.has('--quiet') || console.log(`install-openclaw-plugins: ${message}`);
  mkdirSync(OPENCLAW_PLUGIN_CACHE, { recursive: true });
  for (const spec of OPENCLAW_PLUGIN_SPECS) {
    const file = join(OPENCLAW_PLUGIN_CACHE, tarballName(spec));
    if (existsSync(file) && !args.has('--force')) continue;
    // Packed into a private folder first and renamed, so a cut-off run leaves no half tarball.
    const staging = join(OPENCLAW_PLUGIN_CACHE, `.staging-${process.pid}`);
    mkdirSync(staging, { recursive: true });
    try {
      const result = spawnSync('npm', ['pack', spec, '--pack-destination', staging, '--loglevel=error'], {
        encoding: 'utf8',
      });
      if (result.status !== 0)
        throw new Error(`npm pack ${spec} failed: ${(result.stderr || result.stdout || String(result.error)).trim()}`);
      renameSync(join(staging, tarballName(spec)), file);
      say(`fetched ${spec}`);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (error) {
    console.error(`install-openclaw-plugins: ${error.message}`);
    process.exit(1);
  }
}
