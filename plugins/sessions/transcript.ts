/**
 * Session transcripts: append-only JSONL, one entry per line. The first entry is a
 * `session` header; every later entry has a short random id and the id of the entry
 * before it (`parentId`), so the history is a chain that compaction can point into.
 *
 * Crash safety comes from how lines are written: each append is one `O_APPEND` write of
 * complete lines, so after a crash the file holds whole lines plus, at worst, one torn
 * line at the end (a fatal signal can cut a large write short). Readers skip lines that
 * do not parse, and the next append starts with a newline when the file does not end
 * with one, so the torn fragment stays on a line of its own instead of corrupting the
 * entry written after it.
 *
 * One writer at a time: a run holds the session lock (lock.ts) while it appends, so two
 * processes never interleave their turns in one file.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import {
  type ChatMessage,
  type TranscriptMessage,
  type UserMessage,
  ensurePrivateDir,
  PRIVATE_FILE_MODE,
} from '../../sdk/index.js';
import {
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
  isCompactionEntry,
  isMessageEntry,
  type AppendInput,
  type CompactionEntry,
  type EntryBase,
  type MessageEntry,
  type SessionHeader,
  type Transcript as TranscriptContract,
  type TranscriptEntry,
  type TranscriptOptions,
} from '../../sdk/sessions/index.js';

export const TRANSCRIPT_VERSION = 1;

export function isSessionHeader(entry: TranscriptEntry): entry is SessionHeader {
  return entry.type === 'session';
}

export interface TranscriptRead {
  /** Every line that parsed as an entry, in file order (the header first when present). */
  entries: TranscriptEntry[];
  /** Lines that did not parse: torn writes from a crash, or damage. */
  skippedLines: number;
  /** The file ends without a newline (a torn last line). */
  torn: boolean;
  /** Bytes read. */
  size: number;
}

/** How a compaction summary reaches the model: a user message whose single text part is the wrapped summary. */
export function compactionSummaryMessage(entry: Pick<CompactionEntry, 'summary' | 'timestamp'>): UserMessage {
  const timestamp = Date.parse(entry.timestamp);
  return {
    role: 'user',
    content: [{ type: 'text', text: `${COMPACTION_SUMMARY_PREFIX}${entry.summary}${COMPACTION_SUMMARY_SUFFIX}` }],
    ...(Number.isNaN(timestamp) ? {} : { timestamp }),
  };
}

function parseLines(text: string, into: TranscriptEntry[]): number {
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    if (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      typeof (value as { type?: unknown }).type === 'string'
    ) {
      into.push(value as TranscriptEntry);
    } else {
      skipped++;
    }
  }
  return skipped;
}

/**
 * Parsed transcripts, so a turn does not re-read and re-parse the whole history. Files
 * are append-only: when one has grown (same inode), only the new complete lines are
 * read; anything else (shrunk, replaced) is read from scratch.
 */
interface CachedRead {
  ino: number;
  /** Bytes parsed: the file up to its last newline. */
  parsed: number;
  entries: TranscriptEntry[];
  skippedLines: number;
}

const READ_CACHE_LIMIT = 64;
/**
 * …and at most this many bytes of their files (parsed, a transcript takes a few times its
 * size on the heap): long sessions must not make the cache, and so the process, grow without
 * bound. The file used last always stays, whatever its size.
 */
export const READ_CACHE_BYTES = 32 * 1024 * 1024;
const readCache = new Map<string, CachedRead>();
let readCacheBytes = 0;

function forget(file: string): void {
  const old = readCache.get(file);
  if (!old) return;
  readCache.delete(file);
  readCacheBytes -= old.parsed;
}

function remember(file: string, value: CachedRead): void {
  forget(file);
  readCache.set(file, value);
  readCacheBytes += value.parsed;
  while (readCache.size > 1 && (readCache.size > READ_CACHE_LIMIT || readCacheBytes > READ_CACHE_BYTES))
    forget(readCache.keys().next().value as string);
}

/** What the parse cache holds now (for tests and diagnostics). */
export function transcriptCacheStats(): { files: number; bytes: number } {
  return { files: readCache.size, bytes: readCacheBytes };
}

