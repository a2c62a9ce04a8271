/**
 * The session write lock: one writer per session across processes. The gateway runs one
 * turn per session at a time (its session lanes), but `claw agent --local` beside it, or two
 * local runs, are other processes; without this they would interleave one transcript and
 * leave tool calls without their results.
 *
 * The lock is a file beside the transcripts, `locks/<session key>.lock`, naming its holder
 * (pid and when that process started, host, since when). It is keyed by the session key rather than the transcript so that the
 * session store's choice of transcript (a new session on first use or after a reset) is
 * made under the lock too. The file appears whole (written aside, then hard-linked into
 * place), and link(2) fails if it exists, so two contenders cannot both create it and a
 * kill never leaves a lock that names no one. The holder touches it while it holds it; a
 * lock is taken over only when its holder is gone (on this host: its pid is dead, or now
 * names a process that started at another time, since pids are recycled) or it has not
 * been touched for `staleMs` (a holder on another host).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  futimesSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import {
  ensurePrivateDir,
  PRIVATE_FILE_MODE,
  lockHolderAlive,
  ownProcessStartTime,
  UNREADABLE_LOCK_STALE_MS,
} from '../../sdk/index.js';
import {
  SessionLockError,
  type SessionLock,
  type SessionLockInfo,
  type SessionLockOptions,
} from '../../sdk/sessions/index.js';

/** A holder that stopped touching its lock this long ago is gone. */
export const SESSION_LOCK_STALE_MS = 10 * 60_000;
/** How long a session lock outlives its run in case the session's next turn follows. */
export const SESSION_LOCK_LINGER_MS = 1000;
const POLL_MS = 50;
const HOST = hostname();

/** What a lock file says about its holder. */
interface LockHolder extends SessionLockInfo {
  /** What is locked: a session key, or the session store. */
  sessionKey: string;
  /** When the holder process started: a recycled pid is not the holder. */
  pidStartTime?: number;
  /** Tells this holder's file from a later one at the same path. */
  token: string;
}

/** What the store's own callers may tune beyond the contract's options. */
export interface LockOptions extends SessionLockOptions {
  staleMs?: number;
  /** How often a waiter looks again (default 50 ms). */
  pollMs?: number;
  /** Touch the file while held (default true); a lock held for milliseconds needs no proof of life. */
  heartbeat?: boolean;
  /**
   * After release, keep the file this long (default 0) so this process can take the lock
   * again at no cost: turns of one session follow each other closely, and another process
   * waits at most this much longer.
   */
  lingerMs?: number;
}

