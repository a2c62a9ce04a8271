/**
 * Where claw keeps its files. Everything derives from the state dir:
 *   OPENCLAW_STATE_DIR            explicit state dir
 *   OPENCLAW_PROFILE=<name>       ~/.openclaw-<name> (isolated state per profile)
 *   otherwise                     ~/.openclaw
 * OPENCLAW_CONFIG_PATH overrides only the config file location.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export type Env = Record<string, string | undefined>;

const PROFILE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export const resolveHomeDir = (env: Env = process.env): string =>
  env.OPENCLAW_HOME?.trim() || env.HOME?.trim() || homedir();

export function expandHome(path: string, env: Env = process.env): string {
  if (path === '~') return resolveHomeDir(env);
  if (path.startsWith('~/')) return join(resolveHomeDir(env), path.slice(2));
  return path;
}

export function resolveProfile(env: Env = process.env): string | undefined {
  const profile = env.OPENCLAW_PROFILE?.trim();
  if (!profile || profile === 'default') return undefined;
  if (!PROFILE_PATTERN.test(profile)) {
    throw new Error(`OPENCLAW_PROFILE "${profile}" is not a valid profile name (letters, digits, "-" and "_")`);
  }
  return profile;
}

export function resolveStateDir(env: Env = process.env): string {
  const explicit = env.OPENCLAW_STATE_DIR?.trim();
  if (explicit) return resolve(expandHome(explicit, env));
  const profile = resolveProfile(env);
  return join(resolveHomeDir(env), profile ? `.openclaw-${profile}` : '.openclaw');
}

export function resolveConfigPath(env: Env = process.env): string {
  const explicit = env.OPENCLAW_CONFIG_PATH?.trim();
  if (explicit) return resolve(expandHome(explicit, env));
  return join(resolveStateDir(env), 'openclaw.json');
}

export function resolveUserPath(path: string, baseDir: string, env: Env = process.env): string {
  const expanded = expandHome(path, env);
  return isAbsolute(expanded) ? expanded : resolve(baseDir, expanded);
}
