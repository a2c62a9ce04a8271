/**
 * Every writer of openclaw.json (the gateway's config.* methods, `claw config set`, plugin
 * management, setup) reads, edits and writes it while holding `<config>.lock`, so two
 * writers never interleave and no update is lost. A writer that edits a copy it read
 * earlier (a client holding a `config.get` hash) passes it as `baseHash`: if the file
 * changed since, the write is refused rather than overwriting the other change. Plugins
 * write through the kernel's ConfigAccess (`configFile.locked`), which is `configWriter`;
 * the CLI app uses the lock directly.
 */
import type { ConfigAccess } from '../kernel/index.js';
import { configHash, ConfigConflictError } from '../sdk/config-patch.js';
import { withFileLock } from '../sdk/file-lock.js';
import { writeJsonAtomic } from '../sdk/fs.js';

/** Write openclaw.json atomically, owner-only, keeping the previous file as `.bak`; call it inside withConfigLock. */
export function writeConfigFile(path: string, raw: Record<string, unknown>): void {
  writeJsonAtomic(path, raw, { backup: true });
}

export function configLockPath(configPath: string): string {
  return `${configPath}.lock`;
}

/**
 * Run `work` holding the config lock. `work` gets the file's current hash; with `baseHash`
 * the lock is only taken to find the file unchanged, else ConfigConflictError.
 */
export function withConfigLock<T>(
  configPath: string,
  purpose: string,
  work: (hash: string) => Promise<T> | T,
  baseHash?: string,
): Promise<T> {
  return withFileLock(
    configLockPath(configPath),
    () => {
      const hash = configHash(configPath);
      if (baseHash !== undefined && baseHash !== hash) throw new ConfigConflictError(baseHash, hash);
      return work(hash);
    },
    { purpose },
  );
}

/** The kernel's config writer (KernelOptions.configWriter), so plugins write under the same lock as everyone. */
export function configWriter(configPath: string): ConfigAccess['locked'] {
  return (purpose, edit, baseHash) =>
    withConfigLock(configPath, purpose, () => edit((raw) => writeConfigFile(configPath, raw)), baseHash);
}
