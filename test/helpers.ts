/** Shared helpers: temporary directories, plugin folders written on the fly, and running the built CLI. */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(REPO, 'dist', 'apps', 'cli', 'bin.cjs');

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test file finishes. */
export function tempDir(prefix = 'claw-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export interface PluginFiles {
  manifest: Record<string, unknown> | string;
  /** Entry module source; written to `entryFile`. */
  code?: string;
  entryFile?: string;
  files?: Record<string, string>;
}

/** Write a plugin folder; `manifest` may be an object or raw text (for broken-manifest tests). */
export function writePlugin(dir: string, plugin: PluginFiles): string {
  mkdirSync(dir, { recursive: true });
  const manifest = typeof plugin.manifest === 'string' ? plugin.manifest : JSON.stringify(plugin.manifest, null, 2);
  writeFileSync(join(dir, 'openclaw.plugin.json'), manifest);
  if (plugin.code !== undefined) {
    const entry = join(dir, plugin.entryFile ?? 'index.js');
    mkdirSync(dirname(entry), { recursive: true });
    writeFileSync(entry, plugin.code);
  }
  for (const [name, content] of Object.entries(plugin.files ?? {})) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

export const EMPTY_SCHEMA = { type: 'object', additionalProperties: false, properties: {} };

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the built `claw` with an isolated state dir. */
export function claw(args: string[], env: Record<string, string | undefined> = {}, cwd = REPO): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
