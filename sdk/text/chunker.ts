/**
 * Cutting text into messages: at a paragraph break if one is in range, else a line break,
 * a sentence end, whitespace; never inside a code fence unless the fence alone is longer
 * than a message, and then the fence is closed and reopened so each piece renders. Used
 * by block streaming (800–1200 characters) and by channel delivery (the channel's limit).
 */
export interface Fence {
  start: number;
  /** Index just past the closing fence line, or Infinity while the fence is still open. */
  end: number;
  marker: string;
  info: string;
}

/** Code fences in `text` (``` or ~~~ at a line start), open or closed. */
export function findFences(text: string): Fence[] {
  const fences: Fence[] = [];
  const line = /^( {0,3})(`{3,}|~{3,})([^\n]*)$/gm;
  let open: Fence | undefined;
  let match: RegExpExecArray | null;
  while ((match = line.exec(text))) {
    const marker = match[2]!;
    if (!open) {
      open = { start: match.index, end: Infinity, marker, info: match[3]!.trim() };
    } else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && match[3]!.trim() === '') {
      open.end = match.index + match[0].length;
      fences.push(open);
      open = undefined;
    }
  }
  if (open) fences.push(open);
  return fences;
}

function insideFence(fences: readonly Fence[], index: number): Fence | undefined {
  return fences.find((fence) => index > fence.start && index < fence.end);
}

const BREAKS: Array<{ pattern: RegExp; after: number }> = [
  { pattern: /\n\n+/g, after: 0 },
  { pattern: /\n/g, after: 0 },
  { pattern: /[.!?]["')\]]?(?=\s)/g, after: 0 },
  { pattern: /\s+/g, after: 0 },
];

/**
 * Where to cut `text` so the first part is between `min` and `max` characters: the last
 * paragraph break in range, else the last line break, sentence end, whitespace; never
 * inside a code fence. Undefined when there is no acceptable break.
 */
export function findBreak(text: string, min: number, max: number): number | undefined {
  const fences = findFences(text);
  const limit = Math.min(max, text.length);
  for (const { pattern } of BREAKS) {
    let best: number | undefined;
    pattern.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = pattern.exec(text))) {
      const cut = match.index + match[0].length;
      if (match.index >= limit) break;
      if (cut < min || cut > limit) continue;
      if (insideFence(fences, match.index)) continue;
      best = cut;
    }
    if (best !== undefined) return best;
  }
  return undefined;
}

export class BlockChunker {
  private buffer = '';

  constructor(
    private readonly minChars: number,
    private readonly maxChars: number,
  ) {
    if (minChars > maxChars) throw new RangeError('minChars must not exceed maxChars');
  }

  /** Add streamed text; returns blocks that are ready to send. */
  push(text: string): string[] {
    this.buffer += text;
    return this.drain(false);
  }

  /** The message is over: send everything that is left (still in blocks of at most maxChars). */
  flush(): string[] {
    return this.drain(true);
  }

  /** Cut a whole text at once: as few blocks as the limits allow. */
  splitAll(text: string): string[] {
    this.buffer += text;
    return this.drain(true);
  }

  private drain(final: boolean): string[] {
    const out: string[] = [];
    for (;;) {
      if (this.buffer.trim() === '') {
        if (final) this.buffer = '';
        return out;
      }
      if (this.buffer.length < this.minChars && !final) return out;
      if (this.buffer.length <= this.maxChars && final) {
        out.push(this.buffer.trim());
        this.buffer = '';
        return out;
      }
      const cut = findBreak(this.buffer, this.minChars, this.maxChars);
      if (cut !== undefined) {
        out.push(this.buffer.slice(0, cut).trim());
        this.buffer = this.buffer.slice(cut).replace(/^\s+/, '');
        continue;
      }
      if (this.buffer.length <= this.maxChars) return out;
      out.push(this.forceSplit());
    }
  }

  /** No break in range: cut at maxChars, closing and reopening a code fence if the cut lands in one. */
  private forceSplit(): string {
    const fence = insideFence(findFences(this.buffer), this.maxChars);
    if (!fence) {
      const block = this.buffer.slice(0, this.maxChars);
      this.buffer = this.buffer.slice(this.maxChars);
      return block;
    }
    const close = `\n${fence.marker}`;
    const limit = this.maxChars - close.length;
    // Cut at a line end inside the fence when there is one, so no code line is split.
    const lineEnd = this.buffer.lastIndexOf('\n', limit - 1);
    const at = lineEnd > fence.start ? lineEnd : limit;
    const block = this.buffer.slice(0, at) + close;
    this.buffer = `${fence.marker}${fence.info}\n${this.buffer.slice(at).replace(/^\n/, '')}`;
    return block;
  }
}

/** Text cut into pieces of at most `limit` characters (the channel's message size). */
export function splitForChannel(text: string, limit: number): string[] {
  // NaN or 0 here would cut forever (a channel registered without a textLimit did).
  if (!(limit >= 1)) throw new RangeError(`a channel text limit must be a positive number, got ${String(limit)}`);
  if (text.length <= limit) return text.trim() ? [text] : [];
  // The lower bound keeps pieces from being tiny while leaving room to find a good break.
  return new BlockChunker(Math.max(1, Math.floor(limit * 0.5)), limit).splitAll(text);
}
