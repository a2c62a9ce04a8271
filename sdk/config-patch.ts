/**
 * The revision of openclaw.json a compare-and-swap write is based on (the gateway's
 * config.get hash, config.patch's baseHash), and the error the host's config writer refuses
 * a stale write with. The writes go through the kernel's ConfigAccess (`configFile.locked`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

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
