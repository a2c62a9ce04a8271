/**
 * User text → an FTS5 MATCH expression. Nothing the user types is passed through as FTS5
 * syntax: every term becomes a double-quoted string, so `OPS-4711`, quotes, `AND`, `NEAR(`,
 * `*`, `col:` and `^` are just words (or nothing) instead of operators or syntax errors.
 */
import { isCjk, type MemoryText } from '../../sdk/memory/index.js';

function quote(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}

/** How close two neighbouring question words must stand (tokens between them) to count as near. */
const NEAR_TOKENS = 8;

/** Endings stripped before a prefix match, longest first; what is left keeps ≥ 4 letters. */
const SUFFIXES = ['ings', 'ing', 'ies', 'ed', 'es', 's', 'ly'];

/**
 * A latin word as a prefix match on its stem, so "decide" finds "decided" and "ideas" finds
 * "idea" (the index has no stemmer). Short words match exactly: a prefix of three letters
 * matches too much.
 */
function wordMatch(word: string): string {
  if (word.length < 5 || /\d/.test(word)) return quote(word);
  const suffix = SUFFIXES.find((ending) => word.endsWith(ending) && word.length - ending.length >= 4);
  return `${quote(suffix ? word.slice(0, -suffix.length) : word)}*`;
}

/**
 * OR of the question's content terms (memory-core's `contentTerms`; BM25 ranks chunks that match
 * more, and rarer, terms higher). The chunk text is indexed through `segmentCjk`, so each CJK
 * character is its own FTS token and a CJK pair is a two-token phrase. A multi-part word
 * such as `OPS-4711` or `foo.bar` is its parts plus the parts as a phrase, so the exact
 * identifier outranks chunks that merely mention a part. Undefined when the text has nothing
 * searchable (only punctuation, say).
 */
export function buildFtsQuery(
  contentTerms: readonly string[],
  text: Pick<MemoryText, 'tokenize'>,
  corrected: ReadonlyMap<string, readonly string[]> = new Map(),
): string | undefined {
  const terms = new Set<string>();
  for (const term of contentTerms) {
    if ([...term].some(isCjk)) {
      terms.add(quote([...term].join(' ')));
      continue;
    }
    const parts = text.tokenize(term);
    for (const part of parts) terms.add(parts.length > 1 ? quote(part) : wordMatch(part));
    if (parts.length > 1) terms.add(quote(parts.join(' ')));
    for (const stem of corrected.get(term) ?? []) terms.add(quote(stem));
  }
  // Proximity: each pair of neighbouring question words again as a NEAR group, so a chunk
  // where they stand close together (one phrase, one sentence) outranks one that holds them
  // far apart; bm25 counts the group's hits on top of the single words'.
  const words = contentTerms.filter((term) => ![...term].some(isCjk) && text.tokenize(term).length === 1);
  for (let i = 0; i + 1 < words.length; i++)
    terms.add(`NEAR(${quote(words[i]!)} ${quote(words[i + 1]!)}, ${NEAR_TOKENS})`);
  const list = [...terms];
  return list.length ? list.join(' OR ') : undefined;
}
