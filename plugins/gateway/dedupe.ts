/**
 * Idempotency for side-effecting methods: the first call with a given key runs; a repeat
 * inside the window gets the first call's outcome (or waits for it, if it is still
 * running) without running again; a repeat with different params is refused. Keys are
 * kept in an append-only file under the state dir, so a retry after a gateway restart
 * (or a crash) still gets the first outcome. A request the restart interrupted is not run
 * a second time: its repeat is told so. Bounded in entries and bytes, oldest evicted first.
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
}

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

/** Canonical JSON (sorted keys) of params, hashed: equal params, equal fingerprint. */
export function paramsFingerprint(params: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
  };
  return createHash('sha256').update(JSON.stringify(canonical(params)) ?? 'undefined').digest('base64url').slice(0, 22);
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
  ): Promise<DedupeResult> {
    const now = this.now();
    const fingerprint = paramsFingerprint(params);
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) {
      if (hit.params !== fingerprint) return { conflict: true };
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
    const entry: Entry = { params: fingerprint, outcome: Promise.resolve({ ok: false }), expiresAt: now + this.windowMs, acks: [], ackListeners: new Set() };
    this.entries.delete(key);
    this.entries.set(key, entry);
    // Taken before the work starts: a crash mid-way must not let a retry run it again.
    this.append({ k: key, p: fingerprint, e: entry.expiresAt });
    entry.outcome = work((payload) => {
      entry.acks.push(payload);
      this.append({ k: key, p: fingerprint, e: entry.expiresAt, a: entry.acks });
      for (const listener of entry.ackListeners) listener(payload);
    }).then((outcome) => {
      entry.settled = outcome;
      this.append({ k: key, p: fingerprint, e: entry.expiresAt, o: outcome });
      return outcome;
    });
    this.evict(now);
    return { outcome: await entry.outcome, replayed: false };
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
      lines.push(JSON.stringify({ k: key, p: entry.params, e: entry.expiresAt, ...(entry.acks.length ? { a: entry.acks } : {}), ...(entry.settled ? { o: entry.settled } : {}) }));
    }
    if (extra) lines.push(JSON.stringify(extra));
    const text = lines.length ? `${lines.join('\n')}\n` : '';
    writeFileAtomic(file, text, { fsync: false });
    this.fileBytes = Buffer.byteLength(text);
    this.close();
  }
}

/** An entry as the file left it; one without an outcome was cut off by a restart. */
function restore(line: Line): Entry {
  const settled: Outcome = line.o ?? {
    ok: false,
    error: {
      code: 'UNAVAILABLE',
      message: 'the gateway restarted before this request finished; it is not run a second time (use a new idempotencyKey to run it again)',
      retryable: false,
      details: { interrupted: true, ...(line.a?.length ? { acks: line.a } : {}) },
    },
  };
  return { params: line.p, outcome: Promise.resolve(settled), settled, expiresAt: line.e, acks: line.a ?? [], ackListeners: new Set() };
}
