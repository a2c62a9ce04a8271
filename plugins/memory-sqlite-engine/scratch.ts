/**
 * Files of a full rebuild. The new index is built in `<index>.rebuild-<pid>-<nonce>` beside
 * the real one and renamed over it in one step, so readers only ever see the old index or
 * the new one. A process killed mid-rebuild leaves its scratch file behind; the next open
 * removes it, unless the process that owns it is still running (another process may be
 * rebuilding the same index right now). "Running" is judged as for lock files: a killed
 * process not yet reaped, or a pid taken since by a process that is not node, owns nothing.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { lockHolderAlive } from '../../sdk/index.js';

/** Scratch files this process is building now (never cleaned up from under itself). */
const building = new Set<string>();

export function claimScratchPath(indexPath: string): string {
  const path = `${indexPath}.rebuild-${process.pid}-${randomBytes(4).toString('hex')}`;
  building.add(path);
  return path;
}

export function releaseScratchPath(path: string): void {
  building.delete(path);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Signal 0 checks that the process exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes scratch files of rebuilds that can no longer finish; returns their names. */
export function removeAbandonedScratch(indexPath: string): string[] {
  const dir = dirname(indexPath);
  const pattern = new RegExp(
    `^${escapeRegExp(basename(indexPath))}\\.rebuild-(\\d+)-[0-9a-f]+(?:-journal|-wal|-shm)?$`,
  );
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = pattern.exec(name);
    if (!match) continue;
    const path = join(dir, name);
    const owner = Number(match[1]);
    if (building.has(path.replace(/-(?:journal|wal|shm)$/, ''))) continue;
    if (owner !== process.pid && lockHolderAlive({ pid: owner, hostname: hostname() })) continue;
    rmSync(path, { force: true });
    removed.push(name);
  }
  return removed;
}

/**
 * Puts the finished scratch file in place of the index: its bytes reach the disk first,
 * then the rename, then the directory entry, so a crash at any point leaves one whole index.
 */
export function replaceWithScratch(scratchPath: string, indexPath: string): void {
  const fd = openSync(scratchPath, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  // A journal left beside the index belongs to the old file and must never be replayed into the new one.
  rmSync(`${indexPath}-journal`, { force: true });
  renameSync(scratchPath, indexPath);
  try {
    const dirFd = openSync(dirname(indexPath), 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some platforms (Windows) cannot fsync a directory; the rename itself is still atomic.
  }
}
