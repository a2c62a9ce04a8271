/**
 * What we know about Claude models, and how a thinking level becomes `max_tokens` and a
 * thinking budget.
 */
import type { ModelInfo, ThinkingLevel } from '../../sdk/index.js';

/**
 * Prices (USD per million tokens) from Anthropic's pricing page as of this date; a
 * `models.providers.anthropic.models[].cost` entry overrides them. cacheWrite is the 5-minute
 * cache write (1.25× input), cacheRead a cache hit (0.1× input).
 */
export const PRICES_AS_OF = '2025-10-15';
const SONNET = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const OPUS = { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 };

// From Anthropic's model overview; maxTokens is the output cap without beta headers.
export const ANTHROPIC_MODELS: readonly ModelInfo[] = [
  {
    id: 'claude-sonnet-4-5-20250929',
    name: 'Claude Sonnet 4.5',
    contextWindow: 200_000,
    maxTokens: 64_000,
    reasoning: true,
    cost: SONNET,
  },
  {
    id: 'claude-sonnet-4-20250514',
    name: 'Claude Sonnet 4',
    contextWindow: 200_000,
    maxTokens: 64_000,
    reasoning: true,
    cost: SONNET,
  },
  {
    id: 'claude-opus-4-1-20250805',
    name: 'Claude Opus 4.1',
    contextWindow: 200_000,
    maxTokens: 32_000,
    reasoning: true,
    cost: OPUS,
  },
  {
    id: 'claude-opus-4-20250514',
    name: 'Claude Opus 4',
    contextWindow: 200_000,
    maxTokens: 32_000,
    reasoning: true,
    cost: OPUS,
  },
  {
    id: 'claude-haiku-4-5-20251001',
    name: 'Claude Haiku 4.5',
    contextWindow: 200_000,
    maxTokens: 64_000,
    reasoning: true,
    cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  },
  {
    id: 'claude-3-7-sonnet-20250219',
    name: 'Claude Sonnet 3.7',
    contextWindow: 200_000,
    maxTokens: 64_000,
    reasoning: true,
    cost: SONNET,
  },
  {
    id: 'claude-3-5-haiku-20241022',
    name: 'Claude Haiku 3.5',
    contextWindow: 200_000,
    maxTokens: 8_192,
    reasoning: false,
    cost: { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  },
];

/** A catalog id without its date: "claude-sonnet-4-20250514" → "claude-sonnet-4". */
const family = (id: string): string => id.replace(/-\d{8}$/, '');

/**
 * The catalog entry for a model id: dated, an alias ("claude-sonnet-4-0",
 * "claude-3-5-haiku-latest") or behind a router prefix. Longest family first, so
 * "claude-sonnet-4-5" is not read as "claude-sonnet-4".
 */
export function findModel(model: string): ModelInfo | undefined {
  const bare = model.slice(model.lastIndexOf('/') + 1);
  return [...ANTHROPIC_MODELS]
    .sort((a, b) => family(b.id).length - family(a.id).length)
    .find((info) => bare === family(info.id) || bare.startsWith(`${family(info.id)}-`));
}

/** Room left for the answer when we pick max_tokens ourselves. */
export const DEFAULT_MAX_TOKENS = 8192;

/**
 * Thinking budget per level. The API wants at least 1024 and less than max_tokens;
 * past ~32k Claude rarely uses more, so "high" stops there.
 */
export const THINKING_BUDGETS: Record<Exclude<ThinkingLevel, 'off'>, number> = {
  minimal: 1024,
  low: 4096,
  medium: 10_000,
  high: 32_000,
};
const MIN_BUDGET = 1024;

export interface TokenPlan {
  maxTokens: number;
  /** Undefined: send no `thinking` block. */
  budget?: number;
}

/**
 * `max_tokens` and the thinking budget for a request. Without an explicit maxTokens we
 * ask for the budget plus room for the answer, capped by the model's output limit (a
 * large max_tokens also counts against output rate limits, hence no bigger default).
 * The budget then shrinks to leave a quarter of max_tokens (at most 8192) for the answer;
 * when even the minimum budget does not fit, the request goes without thinking.
 */
export function tokenPlan(model: string, maxTokens: number | undefined, level: ThinkingLevel | undefined): TokenPlan {
  const info = findModel(model);
  const ceiling = info?.maxTokens;
  if (level === undefined || level === 'off' || info?.reasoning === false) {
    return { maxTokens: maxTokens ?? Math.min(DEFAULT_MAX_TOKENS, ceiling ?? DEFAULT_MAX_TOKENS) };
  }
  const wanted = THINKING_BUDGETS[level];
  const max = maxTokens ?? Math.min(wanted + DEFAULT_MAX_TOKENS, ceiling ?? Number.POSITIVE_INFINITY);
  const answerRoom = Math.min(DEFAULT_MAX_TOKENS, Math.floor(max / 4));
  const budget = Math.max(MIN_BUDGET, Math.min(wanted, max - answerRoom));
  return budget < max ? { maxTokens: max, budget } : { maxTokens: max };
}
