/**
 * Lock files shared by processes on this machine: the gateway's one-per-state-dir lock and
 * the config file's write lock. A lock file names its holder (pid, host, start time, what it
 * is doing). It is created whole with link(2) of a written temp file, which fails if the
 * lock exists, so two contenders never both win and a reader never sees half a lock. A lock
 * whose holder has died (or that is older than its staleness bound) is renamed away — only
 * one contender's rename succeeds — and taken over.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../kernel/index.js';

export interface LockHolder {
  pid: number;
  hostname: string;
  startedAt: string;
  /** What the holder is doing ("claw config set", "gateway config.patch"). */
  purpose?: string;
  [more: string]: unknown;
}

/** Is the process that wrote `info` still running (on this machine)? */
export function lockHolderAlive(info: Pick<LockHolder, 'pid' | 'hostname'> | undefined): boolean {
  if (!info || !Number.isInteger(info.pid) || info.pid <= 0) return false;
  if (info.hostname !== hostname()) return true; // Cannot check another machine's pids: assume alive.
  try {
    process.kill(info.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A recycled pid belongs to some unrelated program: on Linux, check it is a node process.
  try {
    const cmdline = readFileSync(`/proc/${info.pid}/cmdline`, 'utf8');
    return /node|claw/.test(cmdline);
  } catch {
    return true;
  }
}

export function readLockFile<T = LockHolder>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Create `path` holding `info`, unless it exists. */
export function createLockFile(path: string, info: Pick<LockHolder, 'pid' | 'hostname' | 'startedAt'>): boolean {
  ensurePrivateDir(dirname(path));
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temp, `${JSON.stringify(info)}\n`, { mode: PRIVATE_FILE_MODE });
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    rmSync(temp, { force: true });
  }
}

/** Move a stale lock out of the way (another contender may have done it first). */
export function breakLockFile(path: string): void {
  const stale = `${path}.stale-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, stale);
    rmSync(stale, { force: true });
  } catch {
    // Someone else moved it first.
  }
}

export function lockHolder(purpose?: string): LockHolder {
  return { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString(), ...(purpose ? { purpose } : {}) };
}

export class LockTimeoutError extends Error {
  readonly code = 'LOCK_TIMEOUT';
  constructor(
    readonly path: string,
    readonly holder: LockHolder | undefined,
    waitedMs: number,
  ) {
    const who = holder ? `pid ${holder.pid}${holder.purpose ? ` (${holder.purpose})` : ''} since ${holder.startedAt}` : 'another process';
    super(`${path} is held by ${who}; gave up after ${Math.round(waitedMs / 1000)} s (remove the file if that process is gone)`);
    this.name = 'LockTimeoutError';
  }
}

export interface FileLockOptions {
  purpose?: string;
  /** Give up waiting after this long (default 60 s). */
  timeoutMs?: number;
  /** A lock older than this is taken over even if its holder seems alive (default 120 s). */
  staleMs?: number;
}

/** Same-process callers queue here instead of polling the file. */
const queues = new Map<string, Promise<unknown>>();

/** Run `work` while holding the lock file `path`, waiting for it if another process holds it. */
export function withFileLock<T>(path: string, work: () => Promise<T> | T, options: FileLockOptions = {}): Promise<T> {
  const previous = queues.get(path) ?? Promise.resolve();
  const run = previous.then(async () => {
    await acquire(path, options);
    try {
      return await work();
    } finally {
      if (readLockFile(path)?.pid === process.pid) rmSync(path, { force: true });
    }
  });
  const settled = run.catch(() => undefined);
  queues.set(path, settled);
  void settled.then(() => {
    if (queues.get(path) === settled) queues.delete(path);
  });
  return run;
}

async function acquire(path: string, options: FileLockOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const staleMs = options.staleMs ?? 120_000;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (createLockFile(path, lockHolder(options.purpose))) return;
    const holder = readLockFile(path);
    const age = holder ? Date.now() - Date.parse(holder.startedAt) : 0;
    // A lock file being written right now reads as empty: not stale, just young.
    if (holder && (!lockHolderAlive(holder) || age > staleMs)) {
      breakLockFile(path);
      continue;
    }
    const waited = Date.now() - started;
    if (waited >= timeoutMs) throw new LockTimeoutError(path, holder, waited);
    await new Promise((resolve) => setTimeout(resolve, Math.min(200, 5 * 2 ** Math.min(attempt, 5)) + Math.random() * 10));
  }
}
