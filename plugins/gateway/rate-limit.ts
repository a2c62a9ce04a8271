/**
 * Failed-authentication lockout, per client and per credential class (the shared secret
 * and device tokens are counted apart, so guessing one does not lock out the other).
 * Only wrong credentials count; a missing one is not a guess. A client that is locked out
 * is refused before its credential is looked at. Used by the gateway's own auth, and
 * offered through the `gateway-auth` service to the webhook endpoints (hooks plugin),
 * which count their token apart.
 */
import { isLoopbackHost } from '../../sdk/net/index.js';
import type {
  AuthRateLimiter as AuthRateLimiterContract,
  CredentialScope,
  RateLimitSettings,
} from '../../sdk/index.js';

export type { CredentialScope, RateLimitSettings };

interface Bucket {
  failures: number[];
  lockedUntil: number;
}

/** Enough for any real deployment; a flood of distinct addresses cannot grow memory past it. */
const MAX_BUCKETS = 10_000;

export class AuthRateLimiter implements AuthRateLimiterContract {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until `client` may try again, or 0 when it is not locked out. */
  retryAfterMs(client: string, scope: CredentialScope): number {
    const bucket = this.buckets.get(`${scope}\u0000${client}`);
    if (!bucket) return 0;
    return Math.max(0, bucket.lockedUntil - this.now());
  }

  /** Record a wrong credential; returns the lockout in ms when this failure started one. */
  fail(client: string, scope: CredentialScope): number {
    const key = `${scope}\u0000${client}`;
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= MAX_BUCKETS) this.prune(now);
      bucket = { failures: [], lockedUntil: 0 };
      this.buckets.set(key, bucket);
    }
    const since = now - this.settings.windowMs;
    bucket.failures = bucket.failures.filter((at) => at > since);
    bucket.failures.push(now);
    if (bucket.failures.length >= this.settings.maxAttempts) {
      bucket.failures = [];
      bucket.lockedUntil = now + this.settings.lockoutMs;
      return this.settings.lockoutMs;
    }
    return 0;
  }

  succeed(client: string, scope: CredentialScope): void {
    this.buckets.delete(`${scope}\u0000${client}`);
  }

  /** Drop buckets with nothing left to remember; if still full, the oldest go. */
  private prune(now: number): void {
    const since = now - this.settings.windowMs;
    for (const [key, bucket] of this.buckets) {
      if (bucket.lockedUntil <= now && !bucket.failures.some((at) => at > since)) this.buckets.delete(key);
    }
    for (const key of this.buckets.keys()) {
      if (this.buckets.size < MAX_BUCKETS) break;
      this.buckets.delete(key);
    }
  }
}

/**
 * Who a request is, for counting failures: the socket address, or for a browser page on
 * this machine its origin (so one hostile page cannot lock out the owner's other tabs).
 * `exempt` is true for direct loopback clients that are not browser pages, when the
 * config exempts loopback: local tools must never lock themselves out.
 */
export function clientKey(
  remoteAddress: string | undefined,
  origin: string | undefined,
  forwarded: boolean,
  settings: RateLimitSettings,
): { key: string; exempt: boolean } {
  const address = remoteAddress ?? 'unknown';
  const loopback = isLoopbackHost(address);
  if (origin !== undefined && loopback) return { key: `origin:${origin}`, exempt: false };
  return { key: address, exempt: loopback && !forwarded && origin === undefined && settings.exemptLoopback };
}
