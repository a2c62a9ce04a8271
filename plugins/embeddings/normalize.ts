/**
 * Every vector a provider returns (the embedding contract): non-finite values become 0, then
 * unit length (vectors of length < 1e-10 stay as they are).
 */
export function sanitizeAndNormalizeEmbedding(vector: readonly number[]): number[] {
  const clean = vector.map((value) => (Number.isFinite(value) ? value : 0));
  const magnitude = Math.sqrt(clean.reduce((sum, value) => sum + value * value, 0));
  if (magnitude < 1e-10) return clean;
  return clean.map((value) => value / magnitude);
}
