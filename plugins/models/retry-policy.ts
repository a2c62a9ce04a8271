/**
 * Same-model recovery before failover: a rate limit, an overloaded server (5xx) or a
 * network failure is usually over in seconds, so the same model and key are asked again
 * after a growing, jittered wait before anything is cooled down or a fallback answers.
 * Budgets follow OpenClaw's: rate limits get up to 10 attempts; other transient failures
 * 8 retries within a 90 s outage window. A server's Retry-After is a minimum wait, even
 * past the 30 s backoff cap; one longer than 60 s sends the run to its next candidate
 * instead, when there is one.
 *
 * With a fallback that could answer, waiting out an outage is the wrong trade: the user is
 * better served by the next model in seconds. So then a transient failure is retried only
 * `fallbackRetries` times (default 1) within `fallbackWindowMs` (5 s), and a timeout not at
 * all (the wait already spent is the cost of one more). With no fallback, OpenClaw's full
 * recovery applies.
 */
import { ModelError, type FailureKind } from '../../sdk/index.js';
import type { ProviderRetry } from './generated/types.js';

export interface RetryPolicy {
  /** Total attempts for a rate limit (the first one included). */
  rateLimitAttempts: number;
  /** Retries after other transient failures (5xx, overload, network, timeout). */
  transientRetries: number;
  /** Consecutive transient failures stop being retried once they span this long. */
  outageWindowMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this skips to the next candidate when one exists. */
  maxRetryAfterMs: number;
  /** ± fraction of each backoff wait, so concurrent runs do not retry in lockstep. */
  jitter: number;
  /** Retries of a transient failure when a fallback could answer instead. */
  fallbackRetries: number;
  /** … and the span those retries may take. */
  fallbackWindowMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  rateLimitAttempts: 10,
  transientRetries: 8,
  outageWindowMs: 90_000,
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
  jitter: 0.2,
  fallbackRetries: 1,
  fallbackWindowMs: 5000,
};

/** The policy with `agents.defaults.retry.provider` (or an agent's own) applied. */
export function retryPolicyFrom(base: RetryPolicy, config: ProviderRetry | undefined): RetryPolicy {
  if (!config) return base;
  return {
    ...base,
    ...(config.maxRetries !== undefined ? { transientRetries: config.maxRetries } : {}),
    // 0 lifts the cap: a server's Retry-After is honoured however long.
    ...(config.maxRetryDelayMs !== undefined
      ? { maxRetryAfterMs: config.maxRetryDelayMs === 0 ? Infinity : config.maxRetryDelayMs }
      : {}),
    ...(config.fallbackRetries !== undefined ? { fallbackRetries: config.fallbackRetries } : {}),
  };
}

/** Failures worth asking the same model again for. Auth, billing and bad requests are not. */
export const TRANSIENT_FAILURES: ReadonlySet<FailureKind> = new Set(['rate_limit', 'overloaded', 'timeout']);

export interface RetryDecision {
  retry: boolean;
  /** Wait before the next attempt (ms), when retrying. */
  waitMs: number;
  /** Total attempts this failure kind may take, for "retrying 2/10". */
  maxAttempts: number;
}

/**
 * Whether to try the same model again after `attempt` attempts (1 = the first failed),
 * and how long to wait. `elapsedMs` is how long this streak of failures has lasted.
 */
export function retryDecision(
  policy: RetryPolicy,
  failure: ModelError,
  attempt: number,
  elapsedMs: number,
  options: { hasFallback: boolean; random?: () => number },
): RetryDecision {
  const rateLimit = failure.kind === 'rate_limit';
  const full = rateLimit ? policy.rateLimitAttempts : policy.transientRetries + 1;
  const maxAttempts = options.hasFallback ? Math.min(full, policy.fallbackRetries + 1) : full;
  const no = { retry: false, waitMs: 0, maxAttempts };
  if (!TRANSIENT_FAILURES.has(failure.kind) || attempt >= maxAttempts) return no;
  if (options.hasFallback && failure.kind === 'timeout') return no;
  const hint = failure.retryAfterMs;
  if (hint !== undefined && hint > policy.maxRetryAfterMs && options.hasFallback) return no;
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const spread = 1 + policy.jitter * (2 * (options.random ?? Math.random)() - 1);
  const waitMs = Math.max(Math.round(backoff * spread), hint ?? 0);
  if (options.hasFallback && elapsedMs + waitMs > policy.fallbackWindowMs) return no;
  if (!rateLimit && elapsedMs + waitMs > policy.outageWindowMs) return no;
  return { retry: true, waitMs, maxAttempts };
}

/** Resolves after `ms`, or rejects as an abort the moment the run is cancelled. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new ModelError('aborted', 'the run was aborted'));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ModelError('aborted', 'the run was aborted'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