/** `<sessionsDir>/locks/<key>.lock`; the key is spelled out where it can be, with a hash so distinct keys never share a file. */
export function sessionLockPath(sessionsDir: string, sessionKey: string): string {
  const readable = sessionKey.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  const hash = createHash('sha256').update(sessionKey).digest('hex').slice(0, 10);
  return join(sessionsDir, 'locks', `${readable}-${hash}.lock`);
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
    return typeof value === 'object' && value !== null && typeof value.pid === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Locks this process holds, so a second acquire here waits for the first instead of judging our own pid. */
const heldHere = new Map<string, Promise<void>>();

function stale(file: string, holder: LockHolder | undefined, staleMs: number): boolean {
  // Our own pid on a lock this process does not hold: a previous run of this pid died holding it.
  if (holder && holder.pid === process.pid && holder.hostname === HOST) return true;
  if (holder && !lockHolderAlive(holder)) return true;
  try {
    const age = Date.now() - statSync(file).mtimeMs;
    // Naming no one (damaged, or left empty by an older version killed while creating it):
    // nobody is writing it any more after a moment, and nobody could ever prove it held.
    return age > (holder ? staleMs : UNREADABLE_LOCK_STALE_MS);
  } catch {
    return false;
  }
}

/**
 * One attempt. The lock file appears whole: its content is written to a temp file that is
 * then hard-linked into place (link fails if the lock exists, so only one contender wins).
 * Created empty and written after, a SIGKILL between the two would leave a lock naming
 * no one, which every contender would take for one being written right now. Returns the
 * new file, still open, or undefined when the lock exists.
 */
function tryCreate(file: string, mine: LockHolder): Pick<Holding, 'fd' | 'ino'> | undefined {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  let fd: number;
  try {
    fd = openSync(temp, 'wx', PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    ensurePrivateDir(dirname(file));
    fd = openSync(temp, 'wx', PRIVATE_FILE_MODE);
  }
  try {
    writeSync(fd, `${JSON.stringify(mine)}\n`);
    linkSync(temp, file);
    return { fd, ino: fstatSync(fd).ino };
  } catch (error) {
    closeSync(fd);
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Moves a stale lock out of the way. Renaming is atomic, but between reading the stale
 * holder (or finding none) and renaming, another contender may have replaced it with a
 * live lock: that one is put back (link fails only if yet another lock appeared meanwhile, which then wins).
 */
function breakStale(file: string, seen: LockHolder | undefined): void {
  const aside = `${file}.stale-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(file, aside);
  } catch {
    return; // Someone else moved it first.
  }
  const moved = readHolder(aside);
  if (moved && moved.token !== seen?.token) {
    try {
      linkSync(aside, file);
    } catch {
      // A newer lock is in place already.
    }
  }
  rmSync(aside, { force: true });
}

function describe(holder: LockHolder | undefined): string {
  if (!holder) return 'another process';
  return `process ${holder.pid}${holder.hostname === HOST ? '' : ` on ${holder.hostname}`} (since ${holder.acquiredAt})`;
}

/** Waits until the session is free (or the signal aborts), then holds it until release(). */
export function acquireSessionLock(
  sessionsDir: string,
  sessionKey: string,
  options: LockOptions = {},
): Promise<SessionLock> {
  return acquireFileLock(sessionLockPath(sessionsDir, sessionKey), `session ${sessionKey}`, sessionKey, {
    lingerMs: SESSION_LOCK_LINGER_MS,
    ...options,
  });
}

/** A lock file this process created and still has. */
interface Holding {
  /** Kept open while held: its inode cannot be reused, so a file with it at our path is ours. */
  fd: number;
  ino: number;
  touch?: NodeJS.Timeout;
  /** Set while lingering after a release. */
  expire?: NodeJS.Timeout;
}

/** Released locks kept for a moment (see `lingerMs`), by file. */
const lingering = new Map<string, Holding>();
let cleanupOnExit = false;

function drop(file: string, held: Holding): void {
  clearInterval(held.touch);
  clearTimeout(held.expire);
  // Still our file (not taken over as stale and replaced)? Then it is ours to remove.
  if (statSync(file, { throwIfNoEntry: false })?.ino === held.ino) rmSync(file, { force: true });
  closeSync(held.fd);
}

/** The same kind of lock on any file path (`what` names it in errors). */
export async function acquireFileLock(
  file: string,
  what: string,
  sessionKey: string,
  options: LockOptions = {},
): Promise<SessionLock> {
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

    const kept = lingering.get(file);
    if (kept) {
      lingering.delete(file);
      clearTimeout(kept.expire);
      return holding(file, kept, options.lingerMs ?? 0, leaveQueue);
    }
    const pidStartTime = ownProcessStartTime();
    const mine: LockHolder = {
      pid: process.pid,
      hostname: HOST,
      ...(pidStartTime !== undefined ? { pidStartTime } : {}),
      sessionKey,
      acquiredAt: new Date().toISOString(),
      token: randomBytes(8).toString('hex'),
    };
    let waited = false;
    let created: Pick<Holding, 'fd' | 'ino'> | undefined;
    for (;;) {
      created = tryCreate(file, mine);
      if (created) break;
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
        throw new SessionLockError(
          `${what} is in use by ${describe(holder)}; gave up waiting for it (lock ${file})`,
          holder,
        );
      }
      await sleep(options.pollMs ?? POLL_MS, options.signal);
    }

    const { fd } = created;
    const touch =
      options.heartbeat === false
        ? undefined
        : setInterval(
            () => {
              try {
                futimesSync(fd, new Date(), new Date());
              } catch {
                // Closed meanwhile (released); nothing to prove.
              }
            },
            Math.max(1000, Math.min(30_000, staleMs / 4)),
          );
    touch?.unref();
    return holding(file, { fd, ino: created.ino, touch }, options.lingerMs ?? 0, leaveQueue);
  } catch (error) {
    leaveQueue();
    throw error;
  }
}

function holding(file: string, held: Holding, lingerMs: number, leaveQueue: () => void): SessionLock {
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      if (lingerMs > 0) {
        held.expire = setTimeout(() => {
          if (lingering.get(file) !== held) return;
          lingering.delete(file);
          drop(file, held);
        }, lingerMs);
        held.expire.unref();
        lingering.set(file, held);
        if (!cleanupOnExit) {
          cleanupOnExit = true;
          process.once('exit', () => {
            for (const [path, kept] of lingering) drop(path, kept);
          });
        }
      } else {
        drop(file, held);
      }
      leaveQueue();
    },
  };
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