export function readTranscriptFile(file: string): TranscriptRead {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      forget(file);
      return { entries: [], skippedLines: 0, torn: false, size: 0 };
    }
    throw error;
  }
  try {
    const { ino, size } = fstatSync(fd);
    let cached = readCache.get(file);
    if (!cached || cached.ino !== ino || cached.parsed > size)
      cached = { ino, parsed: 0, entries: [], skippedLines: 0 };
    const unread = size - cached.parsed;
    let torn = false;
    if (unread > 0) {
      const buffer = Buffer.allocUnsafe(unread);
      let got = 0;
      while (got < unread) {
        const n = readSync(fd, buffer, got, unread - got, cached.parsed + got);
        if (n === 0) break;
        got += n;
      }
      // Parse complete lines only; a torn tail is re-read next time (it may be finished by then).
      const lastNewline = buffer.lastIndexOf(0x0a, got - 1);
      const complete = lastNewline + 1;
      const entries = [...cached.entries];
      let skippedLines = cached.skippedLines + parseLines(buffer.toString('utf8', 0, complete), entries);
      cached = { ino, parsed: cached.parsed + complete, entries, skippedLines };
      remember(file, cached);
      if (complete < got) {
        torn = true;
        const tail: TranscriptEntry[] = [];
        skippedLines += parseLines(buffer.toString('utf8', complete, got), tail);
        return { entries: [...entries, ...tail], skippedLines, torn, size };
      }
    } else {
      remember(file, cached);
    }
    return { entries: [...cached.entries], skippedLines: cached.skippedLines, torn, size };
  } finally {
    closeSync(fd);
  }
}

/** `<sessionId>.jsonl` / `<sessionId>-topic-<threadId>.jsonl` → sessionId. */
function sessionIdFromFile(file: string): string {
  return basename(file)
    .replace(/\.jsonl$/, '')
    .replace(/-topic-.*$/, '');
}

interface Tail {
  /** File (inode) and size the state below describes; a different one means someone else wrote. */
  ino: number;
  size: number;
  lastId: string | null;
  ids: Set<string>;
  hasEntries: boolean;
  torn: boolean;
}

/**
 * The tail of each recently used file, shared by every Transcript of it in this process: a
 * turn opens a fresh Transcript, and rebuilding the id set from every entry each time made a
 * turn's cost grow with the session's length.
 */
const tailCache = new Map<string, Tail>();

function rememberTail(file: string, tail: Tail): void {
  tailCache.delete(file);
  tailCache.set(file, tail);
  if (tailCache.size > READ_CACHE_LIMIT) tailCache.delete(tailCache.keys().next().value as string);
}

export class Transcript implements TranscriptContract {
  readonly file: string;
  readonly sessionId: string;
  private readonly options: TranscriptOptions;
  private readonly now: () => Date;
  private tail?: Tail;

  constructor(file: string, options: TranscriptOptions = {}) {
    this.file = file;
    this.options = options;
    this.sessionId = options.sessionId ?? sessionIdFromFile(file);
    this.now = options.now ?? (() => new Date());
  }

  read(): TranscriptRead {
    return readTranscriptFile(this.file);
  }

  /** Entries in file order, header included; unparseable lines are skipped. */
  entries(): TranscriptEntry[] {
    return this.read().entries;
  }

  header(): SessionHeader | undefined {
    return this.entries().find(isSessionHeader);
  }

  /**
   * The history the model sees: if there was a compaction, the latest one's summary as a
   * user message (`compactionSummaryMessage`), then every message from its
   * `firstKeptEntryId` (or, without one, from after the compaction entry) to the end.
   * Without a compaction, every message.
   */
  messages(): ChatMessage[] {
    const entries = this.entries();
    let start = 0;
    const result: ChatMessage[] = [];
    let latest = -1;
    for (let index = entries.length - 1; index >= 0; index--) {
      if (isCompactionEntry(entries[index]!)) {
        latest = index;
        break;
      }
    }
    if (latest >= 0) {
      const compaction = entries[latest] as CompactionEntry;
      result.push(compactionSummaryMessage(compaction));
      const kept = compaction.firstKeptEntryId
        ? entries.findIndex((entry) => !isSessionHeader(entry) && entry.id === compaction.firstKeptEntryId)
        : -1;
      start = kept >= 0 ? kept : latest + 1;
    }
    for (let index = start; index < entries.length; index++) {
      const entry = entries[index]!;
      if (isMessageEntry(entry)) result.push(entry.message);
    }
    return result;
  }

