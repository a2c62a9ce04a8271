/**
 * Text in memory: which characters are CJK, token estimates, the chunks an index holds, and
 * the text kit memory-core hands every backend as `ctx.text` (its implementation is
 * memory-core's), so all of them tokenize, chunk and cut snippets alike.
 */

/** Han, Hiragana, Katakana, Hangul: scripts written without spaces between words. */
export const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u{20000}-\u{2fa1f}]/u;
const CJK_GLOBAL = new RegExp(CJK.source, 'gu');

export function isCjk(char: string): boolean {
  return CJK.test(char);
}

/** ≈ tokens: a CJK character counts one, other text one per four characters. */
export function estimateTokens(text: string): number {
  const cjk = text.match(CJK_GLOBAL)?.length ?? 0;
  return cjk + Math.ceil((text.length - cjk) / 4);
}

export interface Chunk {
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  text: string;
  /** sha256 of the text: the key of the embedding cache. */
  hash: string;
  tokens: number;
}

/** What memory-core hands every backend (and engine) as `text`. */
export interface MemoryText {
  /** Lower-case word tokens; each CJK character is a token, adjacent ones also a bigram. */
  tokenize(text: string): string[];
  /** Spaces around every CJK character, for full-text indexes that split on spaces (Chinese, Japanese). */
  segmentCjk(text: string): string;
  /** sha256 (hex) of the text: the key of the embedding cache. */
  hashText(text: string): string;
  /** Markdown cut into line-aligned chunks of about `tokens` tokens, each starting with the last `overlap` of the one before. */
  chunkMarkdown(text: string, options: { tokens: number; overlap: number }): Chunk[];
  /** At most `max` characters of `text` around the query's terms (its start when none occurs). */
  snippetAround(text: string, query: string, max: number): string;
}
