/**
 * The intake journal: one durable unit per message. Every message the agent accepts is on
 * disk before anyone is told it was accepted, and it stays open until a reply that answers
 * it has been delivered (or an error naming it was). Whatever turn it joins — alone, in a
 * collected batch, steered into a running turn — the journal says which, so a crash loses
 * none of them and answers none twice. One append-only JSONL file per agent
 * (`<stateDir>/agents/<agentId>/intake.jsonl`, 0600):
 *
 *   {"t":"accepted","id":M,"at":ms,"input":{…},"k"?:dedupe,"rk"?:request}  the message, fsync'd before the ack
 *   {"t":"turn","id":T,"ids":[M…],"file":transcript,"offset":bytes}          a turn for these messages began there
 *   {"t":"join","id":T,"ids":[M…]}                                           steered messages the running turn took
 *   {"t":"resume","id":M,"attempt":n}                                        a restart continued its turn (fsync'd first)
 *   {"t":"undelivered","id":T,"ids":[M…],"reply":{…},"attempt":n,"next":ms}  answered; the reply failed to send, retry at next
 *   {"t":"done","ids":[M…],"status":s}                                       answered and delivered, failed, or stopped by the user
 *   {"t":"seen","k":dedupe,"at":ms}                                          a finished channel message (a redelivery is a duplicate)
 *   {"t":"finished","rk":request,"id":M,"status":s,"at":ms}                  a finished gateway request, for truthful retries
 *
 * Speed: an fsync that changes a file's size commits the filesystem's journal, which also
 * flushes whatever else the turn wrote (transcripts, the session store) — milliseconds on
 * a busy disk. So the file is preallocated: written full of NUL bytes once, then records
 * overwrite the padding in place and fdatasync flushes just those pages. Readers stop at
 * the first NUL. Each record batch is one write, so a kill leaves whole lines and at worst
 * one torn last line (a power cut mid-write), which the reader skips. When the padding
 * runs out, and at every open, the file is rewritten (temp, fsync, rename) with only what
 * is still open, so it stays small.
 */
