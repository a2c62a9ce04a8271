/**
 * Only the owner reaches the agent. The model here is hostile by design: whatever it is
 * asked, it answers with an `exec` call that writes a marker file. A request that reaches
 * the agent leaves the marker; every attack below must leave none.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, GatewayRequestError } from '../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../sdk/device-auth.js';
import { createTestKernel } from '../sdk/testing.js';
import { checkContentType } from '../plugins/gateway/request-guard.js';
import { startAgent, type AgentHarness } from './agent-helpers.js';
import { client, connectFrame, GATEWAY_DIR, rawSocket, startGateway, type RunningGateway } from './gateway-helpers.js';
import { tempDir, waitFor } from './helpers.js';

const TOKEN = 'owner-token-0123456789abcdefghijklmnop';
const MARKER = 'pwned.txt';

/** Every model request answers with exec (writing the marker), then text once the tool ran. */
function hostileModel(h: AgentHarness): void {
  h.fake.respond((request) => {
    const messages = (request.body?.messages ?? []) as Array<{ role: string }>;
    return messages.at(-1)?.role === 'tool'
      ? { text: 'done' }
      : { toolCalls: [{ name: 'exec', arguments: { command: `echo owned > ${MARKER}` } }] };
  });
}

interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP request (fetch would fix up Host and Origin for us; an attacker's browser does not). */
function post(
  port: number,
  path: string,
  options: { headers?: Record<string, string>; body?: string; localAddress?: string; method?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'POST',
        headers: options.headers,
        localAddress: options.localAddress,
      },
      (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const chatBody = JSON.stringify({ model: 'claw', messages: [{ role: 'user', content: 'hello' }] });

describe('a web page cannot make the agent act', () => {
  let h: AgentHarness;
  let marker: string;

  beforeAll(async () => {
    h = await startAgent({
      gateway: { auth: { token: TOKEN }, http: { endpoints: { chatCompletions: { enabled: true } } } },
    });
    hostileModel(h);
    marker = join(h.workspace, MARKER);
  });
  afterAll(() => h.stop());
  afterEach(() => rmSync(marker, { force: true }));

  it('refuses a no-cors text/plain POST from a foreign page, with or without the token', async () => {
    const page = { origin: 'https://evil.example', 'content-type': 'text/plain;charset=UTF-8' };
    for (const headers of [page, { ...page, authorization: `Bearer ${TOKEN}` }]) {
      const answer = await post(h.gw.port, '/v1/chat/completions', { headers, body: chatBody });
      expect(answer.status).toBe(403);
      expect(answer.body).toContain('origin https://evil.example may not call the gateway');
    }
    // Same page, no Origin header (some browsers drop it): text/plain is still refused.
    const typeOnly = await post(h.gw.port, '/v1/chat/completions', {
      headers: { 'content-type': 'text/plain', authorization: `Bearer ${TOKEN}` },
      body: chatBody,
    });
    expect(typeOnly.status).toBe(415);
    expect(typeOnly.body).toContain('Content-Type: application/json');
    expect(existsSync(marker)).toBe(false);
    expect(h.fake.requests).toHaveLength(0);
  });

  it('refuses a POST without auth', async () => {
    const answer = await post(h.gw.port, '/v1/chat/completions', {
      headers: { 'content-type': 'application/json' },
      body: chatBody,
    });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe('Bearer');
    expect(existsSync(marker)).toBe(false);
    expect(h.fake.requests).toHaveLength(0);
  });

  it('refuses DNS rebinding: a foreign Host name, on HTTP and on the WebSocket', async () => {
    const rebound = { host: `attacker.example:${h.gw.port}`, origin: `http://attacker.example:${h.gw.port}` };
    const answer = await post(h.gw.port, '/v1/chat/completions', {
      headers: { ...rebound, 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: chatBody,
    });
    expect(answer.status).toBe(421);
    expect(answer.body).toContain('gateway.allowedHosts');
    await expect(rawSocket(h.gw.url, rebound)).rejects.toThrow(/421/);
    // Even without Origin, a Host the gateway does not answer to is refused before the handshake.
    await expect(rawSocket(h.gw.url, { host: `attacker.example:${h.gw.port}` })).rejects.toThrow(/421/);
    expect(existsSync(marker)).toBe(false);
    expect(h.fake.requests).toHaveLength(0);
  });

  it('the owner, with the token and JSON, does reach the agent (the marker proves the setup)', async () => {
    const answer = await post(h.gw.port, '/v1/chat/completions', {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: chatBody,
    });
    expect(answer.status, answer.body).toBe(200);
    expect(readFileSync(marker, 'utf8')).toBe('owned\n');
  });
});

describe('form bodies', () => {
  it('are refused unless the route takes them (outside gateway auth, its own signature check)', () => {
    const form = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } } as never;
    expect(checkContentType(form)).toMatchObject({ status: 415 });
    expect(checkContentType(form, true)).toBeUndefined();
    const text = { method: 'POST', headers: { 'content-type': 'text/plain' } } as never;
    expect(checkContentType(text, true)).toMatchObject({ status: 415 });
  });
});

describe('the OpenAI-compatible endpoint is off by default', () => {
  let h: AgentHarness;
  beforeAll(async () => {
    h = await startAgent({ gateway: { auth: { token: TOKEN } } });
    hostileModel(h);
  });
  afterAll(() => h.stop());

  it('answers 404 naming the key, and runs nothing', async () => {
    const answer = await post(h.gw.port, '/v1/chat/completions', {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: chatBody,
    });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body).error.message).toContain('gateway.http.endpoints.chatCompletions.enabled');
    expect(existsSync(join(h.workspace, MARKER))).toBe(false);
    expect(h.fake.requests).toHaveLength(0);
  });
});

