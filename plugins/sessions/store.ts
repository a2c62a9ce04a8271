/**
 * The per-agent session store: `<stateDir>/agents/<agentId>/sessions/sessions.json`, a map
 * of session key → SessionEntry. Every read-modify-write happens under a lock, in this
 * process (a promise chain per file) and across processes (a lock file: `claw agent
 * --local` writes the store beside a running gateway), so concurrent updates never
 * overwrite each other; each write replaces the file atomically, so a crash leaves the
 * previous store or the new one.
 *
 * The file is re-read (when it changed on disk) inside every update rather than trusted
 * from memory: deleting a key by hand is a supported way to reset a session, and an
 * in-memory copy would write the deleted entry straight back.
 *
 * A store that cannot be read (damaged JSON, not an object) is kept aside as
 * `sessions.json.corrupt-<ms>` and rebuilt from the transcripts (recover.ts), under the lock
 * like any write: refusing would stop every run of the agent, and starting empty would hide
 * every conversation, while the transcripts still hold them all.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  expandHome,
  keepCorruptCopy,
  parseJson5,
  resolveStateDir,
  writeFileAtomic,
  type Env,
  type Logger,
} from '../../sdk/index.js';
import {
  newSessionEntry,
  normalizeAgentId,
  type ResolvedSession,
  type ResolveOptions,
  type SessionEntry,
  type SessionLock,
  type SessionPatch,
  type SessionStore as SessionStoreContract,
  type SessionUpdater,
} from '../../sdk/sessions/index.js';
import { acquireFileLock, acquireSessionLock, type LockOptions } from './lock.js';
import { findSessions } from './recover.js';

export const STORE_FILE = 'sessions.json';
/** A store write takes milliseconds; waiting this long means its holder is stuck. */
const STORE_LOCK_TIMEOUT_MS = 30_000;

