/**
 * Webhook delivery: one POST of the finished run (the `cron` finished event) to the job's
 * URL, with `Authorization: Bearer <cron.webhookToken>` when one is set, bounded by a
 * timeout. Private and loopback addresses are refused unless `cron.webhookSsrfPolicy`
 * allows the host (OpenClaw's default: strict), so a job cannot be aimed at the
 * machine's own services by accident.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { CronSection, DeliveryStatus, RunLogEntry } from './types.js';

export const WEBHOOK_TIMEOUT_MS = 10_000;

function privateAddress(address: string): boolean {
  if (isIP(address) === 6) {
    const lower = address.toLowerCase();
    if (lower === '::1' || lower === '::') return true;
    if (lower.startsWith('::ffff:')) return privateAddress(lower.slice(7));
    return /^(fc|fd|fe8|fe9|fea|feb)/.test(lower);
  }
  const [a, b] = address.split('.').map(Number) as [number, number];
  return a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
}

async function checkTarget(url: URL, policy: CronSection['webhookSsrfPolicy']): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (policy?.dangerouslyAllowPrivateNetwork || policy?.allowedHostnames?.some((allowed) => allowed.toLowerCase() === host)) return undefined;
  const addresses = isIP(host) ? [host] : host === 'localhost' ? ['127.0.0.1'] : (await lookup(host, { all: true })).map((entry) => entry.address);
  const blocked = addresses.find(privateAddress);
  return blocked ? `webhook target ${host} resolves to a private address (${blocked}); allow it with cron.webhookSsrfPolicy.allowedHostnames` : undefined;
}

export async function postWebhook(url: string, entry: RunLogEntry, settings: Pick<CronSection, 'webhookToken' | 'webhookSsrfPolicy'>, timeoutMs = WEBHOOK_TIMEOUT_MS): Promise<{ deliveryStatus: DeliveryStatus; deliveryError?: string }> {
  const target = new URL(url);
  const refused = await checkTarget(target, settings.webhookSsrfPolicy);
  if (refused) return { deliveryStatus: 'not-delivered', deliveryError: refused };
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(settings.webhookToken ? { authorization: `Bearer ${settings.webhookToken}` } : {}) },
      body: JSON.stringify(entry),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    await response.arrayBuffer().catch(() => undefined);
    if (response.ok) return { deliveryStatus: 'delivered' };
    return { deliveryStatus: 'not-delivered', deliveryError: `webhook answered HTTP ${response.status}` };
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    return { deliveryStatus: timedOut ? 'unknown' : 'not-delivered', deliveryError: timedOut ? `webhook did not answer within ${timeoutMs} ms` : `webhook failed: ${(error as Error).message}` };
  }
}
