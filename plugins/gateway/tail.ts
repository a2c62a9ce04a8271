/** Reading the gateway log file a page at a time, for `logs.tail`. */
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';

export interface TailRequest {
  cursor?: number;
  limit?: number;
  maxBytes?: number;
}

export interface TailResult {
  file: string;
  /** Byte offset to pass as `cursor` next time. */
  cursor: number;
  size: number;
  lines: string[];
  /** True when older lines were left out to stay within limit/maxBytes. */
  truncated: boolean;
  /** True when the file shrank since the cursor (rotated): reading restarted at the top. */
  reset: boolean;
}

/** Read log lines after `cursor`, or the last `limit` lines when no cursor is given. */
export function tailLog(file: string, request: TailRequest = {}): TailResult {
  const limit = Math.min(Math.max(request.limit ?? 200, 1), 5000);
  const maxBytes = Math.min(Math.max(request.maxBytes ?? 256 * 1024, 1024), 4 * 1024 * 1024);
  if (!existsSync(file)) return { file, cursor: 0, size: 0, lines: [], truncated: false, reset: false };
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const fromEnd = request.cursor === undefined;
    const reset = !fromEnd && request.cursor! > size;
    const start = fromEnd ? Math.max(0, size - maxBytes) : reset ? 0 : request.cursor!;
    const buffer = Buffer.alloc(Math.min(size - start, maxBytes));
    readSync(fd, buffer, 0, buffer.length, start);
    // Whole lines only: skip a partial first line when starting mid-file from the end, and
    // leave an unfinished last line for the next call.
    let offset = 0;
    if (fromEnd && start > 0) offset = buffer.indexOf(0x0a) + 1;
    const lastNewline = buffer.lastIndexOf(0x0a);
    const body = lastNewline >= offset ? buffer.subarray(offset, lastNewline) : Buffer.alloc(0);
    let lines = body.length > 0 || lastNewline >= offset ? body.toString('utf8').split('\n') : [];
    let truncated = (fromEnd && start > 0) || start + buffer.length < size;
    let cursor = lastNewline >= offset ? start + lastNewline + 1 : start + offset;
    if (lines.length > limit) {
      truncated = true;
      if (fromEnd) lines = lines.slice(-limit);
      else {
        lines = lines.slice(0, limit);
        cursor = start + offset + Buffer.byteLength(lines.join('\n')) + 1;
      }
    }
    return { file, cursor, size, lines, truncated, reset };
  } finally {
    closeSync(fd);
  }
}
