/**
 * The intake journal: every message the agent accepts is on disk before anyone is told
 * it was accepted, so a crash or a restart never loses one. One append-only JSONL file per
 * agent (`<stateDir>/agents/<agentId>/intake.jsonl`, 0600):
 *
 *   {"t":"accepted","id":runId,"at":ms,"input":{…}}   the message, fsync'd before the ack
 *   {"t":"started","id":runId,"file":transcript,"offset":bytes}   its turn began there
 *   {"t":"resume","id":runId,"attempt":n}              a restart re-dispatched it (fsync'd first)
 *   {"t":"done","id":runId,"status":…}                 answered, failed or aborted by the user
 *   {"t":"seen","k":dedupeKey,"at":ms}                 a finished channel message, kept so a
 *                                                      redelivery after a restart is a duplicate
 *
 * A run that is accepted and not done is open; the gateway resumes open runs at start.
 *
 * Speed: an fsync that changes a file's size commits the filesystem's journal, which also
 * flushes whatever else the turn wrote (transcripts, the session store) — milliseconds on
 * a busy disk. So the file is preallocated: written full of NUL bytes once, then records
 * overwrite the padding in place and fdatasync flushes just those pages. Readers stop at
 * the first NUL. Each record batch is one write, so a kill leaves whole lines and at worst
 * one torn last line (a power cut mid-write), which the reader skips. When the padding
 * runs out, and at every open, the file is rewritten (temp, fsync, rename) with only the
 * open runs, so it stays small.
 */
import { appendFileSync, closeSync, fdatasync, fsyncSync, openSync, readdirSync, readFileSync, readSync, renameSync, writeSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../fs.js';
import type { DeliveryTarget, DispatchInput, RunStatus } from './dispatch.js';

export const INTAKE_FILE = 'intake.jsonl';
/** Room preallocated for records; when it is used up the journal is rewritten with only the open runs. */
const PREALLOCATE_BYTES = 1024 * 1024;
/** How long a finished channel message's id keeps a redelivery from running again. */
export const INTAKE_DEDUPE_WINDOW_MS = 20 * 60_000;

/** Raised instead of accepting a message while the gateway is shutting down or restarting. */
export class IntakeClosedError extends Error {
  constructor(reason = 'the gateway is shutting down') {
    super(`${reason}: the message was not accepted; send it again once the gateway is back`);
    this.name = 'IntakeClosedError';
  }
}

/** What is kept of a DispatchInput: everything a restart needs to run it again (no callbacks, no custom transport). */
export type IntakeInput = Omit<DispatchInput, 'onEvent' | 'deliver' | 'agentId' | 'sessionKey'> & {
  agentId: string;
  sessionKey: string;
  deliver?: Omit<DeliveryTarget, 'send'>;
};

export type IntakeStatus = RunStatus | 'merged' | 'abandoned';

type IntakeRecord =
  | { t: 'accepted'; id: string; at: number; input: IntakeInput; k?: string }
  | { t: 'started'; id: string; file: string; offset: number }
  | { t: 'resume'; id: string; attempt: number }
  | { t: 'done'; id: string; status: IntakeStatus }
  | { t: 'seen'; k: string; at: number };

/** An accepted run that has not finished. */
export interface OpenRun {
  id: string;
  at: number;
  input: IntakeInput;
  /** Dedupe key of a channel message. */
  key?: string;
  /** Where its turns began: transcript file and its size then (first start first). */
  starts: Array<{ file: string; offset: number }>;
  /** Automatic resumes charged so far. */
  attempts: number;
}

export interface JournalRead {
  open: OpenRun[];
  /** Dedupe keys of recent channel messages (open or finished) with when they came. */
  seen: Map<string, number>;
  skippedLines: number;
}

function parse(raw: string, now: number): JournalRead {
  const end = raw.indexOf('\0');
  const text = end < 0 ? raw : raw.slice(0, end);
  const open = new Map<string, OpenRun>();
  const seen = new Map<string, number>();
  let skippedLines = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let record: IntakeRecord;
    try {
      record = JSON.parse(line) as IntakeRecord;
    } catch {
      skippedLines++;
      continue;
    }
    switch (record?.t) {
      case 'accepted': {
        const previous = open.get(record.id);
        // A later "accepted" for the same id replaces its input (queued messages merged into one turn).
        open.set(record.id, { id: record.id, at: previous?.at ?? record.at, input: record.input, key: record.k ?? previous?.key, starts: previous?.starts ?? [], attempts: previous?.attempts ?? 0 });
        if (record.k) seen.set(record.k, record.at);
        break;
      }
      case 'started':
        open.get(record.id)?.starts.push({ file: record.file, offset: record.offset });
        break;
      case 'resume': {
        const run = open.get(record.id);
        if (run) run.attempts = Math.max(run.attempts, record.attempt);
        break;
      }
      case 'done':
        open.delete(record.id);
        break;
      case 'seen':
        seen.set(record.k, record.at);
        break;
      default:
        skippedLines++;
    }
  }
  for (const [key, at] of seen) if (now - at > INTAKE_DEDUPE_WINDOW_MS) seen.delete(key);
  return { open: [...open.values()], seen, skippedLines };
}

