/**
 * The revision of openclaw.json a compare-and-swap write is based on (the gateway's
 * config.get hash, config.patch's baseHash), and the error the host's config writer refuses
 * a stale write with. The writes go through the kernel's ConfigAccess (`configFile.locked`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ErrorCodes } from './protocol/constants.js';
import { ProtocolError } from './protocol/frames.js';
import type { ConfigIssue } from '../kernel/index.js';
import type { PluginApi } from './types/plugin.js';

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

/**
 * A gateway method's edit of openclaw.json (agents.update, skills.update): under the config
 * lock, against the file as it is now, refused when the edit would add a config error. The
 * gateway's config watcher then applies the new file to the running process.
 */
export async function editConfig<T>(
  api: PluginApi,
  purpose: string,
  edit: (raw: Record<string, unknown>) => T,
): Promise<T> {
  const file = api.kernel.configFile;
  return file.locked(purpose, async (write) => {
    const current = file.read();
    if (current.issues.some((issue) => issue.path === '<file>')) {
      throw new ProtocolError(
        ErrorCodes.INVALID_REQUEST,
        `the config file cannot be parsed (${current.issues[0]!.message}); fix it before ${purpose}`,
      );
    }
    const raw = structuredClone(current.raw) as Record<string, unknown>;
    const result = edit(raw);
    const key = (issue: ConfigIssue) => `${issue.path}\u0000${issue.message}`;
    const before = new Set((await file.check(current.raw as Record<string, unknown>)).map(key));
    const added = (await file.check(raw)).filter((issue) => issue.level === 'error' && !before.has(key(issue)));
    if (added.length > 0) {
      throw new ProtocolError(
        ErrorCodes.INVALID_REQUEST,
        `${purpose} would make the config invalid: ${added.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
      );
    }
    write(raw);
    return result;
  });
}
