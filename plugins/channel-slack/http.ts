/**
 * Slack's Events API over HTTP, on the gateway's own HTTP server (a `/slack/*` route the
 * manifest declares) rather than a second port Bolt would open: one listener to expose, one
 * TLS setup, gateway shutdown closes it. Slack signs every request (`v0=` HMAC-SHA256 of
 * `v0:<timestamp>:<raw body>` with the app's signing secret); the route checks that with a
 * timing-safe compare and refuses timestamps more than five minutes off, so a captured
 * request cannot be replayed later. Slash commands come form-encoded to the same path, checked
 * the same way; the 200 carries the acknowledgement once the pipeline has the command.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const REPLAY_WINDOW_S = 5 * 60;
const MAX_BODY_BYTES = 1024 * 1024;

export type Verdict = { ok: true } | { ok: false; reason: string };

export function verifySignature(
  secret: string,
  headers: { signature?: string; timestamp?: string },
  body: string,
  nowMs: number,
): Verdict {
  const timestamp = Number(headers.timestamp);
  if (!headers.signature || !Number.isInteger(timestamp)) return { ok: false, reason: 'missing signature headers' };
  if (Math.abs(nowMs / 1000 - timestamp) > REPLAY_WINDOW_S)
    return { ok: false, reason: 'timestamp outside the five-minute window' };
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`);
  const given = Buffer.from(headers.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'signature mismatch' };
  return { ok: true };
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** What the route needs from the account that owns a path. */
export interface HttpEndpoint {
  signingSecret: string;
  /** Resolves once the pipeline has taken the event; throws when it did not (Slack retries). */
  handleEvent(body: unknown): Promise<void>;
  /** A slash command's form fields; resolves with the acknowledgement's body once the pipeline has it. */
  handleCommand(fields: Record<string, string>): Promise<unknown>;
}

export async function serveEvents(
  req: IncomingMessage,
  res: ServerResponse,
  endpoint: HttpEndpoint | undefined,
  log: (line: string) => void,
): Promise<void> {
  const reply = (status: number, body?: unknown) => {
    res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };
  if (!endpoint) return reply(404, { error: 'no Slack account in HTTP mode listens on this path' });
  const raw = await readBody(req);
  if (raw === undefined) return reply(413, { error: 'body too large' });
  const verdict = verifySignature(
    endpoint.signingSecret,
    {
      signature: req.headers['x-slack-signature'] as string | undefined,
      timestamp: req.headers['x-slack-request-timestamp'] as string | undefined,
    },
    raw,
    Date.now(),
  );
  if (!verdict.ok) {
    log(`slack: refused a request to ${req.url}: ${verdict.reason}`);
    return reply(401, { error: 'invalid signature' });
  }
  if (String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    const fields = Object.fromEntries(new URLSearchParams(raw));
    // Interactivity (a `payload` field) is not handled, only acknowledged.
    if (!fields.command) return reply(200);
    try {
      return reply(200, await endpoint.handleCommand(fields));
    } catch (error) {
      log(`slack: a slash command was not taken (${(error as Error).message})`);
      return reply(500, { error: 'not taken, try again' });
    }
  }
  let body: any;
  try {
    body = JSON.parse(raw);
  } catch {
    return reply(400, { error: 'the body is neither JSON nor a form' });
  }
  if (body?.type === 'url_verification') return reply(200, { challenge: String(body.challenge ?? '') });
  if (body?.type !== 'event_callback') return reply(200);
  try {
    await endpoint.handleEvent(body);
  } catch (error) {
    log(`slack: event ${body.event_id ?? '?'} not taken (${(error as Error).message}); Slack will retry`);
    return reply(500, { error: 'not taken, retry later' });
  }
  reply(200);
}