/** What a store throws when its file or a session id is unusable. */
export class SessionStoreError extends Error {
  constructor(
    readonly file: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${reason}`, options);
    this.name = 'SessionStoreError';
  }
}

/** The file is there but is no store: rebuilt once the store's lock is held. */
class UnreadableStoreError extends SessionStoreError {
  constructor(
    file: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(file, reason, options);
  }
}

export interface SessionStoreOptions {
  now?: () => number;
  /** The agent whose sessions these are, for keys of rebuilt sessions (default: the folder above `sessions`, else "main"). */
  agentId?: string;
  /** Told when an unreadable store was kept aside and rebuilt from the transcripts. */
  logger?: Pick<Logger, 'warn'>;
}

/**
 * Run-specific state that a reset clears; everything else (model and level overrides,
 * queue mode, send policy, labels, routing) belongs to the conversation and carries over.
 */
const RUN_STATE_FIELDS: ReadonlyArray<keyof SessionEntry> = [
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'contextTokens',
  'compactionCount',
  'memoryFlushCompactionCount',
  'memoryFlushAt',
  'abortedLastRun',
  'systemSent',
  'systemPromptReport',
];

/**
 * `<stateDir>/agents/<agentId>/sessions`, or the folder of `session.store` when set
 * (a path to sessions.json; `{agentId}` and `~` are expanded).
 */
export function resolveSessionsDir(agentId: string, options: { store?: string; env?: Env } = {}): string {
  const env = options.env ?? process.env;
  const agent = normalizeAgentId(agentId);
  if (options.store?.trim()) {
    return dirname(expandHome(options.store.trim().replaceAll('{agentId}', agent), env));
  }
  return join(resolveStateDir(env), 'agents', agent, 'sessions');
}

// Keyed by store file so that two SessionStore objects for the same folder share a lock.
const locks = new Map<string, Promise<unknown>>();

function withLock<T>(file: string, task: () => Promise<T> | T): Promise<T> {
  const previous = locks.get(file) ?? Promise.resolve();
  const run = previous.then(task);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  locks.set(file, settled);
  void settled.then(() => {
    if (locks.get(file) === settled) locks.delete(file);
  });
  return run;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function applyPatch(entry: SessionEntry, patch: SessionPatch): SessionEntry {
  const next: Record<string, unknown> = { ...entry };
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) delete next[field];
    else next[field] = value;
  }
  return next as unknown as SessionEntry;
}

/** Entries written by older versions may lack counters the type promises. */
function withCounters(value: Record<string, unknown>): SessionEntry {
  const entry = { ...value } as Record<string, unknown>;
  const number = (field: string, fallback: number) => {
    if (typeof entry[field] !== 'number' || !Number.isFinite(entry[field])) entry[field] = fallback;
  };
  number('updatedAt', 0);
  number('createdAt', entry.updatedAt as number);
  for (const field of ['inputTokens', 'outputTokens', 'totalTokens', 'contextTokens', 'compactionCount'])
    number(field, 0);
  return entry as unknown as SessionEntry;
}

type Sessions = Record<string, SessionEntry>;

interface PendingUpsert {
  key: string;
  change: SessionPatch | SessionUpdater;
  resolve: (entry: SessionEntry) => void;
  reject: (error: unknown) => void;
}

/** We write plain JSON; JSON5 (comments, trailing commas) only for files edited by hand. */
function parseStore(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return parseJson5(text, file);
  }
}

export class SessionStore implements SessionStoreContract {
  readonly dir: string;
  readonly file: string;
  readonly agentId: string;
  private readonly now: () => number;
  private readonly logger?: Pick<Logger, 'warn'>;
  private cache?: { stamp: string; sessions: Sessions };
  /** Upserts waiting for the next write. */
  private batch?: PendingUpsert[];

  constructor(dir: string, options: SessionStoreOptions = {}) {
    this.dir = dir;
    this.file = join(dir, STORE_FILE);
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.agentId = normalizeAgentId(
      options.agentId ?? (basename(dir) === 'sessions' ? basename(dirname(dir)) : undefined),
    );
  }

  static forAgent(
    agentId: string,
    options: { store?: string; env?: Env } & Omit<SessionStoreOptions, 'agentId'> = {},
  ): SessionStore {
    return new SessionStore(resolveSessionsDir(agentId, options), {
      now: options.now,
      logger: options.logger,
      agentId,
    });
  }

  async get(key: string): Promise<SessionEntry | undefined> {
    const entry = (await this.current())[key];
    return entry ? structuredClone(entry) : undefined;
  }

  /** Every entry, most recently updated first. */
  async list(): Promise<Array<{ key: string; entry: SessionEntry }>> {
    return Object.entries(await this.current())
      .map(([key, entry]) => ({ key, entry: structuredClone(entry) }))
      .sort((a, b) => b.entry.updatedAt - a.entry.updatedAt);
  }

  /** The sessions on disk; an unreadable store is rebuilt first, holding the locks a write holds. */
  private async current(): Promise<Sessions> {
    try {
      return this.load();
    } catch (error) {
      if (!(error instanceof UnreadableStoreError)) throw error;
      return withLock(this.file, () => this.exclusive(() => this.load(true)));
    }
  }

  /**
   * Creates or changes one entry and returns it. A missing entry starts from
   * `newSessionEntry()`; `updatedAt` becomes now unless the patch sets it.
   */
  upsert(key: string, change: SessionPatch | SessionUpdater): Promise<SessionEntry> {
    return new Promise<SessionEntry>((resolve, reject) => {
      // Group commit: upserts that arrive while the store is busy are applied together and
      // written once, so fifty sessions finishing runs at once cost one rewrite, not fifty.
      let batch = this.batch;
      if (!batch) {
        const fresh: PendingUpsert[] = [];
        this.batch = batch = fresh;
        void withLock(this.file, () =>
          this.exclusive(() => this.commit(fresh)).then(
            (settle) => settle.forEach((done) => done()),
            (error: unknown) => {
              // The lock was not had: nothing of this batch was written.
              if (this.batch === fresh) this.batch = undefined;
              for (const item of fresh) item.reject(error);
            },
          ),
        );
      }
      batch.push({ key, change, resolve, reject });
    });
  }

  /**
   * Applies a batch and writes it once. Returns how to settle each upsert, which the caller
   * does after releasing the lock, so whoever awaited an upsert finds the store unlocked.
   */
  private async commit(batch: PendingUpsert[]): Promise<Array<() => void>> {
    const settle: Array<() => void> = [];
    if (this.batch === batch) this.batch = undefined;
    const done: Array<[PendingUpsert, SessionEntry]> = [];
    let sessions: Sessions;
    try {
      sessions = { ...this.load(true) };
    } catch (error) {
      return batch.map((item) => () => item.reject(error));
    }
    let changed = false;
    for (const item of batch) {
      try {
        const current = sessions[item.key];
        const patch =
          typeof item.change === 'function'
            ? await item.change(current ? structuredClone(current) : undefined)
            : item.change;
        if (patch === undefined) {
          if (current) done.push([item, structuredClone(current)]);
          else {
            const error = new SessionStoreError(
              this.file,
              `no session "${item.key}" and the updater returned no change`,
            );
            settle.push(() => item.reject(error));
          }
          continue;
        }
        const now = this.now();
        const next = applyPatch(current ?? newSessionEntry(now), { updatedAt: now, ...patch });
        sessions[item.key] = next;
        changed = true;
        done.push([item, structuredClone(next)]);
      } catch (error) {
        settle.push(() => item.reject(error));
      }
    }
    try {
      if (changed) this.save(sessions);
    } catch (error) {
      return [
        ...settle,
        ...done.map(
          ([item]) =>
            () =>
              item.reject(error),
        ),
      ];
    }
    return [
      ...settle,
      ...done.map(
        ([item, entry]) =>
          () =>
            item.resolve(entry),
      ),
    ];
  }

  /** Removes the entry; its transcript stays on disk. True when there was one. */
  delete(key: string): Promise<boolean> {
    return withLock(this.file, () =>
      this.exclusive(() => {
        const sessions = this.load(true);
        if (!(key in sessions)) return false;
        const { [key]: _removed, ...rest } = sessions;
        this.save(rest);
        return true;
      }),
    );
  }

  /**
   * The session an inbound message (or a run) should use: the existing entry, touched,
   * or a new one with a fresh sessionId when there is none or `reset` says so.
   */
  resolve(key: string, options: ResolveOptions = {}): Promise<ResolvedSession> {
    const resets = (entry: SessionEntry) =>
      typeof options.reset === 'function' ? options.reset(structuredClone(entry)) : options.reset === true;
    return withLock(this.file, () => {
      // The common case writes nothing (the session exists, is fresh, and is not touched): no lock file needed.
      const existing = !options.patch && options.touch === false ? this.peek(key) : undefined;
      if (existing && !resets(existing)) return { entry: structuredClone(existing), isNew: false };
      return this.exclusive(() => {
        const sessions = this.load(true);
        const current = sessions[key];
        const now = this.now();
        const reset = current !== undefined && resets(current);

        let base: SessionEntry;
        if (!current) {
          base = newSessionEntry(now);
        } else if (reset) {
          const carried: Record<string, unknown> = { ...current };
          for (const field of RUN_STATE_FIELDS) delete carried[field];
          base = { ...(carried as unknown as SessionEntry), ...newSessionEntry(now) };
        } else {
          base = current;
        }
        if (current && !reset && !options.patch && options.touch === false) {
          return { entry: structuredClone(current), isNew: false };
        }
        const entry = applyPatch(base, { updatedAt: now, ...options.patch });
        this.save({ ...sessions, [key]: entry });
        const result: ResolvedSession = { entry: structuredClone(entry), isNew: !current || reset };
        if (reset && current) result.previous = structuredClone(current);
        return result;
      });
    });
  }

  /** Runs a read-modify-write holding the store's lock file (other processes write here too). */
  private async exclusive<T>(task: () => Promise<T> | T): Promise<T> {
    const lock = await acquireFileLock(
      join(this.dir, 'locks', `${STORE_FILE}.lock`),
      `the session store ${this.file}`,
      STORE_FILE,
      { timeoutMs: STORE_LOCK_TIMEOUT_MS, pollMs: 5, heartbeat: false },
    );
    try {
      return await task();
    } finally {
      lock.release();
    }
  }

  /**
   * Holds the session's write lock (`locks/<key>.lock` beside the store) until release():
   * one writer per session across processes, taken before the run picks its transcript.
   */
  lock(sessionKey: string, options?: LockOptions): Promise<SessionLock> {
    return acquireSessionLock(this.dir, sessionKey, options);
  }

  /** `<dir>/<sessionId>.jsonl`, or `<dir>/<sessionId>-topic-<threadId>.jsonl` for a topic. */
  transcriptPath(sessionId: string, threadId?: string | number): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(sessionId)) {
      throw new SessionStoreError(this.file, `invalid sessionId "${sessionId}"`);
    }
    if (threadId === undefined || String(threadId).trim() === '') return join(this.dir, `${sessionId}.jsonl`);
    // Thread ids come from the network; keep them from naming another path.
    const safeThread = String(threadId)
      .trim()
      .replace(/[^A-Za-z0-9._-]/g, '_');
    return join(this.dir, `${sessionId}-topic-${safeThread}.jsonl`);
  }

  /** One entry without taking the lock file; undefined when the store must be rebuilt first (the caller then locks). */
  private peek(key: string): SessionEntry | undefined {
    try {
      return this.load()[key];
    } catch (error) {
      if (error instanceof UnreadableStoreError) return undefined;
      throw error;
    }
  }

  /**
   * The store as on disk. An unreadable file is rebuilt when `locked` (the caller holds the
   * lock file, so no other process rebuilds or writes meanwhile); otherwise that is an
   * UnreadableStoreError, and the caller takes the lock and asks again.
   */
  private load(locked = false): Sessions {
    let stamp: string;
    try {
      const stat = statSync(this.file);
      stamp = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.cache = undefined;
        return {};
      }
      throw error;
    }
    if (this.cache?.stamp === stamp) return this.cache.sessions;

    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    let data: unknown;
    let problem: UnreadableStoreError | undefined;
    try {
      data = text.trim() === '' ? {} : parseStore(text, this.file);
    } catch (error) {
      problem = new UnreadableStoreError(this.file, `cannot parse the session store (${(error as Error).message})`, {
        cause: error,
      });
    }
    if (!isRecord(data)) {
      problem ??= new UnreadableStoreError(this.file, 'the session store is not a JSON object');
      if (!locked) throw problem;
      return this.rebuild(problem.reason);
    }
    const sessions: Sessions = {};
    for (const [key, value] of Object.entries(data)) {
      // An entry without a sessionId cannot name a transcript; treat it as deleted.
      if (isRecord(value) && typeof value.sessionId === 'string' && value.sessionId) {
        sessions[key] = withCounters(value);
      }
    }
    this.cache = { stamp, sessions };
    return sessions;
  }

  /** Keeps the unreadable file aside, rebuilds the store from the transcripts and writes it. The caller holds the lock. */
  private rebuild(reason: string): Sessions {
    const kept = keepCorruptCopy(this.file, this.now());
    const found = findSessions(this.dir, this.agentId);
    const sessions: Sessions = {};
    // Counters start at zero, as in a new session: the next run reports real ones.
    for (const session of found.sessions) {
      sessions[session.key] = {
        ...newSessionEntry(session.updatedAt, session.sessionId),
        createdAt: session.createdAt,
      };
    }
    this.save(sessions);
    const recovered = found.sessions.filter((session) => session.recovered).length;
    const listedAs = `agent:${this.agentId}:recovered:<sessionId>`;
    const unnamed =
      recovered === 0
        ? ''
        : `; ${recovered} transcript(s) did not name their session key and are listed as ${listedAs}`;
    this.logger?.warn(
      `session store ${this.file}: ${reason}; kept it as ${kept} and rebuilt the store ` +
        `from the ${found.transcripts} transcript(s) in ${this.dir}: ${found.sessions.length} session(s) listed${unnamed}`,
      { file: this.file, kept, sessions: found.sessions.length },
    );
    return sessions;
  }

  private save(sessions: Sessions): void {
    // Rewritten after every run: the rename keeps it whole across a crash, and skipping the
    // flush to disk saves about a millisecond per turn (power loss could cost the last run's
    // counters, never the file). Compact JSON: indenting it made serialising the store the
    // gateway's largest cost per turn (a soak ran at 59 instead of 96 turns/s).
    writeFileAtomic(this.file, `${JSON.stringify(sessions)}\n`, { fsync: false });
    // What we just wrote is what the next load would parse; remember it under the new stamp.
    try {
      const stat = statSync(this.file);
      this.cache = { stamp: `${stat.ino}:${stat.size}:${stat.mtimeMs}`, sessions };
    } catch {
      this.cache = undefined;
    }
  }
}
