/**
 * `claw mcp doctor`: local setup problems in a saved definition found without connecting
 * (a stdio command that does not resolve, a missing cwd, literal credentials, a disabled
 * server), plus, with --probe, a live connection to prove the server starts.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { tryResolve } from './describe.js';
import { isEnvReference, isSensitiveName } from './redact.js';
import type { ServerDef } from './registry-config.js';

export interface DoctorIssue {
  level: 'error' | 'warning' | 'info';
  message: string;
}

export interface DoctorEntry {
  name: string;
  ok: boolean;
  issues: DoctorIssue[];
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * As the spawn will find it: a path relative to the server's cwd, else on the host's PATH (a
 * server's own env cannot set PATH: the runtime drops it for start-up safety).
 */
export async function commandResolves(
  command: string,
  cwd: string | undefined,
  pathVar: string | undefined,
): Promise<boolean> {
  const base = cwd ?? process.cwd();
  if (command.includes('/')) return isExecutableFile(resolve(base, command));
  for (const entry of (pathVar ?? '').split(delimiter)) {
    const dir = entry.trim() || '.';
    if (await isExecutableFile(join(isAbsolute(dir) ? dir : resolve(base, dir), command))) return true;
  }
  return false;
}

/**
 * The static checks of one server. `raw` is the definition as written (a `${VAR}` header is
 * not a literal secret), `resolved` with references substituted (what would be spawned).
 */
export async function staticIssues(
  name: string,
  raw: ServerDef,
  resolved: ServerDef,
  host: { path: string | undefined; workspaceDir: string },
): Promise<DoctorIssue[]> {
  const issues: DoctorIssue[] = [];
  const enabled = raw.enabled !== false;
  if (!enabled) issues.push({ level: 'warning', message: 'server is disabled' });
  const server = tryResolve(name, resolved);
  if (enabled && 'error' in server)
    issues.push({ level: 'error', message: `server transport is invalid: ${server.error}` });
  if (enabled && 'transport' in server && server.transport === 'stdio') {
    // A server without a cwd starts in the agent workspace (connect.ts), when there is one.
    const cwd = server.cwd ?? ((await isDirectory(host.workspaceDir)) ? host.workspaceDir : undefined);
    if (!(await commandResolves(server.command, cwd, host.path)))
      issues.push({ level: 'error', message: `stdio command not found or not executable: ${server.command}` });
    if (server.cwd && !(await isDirectory(server.cwd)))
      issues.push({ level: 'error', message: `stdio cwd does not exist: ${server.cwd}` });
  }
  for (const field of ['headers', 'env'] as const) {
    const values = raw[field];
    if (!values || typeof values !== 'object') continue;
    for (const [key, value] of Object.entries(values))
      if (isSensitiveName(key) && typeof value === 'string' && value.trim() && !isEnvReference(value))
        issues.push({
          level: 'warning',
          message: `${field}.${key} holds a literal secret; prefer a \${VAR} reference to an environment variable`,
        });
  }
  const filter = raw.toolFilter as Record<string, unknown> | undefined;
  if (filter && typeof filter === 'object' && !Array.isArray(filter.include) && !Array.isArray(filter.exclude))
    issues.push({ level: 'warning', message: 'toolFilter is present but has no include or exclude list' });
  return issues;
}
