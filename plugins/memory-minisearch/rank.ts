/**
 * Turning engine output into ranked memory hits: keyword candidates from MiniSearch,
 * vector candidates from a cosine scan, then memory-core's merge/finish rules.
 */
import type { MemorySearchHit } from '../../sdk/index.js';
import { type MemoryRanking, type MemoryText, type ScoredChunk, SNIPPET_MAX_CHARS } from '../../sdk/memory/index.js';
import type { ChunkRecord } from './store.js';
import type { VectorStore } from './vectors.js';

export type Candidate = Omit<ScoredChunk, 'vectorScore' | 'textScore'>;

export function candidate(chunk: ChunkRecord, score: number): Candidate {
  return {
    id: String(chunk.id),
    path: chunk.path,
    startLine: chunk.startLine,
    endLine: chunk.endLine,
    text: chunk.text,
    source: chunk.source,
    score,
  };
}

/**
 * Cosine similarity of the query to every chunk that has a vector: the best `limit`, plus
 * each of `alsoScore` (the keyword candidates, so a hit found by words gets its vector
 * score too). Negative and zero similarities are no evidence and are left out.
 */
export function vectorCandidates(
  query: ArrayLike<number>,
  chunks: ReadonlyMap<number, ChunkRecord>,
  vectors: VectorStore,
  limit: number,
  alsoScore: Iterable<number>,
  cosine: MemoryRanking['cosine'],
): Candidate[] {
  const scored: Array<{ chunk: ChunkRecord; score: number }> = [];
  for (const chunk of chunks.values()) {
    const vector = vectors.get(chunk.hash);
    if (!vector) continue;
    const score = Math.min(1, cosine(query, vector));
    if (score > 0) scored.push({ chunk, score });
  }
  scored.sort((a, b) => b.score - a.score);
  const picked = new Map(scored.slice(0, limit).map((item) => [item.chunk.id, item]));
  const wanted = new Set(alsoScore);
  for (const item of scored) if (wanted.has(item.chunk.id)) picked.set(item.chunk.id, item);
  return [...picked.values()].map((item) => candidate(item.chunk, item.score));
}

/** Scores stay within (0, 1] even when float rounding of weights and cosines overshoots. */
export function toHits(results: readonly ScoredChunk[], query: string, text: MemoryText): MemorySearchHit[] {
  return results.map((item) => ({
    path: item.path,
    startLine: item.startLine,
    endLine: item.endLine,
    score: Math.min(1, item.score),
    snippet: text.snippetAround(item.text, query, SNIPPET_MAX_CHARS),
    ...(item.source ? { source: item.source } : {}),
  }));
}
