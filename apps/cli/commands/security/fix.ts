/**
 * `--fix`: the remedies that need no decision from the user. Open group policies become
 * allowlists and "*" leaves the elevated allowlists (the config is rewritten through the
 * usual validated, atomic writer, `${VAR}` references intact), and the state dir,
 * everything under it and the config file become owner-only. Tokens, auth, bind, DM
 * policies and tool policy are never touched.
 */
import { chmodSync, closeSync, constants, fchmodSync, lstatSync, openSync } from 'node:fs';
import { privateModeOf, NON_OWNER_BITS } from '../../../../host/private-tree.js';
import { editConfig } from '../../config-edit.js';
import type { Io } from '../../io.js';
import { closeOpenGroups } from './channel-checks.js';
import { dropElevatedWildcards } from './elevated-checks.js';
import { scanState, type StateScan } from './fs-checks.js';
import type { AnyRecord, AuditContext } from './types.js';

export type FixAction =
  { kind: 'config'; key: string; from: string; to: string } | { kind: 'chmod'; path: string; from: string; to: string };

export interface FixOutcome {
  fixed: FixAction[];
  failed: string[];
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(3, '0');

/**
 * Config remedies that only take access away and need no decision: each edits the raw
 * config in place and says what it changed. All of them go through one validated write.
 */
const CONFIG_REMEDIES: ReadonlyArray<{
  what: string;
  apply: (raw: AnyRecord) => Array<{ key: string; from: string; to: string }>;
}> = [
  { what: 'set groupPolicy to "allowlist"', apply: closeOpenGroups },
  { what: 'remove "*" from tools.elevated.allowFrom', apply: dropElevatedWildcards },
];

async function fixConfig(ctx: AuditContext, io: Io, outcome: FixOutcome): Promise<void> {
  // A dry run on a copy: nothing to change means no write, no backup, no lock.
  const probe = structuredClone(ctx.raw);
  if (CONFIG_REMEDIES.every((remedy) => remedy.apply(probe).length === 0)) return;
  try {
    const { value } = await editConfig(io, (raw) => CONFIG_REMEDIES.flatMap((remedy) => remedy.apply(raw)));
    for (const change of value) outcome.fixed.push({ kind: 'config', ...change });
  } catch (error) {
    outcome.failed.push(
      `could not ${CONFIG_REMEDIES.map((remedy) => remedy.what).join(' or ')}: ${(error as Error).message}`,
    );
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
  if (scan.root && !scan.root.symlink && scan.root.mode & NON_OWNER_BITS)
    tighten(ctx.stateDir, scan.root.mode, true, outcome);
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
  await fixConfig(ctx, io, outcome);
  // Scanned after the config write: the file it replaced is gone, its backup is new.
  fixModes(ctx, scanState(ctx), outcome);
  return outcome;
}
