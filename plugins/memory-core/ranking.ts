/**
 * Ranking shared by the memory backends, which get it from the "memory-core" service
 * (MemoryRanking): the hybrid merge (0.7 · vector + 0.3 · text), temporal decay for dated
 * daily files, and MMR re-ranking for diverse results.
 */
import type { MemoryRanking, MergeOptions, RankedChunk, ScoredChunk } from '../../sdk/memory/index.js';
import { contentTerms } from './query-terms.js';
import { tokenize } from './text.js';

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  if (na === 0 || nb === 0) return 0;
  return dot / Math.sqrt(na * nb);
}

export function temporalDecayMultiplier(ageInDays: number, halfLifeDays: number): number {
  return Math.exp(-(Math.LN2 / halfLifeDays) * Math.max(0, ageInDays));
}

/**
 * The threshold a keyword match must reach on its own (its normalised text score) to be
 * kept: the share of minScore the text side could earn in a hybrid score. Keyword-only
 * search and the hybrid merge use the same rule, so hybrid never drops what keyword-only
 * search keeps.
 */
export function keywordMinScore(minScore: number, textWeight: number): number {
  return minScore * textWeight;
}

/**
 * Union by chunk id, weighted sum, optional decay and MMR, then minScore and maxResults.
 * A chunk found only by keyword scores at most textWeight (0.3 by default), under the
 * default minScore, so the threshold alone would drop every exact keyword hit; as in
 * OpenClaw, keyword matches that keyword-only search would keep fill the slots the hits
 * that reach minScore leave free (all of them when none does). Semantic-only matches
 * still need minScore.
 */
export function mergeHybridResults(
  vector: readonly RankedChunk[],
  keyword: readonly RankedChunk[],
  options: MergeOptions,
): ScoredChunk[] {
  const merged = new Map<string, ScoredChunk>();
  for (const item of vector) merged.set(item.id, { ...item, vectorScore: item.score, score: 0 });
  for (const item of keyword) {
    const existing = merged.get(item.id);
    if (existing) existing.textScore = item.score;
    else merged.set(item.id, { ...item, textScore: item.score, score: 0 });
  }
  const results = [...merged.values()].map((item) => ({
    ...item,
    score: options.vectorWeight * (item.vectorScore ?? 0) + options.textWeight * (item.textScore ?? 0),
  }));
  const decay = decayOf(results, options);
  const ranked = order(applyDecay(results, decay), options);
  const keywordFloor = keywordMinScore(options.minScore, options.textWeight);
  const strong = ranked.filter((item) => item.score >= options.minScore);
  const keywordKept = ranked.filter(
    (item) =>
      item.score < options.minScore &&
      item.textScore !== undefined &&
      item.textScore * (decay.get(item.id) ?? 1) >= keywordFloor,
  );
  return [...strong, ...keywordKept].slice(0, options.maxResults);
}

/** Decay, MMR, threshold and limit, for results already scored. */
export function finish(
  results: ScoredChunk[],
  options: Omit<MergeOptions, 'vectorWeight' | 'textWeight'>,
): ScoredChunk[] {
  return order(applyDecay(results, decayOf(results, options)), options)
    .filter((item) => item.score >= options.minScore)
    .slice(0, options.maxResults);
}

/** Each dated chunk's temporal decay multiplier (evergreen files never decay, so are absent). */
function decayOf(
  results: readonly ScoredChunk[],
  options: Pick<MergeOptions, 'temporalDecay' | 'now'>,
): Map<string, number> {
  const multipliers = new Map<string, number>();
  if (!options.temporalDecay?.enabled) return multipliers;
  const now = options.now ?? new Date();
  for (const item of results) {
    const day = datedFileDay(item.path);
    if (!day) continue;
    const age = (now.getTime() - day.getTime()) / 86_400_000;
    multipliers.set(item.id, temporalDecayMultiplier(age, options.temporalDecay.halfLifeDays));
  }
  return multipliers;
}

function applyDecay(results: readonly ScoredChunk[], decay: ReadonlyMap<string, number>): ScoredChunk[] {
  return results.map((item) => (decay.has(item.id) ? { ...item, score: item.score * decay.get(item.id)! } : item));
}

function order(results: ScoredChunk[], options: Pick<MergeOptions, 'mmr'>): ScoredChunk[] {
  const out = [...results].sort((a, b) => b.score - a.score);
  return options.mmr?.enabled ? mmrRerank(out, options.mmr.lambda) : out;
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const token of a) if (b.has(token)) shared++;
  return shared / (a.size + b.size - shared);
}

/** Maximal marginal relevance: λ · relevance − (1 − λ) · max similarity to what is picked. */
export function mmrRerank<T extends { score: number; text: string }>(items: readonly T[], lambda: number): T[] {
  const remaining = items.map((item) => ({ item, tokens: new Set(tokenize(item.text)) }));
  const picked: typeof remaining = [];
  while (remaining.length > 0) {
    let bestIndex = 0;
    let bestValue = -Infinity;
    remaining.forEach((candidate, index) => {
      const similarity = picked.length
        ? Math.max(...picked.map((chosen) => jaccard(candidate.tokens, chosen.tokens)))
        : 0;
      const value = lambda * candidate.item.score - (1 - lambda) * similarity;
      if (value > bestValue) {
        bestValue = value;
        bestIndex = index;
      }
    });
    picked.push(remaining.splice(bestIndex, 1)[0]!);
  }
  return picked.map((entry) => entry.item);
}

/** `memory/2026-01-31.md` (or `memory/2026-01-31-slug.md`) → that date; undated files → undefined. */
export function datedFileDay(path: string): Date | undefined {
  const match = /(?:^|\/)memory\/(?:.*\/)?(\d{4})-(\d{2})-(\d{2})[^/]*\.md$/i.exec(path);
  if (!match) return undefined;
  const date = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** What the "memory-core" service hands every engine. */
export const memoryRanking: MemoryRanking = { mergeHybridResults, finish, keywordMinScore, cosine, contentTerms };
