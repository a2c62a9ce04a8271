/**
 * The real `openclaw` CLI (npm openclaw, installed into .cache/openclaw by
 * scripts/install-openclaw.mjs under the private Node 24 of scripts/install-qmd.mjs), run
 * the way test/openclaw-compat.test.ts runs it: a fresh HOME and state dir of its own, no
 * colour, and npm kept offline so nothing it does can reach the registry.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, tempDir } from './helpers.js';

export const OPENCLAW = join(REPO, '.cache', 'openclaw', 'node_modules', 'openclaw', 'openclaw.mjs');
const NODE_DIR = join(REPO, '.cache', 'qmd-node', 'node_modules');

export function openclawNode(): string {
  const dir = existsSync(NODE_DIR) ? readdirSync(NODE_DIR).find((name) => name.startsWith('node-')) : undefined;
  const binary = dir && join(NODE_DIR, dir, 'bin', 'node');
  if (!binary || !existsSync(binary) || !existsSync(OPENCLAW)) {
    throw new Error(
      'OpenClaw is not installed for the compatibility suite: ' +
        'run node scripts/install-qmd.mjs && node scripts/install-openclaw.mjs (npm test does)',
    );
  }
  return binary;
}

export interface OpenclawRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `openclaw <args>` with `config` as its openclaw.json (0600 in a 0700 state dir). */
export function runOpenclaw(args: string[], config: unknown, timeoutMs = 120_000): Promise<OpenclawRun> {
  const home = tempDir('openclaw-home-');
  const stateDir = join(home, '.openclaw');
  mkdirSync(stateDir, { mode: 0o700 });
  chmodSync(stateDir, 0o700);
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2), { mode: 0o600 });
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    OPENCLAW_STATE_DIR: stateDir,
    NO_COLOR: '1',
    TERM: 'dumb',
    npm_config_offline: 'true',
    npm_config_cache: join(home, '.npm'),
  };
  return new Promise((resolve, reject) => {
    const child = spawn(openclawNode(), [OPENCLAW, ...args], { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // A safety net for a hung child, not a wait: the test waits for its exit.
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
