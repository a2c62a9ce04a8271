/**
 * What we know about OpenAI's own models: limits for `models()`, and whether a model
 * reasons, which decides if reasoning effort and temperature may be sent at all.
 */
import type { ModelInfo, ThinkingLevel } from '../../sdk/index.js';

/**
 * Prices (USD per million tokens) from OpenAI's pricing page as of this date; a
 * `models.providers.openai.models[].cost` entry overrides them. cacheRead is the cached-input
 * price; OpenAI charges nothing extra to write its cache.
 */
export const PRICES_AS_OF = '2025-10-15';
const price = (input: number, output: number, cacheRead: number) => ({ input, output, cacheRead, cacheWrite: 0 });

// From OpenAI's model pages; contextWindow is the total window, maxTokens the output cap.
export const OPENAI_MODELS: readonly ModelInfo[] = [
  {
    id: 'gpt-4.1',
    name: 'GPT-4.1',
    contextWindow: 1_047_576,
    maxTokens: 32_768,
    reasoning: false,
    cost: price(2, 8, 0.5),
  },
  {
    id: 'gpt-4.1-mini',
    name: 'GPT-4.1 mini',
    contextWindow: 1_047_576,
    maxTokens: 32_768,
    reasoning: false,
    cost: price(0.4, 1.6, 0.1),
  },
  {
    id: 'gpt-4o',
    name: 'GPT-4o',
    contextWindow: 128_000,
    maxTokens: 16_384,
    reasoning: false,
    cost: price(2.5, 10, 1.25),
  },
  {
    id: 'gpt-4o-mini',
    name: 'GPT-4o mini',
    contextWindow: 128_000,
    maxTokens: 16_384,
    reasoning: false,
    cost: price(0.15, 0.6, 0.075),
  },
  { id: 'o3', name: 'o3', contextWindow: 200_000, maxTokens: 100_000, reasoning: true, cost: price(2, 8, 0.5) },
  {
    id: 'o4-mini',
    name: 'o4-mini',
    contextWindow: 200_000,
    maxTokens: 100_000,
    reasoning: true,
    cost: price(1.1, 4.4, 0.275),
  },
  {
    id: 'gpt-5',
    name: 'GPT-5',
    contextWindow: 400_000,
    maxTokens: 128_000,
    reasoning: true,
    cost: price(1.25, 10, 0.125),
  },
  {
    id: 'gpt-5-mini',
    name: 'GPT-5 mini',
    contextWindow: 400_000,
    maxTokens: 128_000,
    reasoning: true,
    cost: price(0.25, 2, 0.025),
  },
];

/**
 * The catalog entry a model id belongs to: exact, dated ("gpt-4o-2024-08-06") or behind a
 * router prefix ("openai/gpt-4o"). Longest id first, so "gpt-4o-mini" is not read as "gpt-4o".
 */
export function findModel(model: string): ModelInfo | undefined {
  const bare = model.slice(model.lastIndexOf('/') + 1);
  return [...OPENAI_MODELS]
    .sort((a, b) => b.id.length - a.id.length)
    .find((info) => bare === info.id || bare.startsWith(`${info.id}-`));
}

/**
 * Reasoning effort for a thinking level, or undefined to send none. Known non-reasoning
 * models reject the parameter; unknown models (local servers, routers) get it, since the
 * caller asked for thinking and such servers ignore what they do not support. Only the
 * GPT-5 family accepts "minimal"; elsewhere it becomes the lowest effort there is.
 */
export function reasoningEffort(model: string, level: ThinkingLevel | undefined): string | undefined {
  if (level === undefined || level === 'off') return undefined;
  if (findModel(model)?.reasoning === false) return undefined;
  if (level === 'minimal') return /(^|\/)gpt-5/.test(model) ? 'minimal' : 'low';
  return level;
}

/** Reasoning models reject any temperature but the default. */
export function acceptsTemperature(model: string): boolean {
  return findModel(model)?.reasoning !== true;
}
