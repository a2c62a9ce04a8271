/**
 * Idempotency for side-effecting methods: the first call with a given key runs; a repeat
 * inside the window gets the first call's outcome (or waits for it, if it is still
 * running) without running again; a repeat with different params is refused. Keys are
 * kept in an append-only file under the state dir, so a retry after a gateway restart
 * (or a crash) still gets the first outcome. For a request the restart cut short, the
 * repeat asks the method what became of it (`recover`): still running (the acks again,
 * then the result), finished, or never accepted (the key is released: safe to send
 * again). A method that cannot tell says the outcome is unknown and does not run it
 * again. Bounded in entries and bytes, oldest evicted first.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE, writeFileAtomic } from '../../sdk/index.js';

export interface Outcome {
  ok: boolean;
  payload?: unknown;
  error?: { code: string; message: string; details?: unknown; retryable?: boolean; retryAfterMs?: number };
}

interface Entry {
  /** Fingerprint of the params the key was first used with. */
  params: string;
  outcome: Promise<Outcome>;
  /** Set once the outcome is known (and on disk). */
  settled?: Outcome;
  expiresAt: number;
  /** Interim responses (two-phase methods) the first call sent, replayed to repeats. */
  acks: unknown[];
  ackListeners: Set<(payload: unknown) => void>;
  /** Taken by a previous process that stopped before the outcome was known. */
  interrupted?: boolean;
  /** The method is being asked what became of it (the first retry after the restart). */
  recovering?: Promise<'released' | 'kept'>;
}

/** What the method knows of a request a restart cut short (RecoveredRequest in the SDK). */
export type Recovery =
  | { state: 'pending'; acks?: unknown[]; outcome: Promise<Outcome> }
  | { state: 'done'; outcome: Outcome }
  | { state: 'not-accepted' };

/** One line of the file: a key was taken (no `o` yet), or its outcome is known. */
interface Line {
  k: string;
  p: string;
  e: number;
  a?: unknown[];
  o?: Outcome;
}

export interface DedupeOptions {
  /** Append-only JSONL file; without one, keys live in memory only. */
  file?: string;
  maxEntries?: number;
  /** Rewrite the file without expired entries once it grows past this. */
  maxFileBytes?: number;
  now?: () => number;
}

export function idempotencyFile(stateDir: string): string {
  return join(stateDir, 'gateway', 'idempotency.jsonl');
}

export type DedupeResult = { outcome: Outcome; replayed: boolean } | { conflict: true };

/** The answer to a retry of a request that never reached the method's journal: nothing ran, send it again. */
export function notAcceptedOutcome(): Outcome {
  return {
    ok: false,
    error: {
      code: 'UNAVAILABLE',
      message:
        'the gateway restarted before this request was accepted, so nothing of it ran; it is safe to send again (with this idempotencyKey or a new one)',
      retryable: true,
      retryAfterMs: 0,
      details: { notAccepted: true },
    },
  };
}

/** The answer to a retry of a cut-short request whose method cannot tell what became of it. */
function unknownOutcome(acks: unknown[]): Outcome {
  return {
    ok: false,
    error: {
      code: 'UNAVAILABLE',
      message:
        'the gateway restarted before this request finished, and whether it took effect is not known; it is not run again (check its effect, then use a new idempotencyKey to run it again)',
      retryable: false,
      details: { interrupted: true, ...(acks.length ? { acks } : {}) },
    },
  };
}

/** Canonical JSON (sorted keys) of params, hashed: equal params, equal fingerprint. */
export function paramsFingerprint(params: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(params)) ?? 'undefined')
    .digest('base64url')
    .slice(0, 22);
}

