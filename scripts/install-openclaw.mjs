#!/usr/bin/env node
// Installs OpenClaw's real clients (npm `openclaw`) for the compatibility suite
// (test/openclaw-compat.test.ts), inside the repository so nothing global changes:
//
//   .cache/openclaw/node_modules/openclaw   the package (its CLI, TUI and Control UI files)
//
// OpenClaw needs Node >= 24, so npm runs under the private Node 24 that install-qmd.mjs puts
// in .cache/qmd-node (npm resolves dependency versions against the Node that runs it).
// Idempotent and offline-safe: when the pinned version is present this exits at once.
//   node scripts/install-openclaw.mjs [--force] [--quiet]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const OPENCLAW_VERSION = '2026.9.6';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const prefix = join(repo, '.cache', 'openclaw');
const packageDir = join(prefix, 'node_modules', 'openclaw');
const args = new Set(process.argv.slice(2));
const say = (message) => args.has('--quiet') || console.log(`install-openclaw: ${message}`);

function installedVersion() {
  try {
    return JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

function node24() {
  const base = join(repo, '.cache', 'qmd-node', 'node_modules');
  const dir = existsSync(base) ? readdirSync(base).find((name) => name.startsWith('node-')) : undefined;
  const binary = dir ? join(base, dir, 'bin', 'node') : undefined;
  if (!binary || !existsSync(binary))
    throw new Error(`no Node 24 at ${base}: run node scripts/install-qmd.mjs first (it installs one)`);
  return binary;
}

function npmCli() {
  const candidates = [
    process.env.npm_execpath,
    ...(process.env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, 'npm')),
  ];
  for (const candidate of candidates) {
    if (!candidate || !existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    if (/npm-cli\.js$/.test(real)) return real;
  }
  throw new Error("could not find npm's CLI script (npm-cli.js)");
}

function main() {
  if (!args.has('--force') && installedVersion() === OPENCLAW_VERSION) {
    say(`openclaw ${OPENCLAW_VERSION} is already installed (${packageDir})`);
    return;
  }
  mkdirSync(prefix, { recursive: true });
  const manifest = join(prefix, 'package.json');
  // npm walks up to the nearest package.json; this one keeps it out of the repository's.
  if (!existsSync(manifest))
    writeFileSync(
      manifest,
      `${JSON.stringify({ name: 'claw-openclaw', private: true, description: 'Installed by scripts/install-openclaw.mjs' }, null, 2)}\n`,
    );
  const node = node24();
  // npm run's own package and prefix variables would send the install elsewhere.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(npm_(package|lifecycle)_.*|npm_config_(prefix|local_prefix|global)|INIT_CWD)$/i.test(key),
    ),
  );
  env.PATH = `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`;
  const started = Date.now();
  const result = spawnSync(
    node,
    [
      npmCli(),
      'install',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      '--no-update-notifier',
      '--loglevel=error',
      `openclaw@${OPENCLAW_VERSION}`,
    ],
    {
      cwd: prefix,
      env,
      encoding: 'utf8',
      stdio: args.has('--quiet') ? 'pipe' : 'inherit',
      timeout: 20 * 60_000,
    },
  );
  if (result.status !== 0)
    throw new Error(
      `npm install openclaw@${OPENCLAW_VERSION} failed (exit ${result.status ?? result.signal}); it needs the npm registry\n${(result.stderr ?? '').trim().split('\n').slice(-10).join('\n')}`,
    );
  if (installedVersion() !== OPENCLAW_VERSION)
    throw new Error(`npm finished but ${packageDir} does not hold openclaw ${OPENCLAW_VERSION}`);
  say(`openclaw ${OPENCLAW_VERSION} installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

try {
  main();
} catch (error) {
  console.error(`install-openclaw: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
