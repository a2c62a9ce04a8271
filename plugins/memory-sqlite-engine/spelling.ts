/**
 * Typo tolerance for the keyword index: a latin query word the index has never seen
 * ("webhok", "minimun") is also searched as the indexed terms one or two edits away
 * ("webhook", "minimum"), the most common first. Words the index knows are left alone, so a
 * correct query is never rewritten, and short words are never corrected (too many neighbours).
 */

/** What the corrector needs from the index (IndexStore implements it). */
export interface Vocabulary {
  stems(words: readonly string[]): string[];
  termCounts(terms: readonly string[]): Map<string, number>;
  termsBetween(from: string, to: string): Array<{ term: string; doc: number }>;
}

/** Corrections offered per unknown word. */
const MAX_CORRECTIONS = 2;

/** Optimal string alignment distance (Levenshtein plus adjacent swaps), giving up above `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous2: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, previous2[j - 2]! + 1);
      row.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
    previous2 = previous;
    previous = row;
  }
  return previous[b.length]!;
}

/** How many edits a word of this length may be away from its correction. */
function allowedEdits(length: number): number {
  return length >= 8 ? 2 : length >= 4 ? 1 : 0;
}

/**
 * For each unknown latin word (a letters-only term of four letters or more that no chunk
 * holds), the indexed stems it is most likely a typo of. The search keeps the word itself too.
 */
export function corrections(words: readonly string[], vocabulary: Vocabulary): Map<string, string[]> {
  const candidates = words.filter((word) => /^\p{L}{4,}$/u.test(word) && allowedEdits(word.length) > 0);
  const out = new Map<string, string[]>();
  if (candidates.length === 0) return out;
  const stems = vocabulary.stems(candidates);
  const counts = vocabulary.termCounts(stems);
  candidates.forEach((word, index) => {
    const stem = stems[index]!;
    if ((counts.get(stem) ?? 0) > 0) return;
    const max = allowedEdits(word.length);
    // A typo rarely hits the first letter; scanning only its terms keeps this a few thousand comparisons.
    const first = stem[0]!;
    const next = String.fromCodePoint(first.codePointAt(0)! + 1);
    const found = vocabulary
      .termsBetween(first, next)
      .map((entry) => ({ ...entry, distance: editDistance(stem, entry.term, max) }))
      .filter((entry) => entry.distance <= max)
      .sort((a, b) => a.distance - b.distance || b.doc - a.doc)
      .slice(0, MAX_CORRECTIONS)
      .map((entry) => entry.term);
    if (found.length) out.set(word, found);
  });
  return out;
}

/** A question's content terms, the corrections of its unknown words, and the corrected question. */
export interface Spelling {
  terms: string[];
  fixes: Map<string, string[]>;
  question: string;
}

/**
 * The question with each unknown word replaced by its first correction, written as the index's
 * text writes it (`surface`: "configur" → "configuration"), for the embedding side.
 */
export function correctedQuestion(
  question: string,
  fixes: ReadonlyMap<string, readonly string[]>,
  surface: (stem: string) => string,
): string {
  if (fixes.size === 0) return question;
  return question.replace(/\p{L}+/gu, (word) => {
    const fix = fixes.get(word.toLowerCase())?.[0];
    return fix ? surface(fix) : word;
  });
}