/** One agent's journal. Not safe to share between processes: the gateway (single, locked) owns it. */
export class IntakeJournal {
  private fd?: number;
  private readonly open = new Map<string, OpenRun>();
  private readonly seen = new Map<string, number>();
  /** Where the next record goes; the file is preallocated up to `capacity`. */
  private offset = 0;
  private capacity = 0;
  private inflight?: Promise<void>;
  private queued?: Promise<void>;
  private closing = false;

  constructor(
    readonly file: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Read what a previous process left, rewrite the file with only that, and open it for appends. */
  load(): JournalRead {
    let text = '';
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const read = parse(text, this.now());
    for (const run of read.open) this.open.set(run.id, run);
    for (const [key, at] of read.seen) this.seen.set(key, at);
    this.rewrite();
    return read;
  }

  /**
   * Accepted: written before this returns (a kill no longer loses it; a failed write
   * throws), fsync'd when the promise resolves (a power cut no longer loses it either).
   */
  accept(id: string, input: IntakeInput, at: number, key?: string): Promise<void> {
    const run: OpenRun = { id, at, input, ...(key ? { key } : {}), starts: [], attempts: 0 };
    this.open.set(id, run);
    if (key) this.seen.set(key, at);
    try {
      this.append({ t: 'accepted', id, at, input, ...(key ? { k: key } : {}) });
    } catch (error) {
      this.open.delete(id);
      throw error;
    }
    return this.flush();
  }

  /** Queued messages now run as one turn with `input` under `id`; `merged` are finished by it. */
  merge(id: string, input: IntakeInput, merged: string[]): void {
    const records: IntakeRecord[] = [];
    const previous = this.open.get(id);
    this.open.set(id, { id, at: previous?.at ?? this.now(), input, ...(previous?.key ? { key: previous.key } : {}), starts: previous?.starts ?? [], attempts: previous?.attempts ?? 0 });
    records.push({ t: 'accepted', id, at: previous?.at ?? this.now(), input });
    for (const other of merged) {
      if (other === id || !this.open.delete(other)) continue;
      records.push({ t: 'done', id: other, status: 'merged' });
    }
    // One write: a kill lands before or after the whole merge.
    this.append(...records);
  }

  /** The run's turn begins; `offset` is the transcript's size before it. Written, not fsync'd. */
  started(id: string, file: string, offset: number): void {
    const run = this.open.get(id);
    if (!run) return;
    run.starts.push({ file, offset });
    this.append({ t: 'started', id, file, offset });
  }

  /** Charge a resume attempt to each run before re-dispatching it, so a crash during the resume is counted. */
  async resuming(ids: string[]): Promise<void> {
    const records: IntakeRecord[] = [];
    for (const id of ids) {
      const run = this.open.get(id);
      if (!run) continue;
      run.attempts++;
      records.push({ t: 'resume', id, attempt: run.attempts });
    }
    if (records.length === 0) return;
    this.append(...records);
    await this.flush();
  }

  /** Finished: written at once (a kill after this never re-runs it); fsync'd with the next batch. */
  done(id: string, status: IntakeStatus): void {
    const run = this.open.get(id);
    if (!run) return;
    this.open.delete(id);
    this.append({ t: 'done', id, status });
  }

  isOpen(id: string): boolean {
    return this.open.has(id);
  }

  get openCount(): number {
    return this.open.size;
  }

  /** Flush and close, keeping the open runs and recent dedupe keys. */
  async close(): Promise<void> {
    await this.queued?.catch(() => {});
    await this.inflight?.catch(() => {});
    if (this.fd === undefined) return;
    this.closing = true;
    this.rewrite();
  }

  private append(...records: IntakeRecord[]): void {
    const data = Buffer.from(records.map((record) => `${JSON.stringify(record)}\n`).join(''), 'utf8');
    if (this.fd === undefined) {
      // A run stopped by the shutdown that settles after the close: the closed file has no padding.
      if (this.closing) return appendFileSync(this.file, data, { mode: PRIVATE_FILE_MODE });
      throw new Error(`the intake journal ${this.file} is not open`);
    }
    // Out of room: the rewrite keeps every open run (those just recorded included), with fresh padding.
    if (this.offset + data.length > this.capacity) return this.rewrite();
    writeSync(this.fd, data, 0, data.length, this.offset);
    this.offset += data.length;
  }

  /**
   * A datasync that starts after this call: waiters share one in flight, or the one queued
   * behind it (group commit), and the event loop never blocks on the disk.
   */
  private flush(): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.inflight) {
      const fd = this.fd!;
      this.inflight = new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve()))).finally(() => (this.inflight = undefined));
      return this.inflight;
    }
    const next = () => {
      this.queued = undefined;
      return this.flush();
    };
    this.queued = this.inflight.then(next, next);
    return this.queued;
  }

  /** Replace the file with the open runs and recent dedupe keys (temp + fsync + rename), then append to it. */
  private rewrite(): void {
    const now = this.now();
    const lines: string[] = [];
    for (const [key, at] of this.seen) {
      if (now - at > INTAKE_DEDUPE_WINDOW_MS) this.seen.delete(key);
    }
    const openKeys = new Set([...this.open.values()].map((run) => run.key));
    for (const [key, at] of this.seen) if (!openKeys.has(key)) lines.push(JSON.stringify({ t: 'seen', k: key, at } satisfies IntakeRecord));
    for (const run of this.open.values()) {
      lines.push(JSON.stringify({ t: 'accepted', id: run.id, at: run.at, input: run.input, ...(run.key ? { k: run.key } : {}) } satisfies IntakeRecord));
      for (const start of run.starts) lines.push(JSON.stringify({ t: 'started', id: run.id, ...start } satisfies IntakeRecord));
      if (run.attempts > 0) lines.push(JSON.stringify({ t: 'resume', id: run.id, attempt: run.attempts } satisfies IntakeRecord));
    }
    const dir = dirname(this.file);
    ensurePrivateDir(dir);
    const temp = join(dir, `.${basename(this.file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    const content = Buffer.from(lines.length ? `${lines.join('\n')}\n` : '', 'utf8');
    // An empty journal stays an empty file (nothing to resume); one in use gets its padding.
    const capacity = this.closing ? content.length : content.length + PREALLOCATE_BYTES;
    const fd = openSync(temp, 'w', PRIVATE_FILE_MODE);
    try {
      writeSync(fd, content);
      if (capacity > content.length) writeSync(fd, Buffer.alloc(capacity - content.length));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, this.file);
    syncDir(dir);
    const previous = this.fd;
    // A datasync in flight on the old file finishes first (its records are in the new one too).
    if (previous !== undefined) void Promise.allSettled([this.inflight]).then(() => closeSync(previous));
    this.fd = this.closing ? undefined : openSync(this.file, 'r+');
    this.offset = content.length;
    this.capacity = capacity;
  }
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems cannot fsync a directory; the rename is still atomic.
  }
}

export function intakeFile(stateDir: string, agentId: string): string {
  return join(stateDir, 'agents', agentId, INTAKE_FILE);
}

/** Whether any agent's journal may hold unfinished runs or recent dedupe keys (it has a first record): cheap, no parsing. */
export function hasPendingIntake(stateDir: string): boolean {
  const root = join(stateDir, 'agents');
  if (!existsSync(root)) return false;
  const first = Buffer.alloc(1);
  for (const agentId of readdirSync(root)) {
    let fd: number;
    try {
      fd = openSync(join(root, agentId, INTAKE_FILE), 'r');
    } catch {
      continue; // No journal for this agent.
    }
    try {
      if (readSync(fd, first, 0, 1, 0) === 1 && first[0] !== 0) return true;
    } finally {
      closeSync(fd);
    }
  }
  return false;
}

/** Agent ids that have a journal. */
export function journaledAgents(stateDir: string): string[] {
  const root = join(stateDir, 'agents');
  if (!existsSync(root)) return [];
  return readdirSync(root).filter((agentId) => existsSync(join(root, agentId, INTAKE_FILE)));
}
