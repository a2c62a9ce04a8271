/**
 * Editing openclaw.json by merge patch (the gateway's config.patch, a CLI's change sent to a
 * running gateway), the file's revision a compare-and-swap write is based on, and the error
 * it is refused with. The writes go through the kernel's ConfigAccess (`configFile.locked`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { formatPath, type PathSegment } from '../kernel/index.js';

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

/** A write based on `baseHash` found the file changed since (code CONFIG_CONFLICT). */
export class ConfigConflictError extends Error {
  readonly code = 'CONFIG_CONFLICT';
  constructor(
    readonly baseHash: string,
    readonly currentHash: string,
  ) {
    super(
      `the config file changed since it was read (baseHash ${baseHash.slice(0, 12)}… is not the current ${currentHash.slice(0, 12)}…); read it again (config.get) and retry`,
    );
    this.name = 'ConfigConflictError';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

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
export function diffMergePatch(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Record<string, unknown> {
  const walk = (a: Record<string, unknown>, b: Record<string, unknown>, at: PathSegment[]): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(key in b)) out[key] = null;
      else if (isObject(a[key]) && isObject(b[key])) {
        const inner = walk(a[key] as Record<string, unknown>, b[key] as Record<string, unknown>, [...at, key]);
        if (Object.keys(inner).length > 0) out[key] = inner;
      } else if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) {
        if (b[key] === null)
          throw new Error(
            `${formatPath([...at, key])}: null cannot be written through a merge patch (null deletes); unset the key instead`,
          );
        out[key] = b[key];
      }
    }
    return out;
  };
  return walk(before, after, []);
}
