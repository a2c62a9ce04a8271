/**
 * Gateway auth as seen from config: is any configured, and making a token when none is.
 * Used by the gateway (first start) and, through the `gateway-auth` service, by `claw
 * setup`, so both make the same kind of token. Device tokens are made here too (pairing).
 */
import { randomBytes } from 'node:crypto';
import type { GatewayAuthConfig, GatewayAuthService, Redactor } from '../../sdk/index.js';
import { AuthRateLimiter, clientKey } from './rate-limit.js';

/** A gateway token: 32 random bytes, base64url (43 characters, 256 bits). */
export function generateGatewayToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * A device token: 32 random bytes, base64url. A draw the redactor would mask (one starting
 * "sk-" followed by 20 more characters looks like a vendor key, about 1 in 260,000) is drawn
 * again: the frame that hands the token over passes the same redactor, so the device would
 * store "sk-***".
 */
export function generateDeviceToken(
  redact: Pick<Redactor, 'text'>,
  random: () => Buffer = () => randomBytes(32),
): string {
  for (;;) {
    const token = random().toString('base64url');
    if (redact.text(token) === token) return token;
  }
}

/** True when config and environment name no way to authenticate to the gateway. */
export function gatewayAuthUnset(
  gateway: GatewayAuthConfig | undefined,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  const auth = gateway?.auth;
  return (
    !auth?.mode &&
    !auth?.token &&
    !auth?.password &&
    !env.OPENCLAW_GATEWAY_TOKEN?.trim() &&
    !env.OPENCLAW_GATEWAY_PASSWORD?.trim()
  );
}

/**
 * The `gateway-auth` service: the webhook endpoints on the gateway's port count their own
 * token's failures with the gateway's limiter, and `claw setup` makes the gateway's kind of
 * token, without either holding a copy of this code.
 */
export const gatewayAuthService: Omit<GatewayAuthService, 'flagSecrets'> = {
  createRateLimiter: (settings) => new AuthRateLimiter(settings),
  clientKey,
  authUnset: gatewayAuthUnset,
  generateToken: generateGatewayToken,
};
