/**
 * What an interrupted `claw plugins install` leaves in the extensions folder: its staging
 * folder (`.staging-<pid>-<random>`) and, when it died while swapping a new version in, the
 * previous version (`.replaced-<pid>-<ms>-<id>`). Each names the process that made it, so
 * one whose process is gone is known to be left over at once, while a live installer's
 * folders (another terminal, the gateway) are never touched. Folders named by older
 * versions carry no pid: they count as left over once older than any install takes.
 *
 * A previous version whose plugin folder is missing (the kill came between the two
 * renames) is put back rather than removed: it is the plugin the user had.
 */
import { existsSync, lstatSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { lockHolderAlive } from '../../../sdk/file-lock.js';

/** An install takes seconds; a folder without a pid this old belongs to one that died. */
export const INSTALL_LEFTOVER_STALE_MS = 10 * 60_000;

const STAGING = /^\.staging-(?:(\d+)-)?/;
/** `.replaced-<pid>-<ms>-<id>`, or an older version's `.replaced-<id>-<ms>`. */
const REPLACED = /^\.replaced-(?:(\d+)-\d+-(.+)|(.+)-\d+)$/;

/** The folder's name for a staging folder of this process (mkdtemp adds the random part). */
export function stagingPrefix(extensions: string): string {
  return join(extensions, `.staging-${process.pid}-`);
}

/** Where this process moves a plugin's previous version while the new one takes its place. */
export function replacedPath(extensions: string, id: string): string {
  return join(extensions, `.replaced-${process.pid}-${Date.now()}-${id}`);
}

export interface InstallLeftover {
  path: string;
  /** Put back here instead of removed: a previous version whose plugin folder is missing. */
  restoreTo?: string;
}

/** `name` in `extensions`, if it is a folder an install left and no live process owns. */
export function installLeftover(
  extensions: string,
  name: string,
  mtimeMs: number,
  now = Date.now(),
): InstallLeftover | undefined {
  const staging = STAGING.exec(name);
  const replaced = staging ? null : REPLACED.exec(name);
  if (!staging && !replaced) return undefined;
  const pid = staging ? staging[1] : replaced![1];
  const gone =
    pid === undefined
      ? now - mtimeMs > INSTALL_LEFTOVER_STALE_MS
      : !lockHolderAlive({ pid: Number(pid), hostname: hostname() });
  if (!gone) return undefined;
  const path = join(extensions, name);
  const id = replaced ? (replaced[2] ?? replaced[3])! : undefined;
  return id !== undefined && !existsSync(join(extensions, id)) ? { path, restoreTo: join(extensions, id) } : { path };
}

export function installLeftovers(extensions: string, now = Date.now()): InstallLeftover[] {
  let names: string[];
  try {
    names = readdirSync(extensions);
  } catch {
    return [];
  }
  const found: InstallLeftover[] = [];
  for (const name of names) {
    let stat;
    try {
      stat = lstatSync(join(extensions, name));
    } catch {
      continue;
    }
    if (!stat.isDirectory()) continue;
    const leftover = installLeftover(extensions, name, stat.mtimeMs, now);
    if (leftover) found.push(leftover);
  }
  return found;
}

/** Removes the leftovers (putting a previous version back where its folder is missing); one line per thing done. */
export function reclaimInstallLeftovers(extensions: string, now = Date.now()): string[] {
  const done: string[] = [];
  for (const leftover of installLeftovers(extensions, now)) {
    try {
      if (leftover.restoreTo) {
        renameSync(leftover.path, leftover.restoreTo);
        done.push(
          `put the previous version back at ${leftover.restoreTo} (an install was interrupted while replacing it)`,
        );
      } else {
        rmSync(leftover.path, { recursive: true, force: true });
        done.push(`removed ${leftover.path}, left by an interrupted install`);
      }
    } catch (error) {
      done.push(`could not reclaim ${leftover.path}: ${(error as Error).message}`);
    }
  }
  return done;
}
