/**
 * A user's question → QMD searches, and QMD's answers → one ranking.
 *
 * QMD's keyword syntax ("lex") ANDs every term, and a CJK word is a phrase of its characters
 * (QMD indexes each CJK character as a token): a whole question ("when did I book the hotel
 * for the Lisbon offsite?", "上次和田中先生讨论了什么") almost never matches as one query.
 * So the question is cut into its content terms — words without the question's filler, and
 * each Chinese/Japanese run into overlapping character pairs, the unit QMD's phrase match
 * finds inside running text — and each term is its own lex search (QMD's BM25 over the
 * collections, top 20 documents). The lists are then combined the way BM25 itself adds up
 * a multi-term query: every document gets, per term it matched, that term's rarity (IDF,
 * from how many documents matched it) discounted by its rank in that term's list. A
 * document matching more, and rarer, terms comes first: OR semantics with BM25's weighting.
 */

/** QMD returns at most this many documents per lex search and collection (store.js structuredSearch). */
export const QMD_LIST_CAP = 20;

export interface RankedList<T> {
  /** Documents, best first, as QMD ranked them for one search. */
  hits: readonly T[];
  /** A vector search has no document frequency; it counts as much as the rarest term. */
  kind: 'term' | 'vector';
}

/** BM25's IDF for a term found in `df` of `total` documents. */
function idf(df: number, total: number): number {
  return Math.log(1 + (total - df + 0.5) / (df + 0.5));
}

/**
 * Combine per-term lists into one ranking (see the header). A list shorter than QMD's cap
 * holds every document with the term, so its length is the term's document frequency; a
 * full list only says "at least the cap", and is estimated between the cap and the corpus.
 */
export function fuseLists<T>(
  lists: ReadonlyArray<RankedList<T>>,
  totalDocs: number,
  keyOf: (hit: T) => string,
): Array<{ hit: T; score: number }> {
  const total = Math.max(totalDocs, 1);
  const weights = lists.map((list) => {
    if (list.kind === 'vector') return 0;
    const df =
      list.hits.length < QMD_LIST_CAP ? list.hits.length : Math.max(QMD_LIST_CAP, Math.sqrt(QMD_LIST_CAP * total));
    return idf(Math.min(df, total), total);
  });
  const strongest = Math.max(0, ...weights) || Math.log(1 + total);
  const scores = new Map<string, { hit: T; score: number; first: number }>();
  let order = 0;
  lists.forEach((list, index) => {
    const weight = list.kind === 'vector' ? strongest : weights[index]!;
    list.hits.forEach((hit, rank) => {
      const key = keyOf(hit);
      // Within one term's list, BM25 ranks by term frequency and length: a gentle discount.
      const gain = weight / (1 + rank / 10);
      const entry = scores.get(key);
      if (entry) entry.score += gain;
      else scores.set(key, { hit, score: gain, first: order++ });
    });
  });
  return [...scores.values()]
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .map(({ hit, score }) => ({ hit, score }));
}
