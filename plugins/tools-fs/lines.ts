/**
 * Streams a text file line by line, keeping only the window a read call asked for while
 * still counting every line, so a multi-gigabyte log costs time, not memory.
 */
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

export interface LineWindow {
  /** 1-based first line to keep. */
  start: number;
  /** Most lines to keep (the caller's limit), before the caps. */
  limit: number;
  maxLines: number;
  maxBytes: number;
}

export interface LineScan {
  lines: string[];
  totalLines: number;
  /** Why keeping stopped while more lines followed; undefined when the window reached the end. */
  stoppedBy?: 'limit' | 'lines' | 'bytes';
  /** Set when the first kept line alone was over maxBytes and only its start is in `lines`. */
  cutLine?: { line: number; bytes: number };
}

/** Reads from the start of an open file (the caller opened and checked it, and closes it). */
export async function scanLines(file: FileHandle, window: LineWindow): Promise<LineScan> {
  const kept: string[] = [];
  let keptBytes = 0;
  let stoppedBy: LineScan['stoppedBy'];
  let cutLine: LineScan['cutLine'];
  let lineNo = 0;
  // The line being assembled across chunks. Only lines inside the window need their text,
  // and even those never need more than maxBytes of it.
  let pending = '';
  let pendingBytes = 0;

  const wanted = (n: number) => n >= window.start && stoppedBy === undefined;

  const finishLine = () => {
    lineNo++;
    const text = pending;
    const bytes = pendingBytes;
    pending = '';
    pendingBytes = 0;
    if (!wanted(lineNo)) return;
    if (kept.length >= window.limit) {
      stoppedBy = 'limit';
    } else if (kept.length >= window.maxLines) {
      stoppedBy = 'lines';
    } else {
      const cost = bytes + (kept.length > 0 ? 1 : 0);
      if (keptBytes + cost <= window.maxBytes) {
        kept.push(text);
        keptBytes += cost;
      } else if (kept.length === 0) {
        kept.push(truncateUtf8(text, window.maxBytes));
        keptBytes = window.maxBytes;
        cutLine = { line: lineNo, bytes };
        stoppedBy = 'bytes';
      } else {
        stoppedBy = 'bytes';
      }
    }
  };

  const addPartial = (piece: string) => {
    pendingBytes += Buffer.byteLength(piece);
    if (wanted(lineNo + 1) && pending.length <= window.maxBytes) pending += piece;
  };

  const decoder = new StringDecoder('utf8');
  const consume = (text: string) => {
    let from = 0;
    for (let newline = text.indexOf('\n', from); newline >= 0; newline = text.indexOf('\n', from)) {
      addPartial(text.slice(from, newline));
      finishLine();
      from = newline + 1;
    }
    if (from < text.length) addPartial(text.slice(from));
  };

  for await (const chunk of file.createReadStream({ start: 0, highWaterMark: 64 * 1024, autoClose: false })) {
    consume(decoder.write(chunk as Buffer));
  }
  consume(decoder.end());
  // A final line without a newline still counts; a trailing newline does not open a new one.
  if (pendingBytes > 0) finishLine();
  return { lines: kept, totalLines: lineNo, stoppedBy, cutLine };
}

/** The longest prefix of `text` that fits in `maxBytes` UTF-8 bytes, never splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
