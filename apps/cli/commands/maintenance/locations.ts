/**
 * Where this installation's files are, for backup, reset and uninstall: the state dir, the
 * config file, credentials, and the agents' workspaces and state folders. Read from the
 * config file as written (no kernel boot), so a broken config does not stand in the way of
 * backing up or resetting it.
 */
import { dirname, join, resolve } from 'node:path';
import { readConfigFile } from '../../../../kernel/config/store.js';
import { expandHome, resolveConfigPath, resolveStateDir, resolveUserPath } from '../../../../kernel/config/paths.js';
import { isInside } from '../../../../kernel/util/paths.js';
import { gatewayLockPath, type GatewayLockInfo } from '../../../../sdk/cli.js';
import { lockHolderAlive, readLockFile } from '../../../../sdk/file-lock.js';

export interface Locations {
  stateDir: string;
  configPath: string;
  /** Agent workspaces (the default one and each agents.list[].workspace), absolute. */
  workspaces: string[];
  /** Agents' state folders (auth profiles) configured outside the state dir. */
  agentDirs: string[];
  credentialsDir: string;
}

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

export function locations(env: Record<string, string | undefined>): Locations {
  const stateDir = resolveStateDir(env);
  const configPath = resolveConfigPath(env);
  const raw = readConfigFile(configPath, env).raw;
  const agents = record(raw.agents);
  const defaults = record(agents.defaults);
  const base = dirname(configPath);
  const workspaces = new Set<string>([
    typeof defaults.workspace === 'string'
      ? resolveUserPath(defaults.workspace, base, env)
      : join(stateDir, 'workspace'),
  ]);
  const agentDirs = new Set<string>();
  for (const entry of Array.isArray(agents.list) ? agents.list.map(record) : []) {
    if (typeof entry.workspace === 'string') workspaces.add(resolve(expandHome(entry.workspace, env)));
    if (typeof entry.agentDir === 'string') agentDirs.add(resolve(expandHome(entry.agentDir, env)));
  }
  return {
    stateDir,
    configPath,
    workspaces: [...workspaces],
    agentDirs: [...agentDirs].filter((dir) => !isInside(stateDir, dir)),
    credentialsDir: join(stateDir, 'credentials'),
  };
}

/** The gateway running for `stateDir`, if one is (its lock names a live process). */
export function runningGateway(stateDir: string): GatewayLockInfo | undefined {
  const lock = readLockFile<GatewayLockInfo>(gatewayLockPath(stateDir));
  return lock && lockHolderAlive(lock) ? lock : undefined;
}
