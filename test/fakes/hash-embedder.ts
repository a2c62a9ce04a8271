/**
 * A deterministic stand-in for an embedding model, for tests and benchmarks: each token
 * (words; CJK characters and their bigrams) is a fixed pseudo-random direction from its
 * hash; a text is the normalised sum of its distinct tokens. Texts sharing words point the
 * same way, unrelated texts are nearly orthogonal. Not a language model: no synonyms.
 */
import { createHash } from 'node:crypto';
import type { EmbeddingProvider } from '../../sdk/memory/index.js';
import { tokenize } from '../../plugins/memory-core/text.js';

// Token directions are pure functions of (token, dims); remembering them makes indexing a
// large corpus (a small vocabulary, used over and over) fast enough for benchmarks.
const directions = new Map<string, Float64Array>();
const MAX_DIRECTIONS = 200_000;

function direction(token: string, dims: number): Float64Array {
  const key = `${dims}\u0000${token}`;
  let vector = directions.get(key);
  if (!vector) {
    vector = new Float64Array(dims);
    for (let block = 0; block * 16 < dims; block++) {
      const digest = createHash('sha256').update(`${block}:${token}`).digest();
      for (let k = 0; k < 16 && block * 16 + k < dims; k++)
        vector[block * 16 + k] = digest.readUInt16LE(k * 2) / 32767.5 - 1;
    }
    if (directions.size >= MAX_DIRECTIONS) directions.clear();
    directions.set(key, vector);
  }
  return vector;
}

export function hashEmbedding(text: string, dims = 64): number[] {
  const sum = new Float64Array(dims);
  const tokens = new Set(tokenize(text));
  // Punctuation-only or empty text still needs a stable, non-zero vector.
  for (const token of tokens.size > 0 ? tokens : [text]) {
    const vector = direction(token, dims);
    for (let i = 0; i < dims; i++) sum[i]! += vector[i]!;
  }
  let norm = 0;
  for (const value of sum) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  // Real embeddings are float32; rounding keeps JSON and binary forms identical.
  return Array.from(sum, (value) => Math.fround(value / norm));
}

/** An in-process EmbeddingProvider over hashEmbedding; counts what it embeds. */
export function createHashEmbedder(
  options: { dims?: number; model?: string } = {},
): EmbeddingProvider & { calls: number; texts: number } {
  const dims = options.dims ?? 64;
  const model = options.model ?? `hash-${dims}`;
  const provider = {
    id: 'hash',
    model,
    fingerprint: `hash:${model}`,
    dims,
    calls: 0,
    texts: 0,
    async embed(texts: string[]): Promise<number[][]> {
      provider.calls++;
      provider.texts += texts.length;
      return texts.map((text) => hashEmbedding(text, dims));
    },
  };
  return provider;
}