describe('a fresh gateway', () => {
  it('generates a token, refuses clients without it, admits the token read from the config file', async () => {
    const stateDir = tempDir('claw-fresh-');
    const kernel = await createTestKernel({ stateDir, plugins: [GATEWAY_DIR], config: { gateway: { port: 0 } } });
    try {
      await kernel.start();
      const server = kernel.plugins.get('gateway')!;
      expect(server.status, server.error).toBe('active');
      const { port } = (
        (await kernel.capabilities.get('service', 'gateway')) as unknown as {
          runtime: { server: { address: { port: number } } };
        }
      ).runtime.server.address;
      const url = `ws://127.0.0.1:${port}`;
      const refused = await new GatewayClient({ url, identity: generateDeviceIdentity() })
        .connect()
        .catch((error: GatewayRequestError) => error);
      expect(refused).toMatchObject({ details: { code: 'AUTH_TOKEN_MISSING' } });
      const token = JSON.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8')).gateway.auth.token as string;
      expect(token.length).toBeGreaterThanOrEqual(43);
      // Known to the redactor from the moment it exists.
      expect(kernel.redact.text(`the token is ${token}`)).toBe('the token is ***');
      const owner = new GatewayClient({ url, token, identity: generateDeviceIdentity() });
      await owner.connect();
      expect(await owner.request('health')).toMatchObject({ ok: true });
      await owner.close();
    } finally {
      await kernel.dispose();
    }
  });

  it('runs without auth only when told to, on loopback, and says so', async () => {
    const gw = await startGateway({ gateway: { auth: { mode: 'none' } } });
    try {
      const lines = gw.kernel.logs.map((record) => record.message);
      const c = await client(gw.url, { token: undefined });
      expect(await c.request('health')).toMatchObject({ ok: true });
      await c.close();
      expect(lines.some((line) => /gateway auth is OFF/.test(line))).toBe(true);
    } finally {
      await gw.stop();
    }
  });
});

describe('failed-auth lockout', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({
      gateway: { auth: { token: TOKEN, rateLimit: { maxAttempts: 10, lockoutMs: 60_000, exemptLoopback: false } } },
    });
  });
  afterAll(() => gw.stop());

  /** A connect over a WebSocket bound to `localAddress` (each 127.x address is another client). */
  function connectFrom(localAddress: string, token: string): Promise<Record<string, any>> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(gw.url, { localAddress });
      ws.on('error', reject);
      ws.on('message', (data) => {
        const frame = JSON.parse(data.toString());
        if (frame.event === 'connect.challenge') ws.send(JSON.stringify(connectFrame({ auth: { token } })));
        if (frame.type === 'res') {
          ws.close();
          resolve(frame);
        }
      });
    });
  }

  it('locks an address out after repeated wrong tokens (WebSocket and HTTP), while another address still connects', async () => {
    const answers: Array<Record<string, any>> = [];
    for (let i = 0; i < 20; i++) answers.push(await connectFrom('127.0.0.2', `wrong-${i}`));
    expect(answers.slice(0, 9).every((a) => a.error.details.code === 'AUTH_TOKEN_MISMATCH')).toBe(true);
    const locked = answers.slice(9);
    for (const answer of locked) {
      expect(answer.error).toMatchObject({
        code: 'INVALID_REQUEST',
        message: 'unauthorized: too many failed authentication attempts (retry later)',
        retryable: true,
        details: { code: 'AUTH_RATE_LIMITED', recommendedNextStep: 'wait_then_retry' },
      });
      expect(answer.error.retryAfterMs).toBeGreaterThan(50_000);
    }
    // Locked out means refused without looking at the secret: the right token fails too.
    expect((await connectFrom('127.0.0.2', TOKEN)).error.details.code).toBe('AUTH_RATE_LIMITED');

    const http = await post(gw.port, '/hooks/echo', {
      localAddress: '127.0.0.2',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(http.status).toBe(429);
    expect(Number(http.headers['retry-after'])).toBeGreaterThan(50);

    // Another address is unaffected.
    expect((await connectFrom('127.0.0.3', TOKEN)).ok).toBe(true);
    const other = await post(gw.port, '/hooks/echo', {
      localAddress: '127.0.0.3',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(other.status).toBe(200);
  });

  it('counts wrong HTTP bearer tokens too', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const answer = await post(gw.port, '/hooks/echo', {
        localAddress: '127.0.0.4',
        headers: { authorization: `Bearer nope-${i}`, 'content-type': 'application/json' },
        body: '{}',
      });
      statuses.push(answer.status);
    }
    expect(statuses.slice(0, 9)).toEqual(Array(9).fill(401));
    expect(statuses.slice(9)).toEqual([429, 429, 429]);
    expect((await connectFrom('127.0.0.4', TOKEN)).error.details.code).toBe('AUTH_RATE_LIMITED');
  });
});

