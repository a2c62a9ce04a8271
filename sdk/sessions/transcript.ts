/**
 * The transcript contract: append-only JSONL, one entry per line. The first entry is a
 * `session` header; every later entry has a short random id and the id of the entry
 * before it (`parentId`), so the history is a chain that compaction can point into. The
 * sessions plugin reads and writes the files; readers of the format use the guards here.
 */
import type { Redactor } from '../../kernel/index.js';
import type { HookContext, HookRunner } from '../types/hooks.js';
import type { ChatMessage } from '../types/models.js';

export interface SessionHeader {
  type: 'session';
  version: number;
  /** The sessionId. */
  id: string;
  /** ISO 8601. */
  timestamp: string;
  cwd?: string;
  [extra: string]: unknown;
}

/** The fields the transcript assigns to every entry after the header. */
export interface EntryBase {
  id: string;
  /** The previous entry's id; null for the first entry after the header. */
  parentId: string | null;
  /** ISO 8601. */
  timestamp: string;
}

export interface MessageEntry extends EntryBase {
  type: 'message';
  message: ChatMessage;
}

export interface CompactionEntry extends EntryBase {
  type: 'compaction';
  summary: string;
  /**
   * First entry still sent to the model verbatim after this compaction (it may precede
   * the compaction entry); null when the summary replaces everything before it.
   */
  firstKeptEntryId: string | null;
  tokensBefore: number;
  details?: unknown;
}

/** Any other entry type (model changes, custom extension data, …); kept as written. */
export interface OtherEntry extends EntryBase {
  type: string;
  [field: string]: unknown;
}

export type TranscriptEntry = SessionHeader | MessageEntry | CompactionEntry | OtherEntry;

/** What `append` takes: an entry without the fields the transcript assigns. */
export type AppendInput =
  | Omit<MessageEntry, keyof EntryBase>
  | Omit<CompactionEntry, keyof EntryBase>
  | ({ type: string } & Record<string, unknown>);

export function isMessageEntry(entry: TranscriptEntry): entry is MessageEntry {
  return (
    entry.type === 'message' &&
    typeof (entry as MessageEntry).message === 'object' &&
    (entry as MessageEntry).message !== null
  );
}

export function isCompactionEntry(entry: TranscriptEntry): entry is CompactionEntry {
  return entry.type === 'compaction' && typeof (entry as CompactionEntry).summary === 'string';
}

/**
 * How a compaction summary reaches the model: a user message whose single text part is
 * the summary wrapped in these markers.
 */
export const COMPACTION_SUMMARY_PREFIX =
  'Earlier turns of this conversation were compacted. Summary of them:\n\n<summary>\n';
export const COMPACTION_SUMMARY_SUFFIX = '\n</summary>';

export function isCompactionSummaryMessage(message: ChatMessage): boolean {
  if (message.role !== 'user' || !Array.isArray(message.content) || message.content.length !== 1) return false;
  const part = message.content[0]!;
  return (
    part.type === 'text' &&
    part.text.startsWith(COMPACTION_SUMMARY_PREFIX) &&
    part.text.endsWith(COMPACTION_SUMMARY_SUFFIX)
  );
}

export interface TranscriptOptions {
  /** Written into the header; defaults to the file name without `.jsonl` and topic. */
  sessionId?: string;
  cwd?: string;
  /** Extra header fields (e.g. the parent session of a sub-agent). */
  header?: Record<string, unknown>;
  /**
   * Stamped on every entry this writer appends (not the header): the dispatcher marks a
   * turn's lines with its `runId`, so a restart can tell which lines a turn wrote.
   */
  stamp?: Record<string, unknown>;
  now?: () => Date;
  /** Masks secrets in every entry before it is written (the kernel's `redact`). */
  redact?: Pick<Redactor, 'value'>;
  /**
   * Runs `before_message_write` before each message is appended, with this context: a
   * handler may rewrite the message or block it (then nothing is written and the append
   * returns undefined). The dispatcher opens each turn's transcript with the run's hooks,
   * so whatever loop writes the turn, every message meets them.
   */
  hooks?: { runner: Pick<HookRunner, 'runSync'>; context: HookContext };
}

/**
 * A reader and appender for one transcript file. One writer at a time: a run holds the
 * session lock (SessionStore.lock) while it appends.
 */
export interface Transcript {
  readonly file: string;
  readonly sessionId: string;
  /** Entries in file order, header included; unparseable lines are skipped. */
  entries(): TranscriptEntry[];
  /**
   * The history the model sees: if there was a compaction, the latest one's summary as a
   * user message (wrapped in the COMPACTION_SUMMARY markers), then every message from its
   * `firstKeptEntryId` (or, without one, from after the compaction entry) to the end.
   * Without a compaction, every message.
   */
  messages(): ChatMessage[];
  /** A message's entry is undefined when a before_message_write handler blocked it. */
  append(input: Omit<MessageEntry, keyof EntryBase>): MessageEntry | undefined;
  append(input: Omit<CompactionEntry, keyof EntryBase>): CompactionEntry;
  append(input: AppendInput): TranscriptEntry;
  /** The entry as written, or undefined when a before_message_write handler blocked it. */
  appendMessage(message: ChatMessage): MessageEntry | undefined;
  appendCompaction(compaction: Omit<CompactionEntry, keyof EntryBase | 'type'>): CompactionEntry;
}
