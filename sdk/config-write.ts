/**
 * Every writer of openclaw.json (the gateway's config.* methods, `claw config set`, plugin
 * management, setup) reads, edits and writes it while holding `<config>.lock`, so two
 * writers never interleave and no update is lost. A writer that edits a copy it read
 * earlier (a client holding a `config.get` hash) passes it as `baseHash`: if the file
 * changed since, the write is refused rather than overwriting the other change.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { formatPath, type PathSegment } from '../kernel/index.js';
import { withFileLock } from './file-lock.js';
import { writeJsonAtomic } from './fs.js';

/** Write openclaw.json atomically, owner-only, keeping the previous file as `.bak`; call it inside withConfigLock. */
export function writeConfigFile(path: string, raw: Record<string, unknown>): void {
  writeJsonAtomic(path, raw, { backup: true });
}

export class ConfigConflictError extends Error {
  readonly code = 'CONFIG_CONFLICT';
  constructor(
    readonly baseHash: string,
    readonly currentHash: string,
  ) {
    super(`the config file changed since it was read (baseHash ${baseHash.slice(0, 12)}… is not the current ${currentHash.slice(0, 12)}…); read it again (config.get) and retry`);
    this.name = 'ConfigConflictError';
  }
}

/** The file's revision for compare-and-swap (`config.get` hash, `baseHash`): sha256 of its bytes (of nothing when missing). */
export function configHash(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    bytes = Buffer.alloc(0);
  }
  return createHash('sha256').update(bytes).digest('hex');
}

export function configLockPath(configPath: string): string {
  return `${configPath}.lock`;
}

/**
 * Run `work` holding the config lock. `work` gets the file's current hash; with `baseHash`
 * the lock is only taken to find the file unchanged, else ConfigConflictError.
 */
export function withConfigLock<T>(configPath: string, purpose: string, work: (hash: string) => Promise<T> | T, baseHash?: string): Promise<T> {
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

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** RFC 7386 JSON merge patch: objects merge, null deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** The merge patch that turns `before` into `after` (arrays are replaced whole). */
export function diffMergePatch(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const walk = (a: Record<string, unknown>, b: Record<string, unknown>, at: PathSegment[]): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(key in b)) out[key] = null;
      else if (isObject(a[key]) && isObject(b[key])) {
        const inner = walk(a[key] as Record<string, unknown>, b[key] as Record<string, unknown>, [...at, key]);
        if (Object.keys(inner).length > 0) out[key] = inner;
      } else if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) {
        if (b[key] === null) throw new Error(`${formatPath([...at, key])}: null cannot be written through a merge patch (null deletes); unset the key instead`);
        out[key] = b[key];
      }
    }
    return out;
  };
  return walk(before, after, []);
}
