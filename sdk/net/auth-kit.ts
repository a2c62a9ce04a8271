/**
 * Two small kits for any plugin that checks a credential arriving over the network (the
 * gateway, the webhook endpoints, a channel's webhook secret) and for clients choosing how
 * to reach a gateway. Gateway auth itself (failed-attempt lockouts, tokens, pairing) is the
 * gateway plugin's, offered as the `gateway-auth` service (sdk/types/gateway-auth.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares secrets in constant time (hashing first, so the length leaks nothing either). */
export function safeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** A host name or socket address that only this machine can reach (127/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(host);
}