describe('secrets never leave through the gateway', () => {
  it('masks configured secrets and secret-named environment values in results and events', async () => {
    const botToken = '123456789:AAHfakeTelegramTokenForTheTestOnly_0123';
    const gw = await startGateway({
      env: { ACME_API_KEY: 'acme-live-key-4242424242' },
      config: { channels: { telegram: { botToken } } },
    });
    try {
      const events: unknown[] = [];
      const c = await client(gw.url, { onEvent: (frame) => events.push(frame) });
      const echoed = JSON.stringify(
        await c.request('test.echo', {
          a: `token ${botToken}`,
          b: ['acme-live-key-4242424242'],
          c: `https://api.telegram.org/bot${botToken}/getMe`,
        }),
      );
      expect(echoed).not.toContain(botToken);
      expect(echoed).not.toContain('acme-live-key-4242424242');
      expect(echoed).toContain('***');
      gw.kernel.protocol.emit('test.final', { leak: botToken });
      await waitFor(() => JSON.stringify(events).includes('test.final'), { what: 'the test.final event' });
      expect(JSON.stringify(events)).not.toContain(botToken);
      await c.close();
    } finally {
      await gw.stop();
    }
  });
});

describe('admission before auth', () => {
  it('caps unauthenticated sockets per address and in total (503), and frees the slots', async () => {
    const gw = await startGateway({
      gateway: { preauth: { maxConnections: 6, maxPerAddress: 3 }, handshakeTimeoutMs: 5000 },
    });
    const held: WebSocket[] = [];
    const open = (localAddress: string, headers?: Record<string, string>) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(gw.url, { localAddress, headers });
        ws.once('open', () => resolve(ws));
        ws.once('unexpected-response', (_req, res) =>
          reject(new Error(`HTTP ${res.statusCode} retry-after=${res.headers['retry-after']}`)),
        );
        ws.once('error', reject);
      });
    try {
      // A proxied client counts as remote: at most 3 from one address.
      const proxied = { 'x-forwarded-for': '198.51.100.1' };
      for (let i = 0; i < 3; i++) held.push(await open('127.0.0.5', proxied));
      await expect(open('127.0.0.5', proxied)).rejects.toThrow('HTTP 503 retry-after=1');
      // Direct loopback clients count only toward the total.
      for (let i = 0; i < 3; i++) held.push(await open('127.0.0.1'));
      await expect(open('127.0.0.1')).rejects.toThrow('HTTP 503');
      // An authenticated client leaves the pre-auth pool; closed sockets give their slot back.
      held.pop()!.close();
      // The slot is free once the gateway has seen the close: until then a new socket gets a 503.
      const owner = await waitFor(() => client(gw.url).catch(() => undefined), { what: 'a free slot' });
      expect(await owner.request('health')).toMatchObject({ ok: true });
      await owner.close();
    } finally {
      for (const ws of held) ws.terminate();
      await gw.stop();
    }
  });

  it('enforces the 64 KiB pre-connect limit while the frame arrives, without buffering it', async () => {
    const gw = await startGateway();
    try {
      const raw = await rawSocket(gw.url);
      await raw.next((f) => f.event === 'connect.challenge');
      // 20 MB in one frame: the gateway stops reading after ~65 KB and closes with 1009.
      let delivered = false;
      raw.ws.send(Buffer.alloc(20 * 1024 * 1024, 0x61), { binary: false }, (error) => (delivered = !error));
      const closed = await raw.closed;
      // Had the gateway read (and buffered) the whole frame, the client's write would have completed.
      expect(delivered).toBe(false);
      expect(closed.code).toBe(1009);
      expect(closed.reason).toMatch(/exceeds the 65536-byte limit before connect/);
      expect(await (await client(gw.url)).request('health')).toMatchObject({ ok: true });
    } finally {
      await gw.stop();
    }
  });
});
