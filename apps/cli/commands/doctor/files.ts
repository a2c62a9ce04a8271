/**
 * Leftovers and damage under the state dir: temp files of atomic writes whose writer is
 * gone, plugin install staging folders nobody finished, JSON files that do not parse and
 * JSONL files that end in a partial line. Only leftovers are ever removed; a damaged file
 * is user data and is reported, never touched.
 */
import { lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { installLeftover } from '../../plugins/leftovers.js';

export interface FileScan {
  /** Temp files of writes whose process is gone, and abandoned plugin staging folders. */
  stale: string[];
  /** JSON state files that do not parse. */
  torn: Array<{ path: string; error: string }>;
  /** JSONL files whose last line is incomplete (a write cut off mid-line). */
  partial: string[];
}

/** sdk/fs.ts writeFileAtomic names its temp files `.<name>.<pid>.<8 hex>.tmp`. */
const ATOMIC_TEMP = /^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$/;
/** Folders holding code, caches or the user's own documents, not claw state. */
const SKIPPED = new Set(['node_modules', 'cache', '.git']);
const MAX_ENTRIES = 50_000;

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function jsonlTail(path: string): boolean {
  const text = readFileSync(path, 'utf8');
  if (text === '' || text.endsWith('\n')) return false;
  const last = text.slice(text.lastIndexOf('\n') + 1);
  try {
    JSON.parse(last);
    return false;
  } catch {
    return true;
  }
}

/** `skip`: folders whose contents are not state (workspaces), and the config file (JSON5, checked on its own). */
export function scanFiles(stateDir: string, skip: ReadonlySet<string>, now = Date.now()): FileScan {
  const scan: FileScan = { stale: [], torn: [], partial: [] };
  let seen = 0;
  const visit = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (++seen > MAX_ENTRIES) return;
      const path = join(dir, name);
      let stat;
      try {
        stat = lstatSync(path);
      } catch {
        continue;
      }
      if (stat.isSymbolicLink()) continue;
      const inExtensions = relative(stateDir, dir).split(sep)[0] === 'extensions';
      if (stat.isDirectory()) {
        // A previous version to put back (leftovers.ts) is not removed here: the next install does that.
        const leftover = inExtensions && depth === 1 ? installLeftover(dir, name, stat.mtimeMs, now) : undefined;
        if (leftover && !leftover.restoreTo) scan.stale.push(path);
        // Installed plugins are code, not state; workspaces are the user's documents.
        else if (!SKIPPED.has(name) && !skip.has(path) && !(inExtensions && depth === 1)) visit(path, depth + 1);
        continue;
      }
      if (skip.has(path)) continue;
      const temp = ATOMIC_TEMP.exec(name);
      if (temp) {
        if (!alive(Number(temp[1]))) scan.stale.push(path);
        continue;
      }
      try {
        if (name.endsWith('.json')) JSON.parse(readFileSync(path, 'utf8'));
        else if (name.endsWith('.jsonl') && jsonlTail(path)) scan.partial.push(path);
      } catch (error) {
        scan.torn.push({ path, error: (error as Error).message });
      }
    }
  };
  visit(stateDir, 0);
  return scan;
}

/** Removes the stale leftovers; returns what could not be removed. */
export function removeStale(paths: readonly string[]): { removed: string[]; failed: string[] } {
  const removed: string[] = [];
  const failed: string[] = [];
  for (const path of paths) {
    try {
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch (error) {
      failed.push(`could not remove ${path}: ${(error as Error).message}`);
    }
  }
  return { removed, failed };
}
