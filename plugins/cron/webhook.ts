/**
 * Webhook delivery: one POST of the finished run (the `cron` finished event) to the job's
 * URL, with `Authorization: Bearer <cron.webhookToken>` when one is set, bounded by a
 * timeout. Private and loopback addresses are refused unless `cron.webhookSsrfPolicy`
 * allows the host (OpenClaw's default: strict), so a job cannot be aimed at the
 * machine's own services by accident.
 */
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { nodeHttp, type GuardedNet, type Resolver } from '../../sdk/net/index.js';
import type { CronSection, DeliveryStatus, RunLogEntry } from './types.js';

export const WEBHOOK_TIMEOUT_MS = 10_000;

/** One POST to the address that was checked (redirects are not followed: a 3xx is an answer). */
function post(
  url: URL,
  lookup: LookupFunction,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : nodeHttp().request)(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup,
        timeout: timeoutMs,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    request.on('timeout', () =>
      request.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' })),
    );
    request.on('error', reject);
    request.end(body);
  });
}

export async function postWebhook(
  net: Pick<GuardedNet, 'checkUrl'>,
  url: string,
  entry: RunLogEntry,
  settings: Pick<CronSection, 'webhookToken' | 'webhookSsrfPolicy'>,
  timeoutMs = WEBHOOK_TIMEOUT_MS,
  resolve?: Resolver,
): Promise<{ deliveryStatus: DeliveryStatus; deliveryError?: string }> {
  const parsed = new URL(url);
  const check = await net.checkUrl(parsed, settings.webhookSsrfPolicy ?? {}, resolve);
  if (!check.allowed)
    return {
      deliveryStatus: 'not-delivered',
      deliveryError: `webhook refused: ${check.reason} (cron.webhookSsrfPolicy.allowedHostnames)`,
    };
  try {
    const headers = {
      'content-type': 'application/json',
      ...(settings.webhookToken ? { authorization: `Bearer ${settings.webhookToken}` } : {}),
    };
    const status = await post(parsed, check.lookup, JSON.stringify(entry), headers, timeoutMs);
    if (status >= 200 && status < 300) return { deliveryStatus: 'delivered' };
    return { deliveryStatus: 'not-delivered', deliveryError: `webhook answered HTTP ${status}` };
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    return {
      deliveryStatus: timedOut ? 'unknown' : 'not-delivered',
      deliveryError: timedOut
        ? `webhook did not answer within ${timeoutMs} ms`
        : `webhook failed: ${(error as Error).message}`,
    };
  }
}
