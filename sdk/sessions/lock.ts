/**
 * The session write lock: one writer per session across processes. The gateway runs one
 * turn per session at a time (its session lanes), but `claw agent --local` beside it, or two
 * local runs, are other processes; without this they would interleave one transcript and
 * leave tool calls without their results.
 *
 * The lock is a file beside the transcripts, `locks/<session key>.lock`, naming its holder
 * (pid, host, when). It is keyed by the session key rather than the transcript so that the
 * session store's choice of transcript (a new session on first use or after a reset) is
 * made under the lock too. The file is written whole and then link(2)ed into place, so it
 * never exists half-written and two contenders cannot both create it. The holder touches
 * it while it holds it; a lock is taken over only when its holder is gone (a dead pid on
 * this host) or it has not been touched for `staleMs` (a holder on another host, or a pid
 * recycled by an unrelated process).
 */
import { createHash, randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../kernel/index.js';
import { lockHolderAlive } from '../lock-holder.js';

/** A holder that stopped touching its lock this long ago is gone. */
export const SESSION_LOCK_STALE_MS = 10 * 60_000;
const POLL_MS = 50;

export interface SessionLockInfo {
  pid: number;
  hostname: string;
  /** What is locked: a session key, or the session store. */
  sessionKey: string;
  /** ISO 8601. */
  acquiredAt: string;
  /** Tells this holder's file from a later one at the same path. */
  token: string;
}

export interface SessionLock {
  readonly file: string;
  release(): void;
}

export class SessionLockError extends Error {
  constructor(
    message: string,
    readonly holder?: SessionLockInfo,
  ) {
    super(message);
    this.name = 'SessionLockError';
  }
}

export interface SessionLockOptions {
  /** Stop waiting when this aborts (the run's timeout, /stop). */
  signal?: AbortSignal;
  /** Give up after this long; default: wait as long as the signal allows. */
  timeoutMs?: number;
  staleMs?: number;
  /** Called once when the lock is busy and the caller starts waiting. */
  onWait?: (holder: SessionLockInfo | undefined) => void;
  /** How often a waiter looks again (default 50 ms). */
  pollMs?: number;
}

/** `<sessionsDir>/locks/<key>.lock`; the key is spelled out where it can be, with a hash so distinct keys never share a file. */
export function sessionLockPath(sessionsDir: string, sessionKey: string): string {
  const readable = sessionKey.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  const hash = createHash('sha256').update(sessionKey).digest('hex').slice(0, 10);
  return join(sessionsDir, 'locks', `${readable}-${hash}.lock`);
}

function readHolder(file: string): SessionLockInfo | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as SessionLockInfo;
    return typeof value === 'object' && value !== null && typeof value.pid === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Locks this process holds, so a second acquire here waits for the first instead of judging our own pid. */
const heldHere = new Map<string, Promise<void>>();

function stale(file: string, holder: SessionLockInfo | undefined, staleMs: number): boolean {
  // Our own pid on a lock this process does not hold: a previous run of this pid died holding it.
  if (holder && holder.pid === process.pid && holder.hostname === hostname()) return true;
  if (holder && !lockHolderAlive(holder)) return true;
  try {
    return Date.now() - statSync(file).mtimeMs > staleMs;
  } catch {
    return false;
  }
}

/** One attempt: the lock, or the current holder. */
function tryCreate(file: string, mine: SessionLockInfo): boolean {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temp, `${JSON.stringify(mine)}\n`, { mode: PRIVATE_FILE_MODE });
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Moves a stale lock out of the way. Renaming is atomic, but between reading the stale
 * holder and renaming, another contender may have replaced it with a live lock: that one
 * is put back (link fails only if yet another lock appeared meanwhile, which then wins).
 */
function breakStale(file: string, seen: SessionLockInfo | undefined): void {
  const aside = `${file}.stale-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(file, aside);
  } catch {
    return; // Someone else moved it first.
  }
  const moved = readHolder(aside);
  if (moved && seen && moved.token !== seen.token) {
    try {
      linkSync(aside, file);
    } catch {
      // A newer lock is in place already.
    }
  }
  rmSync(aside, { force: true });
}

function describe(holder: SessionLockInfo | undefined): string {
  if (!holder) return 'another process';
  return `process ${holder.pid}${holder.hostname === hostname() ? '' : ` on ${holder.hostname}`} (since ${holder.acquiredAt})`;
}

/** Waits until the session is free (or the signal aborts), then holds it until release(). */
export function acquireSessionLock(sessionsDir: string, sessionKey: string, options: SessionLockOptions = {}): Promise<SessionLock> {
  return acquireFileLock(sessionLockPath(sessionsDir, sessionKey), `session ${sessionKey}`, sessionKey, options);
}

/** The same kind of lock on any file path (`what` names it in errors). */
export async function acquireFileLock(file: string, what: string, sessionKey: string, options: SessionLockOptions = {}): Promise<SessionLock> {
  const staleMs = options.staleMs ?? SESSION_LOCK_STALE_MS;
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;

  // In this process: queue behind the holder here first.
  const before = heldHere.get(file);
  let releaseHere!: () => void;
  const mineHere = new Promise<void>((resolve) => (releaseHere = resolve));
  const chained = (before ?? Promise.resolve()).then(() => mineHere);
  heldHere.set(file, chained);
  const leaveQueue = () => {
    releaseHere();
    if (heldHere.get(file) === chained) heldHere.delete(file);
  };
  try {
    if (before) await abortable(before, options.signal, () => new SessionLockError(`${what} is busy in this process`));

    ensurePrivateDir(dirname(file));
    const mine: SessionLockInfo = { pid: process.pid, hostname: hostname(), sessionKey, acquiredAt: new Date().toISOString(), token: randomBytes(8).toString('hex') };
    let waited = false;
    for (;;) {
      if (tryCreate(file, mine)) break;
      const holder = readHolder(file);
      if (stale(file, holder, staleMs)) {
        breakStale(file, holder);
        continue;
      }
      if (!waited) {
        waited = true;
        options.onWait?.(holder);
      }
      if (options.signal?.aborted || Date.now() >= deadline) {
        throw new SessionLockError(`${what} is in use by ${describe(holder)}; gave up waiting for it (lock ${file})`, holder);
      }
      await sleep(options.pollMs ?? POLL_MS, options.signal);
    }

    const touch = setInterval(() => {
      try {
        utimesSync(file, new Date(), new Date());
      } catch {
        // Gone (removed by hand); release() copes.
      }
    }, Math.max(1000, Math.min(30_000, staleMs / 4)));
    touch.unref();
    let released = false;
    return {
      file,
      release() {
        if (released) return;
        released = true;
        clearInterval(touch);
        if (readHolder(file)?.token === mine.token) rmSync(file, { force: true });
        leaveQueue();
      },
    };
  } catch (error) {
    leaveQueue();
    throw error;
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

function abortable(wait: Promise<void>, signal: AbortSignal | undefined, error: () => Error): Promise<void> {
  if (!signal) return wait;
  if (signal.aborted) return Promise.reject(error());
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(error());
    signal.addEventListener('abort', onAbort, { once: true });
    wait.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, reject);
  });
}
