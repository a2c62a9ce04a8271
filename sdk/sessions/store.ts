/**
 * The session store contract: per agent, a map of session key → SessionEntry, and the
 * session write lock. The sessions plugin implements it (sessions.json beside JSONL
 * transcripts); everyone else gets a store from the "sessions" service, so one store per
 * file serves the whole process and no two copies lose each other's writes.
 */
import { randomUUID } from 'node:crypto';

export type SessionQueueMode = 'steer' | 'followup' | 'collect' | 'steer-backlog' | 'interrupt' | 'queue';

/** Per-session `/queue` override. */
export interface SessionQueueOverride {
  mode?: SessionQueueMode;
  debounceMs?: number;
  cap?: number;
  drop?: 'old' | 'new' | 'summarize';
}

/** Where a session's conversation came from (best-effort, from the inbound envelope). */
export interface SessionOrigin {
  label?: string;
  /** Normalized channel id. */
  provider?: string;
  from?: string;
  to?: string;
  accountId?: string;
  threadId?: string | number;
}

export interface DeliveryContext {
  channel?: string;
  to?: string;
  accountId?: string;
  threadId?: string | number;
}

export interface SessionEntry {
  /** Names the transcript file; replaced on reset, while the key stays. */
  sessionId: string;
  /** ms since the epoch. */
  createdAt: number;
  /** ms since the epoch; reset policy measures staleness from here. */
  updatedAt: number;

  /** Model override for this session (`/model`, `/new <model>`). */
  model?: string;
  provider?: string;
  /** Last Anthropic call (prompt cache refresh), for cache-ttl pruning. */
  lastCacheTouchAt?: number;
  /** The model that answered the last run (`provider/model`). */
  lastModel?: string;
  /** `/model …@<profileId>`: the auth profile tried first in this session. */
  authProfileOverride?: string;
  thinkingLevel?: string;
  verboseLevel?: string;
  reasoningLevel?: string;
  elevatedLevel?: string;
  /** `/usage` footer mode; absent inherits `messages.responseUsage`. */
  responseUsage?: 'off' | 'tokens' | 'full';
  queue?: SessionQueueOverride;

  /** Usage reported by the last run. */
  inputTokens: number;
  outputTokens: number;
  /** Tokens the current context occupies. */
  totalTokens: number;
  /** Context window `totalTokens` is measured against (0 while unknown). */
  contextTokens: number;
  compactionCount: number;
  /** `compactionCount` at the last pre-compaction memory flush, so one runs once per cycle. */
  memoryFlushCompactionCount?: number;
  memoryFlushAt?: number;
  abortedLastRun?: boolean;
  /** The system prompt was already sent in this session. */
  systemSent?: boolean;
  /** Opaque: what went into the last system prompt (for `/context`). */
  systemPromptReport?: Record<string, unknown>;

  // UI labelling.
  label?: string;
  displayName?: string;
  channel?: string;
  chatType?: 'direct' | 'group' | 'channel';
  subject?: string;
  room?: string;
  space?: string;
  origin?: SessionOrigin;

  // Where replies go when a run is not triggered by an inbound message.
  lastChannel?: string;
  lastTo?: string;
  lastAccountId?: string;
  lastThreadId?: string | number;
  deliveryContext?: DeliveryContext;

  /** `/send on|off` override; absent means the config rules apply. */
  sendPolicy?: 'allow' | 'deny';
  /** Key of the session that spawned this one (sub-agents). */
  spawnedBy?: string;
  /** How many spawns deep this session is: 1 for a child of a main session (unset: not spawned). */
  spawnDepth?: number;
}

/**
 * A change to an entry. Fields are replaced, not merged; a field set to `undefined` is
 * removed (JSON has no undefined, and removal is how overrides like `sendPolicy` clear).
 */
export type SessionPatch = { [K in keyof SessionEntry]?: SessionEntry[K] | undefined };

/**
 * Returns the patch to apply, or undefined to leave the store untouched (which is an
 * error when there is no entry yet: upsert has nothing to return).
 */
export type SessionUpdater = (
  entry: SessionEntry | undefined,
) => SessionPatch | undefined | Promise<SessionPatch | undefined>;

export interface ResolveOptions {
  /**
   * Start a new session (new sessionId) even when an entry exists: true for `/new`,
   * cron runs and manual resets; a function to decide from the current entry (staleness)
   * while the store is locked.
   */
  reset?: boolean | ((entry: SessionEntry) => boolean);
  /** Applied to the resolved entry in the same write. */
  patch?: SessionPatch;
  /** Set updatedAt on an existing entry even when nothing else changes (default true). */
  touch?: boolean;
}

export interface ResolvedSession {
  entry: SessionEntry;
  /** The sessionId was minted by this call (no entry, or reset). */
  isNew: boolean;
  /** The entry that was replaced by a reset. */
  previous?: SessionEntry;
}

/** A fresh entry: what a store starts a new session (or a reset one) from. */
export function newSessionEntry(now: number = Date.now(), sessionId: string = randomUUID()): SessionEntry {
  return {
    sessionId,
    createdAt: now,
    updatedAt: now,
    inputTokens: 0,
    outputTokens: 0,
    totalTokens: 0,
    contextTokens: 0,
    compactionCount: 0,
  };
}

/** Who holds a session lock. */
export interface SessionLockInfo {
  pid: number;
  hostname: string;
  /** ISO 8601. */
  acquiredAt: string;
}

export interface SessionLock {
  readonly file: string;
  release(): void;
}

/** A session lock that could not be had (timed out, aborted); `holder` names who has it. */
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
  /** Called once when the lock is busy and the caller starts waiting. */
  onWait?: (holder: SessionLockInfo | undefined) => void;
}

/**
 * One agent's sessions. Every read-modify-write is atomic across processes (`claw agent
 * --local` writes beside a running gateway), and an entry deleted on disk stays deleted.
 */
export interface SessionStore {
  /** The folder of the store and its transcripts. */
  readonly dir: string;
  /** The store file itself (sessions.json). */
  readonly file: string;
  readonly agentId: string;
  get(key: string): Promise<SessionEntry | undefined>;
  /** Every entry, most recently updated first. */
  list(): Promise<Array<{ key: string; entry: SessionEntry }>>;
  /**
   * Creates or changes one entry and returns it. A missing entry starts from
   * `newSessionEntry()`; `updatedAt` becomes now unless the patch sets it.
   */
  upsert(key: string, change: SessionPatch | SessionUpdater): Promise<SessionEntry>;
  /** Removes the entry; its transcript stays on disk. True when there was one. */
  delete(key: string): Promise<boolean>;
  /**
   * The session an inbound message (or a run) should use: the existing entry, touched,
   * or a new one with a fresh sessionId when there is none or `reset` says so.
   */
  resolve(key: string, options?: ResolveOptions): Promise<ResolvedSession>;
  /**
   * Holds the session's write lock until release(): one writer per session across
   * processes, taken before the run picks its transcript. Throws SessionLockError.
   */
  lock(sessionKey: string, options?: SessionLockOptions): Promise<SessionLock>;
  /** The transcript file of a session id (and topic thread). */
  transcriptPath(sessionId: string, threadId?: string | number): string;
}