import {
  appendFileSync,
  closeSync,
  existsSync,
  fdatasync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../sdk/index.js';
import type { DeliveryTarget, DispatchInput, RunStatus } from '../../sdk/agent/index.js';

/**
 * Where an agent's journal lives. The manifest's `activation.onStartupIfState` names the
 * same files, so the host loads this plugin at a start that has messages to resume.
 */
export const INTAKE_FILE = 'intake.jsonl';

export function intakeFile(stateDir: string, agentId: string): string {
  return join(stateDir, 'agents', agentId, INTAKE_FILE);
}

/** Agent ids that have a journal. */
export function journaledAgents(stateDir: string): string[] {
  const root = join(stateDir, 'agents');
  if (!existsSync(root)) return [];
  return readdirSync(root).filter((agentId) => existsSync(join(root, agentId, INTAKE_FILE)));
}

/** Room preallocated for records; when it is used up the journal is rewritten with only what is open. */
const PREALLOCATE_BYTES = 1024 * 1024;
/** How long a finished channel message's id keeps a redelivery from running again, and a finished request's key is known. */
export const INTAKE_DEDUPE_WINDOW_MS = 20 * 60_000;
/** At most this many finished request keys are kept (the oldest go first). */
const MAX_FINISHED_KEYS = 2000;

/** What is kept of a DispatchInput: everything a restart needs to run it again (no callbacks, no custom transport). */
export type IntakeInput = Omit<DispatchInput, 'onEvent' | 'deliver' | 'agentId' | 'sessionKey'> & {
  agentId: string;
  sessionKey: string;
  deliver?: Omit<DeliveryTarget, 'send'>;
};

export type IntakeStatus = RunStatus | 'abandoned' | 'undelivered' | 'dropped';

/** A reply that is written (in the transcript) but not yet delivered. */
export interface UndeliveredReply {
  /** The turn that wrote it. */
  turn: string;
  reply: { text: string; media: string[]; replyTo?: string };
  /** Failed delivery rounds so far, and when to try next (epoch ms). */
  attempt: number;
  next: number;
  error?: string;
}

/** An accepted message that is not finished. */
export interface OpenMessage {
  id: string;
  at: number;
  input: IntakeInput;
  /** Dedupe key of a channel message. */
  key?: string;
  /** The gateway request (method and idempotencyKey) that brought it. */
  requestKey?: string;
  /** Resumes of its turn charged so far. */
  attempts: number;
  /** The last turn it belongs to. */
  turn?: string;
  undelivered?: UndeliveredReply;
}

/** A turn: the messages it answers and where its transcript lines begin. */
export interface TurnRecord {
  id: string;
  ids: string[];
  file: string;
  offset: number;
  /** Written by an older claw, whose turns did not stamp their transcript lines with the runId. */
  legacy?: boolean;
}

type Record =
  | { t: 'accepted'; id: string; at: number; input: IntakeInput; k?: string; rk?: string }
  | { t: 'turn'; id: string; ids: string[]; file: string; offset: number; legacy?: boolean }
  | { t: 'started'; id: string; file: string; offset: number }
  | { t: 'join'; id: string; ids: string[] }
  | { t: 'resume'; id: string; attempt: number }
  | ({ t: 'undelivered'; id: string; ids: string[] } & Omit<UndeliveredReply, 'turn'>)
  | { t: 'done'; ids: string[]; status: IntakeStatus }
  | { t: 'seen'; k: string; at: number }
  | { t: 'finished'; rk: string; id: string; status: IntakeStatus; at: number };

export interface FinishedRequest {
  id: string;
  status: IntakeStatus;
  at: number;
}

export interface JournalRead {
  /** Open messages, oldest first. */
  open: OpenMessage[];
  turns: Map<string, TurnRecord>;
  /** Dedupe keys of recent channel messages (open or finished) with when they came. */
  seen: Map<string, number>;
  skippedLines: number;
}

/** The journal's state, rebuilt from its records (at load) and kept current as records are written. */
class JournalState {
  readonly open = new Map<string, OpenMessage>();
  readonly turns = new Map<string, TurnRecord>();
  readonly seen = new Map<string, number>();
  readonly finished = new Map<string, FinishedRequest>();

  apply(record: Record, now: number): boolean {
    switch (record?.t) {
      case 'accepted': {
        const message: OpenMessage = { id: record.id, at: record.at, input: record.input, attempts: 0 };
        if (record.k) message.key = record.k;
        if (record.rk) message.requestKey = record.rk;
        this.open.set(record.id, message);
        if (record.k) this.seen.set(record.k, record.at);
        return true;
      }
      case 'turn':
        // A turn continued after a restart keeps its id; it moves to the end, where it now begins.
        this.turns.delete(record.id);
        this.turns.set(record.id, {
          id: record.id,
          ids: [...record.ids],
          file: record.file,
          offset: record.offset,
          ...(record.legacy ? { legacy: true } : {}),
        });
        for (const id of record.ids) {
          const message = this.open.get(id);
          if (message) message.turn = record.id;
        }
        return true;
      case 'started':
        // An older claw's journal: one run per message, its turn unstamped.
        return this.apply(
          { t: 'turn', id: record.id, ids: [record.id], file: record.file, offset: record.offset, legacy: true },
          now,
        );
      case 'join': {
        const turn = this.turns.get(record.id);
        if (!turn) return true;
        for (const id of record.ids) {
          if (!turn.ids.includes(id)) turn.ids.push(id);
          const message = this.open.get(id);
          if (message) message.turn = record.id;
        }
        return true;
      }
      case 'resume': {
        const message = this.open.get(record.id);
        if (message) message.attempts = Math.max(message.attempts, record.attempt);
        return true;
      }
      case 'undelivered':
        for (const id of record.ids) {
          const message = this.open.get(id);
          if (message)
            message.undelivered = {
              turn: record.id,
              reply: record.reply,
              attempt: record.attempt,
              next: record.next,
              ...(record.error ? { error: record.error } : {}),
            };
        }
        return true;
      case 'done':
        for (const id of record.ids) {
          const message = this.open.get(id);
          if (!message) continue;
          this.open.delete(id);
          if (message.requestKey) this.finished.set(message.requestKey, { id, status: record.status, at: now });
        }
        this.pruneTurns();
        return true;
      case 'seen':
        this.seen.set(record.k, record.at);
        return true;
      case 'finished':
        this.finished.set(record.rk, { id: record.id, status: record.status, at: record.at });
        return true;
      default:
        return false;
    }
  }

  /** Turns no open message belongs to are forgotten. */
  pruneTurns(): void {
    const live = new Set<string>();
    for (const message of this.open.values()) if (message.turn) live.add(message.turn);
    for (const id of this.turns.keys()) if (!live.has(id)) this.turns.delete(id);
  }

  expire(now: number): void {
    for (const [key, at] of this.seen) if (now - at > INTAKE_DEDUPE_WINDOW_MS) this.seen.delete(key);
    for (const [key, finished] of this.finished)
      if (now - finished.at > INTAKE_DEDUPE_WINDOW_MS) this.finished.delete(key);
    while (this.finished.size > MAX_FINISHED_KEYS) this.finished.delete(this.finished.keys().next().value as string);
  }

  /** The records that say all of this, for a rewrite. */
  records(): Record[] {
    const records: Record[] = [];
    const openKeys = new Set([...this.open.values()].map((message) => message.key));
    for (const [k, at] of this.seen) if (!openKeys.has(k)) records.push({ t: 'seen', k, at });
    for (const [rk, finished] of this.finished) records.push({ t: 'finished', rk, ...finished });
    const undelivered = new Map<string, { ids: string[]; reply: UndeliveredReply }>();
    for (const message of this.open.values()) {
      records.push({
        t: 'accepted',
        id: message.id,
        at: message.at,
        input: message.input,
        ...(message.key ? { k: message.key } : {}),
        ...(message.requestKey ? { rk: message.requestKey } : {}),
      });
      if (message.attempts > 0) records.push({ t: 'resume', id: message.id, attempt: message.attempts });
      if (message.undelivered) {
        const entry = undelivered.get(message.undelivered.turn) ?? { ids: [], reply: message.undelivered };
        entry.ids.push(message.id);
        undelivered.set(message.undelivered.turn, entry);
      }
    }
    // Turn records follow the messages they name, in the order they began.
    for (const turn of [...this.turns.values()])
      records.push({
        t: 'turn',
        id: turn.id,
        ids: turn.ids,
        file: turn.file,
        offset: turn.offset,
        ...(turn.legacy ? { legacy: true } : {}),
      });
    for (const [turn, { ids, reply }] of undelivered) {
      const { turn: _turn, ...rest } = reply;
      records.push({ t: 'undelivered', id: turn, ids, ...rest });
    }
    return records;
  }
}

function parse(raw: string, now: number): { state: JournalState; skippedLines: number } {
  const end = raw.indexOf('\0');
  const text = end < 0 ? raw : raw.slice(0, end);
  const state = new JournalState();
  let skippedLines = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let record: Record;
    try {
      record = JSON.parse(line) as Record;
    } catch {
      skippedLines++;
      continue;
    }
    if (!state.apply(record, now)) skippedLines++;
  }
  state.expire(now);
  state.pruneTurns();
  return { state, skippedLines };
}