  /** Writes the header if the file has no entries yet; returns the header on disk. */
  init(): SessionHeader | undefined {
    const tail = this.sync();
    if (!tail.hasEntries) this.write(tail, [this.makeHeader()]);
    return this.header();
  }

  append(input: Omit<MessageEntry, keyof EntryBase>): MessageEntry | undefined;
  append(input: Omit<CompactionEntry, keyof EntryBase>): CompactionEntry;
  append(input: AppendInput): TranscriptEntry;
  append(input: AppendInput): TranscriptEntry | undefined {
    if (input.type === 'session') throw new TypeError('the session header is written by the transcript itself');
    const hooked = input.type === 'message' ? this.beforeWrite(input as Omit<MessageEntry, keyof EntryBase>) : input;
    if (!hooked) return undefined;
    const tail = this.sync();
    // Transcripts are replayed to the model and shown in UIs: a secret written here would live on.
    const masked = this.options.redact ? this.options.redact.value(hooked) : hooked;
    const entry = {
      ...this.options.stamp,
      ...masked,
      type: input.type,
      id: this.newId(tail.ids),
      parentId: tail.lastId,
      timestamp: this.now().toISOString(),
    } as TranscriptEntry;
    this.write(tail, tail.hasEntries ? [entry] : [this.makeHeader(), entry]);
    return entry;
  }

  appendMessage(message: ChatMessage): MessageEntry | undefined {
    return this.append({ type: 'message', message });
  }

  /** before_message_write, when the transcript was opened with hooks: the message to write, or undefined when blocked. */
  private beforeWrite(input: Omit<MessageEntry, keyof EntryBase>): Omit<MessageEntry, keyof EntryBase> | undefined {
    const hooks = this.options.hooks;
    if (!hooks) return input;
    const outcome = hooks.runner.runSync(
      'before_message_write',
      { message: input.message as unknown as TranscriptMessage },
      hooks.context,
    );
    if (outcome.block) return undefined;
    return outcome.message ? { ...input, message: outcome.message as unknown as ChatMessage } : input;
  }

  appendCompaction(compaction: Omit<CompactionEntry, keyof EntryBase | 'type'>): CompactionEntry {
    return this.append({ type: 'compaction', ...compaction });
  }

  private makeHeader(): SessionHeader {
    return {
      ...this.options.header,
      type: 'session',
      version: TRANSCRIPT_VERSION,
      id: this.sessionId,
      timestamp: this.now().toISOString(),
      ...(this.options.cwd === undefined ? {} : { cwd: this.options.cwd }),
    };
  }

  private newId(taken: Set<string>): string {
    for (;;) {
      const id = randomBytes(4).toString('hex');
      if (!taken.has(id)) return id;
    }
  }

  /** The state of the file's end, re-read whenever the file changed behind our back. */
  private sync(): Tail {
    let size = 0;
    let ino = 0;
    try {
      ({ size, ino } = statSync(this.file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (this.tail && this.tail.size === size && this.tail.ino === ino) return this.tail;
    const shared = tailCache.get(this.file);
    if (shared && shared.size === size && shared.ino === ino) return (this.tail = shared);
    const read = this.read();
    const ids = new Set<string>();
    let lastId: string | null = null;
    for (const entry of read.entries) {
      if (isSessionHeader(entry) || typeof entry.id !== 'string') continue;
      ids.add(entry.id);
      lastId = entry.id;
    }
    this.tail = { ino, size: read.size, lastId, ids, hasEntries: read.entries.length > 0, torn: read.torn };
    rememberTail(this.file, this.tail);
    return this.tail;
  }

  private write(tail: Tail, entries: TranscriptEntry[]): void {
    const lines = entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
    const text = (tail.torn ? '\n' : '') + lines;
    ensurePrivateDir(dirname(this.file));
    // One append call per entry: with O_APPEND the line lands whole at the end, or (if
    // the process dies mid-write) as the torn tail that readers skip.
    appendFileSync(this.file, text, { encoding: 'utf8', mode: PRIVATE_FILE_MODE });
    if (tail.ino === 0) tail.ino = statSync(this.file).ino;
    tail.size += Buffer.byteLength(text, 'utf8');
    tail.torn = false;
    tail.hasEntries = true;
    for (const entry of entries) {
      if (isSessionHeader(entry)) continue;
      tail.ids.add(entry.id);
      tail.lastId = entry.id;
    }
  }
}
