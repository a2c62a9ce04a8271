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
/** Pairs are formed among this many question words (15 pairs at most). */
const NEAR_WORDS = 6;

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
 * The names in a question, lower-cased: words written with a capital (`Porto`, `Lena`,
 * `Castillo`) or in capitals with digits (`OPS-4711`), the words a person remembers a thing
 * by. `contentTerms` has already dropped the capitalised question words (`Which`, `I`).
 */
export function namesIn(question: string): Set<string> {
  const names = new Set<string>();
  for (const match of question.matchAll(/[\p{L}\p{N}_]+(?:[.\-'][\p{L}\p{N}_]+)*/gu))
    if (/^\p{Lu}/u.test(match[0]) || (/\d/.test(match[0]) && /\p{Lu}/u.test(match[0])))
      names.add(match[0].toLowerCase().replace(/'s$/, ''));
  return names;
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
  names: ReadonlySet<string> = new Set(),
): string | undefined {
  const terms = new Set<string>();
  // A name counts twice: the same word again as a column-filtered phrase, which bm25 scores
  // as a phrase of its own.
  for (const name of contentTerms.filter((term) => names.has(term))) terms.add(`{text context} : ${quote(name)}`);
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
  const near = words.slice(0, NEAR_WORDS);
  for (let i = 0; i < near.length; i++)
    for (let j = i + 1; j < near.length; j++) terms.add(`NEAR(${quote(near[i]!)} ${quote(near[j]!)}, ${NEAR_TOKENS})`);
  const list = [...terms];
  return list.length ? list.join(' OR ') : undefined;
}
