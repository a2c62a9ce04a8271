/**
 * The `gateway-auth` service, which the gateway plugin provides: failed-authentication
 * lockouts for anything served on the gateway's port (the webhook endpoints count their
 * token in a limiter of their own), and the gateway's view of auth config for `claw setup`.
 * A replacement gateway offers the same service; nobody builds it as a fallback.
 */

export interface RateLimitSettings {
  maxAttempts: number;
  windowMs: number;
  lockoutMs: number;
  exemptLoopback: boolean;
}

/** The shared secret and device tokens are counted apart, so guessing one does not lock out the other. */
export type CredentialScope = 'shared' | 'device';

/** Failed-authentication lockout per client and credential class; only wrong credentials count. */
export interface AuthRateLimiter {
  /** Milliseconds until `client` may try again, or 0 when it is not locked out. */
  retryAfterMs(client: string, scope: CredentialScope): number;
  /** Record a wrong credential; returns the lockout in ms when this failure started one. */
  fail(client: string, scope: CredentialScope): number;
  succeed(client: string, scope: CredentialScope): void;
}

/** The `gateway.auth` config section, as far as deciding whether any auth is set goes. */
export interface GatewayAuthConfig {
  auth?: { mode?: string; token?: string; password?: string };
}

export interface GatewayAuthService {
  /** A limiter of the caller's own: its failures never lock out the gateway's clients. */
  createRateLimiter(settings: RateLimitSettings): AuthRateLimiter;
  /**
   * Who a request is, for counting failures: the socket address, or for a browser page on
   * this machine its origin. `exempt`: a direct loopback client the settings do not count.
   */
  clientKey(
    remoteAddress: string | undefined,
    origin: string | undefined,
    forwarded: boolean,
    settings: RateLimitSettings,
  ): { key: string; exempt: boolean };
  /** True when config and environment name no way to authenticate to the gateway. */
  authUnset(gateway: GatewayAuthConfig | undefined, env: Readonly<Record<string, string | undefined>>): boolean;
  /** A token of the kind the gateway generates on first start. */
  generateToken(): string;
  /** Shared secrets given on `claw gateway`'s command line (--token, --password): config and environment do not show them. */
  flagSecrets(): string[];
}
