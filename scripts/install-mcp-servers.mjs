#!/usr/bin/env node
// Installs the real MCP servers the tests and the bench run (npm packages, pinned), inside the
// repository so nothing global changes:
//
//   .cache/mcp-servers/node_modules/@modelcontextprotocol/server-everything
//   .cache/mcp-servers/node_modules/@modelcontextprotocol/server-filesystem
//
// Idempotent: when both packages are there at the pinned versions this exits at once.
//   node scripts/install-mcp-servers.mjs [--force] [--quiet]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVERS = {
  '@modelcontextprotocol/server-everything': '2026.8.31',
  '@modelcontextprotocol/server-filesystem': '2026.8.31',
};

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const prefix = join(repo, '.cache', 'mcp-servers');
const args = new Set(process.argv.slice(2));
const quiet = args.has('--quiet');

function say(message) {
  if (!quiet) console.log(`install-mcp-servers: ${message}`);
}

function installedVersion(name) {
  try {
    return JSON.parse(readFileSync(join(prefix, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

const missing = Object.entries(SERVERS).filter(([name, version]) => installedVersion(name) !== version);
if (missing.length === 0 && !args.has('--force')) {
  say('already installed');
  process.exit(0);
}
if (args.has('--force')) rmSync(join(prefix, 'node_modules'), { recursive: true, force: true });
mkdirSync(prefix, { recursive: true });
const manifest = join(prefix, 'package.json');
if (!existsSync(manifest))
  writeFileSync(manifest, `${JSON.stringify({ name: 'claw-test-mcp-servers', private: true }, null, 2)}\n`);
const specs = Object.entries(SERVERS).map(([name, version]) => `${name}@${version}`);
say(`installing ${specs.join(', ')} into ${prefix}`);
const result = spawnSync(
  'npm',
  ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--omit=dev', '--save-exact', ...specs],
  { encoding: 'utf8', stdio: quiet ? 'pipe' : 'inherit', shell: process.platform === 'win32' },
);
if (result.status !== 0) {
  console.error(`install-mcp-servers: npm install failed${result.stderr ? `:\n${result.stderr}` : ''}`);
  process.exit(1);
}
for (const [name, version] of Object.entries(SERVERS)) {
  if (installedVersion(name) !== version) {
    console.error(`install-mcp-servers: ${name}@${version} is not in ${prefix} after npm install`);
    process.exit(1);
  }
}
say('done');
