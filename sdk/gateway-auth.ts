/**
 * Gateway auth as seen from config: is any configured, and making a token when none is.
 * Shared by the gateway (first start) and `claw setup`, so both make the same kind of token.
 */
import { randomBytes } from 'node:crypto';
import { createRedactor } from './redact.js';

/** A gateway token: 32 random bytes, base64url (43 characters, 256 bits). */
export function generateGatewayToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Only the redactor's built-in secret shapes: no config, no environment. */
let shapes: ReturnType<typeof createRedactor> | undefined;

/**
 * A device token: 32 random bytes, base64url. A draw the redactor would take for a vendor
 * key (one starting "sk-" followed by 20 more characters, about 1 in 260,000) is drawn again:
 * the frame that hands the token over is redacted, so the device would store "sk-***".
 */
export function generateDeviceToken(random: () => Buffer = () => randomBytes(32)): string {
  shapes ??= createRedactor({ config: {}, env: {} });
  for (;;) {
    const token = random().toString('base64url');
    if (shapes.text(token) === token) return token;
  }
}

/** A host name or socket address that only this machine can reach (127/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(host);
}

/** True when config and environment name no way to authenticate to the gateway. */
export function gatewayAuthUnset(gateway: { auth?: { mode?: string; token?: string; password?: string } } | undefined, env: Readonly<Record<string, string | undefined>>): boolean {
  const auth = gateway?.auth;
  return !auth?.mode && !auth?.token && !auth?.password && !env.OPENCLAW_GATEWAY_TOKEN?.trim() && !env.OPENCLAW_GATEWAY_PASSWORD?.trim();
}
