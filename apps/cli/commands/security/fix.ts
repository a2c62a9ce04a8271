/**
 * `--fix`: the remedies that need no decision from the user. Open group policies become
 * allowlists (the config is rewritten through the usual validated, atomic writer, `${VAR}`
 * references intact), and the state dir, everything under it and the config file become
 * owner-only. Tokens, auth, bind and tool policy are never touched.
 */
import { chmodSync, closeSync, constants, fchmodSync, lstatSync, openSync } from 'node:fs';
import { privateModeOf, NON_OWNER_BITS } from '../../../../sdk/fs.js';
import { editConfig } from '../../config-edit.js';
import type { Io } from '../../io.js';
import { scanState, type StateScan } from './fs-checks.js';
import { section, type AnyRecord, type AuditContext } from './types.js';

export type FixAction =
  | { kind: 'config'; key: string; from: string; to: string }
  | { kind: 'chmod'; path: string; from: string; to: string };

export interface FixOutcome {
  fixed: FixAction[];
  failed: string[];
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(3, '0');

/** `channels.<id>` and `channels.<id>.accounts.<acct>` objects of the raw config whose groupPolicy is "open". */
function openGroupPolicies(raw: AnyRecord): Array<{ key: string; holder: AnyRecord }> {
  const found: Array<{ key: string; holder: AnyRecord }> = [];
  for (const [channel, value] of Object.entries(section(raw.channels))) {
    const root = section(value);
    if (root.groupPolicy === 'open') found.push({ key: `channels.${channel}.groupPolicy`, holder: root });
    for (const [account, accountValue] of Object.entries(section(root.accounts))) {
      const holder = section(accountValue);
      if (holder.groupPolicy === 'open') found.push({ key: `channels.${channel}.accounts.${account}.groupPolicy`, holder });
    }
  }
  return found;
}

async function fixGroupPolicies(ctx: AuditContext, io: Io, outcome: FixOutcome): Promise<void> {
  if (openGroupPolicies(ctx.raw).length === 0) return;
  try {
    const { value } = await editConfig(io, (raw) =>
      openGroupPolicies(raw).map(({ key, holder }) => {
        holder.groupPolicy = 'allowlist';
        return key;
      }),
    );
    for (const key of value) outcome.fixed.push({ kind: 'config', key, from: 'open', to: 'allowlist' });
  } catch (error) {
    outcome.failed.push(`could not set groupPolicy to "allowlist": ${(error as Error).message}`);
  }
}

/**
 * chmod without following a symlink: the entry is opened with O_NOFOLLOW and changed
 * through the descriptor, so a file swapped for a link since the scan is left alone.
 */
function chmodNoFollow(path: string, mode: number): void {
  const noFollow = constants.O_NOFOLLOW;
  if (noFollow === undefined) {
    if (!lstatSync(path).isSymbolicLink()) chmodSync(path, mode);
    return;
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | noFollow | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return;
    // Not readable by its owner, or a socket: nothing to open, so check and change by name.
    if ((code === 'EACCES' || code === 'ENXIO') && !lstatSync(path).isSymbolicLink()) return chmodSync(path, mode);
    throw error;
  }
  try {
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

function tighten(path: string, mode: number, isDirectory: boolean, outcome: FixOutcome): void {
  const to = privateModeOf(mode, isDirectory);
  try {
    chmodNoFollow(path, to);
    outcome.fixed.push({ kind: 'chmod', path, from: octal(mode), to: octal(to) });
  } catch (error) {
    outcome.failed.push(`could not chmod ${path}: ${(error as Error).message}`);
  }
}

/** Makes the state dir, everything under it and the config owner-only (also `claw doctor --fix`). */
export function fixModes(ctx: AuditContext, scan: StateScan, outcome: FixOutcome): void {
  if (scan.root && !scan.root.symlink && scan.root.mode & NON_OWNER_BITS) tighten(ctx.stateDir, scan.root.mode, true, outcome);
  for (const entry of scan.loose) tighten(entry.path, entry.mode, entry.isDirectory, outcome);
  if (scan.config && !scan.config.insideState) {
    // A config kept elsewhere (OPENCLAW_CONFIG_PATH), and the backup written beside it.
    for (const path of [ctx.configPath, `${ctx.configPath}.bak`]) {
      try {
        const stat = lstatSync(path);
        if (!stat.isSymbolicLink() && stat.mode & NON_OWNER_BITS) tighten(path, stat.mode, false, outcome);
      } catch {
        // No backup yet.
      }
    }
  }
}

export async function applyFixes(ctx: AuditContext, io: Io): Promise<FixOutcome> {
  const outcome: FixOutcome = { fixed: [], failed: [] };
  await fixGroupPolicies(ctx, io, outcome);
  // Scanned after the config write: the file it replaced is gone, its backup is new.
  fixModes(ctx, scanState(ctx), outcome);
  return outcome;
}
