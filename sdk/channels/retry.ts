/**
 * Retry timing for channel plugins and the outbound path: the backoff between attempts (or
 * the platform's own retry_after), and a sleep that never wakes early.
 */
import type { ChannelSendFailure } from '../types/channels.js';
import type { RetrySettings } from './config.js';

/** Longest retry_after we wait for before giving up on the send. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/**
 * Sleeps at least `ms` of wall-clock time. A timer counts from the event loop's cached "now",
 * which lags real time by however long the current tick has been busy, so on a loaded
 * machine a bare setTimeout fires early; a platform's retry_after is a floor, and retrying
 * even a few milliseconds early earns another 429.
 */
export async function sleepAtLeast(ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  for (let left = ms; left > 0; left = deadline - performance.now()) {
    await new Promise<void>((resolve) => setTimeout(resolve, Math.ceil(left)));
  }
}

/** How long to wait before attempt `attempt + 1` (attempt counts from 1). */
export function retryDelay(
  attempt: number,
  settings: RetrySettings,
  failure: ChannelSendFailure | undefined,
  random: () => number = Math.random,
): number {
  // The platform's own retry_after wins over our cap: retrying earlier only earns another 429.
  if (failure?.retryAfterMs !== undefined && failure.retryAfterMs >= 0)
    return Math.min(failure.retryAfterMs, MAX_RETRY_AFTER_MS);
  const base = Math.min(settings.maxDelayMs, settings.minDelayMs * 2 ** (attempt - 1));
  const spread = base * settings.jitter * (random() * 2 - 1);
  return Math.max(settings.minDelayMs, Math.min(settings.maxDelayMs, Math.round(base + spread)));
}
