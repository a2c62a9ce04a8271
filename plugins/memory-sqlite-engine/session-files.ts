/**
 * Session transcripts as a memory source: which files, and what of them is memory.
 *
 * Only the agent's own `<sessionsDir>/*.jsonl` count (no symlinks, no hard links, no
 * sub-folders such as `locks/`). Of each transcript only what a person said and what the
 * assistant answered is indexed: tool calls, tool results, thinking and silent NO_REPLY
 * turns are not. Transcripts are append-only, so a sync reads only the bytes written since
 * the last one, up to the last complete line (a line still being written waits).
 */
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { isSilentReplyText } from '../../sdk/agent/index.js';
import type { Chunk, MemoryFile, MemoryText } from '../../sdk/memory/index.js';

/** Result paths of transcripts; memory_get refuses them (it reads memory files only, as in OpenClaw). */
export const SESSION_PATH_PREFIX = 'sessions/';

/** A transcript, listed like a memory file (its path is `sessions/<file>.jsonl`). */
export interface SessionFile extends Omit<MemoryFile, 'source'> {
  source: 'sessions';
}

export interface SessionTurn {
  /** 1-based JSONL line of the entry. */
  line: number;
  role: 'user' | 'assistant';
  text: string;
}

export interface SessionDelta {
  turns: SessionTurn[];
  /** Bytes consumed so far (the end of the last complete line read). */
  endByte: number;
  /** Lines consumed so far. */
  endLine: number;
}

export function listSessionFiles(sessionsDir: string): SessionFile[] {
  let names: string[];
  try {
    names = readdirSync(sessionsDir);
  } catch {
    return [];
  }
  const out: SessionFile[] = [];
  for (const name of names.sort()) {
    if (!name.endsWith('.jsonl')) continue;
    const absPath = join(sessionsDir, name);
    let stat: Stats;
    try {
      stat = lstatSync(absPath);
    } catch {
      continue;
    }
    if (!stat.isFile() || stat.nlink !== 1) continue;
    out.push({
      path: `${SESSION_PATH_PREFIX}${name}`,
      absPath,
      source: 'sessions',
      mtimeMs: stat.mtimeMs,
      size: stat.size,
    });
  }
  return out;
}

function turnText(entry: any): Omit<SessionTurn, 'line'> | undefined {
  if (entry?.type !== 'message') return undefined;
  const message = entry.message;
  if (message?.role !== 'user' && message?.role !== 'assistant') return undefined;
  const parts: unknown[] =
    typeof message.content === 'string'
      ? [{ type: 'text', text: message.content }]
      : Array.isArray(message.content)
        ? message.content
        : [];
  const text = parts
    .filter(
      (part): part is { type: 'text'; text: string } =>
        (part as any)?.type === 'text' && typeof (part as any).text === 'string',
    )
    .map((part) => part.text)
    .join('\n')
    .trim();
  if (!text || isSilentReplyText(text)) return undefined;
  return { role: message.role, text };
}

/** The turns in `absPath` after byte `fromByte` (which starts line `fromLine + 1`). */
export function readSessionDelta(absPath: string, fromByte: number, fromLine: number): SessionDelta {
  const fd = openSync(absPath, 'r');
  let bytes: Buffer;
  try {
    const size = fstatSync(fd).size;
    bytes = Buffer.alloc(Math.max(0, size - fromByte));
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, fromByte + read);
      if (n === 0) break;
      read += n;
    }
    bytes = bytes.subarray(0, read);
  } finally {
    closeSync(fd);
  }
  const complete = bytes.lastIndexOf(0x0a) + 1;
  const lines = bytes.subarray(0, complete).toString('utf8').split('\n');
  lines.pop();
  const turns: SessionTurn[] = [];
  lines.forEach((raw, i) => {
    let entry: unknown;
    try {
      entry = JSON.parse(raw);
    } catch {
      return; // a torn line from a crash: readers skip it, as the transcript reader does
    }
    const turn = turnText(entry);
    if (turn) turns.push({ line: fromLine + i + 1, ...turn });
  });
  return { turns, endByte: fromByte + complete, endLine: fromLine + lines.length };
}

/** One chunk (or more, for a long turn) per turn, labelled with who spoke and placed at the turn's JSONL line. */
export function sessionChunks(
  turns: readonly SessionTurn[],
  chunking: { tokens: number; overlap: number },
  text: MemoryText,
): Chunk[] {
  return turns.flatMap((turn) =>
    text.chunkMarkdown(`${turn.role === 'user' ? 'User' : 'Assistant'}: ${turn.text}`, chunking).map((chunk) => ({
      ...chunk,
      startLine: turn.line,
      endLine: turn.line,
    })),
  );
}
