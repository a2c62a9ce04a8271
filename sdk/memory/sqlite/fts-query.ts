/**
 * User text → an FTS5 MATCH expression. Nothing the user types is passed through as FTS5
 * syntax: every term becomes a double-quoted string, so `OPS-4711`, quotes, `AND`, `NEAR(`,
 * `*`, `col:` and `^` are just words (or nothing) instead of operators or syntax errors.
 */
import { isCjk, tokenize } from '../text.js';

/** Enough for any real question; bounds the work a pasted document can cause. */
const MAX_TERMS = 64;

function quote(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}

/**
 * The chunk text is indexed through `segmentCjk`, so each CJK character is its own FTS
 * token; a CJK unigram or bigram from `tokenize` is therefore a one- or two-token phrase.
 */
function phraseOf(token: string): string {
  return [...token].some(isCjk) ? [...token].join(' ') : token;
}

/**
 * OR of the query's terms (BM25 ranks chunks that match more, and rarer, terms higher),
 * plus each multi-part word such as `OPS-4711` or `foo.bar` as a phrase, so the exact
 * identifier outranks chunks that merely mention its parts. Undefined when the text has
 * nothing searchable (only punctuation, say).
 */
export function buildFtsQuery(text: string): string | undefined {
  const terms = new Set<string>();
  for (const token of tokenize(text)) terms.add(phraseOf(token));
  for (const word of text.split(/\s+/)) {
    const parts = tokenize(word).filter((token) => ![...token].some(isCjk));
    if (parts.length > 1) terms.add(parts.join(' '));
  }
  const list = [...terms].filter((term) => term.trim() !== '').slice(0, MAX_TERMS);
  return list.length ? list.map(quote).join(' OR ') : undefined;
}
