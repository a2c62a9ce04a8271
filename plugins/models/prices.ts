/**
 * What a model call cost: the configured price (`models.providers.<id>.models[].cost`) wins,
 * then the provider's built-in table. The cost is fixed when the call is made and travels
 * with its usage into the transcript and the usage ledger, so a later price change never
 * reprices history.
 */
import type { ModelCost, ModelInfo, Usage } from '../../sdk/index.js';

const PER_TOKEN = 1 / 1_000_000;

/**
 * The listed model a call's id belongs to: exact, a dated id of an undated alias
 * ("claude-sonnet-4-5" → "claude-sonnet-4-5-20250929") or an id with a date suffix
 * ("gpt-4o-2024-08-06" → "gpt-4o"). Longest id first, so "gpt-4o-mini" is not read as "gpt-4o".
 */
export function listedModel(listed: readonly ModelInfo[], model: string): ModelInfo | undefined {
  const exact = listed.find((info) => info.id === model);
  if (exact) return exact;
  const undated = (id: string) => id.replace(/-\d{8}$/, '');
  return [...listed]
    .sort((a, b) => b.id.length - a.id.length)
    .find((info) => undated(info.id) === model || model.startsWith(`${info.id}-`));
}

/** Cost parts in USD, rounded to a billionth of a cent so sums of many calls stay exact enough to compare. */
export function costOf(usage: Usage, price: ModelCost): NonNullable<Usage['cost']> {
  const input = roundUsd(usage.input * price.input * PER_TOKEN);
  const output = roundUsd(usage.output * price.output * PER_TOKEN);
  const cacheRead = roundUsd((usage.cacheRead ?? 0) * (price.cacheRead ?? 0) * PER_TOKEN);
  const cacheWrite = roundUsd((usage.cacheWrite ?? 0) * (price.cacheWrite ?? 0) * PER_TOKEN);
  return { input, output, cacheRead, cacheWrite, total: roundUsd(input + output + cacheRead + cacheWrite) };
}

export function roundUsd(value: number): number {
  return Math.round(value * 1e11) / 1e11;
}