/** One agent's journal. Not safe to share between processes: the gateway (single, locked) owns it. */
export class IntakeJournal {
  private fd?: number;
  private state = new JournalState();
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
    const { state, skippedLines } = parse(text, this.now());
    this.state = state;
    this.rewrite();
    return { open: this.openMessages(), turns: new Map(state.turns), seen: new Map(state.seen), skippedLines };
  }

  /**
   * Accepted: written before this returns (a kill no longer loses it; a failed write
   * throws), fsync'd when the promise resolves (a power cut no longer loses it either).
   */
  accept(id: string, input: IntakeInput, at: number, key?: string, requestKey?: string): Promise<void> {
    const record: Record = {
      t: 'accepted',
      id,
      at,
      input,
      ...(key ? { k: key } : {}),
      ...(requestKey ? { rk: requestKey } : {}),
    };
    this.state.apply(record, at);
    try {
      this.append(record);
    } catch (error) {
      this.state.open.delete(id);
      throw error;
    }
    return this.flush();
  }

  /**
   * A turn for `ids` begins; `offset` is the transcript's size before it. A turn continued
   * after a restart keeps where it first began (its earlier lines are part of it). Written,
   * not fsync'd.
   */
  turn(id: string, ids: readonly string[], file: string, offset: number): void {
    const members = ids.filter((member) => this.state.open.has(member));
    if (members.length === 0) return;
    const earlier = this.state.turns.get(id);
    const begun = earlier && earlier.file === file ? earlier.offset : offset;
    this.write({ t: 'turn', id, ids: members, file, offset: Math.min(begun, offset) });
  }

  /** Steered messages the running turn took: they are answered by it. */
  join(id: string, ids: readonly string[]): void {
    const members = ids.filter((member) => this.state.open.has(member));
    if (members.length === 0 || !this.state.turns.has(id)) return;
    this.write({ t: 'join', id, ids: members });
  }

  /** Charge a resume to each message before re-dispatching it, so a crash during the resume is counted. */
  async resuming(ids: readonly string[]): Promise<void> {
    const records: Record[] = [];
    for (const id of ids) {
      const message = this.state.open.get(id);
      if (message) records.push({ t: 'resume', id, attempt: message.attempts + 1 });
    }
    if (records.length === 0) return;
    this.write(...records);
    await this.flush();
  }

  /** The reply of turn `turn` is written but could not be sent: keep it, with when to try again (fsync'd). */
  undelivered(turn: string, ids: readonly string[], reply: Omit<UndeliveredReply, 'turn'>): Promise<void> {
    const members = ids.filter((member) => this.state.open.has(member));
    if (members.length === 0) return Promise.resolve();
    this.write({ t: 'undelivered', id: turn, ids: members, ...reply });
    return this.flush();
  }

  /** Finished: written at once (a kill after this never re-runs them); fsync'd with the next batch. */
  done(ids: readonly string[], status: IntakeStatus): void {
    const members = ids.filter((member) => this.state.open.has(member));
    if (members.length === 0) return;
    this.write({ t: 'done', ids: members, status });
  }

  isOpen(id: string): boolean {
    return this.state.open.has(id);
  }

  message(id: string): OpenMessage | undefined {
    return this.state.open.get(id);
  }

  /** The open message a gateway request brought, or what became of it when it finished recently. */
  request(requestKey: string): { open: OpenMessage } | { finished: FinishedRequest } | undefined {
    for (const message of this.state.open.values()) if (message.requestKey === requestKey) return { open: message };
    const finished = this.state.finished.get(requestKey);
    return finished ? { finished } : undefined;
  }

  get openCount(): number {
    return this.state.open.size;
  }

  /** Flush and close, keeping what is open and the recent keys. */
  async close(): Promise<void> {
    await this.queued?.catch(() => {});
    await this.inflight?.catch(() => {});
    if (this.fd === undefined) return;
    this.closing = true;
    this.rewrite();
  }

  private openMessages(): OpenMessage[] {
    return [...this.state.open.values()].sort((a, b) => a.at - b.at);
  }

  /** Apply to the state, then append: what the file says and what this process believes never differ. */
  private write(...records: Record[]): void {
    const now = this.now();
    for (const record of records) this.state.apply(record, now);
    this.append(...records);
  }

  private append(...records: Record[]): void {
    const data = Buffer.from(records.map((record) => `${JSON.stringify(record)}\n`).join(''), 'utf8');
    if (this.fd === undefined) {
      // A turn stopped by the shutdown that settles after the close: the closed file has no padding.
      if (this.closing) return appendFileSync(this.file, data, { mode: PRIVATE_FILE_MODE });
      throw new Error(`the intake journal ${this.file} is not open`);
    }
    // Out of room: the rewrite keeps everything open (what was just recorded included), with fresh padding.
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
    if (this.fd === undefined) return Promise.resolve();
    if (!this.inflight) {
      const fd = this.fd;
      this.inflight = new Promise<void>((resolve, reject) =>
        fdatasync(fd, (error) => (error ? reject(error) : resolve())),
      ).finally(() => (this.inflight = undefined));
      return this.inflight;
    }
    const next = () => {
      this.queued = undefined;
      return this.flush();
    };
    this.queued = this.inflight.then(next, next);
    return this.queued;
  }

  /** Replace the file with what is open and the recent keys (temp + fsync + rename), then append to it. */
  private rewrite(): void {
    this.state.expire(this.now());
    const lines = this.state.records().map((record) => JSON.stringify(record));
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
