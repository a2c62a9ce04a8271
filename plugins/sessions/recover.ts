/**
 * Rebuilding a session store from the transcripts beside it, for when sessions.json cannot
 * be read. The transcripts are the conversations; the store is an index over them (which
 * session a key continues, counters, overrides), so an index rebuilt from them loses the
 * overrides and counters but no conversation.
 *
 * A transcript names its session key in its header (`sessionKey`) when its writer knew it.
 * One that does not (older files, or a writer that was not told) is listed under
 * `agent:<agentId>:recovered:<sessionId>` (with `:topic:<thread>` for a topic file), so it
 * is still shown and can be continued or deleted rather than hidden.
 */
import { closeSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** The header is the first line; this much of the file is enough to hold it. */
const HEADER_BYTES = 64 * 1024;
/** As sessions.* methods accept keys. */
const MAX_KEY_LENGTH = 512;
/** As SessionStore.transcriptPath accepts session ids. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** `<sessionId>.jsonl` or `<sessionId>-topic-<thread>.jsonl` (transcript.ts names them so). */
const TRANSCRIPT_NAME = /^(.+?)(?:-topic-(.+))?\.jsonl$/;

/** A session key's newest transcript. */
export interface FoundSession {
  key: string;
  sessionId: string;
  /** ms since the epoch: the header's timestamp (or the mtime), never after updatedAt. */
  createdAt: number;
  /** ms since the epoch: the transcript's mtime, when it was last written. */
  updatedAt: number;
  /** Listed as `agent:<agentId>:recovered:…`: the transcript did not name its key. */
  recovered: boolean;
}

export interface FoundSessions {
  sessions: FoundSession[];
  /** Transcripts found (each one a session, though only the newest of a key is listed). */
  transcripts: number;
}

export function recoveredSessionKey(agentId: string, sessionId: string, thread?: string): string {
  return `agent:${agentId}:recovered:${sessionId}${thread === undefined ? '' : `:topic:${thread}`}`;
}

function firstLine(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(HEADER_BYTES);
    const read = readSync(fd, buffer, 0, HEADER_BYTES, 0);
    const text = buffer.toString('utf8', 0, read);
    const end = text.indexOf('\n');
    return end < 0 ? text : text.slice(0, end);
  } finally {
    closeSync(fd);
  }
}

function headerOf(file: string): { sessionKey?: string; createdAt?: number } {
  try {
    const header = JSON.parse(firstLine(file)) as Record<string, unknown>;
    if (typeof header !== 'object' || header === null || header.type !== 'session') return {};
    const key = header.sessionKey;
    const created = typeof header.timestamp === 'string' ? Date.parse(header.timestamp) : Number.NaN;
    return {
      ...(typeof key === 'string' && key.trim() !== '' && key.length <= MAX_KEY_LENGTH ? { sessionKey: key } : {}),
      ...(Number.isFinite(created) ? { createdAt: created } : {}),
    };
  } catch {
    // A torn or foreign first line: the file is still a transcript, listed under a recovered key.
    return {};
  }
}

/** One session per key found in `dir`'s transcripts; the newest transcript (by mtime) of a key wins. */
export function findSessions(dir: string, agentId: string): FoundSessions {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { sessions: [], transcripts: 0 };
    throw error;
  }
  const found = new Map<string, FoundSession>();
  let transcripts = 0;
  for (const name of names.sort()) {
    const match = TRANSCRIPT_NAME.exec(name);
    if (!match || !SESSION_ID.test(match[1]!)) continue;
    const file = join(dir, name);
    let stat;
    try {
      stat = lstatSync(file);
    } catch {
      continue;
    }
    // Nothing was ever written to an empty file: no conversation to keep.
    if (!stat.isFile() || stat.size === 0) continue;
    transcripts++;
    const sessionId = match[1]!;
    const header = headerOf(file);
    const key = header.sessionKey ?? recoveredSessionKey(agentId, sessionId, match[2]);
    const updatedAt = Math.floor(stat.mtimeMs);
    const current = found.get(key);
    if (current && current.updatedAt >= updatedAt) continue;
    const createdAt = Math.min(header.createdAt ?? updatedAt, updatedAt);
    found.set(key, { key, sessionId, createdAt, updatedAt, recovered: header.sessionKey === undefined });
  }
  return { sessions: [...found.values()], transcripts };
}
