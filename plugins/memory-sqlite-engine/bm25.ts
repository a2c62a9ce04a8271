/** FTS5 ranks to keyword scores in (0, 1], OpenClaw's rules. */
/** OpenClaw's rank → score for a non-negative "badness" rank (0 is best). */
export function bm25RankToScore(rank: number): number {
  return 1 / (1 + Math.max(0, rank));
}

/**
 * SQLite FTS5's bm25() is negative, more negative meaning more relevant. Relevance is its
 * negation; scores are relevance relative to the best candidate, so the best keyword
 * match scores 1 and the rest fall in (0, 1].
 */
export function normalizeBm25(ranks: readonly number[]): number[] {
  const relevance = ranks.map((rank) => Math.max(0, -rank));
  const best = Math.max(0, ...relevance);
  if (best <= 0) return ranks.map((_rank, index) => bm25RankToScore(index));
  return relevance.map((value) => value / best);
}