export class DedupeCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly maxFileBytes: number;
  private readonly now: () => number;
  private fileBytes = 0;
  /** Kept open for appends; reopened after each rewrite. */
  private fd?: number;

  constructor(
    private readonly windowMs: number,
    private readonly options: DedupeOptions = {},
  ) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxFileBytes = options.maxFileBytes ?? 16 * 1024 * 1024;
    this.now = options.now ?? Date.now;
    this.load();
  }

  /**
   * Run `work` once per key within the window; returns the outcome and whether it was
   * replayed, or `conflict` when the key was used with other params. `work` gets a
   * function to record interim acks; a repeat receives the acks already sent, and later
   * ones as they happen, through `onAck` before the outcome.
   */
  async run(
    key: string,
    params: unknown,
    work: (recordAck: (payload: unknown) => void) => Promise<Outcome>,
    onAck?: (payload: unknown) => void,
    recover?: (acks: unknown[]) => Promise<Recovery>,
  ): Promise<DedupeResult> {
    const now = this.now();
    const fingerprint = paramsFingerprint(params);
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) {
      if (hit.params !== fingerprint) return { conflict: true };
      if (hit.interrupted) {
        hit.recovering ??= this.recoverEntry(key, hit, recover);
        // Never accepted: nothing ran, and the key is free again — the client sends it again when it likes.
        if ((await hit.recovering) === 'released') return { outcome: notAcceptedOutcome(), replayed: true };
      }
      if (onAck) {
        for (const payload of hit.acks) onAck(payload);
        hit.ackListeners.add(onAck);
      }
      try {
        return { outcome: await hit.outcome, replayed: true };
      } finally {
        if (onAck) hit.ackListeners.delete(onAck);
      }
    }
    const entry: Entry = {
      params: fingerprint,
      outcome: Promise.resolve({ ok: false }),
      expiresAt: now + this.windowMs,
      acks: [],
      ackListeners: new Set(),
    };
    this.entries.delete(key);
    this.entries.set(key, entry);
    // Taken before the work starts: a crash mid-way must not let a retry run it again.
    this.append({ k: key, p: fingerprint, e: entry.expiresAt });
    entry.outcome = work((payload) => this.ack(key, entry, payload)).then((outcome) =>
      this.settle(key, entry, outcome),
    );
    this.evict(now);
    return { outcome: await entry.outcome, replayed: false };
  }

  /**
   * The first retry of a request a restart cut short asks the method what became of it,
   * once; retries that come meanwhile share the answer. "not-accepted" releases the key;
   * the other answers become the entry's outcome.
   */
  private async recoverEntry(
    key: string,
    entry: Entry,
    recover?: (acks: unknown[]) => Promise<Recovery>,
  ): Promise<'released' | 'kept'> {
    let recovery: Recovery;
    try {
      recovery = recover ? await recover(entry.acks) : { state: 'done', outcome: unknownOutcome(entry.acks) };
    } catch (error) {
      recovery = {
        state: 'done',
        outcome: {
          ok: false,
          error: {
            code: 'UNAVAILABLE',
            message: `could not tell what became of this request after the restart: ${(error as Error).message}`,
            retryable: true,
          },
        },
      };
    }
    if (recovery.state === 'not-accepted') {
      if (this.entries.get(key) === entry) this.entries.delete(key);
      return 'released';
    }
    if (recovery.state === 'pending')
      for (const payload of recovery.acks ?? [])
        if (!entry.acks.some((ack) => sameAck(ack, payload))) this.ack(key, entry, payload);
    const outcome = recovery.state === 'pending' ? recovery.outcome : Promise.resolve(recovery.outcome);
    entry.outcome = outcome.then((result) => this.settle(key, entry, result));
    entry.interrupted = false;
    return 'kept';
  }

  private ack(key: string, entry: Entry, payload: unknown): void {
    entry.acks.push(payload);
    this.append({ k: key, p: entry.params, e: entry.expiresAt, a: entry.acks });
    for (const listener of entry.ackListeners) listener(payload);
  }

  private settle(key: string, entry: Entry, outcome: Outcome): Outcome {
    entry.settled = outcome;
    this.append({ k: key, p: entry.params, e: entry.expiresAt, o: outcome });
    return outcome;
  }

  /** Let go of the file (the server stops; a restart opens a new cache). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  get size(): number {
    return this.entries.size;
  }

  private evict(now: number): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && entry.expiresAt > now) break;
      this.entries.delete(key);
    }
  }

  private load(): void {
    const file = this.options.file;
    if (!file) return;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return;
    }
    const now = this.now();
    for (const raw of text.split('\n')) {
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        continue; // a line cut short by a crash
      }
      if (typeof line?.k !== 'string' || !(line.e > now)) continue;
      this.entries.delete(line.k);
      this.entries.set(line.k, restore(line));
    }
    this.evict(now);
    this.rewrite();
  }

  private append(line: Line): void {
    const file = this.options.file;
    if (!file) return;
    const text = `${JSON.stringify(line)}\n`;
    if (this.fileBytes + text.length > this.maxFileBytes) {
      this.evict(this.now());
      this.rewrite(line);
      return;
    }
    if (this.fd === undefined) {
      ensurePrivateDir(dirname(file));
      this.fd = openSync(file, 'a', PRIVATE_FILE_MODE);
    }
    // Not fsynced: a process crash keeps what was written; only a power loss could cost the tail.
    this.fileBytes += writeSync(this.fd, text);
  }

  /** The file with only live entries (and `extra`), written atomically. */
  private rewrite(extra?: Line): void {
    const file = this.options.file!;
    const lines: string[] = [];
    for (const [key, entry] of this.entries) {
      if (extra?.k === key) continue;
      lines.push(
        JSON.stringify({
          k: key,
          p: entry.params,
          e: entry.expiresAt,
          ...(entry.acks.length ? { a: entry.acks } : {}),
          ...(entry.settled ? { o: entry.settled } : {}),
        }),
      );
    }
    if (extra) lines.push(JSON.stringify(extra));
    const text = lines.length ? `${lines.join('\n')}\n` : '';
    writeFileAtomic(file, text, { fsync: false });
    this.fileBytes = Buffer.byteLength(text);
    this.close();
  }
}

/** An entry as the file left it; one without an outcome was cut short by a restart (the method is asked at the first retry). */
function restore(line: Line): Entry {
  const entry: Entry = {
    params: line.p,
    outcome: Promise.resolve(line.o ?? unknownOutcome(line.a ?? [])),
    expiresAt: line.e,
    acks: line.a ?? [],
    ackListeners: new Set(),
  };
  if (line.o) entry.settled = line.o;
  else entry.interrupted = true;
  return entry;
}

function sameAck(a: unknown, b: unknown): boolean {
  const runId = (value: unknown) =>
    value !== null && typeof value === 'object' ? (value as { runId?: unknown }).runId : undefined;
  return runId(a) !== undefined ? runId(a) === runId(b) : JSON.stringify(a) === JSON.stringify(b);
}
