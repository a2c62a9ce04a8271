/**
 * Lock files shared by processes on this machine: the gateway's one-per-state-dir lock and
 * the config file's write lock. A lock file names its holder (pid and when that process
 * started, host, since when, what it is doing). It is created whole with link(2) of a
 * written temp file, which fails if the lock exists, so two contenders never both win and a
 * reader never sees half a lock. A lock whose holder has died (or that is older than its
 * staleness bound) is renamed away — only one contender's rename succeeds — and taken over.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './fs.js';

export interface LockHolder {
  pid: number;
  hostname: string;
  startedAt: string;
  /** When the holder process started (see processStartTime): tells it from a later process given the same pid. */
  pidStartTime?: number;
  /** What the holder is doing ("claw config set", "gateway config.patch"). */
  purpose?: string;
  [more: string]: unknown;
}

/** Who holds a lock, as far as telling whether it is still running goes. */
export type LockOwner = Pick<LockHolder, 'pid' | 'hostname'> & { pidStartTime?: number };

/** A process as /proc/<pid>/stat describes it; undefined where there is no /proc (not Linux) or no such process. */
function procStat(pid: number): { state: string; startTime: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Field 2, the command name, is in parentheses and may hold spaces and parentheses itself.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); field 22 is the start time in clock ticks since boot.
  const startTime = Number(fields[19]);
  return fields[0] && Number.isSafeInteger(startTime) ? { state: fields[0], startTime } : undefined;
}

/**
 * When process `pid` started, in clock ticks since boot (/proc/<pid>/stat field 22). A pid
 * with its start time names one process for good: pids are recycled (quickly where
 * pid_max is small and many processes and threads come and go), start times are not.
 */
export function processStartTime(pid: number = process.pid): number | undefined {
  return procStat(pid)?.startTime;
}

let ownStartTime: number | undefined | null = null;
/** This process's start time (read once). */
export function ownProcessStartTime(): number | undefined {
  if (ownStartTime === null) ownStartTime = processStartTime(process.pid);
  return ownStartTime;
}

/** Is the process that wrote `info` still running (on this machine)? */
export function lockHolderAlive(info: LockOwner | undefined): boolean {
  if (!info || !Number.isInteger(info.pid) || info.pid <= 0) return false;
  if (info.hostname !== hostname()) return true; // Cannot check another machine's pids: assume alive.
  try {
    process.kill(info.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const proc = procStat(info.pid);
  if (!proc) return true; // No /proc to look closer: the pid exists, so assume it is the holder.
  // Killed but not yet reaped by its parent: it holds nothing any more.
  if (proc.state === 'Z' || proc.state === 'X') return false;
  // The pid now names a later process (or a thread of one, whose id comes from the same pool).
  if (typeof info.pidStartTime === 'number') return proc.startTime === info.pidStartTime;
  // A lock written without its holder's start time: at least check the pid belongs to a node process.
  try {
    return /node|claw/.test(readFileSync(`/proc/${info.pid}/cmdline`, 'utf8'));
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
export function createLockFile(
  path: string,
  info: Pick<LockHolder, 'pid' | 'hostname' | 'startedAt' | 'pidStartTime'>,
): boolean {
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
  const pidStartTime = ownProcessStartTime();
  return {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date().toISOString(),
    ...(pidStartTime !== undefined ? { pidStartTime } : {}),
    ...(purpose ? { purpose } : {}),
  };
}

export class LockTimeoutError extends Error {
  readonly code = 'LOCK_TIMEOUT';
  constructor(
    readonly path: string,
    readonly holder: LockHolder | undefined,
    waitedMs: number,
  ) {
    const who = holder
      ? `pid ${holder.pid}${holder.purpose ? ` (${holder.purpose})` : ''} since ${holder.startedAt}`
      : 'another process';
    super(
      `${path} is held by ${who}; gave up after ${Math.round(waitedMs / 1000)} s (remove the file if that process is gone)`,
    );
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

/** A lock file that names no holder (damaged) is taken over once it is this old. */
export const UNREADABLE_LOCK_STALE_MS = 2000;

function fileAgeMs(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat ? Date.now() - stat.mtimeMs : 0;
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
    // Lock files appear whole (see createLockFile), so one naming no holder is damaged: taken over once it is not brand new.
    const stale = holder
      ? !lockHolderAlive(holder) || Date.now() - Date.parse(holder.startedAt) > staleMs
      : fileAgeMs(path) > UNREADABLE_LOCK_STALE_MS;
    if (stale) {
      breakLockFile(path);
      continue;
    }
    const waited = Date.now() - started;
    if (waited >= timeoutMs) throw new LockTimeoutError(path, holder, waited);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(200, 5 * 2 ** Math.min(attempt, 5)) + Math.random() * 10),
    );
  }
}
