/**
 * The memory text kit (sdk/memory/text.ts: MemoryText), memory-core's to implement and hand
 * every backend as `ctx.text`: tokens for similarity, CJK segmentation (so Chinese and
 * Japanese are findable by any full-text engine that splits on spaces), chunking Markdown
 * into overlapping, line-aligned pieces, and snippets.
 */
import { createHash } from 'node:crypto';
import { CJK, estimateTokens, isCjk, type Chunk, type MemoryText } from '../../sdk/memory/index.js';

const CJK_GLOBAL = new RegExp(CJK.source, 'gu');

/**
 * Lower-case word tokens; each CJK character is its own token, and adjacent CJK
 * characters also give a bigram (so "记忆" matches as a pair, not just as two characters).
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}_]+/gu)) {
    const word = match[0];
    if (!CJK.test(word)) {
      out.push(word);
      continue;
    }
    // Split mixed runs: latin parts stay words, CJK parts become unigrams and bigrams.
    let latin = '';
    let previous = '';
    for (const char of word) {
      if (isCjk(char)) {
        if (latin) out.push(latin);
        latin = '';
        out.push(char);
        if (previous) out.push(previous + char);
        previous = char;
      } else {
        latin += char;
        previous = '';
      }
    }
    if (latin) out.push(latin);
  }
  return out;
}

/** Spaces around every CJK character, for full-text indexes that split on spaces. */
export function segmentCjk(text: string): string {
  return text.replace(CJK_GLOBAL, (char) => ` ${char} `).replace(/ {2,}/g, ' ');
}

export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Cut Markdown into chunks of about `tokens` tokens, each starting with the last
 * `overlap` tokens of the previous one. Chunks follow line boundaries; a single line
 * longer than a chunk is split inside the line.
 */
export function chunkMarkdown(text: string, options: { tokens: number; overlap: number }): Chunk[] {
  const max = Math.max(1, options.tokens);
  const overlap = Math.max(0, Math.min(options.overlap, max - 1));
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  // Pieces: whole lines, or parts of over-long lines, each with its line number.
  const pieces: Array<{ line: number; text: string; tokens: number }> = [];
  lines.forEach((line, index) => {
    const tokens = estimateTokens(line) || 0;
    if (tokens <= max) {
      pieces.push({ line: index + 1, text: line, tokens: Math.max(tokens, 1) });
      return;
    }
    let part = '';
    for (const char of line) {
      if (estimateTokens(part + char) > max) {
        pieces.push({ line: index + 1, text: part, tokens: estimateTokens(part) });
        part = '';
      }
      part += char;
    }
    if (part) pieces.push({ line: index + 1, text: part, tokens: estimateTokens(part) });
  });

  const chunks: Chunk[] = [];
  let start = 0;
  while (start < pieces.length) {
    let end = start;
    let total = 0;
    while (end < pieces.length && (end === start || total + pieces[end]!.tokens <= max)) {
      total += pieces[end]!.tokens;
      end++;
    }
    const slice = pieces.slice(start, end);
    const body = joinPieces(slice);
    if (body.trim()) {
      chunks.push({
        startLine: slice[0]!.line,
        endLine: slice[slice.length - 1]!.line,
        text: body,
        hash: hashText(body),
        tokens: total,
      });
    }
    if (end >= pieces.length) break;
    // Step back over the last `overlap` tokens, but always move forward.
    let next = end;
    let carried = 0;
    while (next - 1 > start && carried + pieces[next - 1]!.tokens <= overlap) {
      carried += pieces[next - 1]!.tokens;
      next--;
    }
    start = next;
  }
  return chunks;
}

function joinPieces(pieces: ReadonlyArray<{ line: number; text: string }>): string {
  let out = '';
  for (let i = 0; i < pieces.length; i++) {
    if (i > 0) out += pieces[i]!.line === pieces[i - 1]!.line ? '' : '\n';
    out += pieces[i]!.text;
  }
  return out;
}

/** A snippet of at most `max` characters, cut at a word boundary when one is near. */
export function snippetOf(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  const cut = trimmed.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max * 0.8 ? cut.slice(0, space) : cut}…`;
}

/** Where each query term occurs in `lower` (already lower-cased). */
function termHits(lower: string, query: string): Array<{ at: number; end: number; term: string }> {
  const hits: Array<{ at: number; end: number; term: string }> = [];
  const terms = [...new Set(tokenize(query))];
  for (const term of terms) {
    for (let at = lower.indexOf(term); at !== -1; at = lower.indexOf(term, at + term.length)) {
      hits.push({ at, end: at + term.length, term });
    }
  }
  return hits.sort((a, b) => a.at - b.at);
}

/** More distinct terms beat more repeats; a CJK bigram counts more than one character, a long word more than "a". */
function windowScore(hits: ReadonlyArray<{ term: string }>): number {
  const distinct = new Set(hits.map((hit) => hit.term));
  let score = 0;
  for (const term of distinct)
    score += isCjk(term) ? ([...term].length > 1 ? 1000 : 400) : term.length >= 3 ? 1000 : 100;
  return score + hits.length;
}

/**
 * A snippet of at most `max` characters centred on the query: the window of `text` holding
 * the most query terms (words, and CJK characters and bigrams as the keyword index matches
 * them), widened evenly around them and cut at spaces or line breaks when one is near.
 * Without a term in the text (a vector-only hit) it is the start of the text.
 */
export function snippetAround(text: string, query: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  const hits = termHits(trimmed.toLowerCase(), query);
  if (hits.length === 0) return snippetOf(trimmed, max);
  const room = max - 2; // an ellipsis on each side
  let best = { score: -1, first: 0, last: 0 };
  for (let i = 0, j = 0; i < hits.length; i++) {
    if (j < i) j = i;
    while (j + 1 < hits.length && hits[j + 1]!.end - hits[i]!.at <= room) j++;
    const score = windowScore(hits.slice(i, j + 1));
    if (score > best.score) best = { score, first: hits[i]!.at, last: Math.min(hits[j]!.end, hits[i]!.at + room) };
  }
  const slack = room - (best.last - best.first);
  let start = Math.max(0, Math.min(best.first - Math.floor(slack / 2), trimmed.length - room));
  let end = Math.min(trimmed.length, start + room);
  // Start at a line or word boundary when one lies between the window start and the first match.
  if (start > 0) {
    const head = trimmed.slice(start, best.first);
    const line = head.lastIndexOf('\n');
    const space = head.search(/\s/);
    const cut = line !== -1 && line < head.length / 2 ? line + 1 : space !== -1 && space < 20 ? space + 1 : 0;
    start += cut;
    end = Math.min(trimmed.length, start + room);
  }
  if (end < trimmed.length) {
    const tail = trimmed.slice(best.last, end);
    const space = Math.max(tail.lastIndexOf(' '), tail.lastIndexOf('\n'));
    if (space !== -1 && tail.length - space < 20) end = best.last + space;
  }
  const body = trimmed.slice(start, end).trim();
  return `${start > 0 ? '…' : ''}${body}${end < trimmed.length ? '…' : ''}`;
}

export const memoryText: MemoryText = { tokenize, segmentCjk, hashText, chunkMarkdown, snippetAround };
