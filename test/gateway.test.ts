import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayClient, GatewayRequestError } from '../apps/cli/gateway-client.js';
import {
  base64UrlEncode,
  deviceAuthPayload,
  generateDeviceIdentity,
  rawPublicKey,
  signPayload,
} from '../sdk/device-auth.js';
import { definePlugin } from '../sdk/index.js';
import type { GatewayService } from '../plugins/gateway/service.js';
import { createTestKernel } from '../sdk/testing.js';
import {
  connectFrame,
  client,
  GATEWAY_DIR,
  rawSocket,
  startGateway,
  TEST_TOKEN,
  type RunningGateway,
} from './gateway-helpers.js';
import { tempDir, waitFor } from './helpers.js';

const running: Array<RunningGateway | GatewayClient> = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) {
    if (item instanceof GatewayClient) await item.close();
    else await item.stop();
  }
});

async function gateway(options: Parameters<typeof startGateway>[0] = {}) {
  const gw = await startGateway(options);
  running.push(gw);
  return gw;
}

async function open(url: string, options: Parameters<typeof client>[1] = {}) {
  const c = await client(url, options);
  running.push(c);
  return c;
}

async function rejection(promise: Promise<unknown>): Promise<GatewayRequestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected the promise to reject').toBeInstanceOf(GatewayRequestError);
  return error as GatewayRequestError;
}

const REMOTE = { 'x-forwarded-for': '203.0.113.7' };

describe('handshake', () => {
  it('challenges first, then negotiates protocol 4 or 3 and answers hello-ok', async () => {
    const gw = await gateway();
    const raw = await rawSocket(gw.url);
    const challenge = await raw.next((f) => f.event === 'connect.challenge');
    expect(challenge).toMatchObject({ type: 'event', payload: { nonce: expect.any(String), ts: expect.any(Number) } });
    raw.send(connectFrame({ maxProtocol: 4 }));
    const hello = await raw.next((f) => f.type === 'res');
    expect(hello).toMatchObject({
      id: 'c1',
      ok: true,
      payload: {
        type: 'hello-ok',
        protocol: 4,
        server: { version: expect.any(String), connId: expect.any(String) },
        features: {
          methods: expect.arrayContaining(['health', 'status', 'config.get', 'device.pair.approve', 'test.counter']),
          events: expect.arrayContaining(['tick', 'presence', 'shutdown']),
        },
        snapshot: {
          presence: expect.any(Array),
          health: { ok: true },
          stateVersion: { presence: expect.any(Number), health: 0 },
          uptimeMs: expect.any(Number),
          authMode: 'token',
          sessionDefaults: { mainSessionKey: 'agent:main:main' },
        },
        auth: { role: 'operator', scopes: ['operator.read'] },
        policy: { maxPayload: 25 * 1024 * 1024, maxBufferedBytes: 50 * 1024 * 1024, tickIntervalMs: 30_000 },
      },
    });
    raw.ws.close();

    const v3 = await open(gw.url, { minProtocol: 3, maxProtocol: 3 });
    expect(v3.hello!.protocol).toBe(3);
    expect(await v3.request('health')).toMatchObject({ ok: true, status: 'ok' });
  });

  it('refuses protocols it does not speak, with a clear error, and closes', async () => {
    const gw = await gateway();
    const raw = await rawSocket(gw.url);
    raw.send(connectFrame({ minProtocol: 5, maxProtocol: 6 }));
    const response = await raw.next((f) => f.type === 'res');
    expect(response.error).toEqual({
      code: 'INVALID_REQUEST',
      message: 'protocol mismatch: client speaks 5–6, gateway speaks 3–4',
      details: { code: 'PROTOCOL_MISMATCH', minProtocol: 3, maxProtocol: 4 },
    });
    expect((await raw.closed).code).toBe(1008);
  });

  it('closes, with a reason, on a wrong first frame, bad JSON, binary data or an oversized pre-connect frame', async () => {
    const gw = await gateway();
    const cases: Array<[unknown, number, RegExp]> = [
      [{ type: 'req', id: 'x', method: 'health' }, 1008, /the first frame must be a connect request, got "health"/],
      ['{this is not json', 1008, /frame is not valid JSON/],
      [{ type: 'event', event: 'hello' }, 1008, /the first frame must be a connect request, got a event frame/],
      [Buffer.from([1, 2, 3]), 1003, /binary frames are not supported/],
      [
        JSON.stringify(connectFrame({ padding: 'x'.repeat(70_000) })),
        1009,
        /exceeds the 65536-byte limit before connect/,
      ],
    ];
    for (const [frame, code, reason] of cases) {
      const raw = await rawSocket(gw.url);
      await raw.next((f) => f.event === 'connect.challenge');
      if (Buffer.isBuffer(frame)) raw.ws.send(frame, { binary: true });
      else raw.send(frame);
      const closed = await raw.closed;
      expect(closed.code, String(reason)).toBe(code);
      expect(closed.reason).toMatch(reason);
      const error = raw.frames.find((f) => f.event === 'error' || f.type === 'res');
      expect(error?.payload?.message ?? error?.error?.message).toMatch(reason);
    }
    // The gateway is unharmed.
    expect(await (await open(gw.url)).request('health')).toMatchObject({ ok: true });
  });

  it('closes a socket that never sends connect', async () => {
    const gw = await gateway({ gateway: { handshakeTimeoutMs: 200 } });
    const raw = await rawSocket(gw.url);
    const closed = await raw.closed;
    expect(closed).toEqual({ code: 1008, reason: 'no connect request within 200 ms' });
  });
});

describe('auth', () => {
  it('token mode: missing and wrong tokens are refused, the right one admitted', async () => {
    const gw = await gateway({ gateway: { auth: { token: 'sekret-token' } } });
    const missing = await rejection(client(gw.url, { token: undefined }));
    expect(missing).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'unauthorized: gateway token missing',
      details: { code: 'AUTH_TOKEN_MISSING' },
    });
    const wrong = await rejection(client(gw.url, { token: 'guess' }));
    expect(wrong.details).toMatchObject({
      code: 'AUTH_TOKEN_MISMATCH',
      recommendedNextStep: 'update_auth_credentials',
    });
    const ok = await open(gw.url, { token: 'sekret-token' });
    expect(ok.hello!.snapshot).toMatchObject({ authMode: 'token' });
  });

  it('password mode, and OPENCLAW_GATEWAY_TOKEN from the environment', async () => {
    const pw = await gateway({ gateway: { auth: { mode: 'password', password: 'hunter22' } } });
    expect((await rejection(client(pw.url, { password: 'nope' }))).details).toMatchObject({
      code: 'AUTH_PASSWORD_MISMATCH',
    });
    await open(pw.url, { password: 'hunter22' });
    const env = await gateway({ env: { OPENCLAW_GATEWAY_TOKEN: 'from-env' }, gateway: { auth: {} } });
    await rejection(client(env.url, { token: undefined }));
    await open(env.url, { token: 'from-env' });
  });

  it('refuses to start on a non-loopback bind without auth', async () => {
    const kernel = await createTestKernel({ plugins: [GATEWAY_DIR], config: { gateway: { port: 0, bind: 'lan' } } });
    await kernel.start();
    expect(kernel.plugins.get('gateway')!.error).toMatch(
      /^service "gateway" failed to start: refusing to listen on 0\.0\.0\.0 without auth/,
    );
    await kernel.dispose();
    const custom = await createTestKernel({ plugins: [GATEWAY_DIR], config: { gateway: { port: 0, bind: 'custom' } } });
    await custom.start();
    expect(custom.plugins.get('gateway')!.error).toContain(
      'gateway.bind is "custom" but gateway.customBindHost is not set',
    );
    await custom.dispose();
  });

  it("refuses WebSockets opened by other sites' pages (Origin), but not its own or allowed ones", async () => {
    const gw = await gateway({ gateway: { controlUi: { allowedOrigins: ['https://dash.example'] } } });
    const host = `127.0.0.1:${gw.port}`;
    await expect(rawSocket(gw.url, { origin: 'https://evil.example' })).rejects.toThrow(/403/);
    await expect(rawSocket(gw.url, { origin: 'null' })).rejects.toThrow(/403/);
    for (const origin of [`http://${host}`, 'https://dash.example']) {
      const socket = await rawSocket(gw.url, { origin });
      await socket.next((frame) => frame.event === 'connect.challenge');
      socket.ws.close();
    }
    // Non-browser clients send no Origin at all.
    const plain = await rawSocket(gw.url);
    await plain.next((frame) => frame.event === 'connect.challenge');
    plain.ws.close();
  });

  it('checks operator scopes per method; a node cannot call operator methods', async () => {
    const gw = await gateway();
    const reader = await open(gw.url, { scopes: ['operator.read'] });
    expect(await reader.request('status')).toMatchObject({ pid: process.pid });
    const denied = await rejection(reader.request('config.set', { config: {}, idempotencyKey: 'k' }));
    expect(denied).toMatchObject({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.admin',
      details: { code: 'MISSING_SCOPE', missingScope: 'operator.admin', requiredScopes: ['operator.admin'] },
    });
    const node = await open(gw.url, { role: 'node', scopes: [] });
    expect(node.hello!.auth).toEqual({ role: 'node', scopes: [], deviceToken: expect.any(String) });
    expect((await rejection(node.request('status'))).code).toBe('FORBIDDEN');
    expect(await node.request('health')).toMatchObject({ ok: true });
    // Scopes claw does not know (OpenClaw's Control UI asks for operator.questions) are left out, not refused.
    const newer = await open(gw.url, { scopes: ['operator.read', 'operator.questions', 'operator.root'] });
    expect(newer.hello!.auth.scopes).toEqual(['operator.read']);
    expect((await rejection(newer.request('config.set', { config: {}, idempotencyKey: 'k' }))).code).toBe('FORBIDDEN');
  });
});

describe('device identity and pairing', () => {
  it('pairs a remote device after approval, issues a device token, and keeps the pairing across restarts', async () => {
    const stateDir = tempDir('claw-pair-');
    const gw = await gateway({ stateDir, gateway: { auth: { token: 't0k' } } });
    const operator = await open(gw.url, { token: 't0k' });
    const requested: unknown[] = [];
    const resolved: unknown[] = [];
    const watcher = new GatewayClient({
      url: gw.url,
      token: 't0k',
      identity: generateDeviceIdentity(),
      scopes: ['operator.pairing'],
      onEvent: (frame) => {
        if (frame.event === 'device.pair.requested') requested.push(frame.payload);
        if (frame.event === 'device.pair.resolved') resolved.push(frame.payload);
      },
    });
    await watcher.connect();
    running.push(watcher);

    const phone = generateDeviceIdentity();
    const first = await rejection(
      client(gw.url, {
        token: 't0k',
        identity: phone,
        headers: REMOTE,
        client: { id: 'phone-app', displayName: 'Ada phone' },
      }),
    );
    expect(first).toMatchObject({
      code: 'NOT_PAIRED',
      retryable: true,
      details: { code: 'PAIRING_REQUIRED', recommendedNextStep: 'wait_then_retry' },
    });
    const requestId = (first.details as { requestId: string }).requestId;
    await waitFor(() => requested.length > 0, { what: 'the device.pair.requested event' });
    expect(requested).toEqual([
      expect.objectContaining({
        requestId,
        deviceId: phone.deviceId,
        role: 'operator',
        remoteAddress: '127.0.0.1',
        displayName: 'Ada phone',
      }),
    ]);
    const listed = (await operator.request('device.pair.list')) as { pending: Array<{ requestId: string }> };
    expect(listed.pending.map((p) => p.requestId)).toEqual([requestId]);
    // Asking again while pending reuses the same request.
    const again = await rejection(client(gw.url, { token: 't0k', identity: phone, headers: REMOTE }));
    expect((again.details as { requestId: string }).requestId).toBe(requestId);

    const approved = (await operator.request('device.pair.approve', { requestId, idempotencyKey: randomUUID() })) as {
      device: { deviceId: string };
    };
    expect(approved.device.deviceId).toBe(phone.deviceId);
    await waitFor(() => resolved.length > 0, { what: 'the device.pair.resolved event' });
    expect(resolved).toEqual([expect.objectContaining({ requestId, decision: 'approved' })]);

    const paired = await open(gw.url, { token: 't0k', identity: phone, headers: REMOTE });
    const deviceToken = paired.hello!.auth.deviceToken!;
    expect(deviceToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await paired.close();
    // The device token alone (no shared secret) now admits the device.
    const byToken = await open(gw.url, { deviceToken, identity: phone, headers: REMOTE });
    expect(byToken.hello!.auth).toEqual({
      role: 'operator',
      scopes: ['operator.read', 'operator.write', 'operator.admin', 'operator.pairing'],
    });
    // The wrong device cannot use it.
    expect(
      (await rejection(client(gw.url, { deviceToken, identity: generateDeviceIdentity(), headers: REMOTE }))).details,
    ).toMatchObject({ code: 'AUTH_TOKEN_MISSING' });

    await gw.stop();
    running.splice(running.indexOf(gw), 1);
    const restarted = await gateway({ stateDir, gateway: { auth: { token: 't0k' } } });
    const afterRestart = await open(restarted.url, { deviceToken, identity: phone, headers: REMOTE });
    expect(afterRestart.hello!.auth.role).toBe('operator');
    expect(
      JSON.parse(readFileSync(join(stateDir, 'devices', 'pairing.json'), 'utf8')).paired[phone.deviceId].roles.operator
        .tokenHash,
    ).toMatch(/^[0-9a-f]{64}$/);
  });

  it('revoking a device token disconnects its sessions and refuses the token', async () => {
    const gw = await gateway({ gateway: { auth: { token: 'abc' } } });
    const operator = await open(gw.url, { token: 'abc' });
    const laptop = generateDeviceIdentity();
    const firstConnect = await open(gw.url, { token: 'abc', identity: laptop });
    const deviceToken = firstConnect.hello!.auth.deviceToken!;
    const session = new GatewayClient({ url: gw.url, deviceToken, identity: laptop });
    const closed = new Promise<number>((resolve) => {
      (session as unknown as { options: { onClose: (info: { code: number }) => void } }).options.onClose = (info) =>
        resolve(info.code);
    });
    await session.connect();
    const result = await operator.request('device.token.revoke', {
      deviceId: laptop.deviceId,
      idempotencyKey: randomUUID(),
    });
    expect(result).toEqual({ deviceId: laptop.deviceId, role: 'operator', revoked: true, disconnected: 1 });
    expect(await closed).toBe(1008);
    expect((await rejection(client(gw.url, { deviceToken, identity: laptop }))).details).toMatchObject({
      code: 'AUTH_TOKEN_MISSING',
    });
    await session.close();
  });

  it('rejects remote clients without an identity, and bad signatures', async () => {
    const gw = await gateway();
    const anonymous = await rejection(client(gw.url, { identity: undefined, headers: REMOTE }));
    expect(anonymous).toMatchObject({ code: 'NOT_PAIRED', details: { code: 'DEVICE_IDENTITY_REQUIRED' } });

    const device = generateDeviceIdentity();
    const attempt = async (mutate: (params: Record<string, any>, nonce: string, ts: number) => void) => {
      const raw = await rawSocket(gw.url, REMOTE);
      const { payload } = await raw.next((f) => f.event === 'connect.challenge');
      const params: Record<string, any> = {
        minProtocol: 3,
        maxProtocol: 4,
        client: { id: 'x', mode: 'cli' },
        role: 'operator',
        scopes: ['operator.read'],
        auth: { token: TEST_TOKEN },
      };
      const signed = deviceAuthPayload({
        deviceId: device.deviceId,
        clientId: 'x',
        clientMode: 'cli',
        role: 'operator',
        scopes: ['operator.read'],
        signedAtMs: payload.ts,
        nonce: payload.nonce,
      });
      params.device = {
        id: device.deviceId,
        publicKey: base64UrlEncode(rawPublicKey(device.publicKeyPem)),
        signature: signPayload(device.privateKeyPem, signed),
        signedAt: payload.ts,
        nonce: payload.nonce,
      };
      mutate(params, payload.nonce, payload.ts);
      raw.send({ type: 'req', id: 'c', method: 'connect', params });
      const response = await raw.next((f) => f.type === 'res');
      await raw.closed;
      return response.error;
    };
    expect(await attempt((p) => (p.device.nonce = 'stale-nonce'))).toMatchObject({
      details: { code: 'DEVICE_AUTH_NONCE_MISMATCH' },
    });
    expect(
      await attempt(
        (p) => (p.device.signature = p.device.signature.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A'))),
      ),
    ).toMatchObject({
      details: { code: 'DEVICE_AUTH_SIGNATURE_INVALID' },
    });
    expect(await attempt((p) => (p.scopes = ['operator.admin']))).toMatchObject({
      details: { code: 'DEVICE_AUTH_SIGNATURE_INVALID' },
    });
    expect(await attempt((p) => (p.device.id = 'f'.repeat(64)))).toMatchObject({
      details: { code: 'DEVICE_AUTH_DEVICE_ID_MISMATCH' },
    });
    expect(await attempt((p) => (p.device.publicKey = 'bm90LWEta2V5'))).toMatchObject({
      details: { code: 'DEVICE_AUTH_PUBLIC_KEY_INVALID' },
    });
    // Correctly signed, but remote and unpaired: pairing is required.
    expect(await attempt(() => {})).toMatchObject({ code: 'NOT_PAIRED', details: { code: 'PAIRING_REQUIRED' } });
  });
});

describe('requests', () => {
  it('answers unknown methods, bad params and failing handlers with errors, never crashing', async () => {
    const gw = await gateway();
    const c = await open(gw.url);
    expect(await rejection(c.request('nope.nothing'))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'unknown method "nope.nothing"',
    });
    expect(await rejection(c.request('test.slow', { ms: 'soon' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'invalid params for test.slow: params.ms: must be integer',
    });
    expect(await rejection(c.request('test.throw'))).toMatchObject({
      code: 'UNAVAILABLE',
      message: 'test.throw failed: kaput',
    });
    expect(await rejection(c.request('connect', {}))).toMatchObject({ message: 'already connected' });
    expect(await rejection(c.request('test.bigint'))).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/^test\.bigint returned a result that is not JSON: /),
    });
    expect(await rejection(c.request('test.badschema', { a: 1 }))).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/^test\.badschema failed: can't resolve reference/),
    });
    expect(await c.request('health')).toMatchObject({ ok: true });
  });

  it('requires an idempotency key for side effects and runs a repeated key once', async () => {
    const gw = await gateway();
    const c = await open(gw.url);
    expect(await rejection(c.request('test.counter', {}))).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { code: 'IDEMPOTENCY_KEY_REQUIRED' },
    });
    const key = randomUUID();
    const [first, concurrent] = await Promise.all([
      c.request('test.counter', { idempotencyKey: key }),
      c.request('test.counter', { idempotencyKey: key }),
    ]);
    expect(first).toEqual({ counter: 1 });
    expect(concurrent).toEqual({ counter: 1 });
    // A retry on a new connection (after a reconnect) is still deduplicated.
    const other = await open(gw.url);
    expect(await other.request('test.counter', { idempotencyKey: key })).toEqual({ counter: 1 });
    // The same key with other params is a mistake, not a retry: refused, naming the key.
    expect(await rejection(other.request('test.counter', { idempotencyKey: key, by: 5 }))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining(
        `idempotencyKey "${key}" was already used for a test.counter request with different params`,
      ),
      details: { code: 'IDEMPOTENCY_KEY_REUSED', idempotencyKey: key },
    });
    expect(await other.request('test.counter', { idempotencyKey: randomUUID() })).toEqual({ counter: 2 });
  });

  it('sends an interim response and then the final one on the same id (two-phase methods)', async () => {
    const gw = await gateway();
    const c = await open(gw.url);
    const acks: unknown[] = [];
    const final = await c.request('test.twophase', {}, { expectFinal: true, onAck: (payload) => acks.push(payload) });
    expect(acks).toEqual([{ runId: 'r1', status: 'accepted', acceptedAt: expect.any(Number) }]);
    expect(final).toEqual({ runId: 'r1', status: 'ok' });
  });

  it('rejects an oversized frame by closing only that socket', async () => {
    const gw = await gateway({ gateway: { maxPayloadBytes: 65536 } });
    const raw = await rawSocket(gw.url);
    raw.send(connectFrame());
    await raw.next((f) => f.type === 'res' && f.ok);
    raw.send({ type: 'req', id: 'big', method: 'health', params: { blob: 'y'.repeat(100_000) } });
    expect((await raw.closed).code).toBe(1009);
    const c = await open(gw.url);
    expect(await c.request('health')).toMatchObject({ ok: true });
  });

  it('answers malformed frames after connect without closing', async () => {
    const gw = await gateway();
    const raw = await rawSocket(gw.url);
    raw.send(connectFrame());
    await raw.next((f) => f.type === 'res' && f.ok);
    raw.send('not json at all');
    raw.send({ type: 'req', id: 'r2', method: 7 });
    raw.send({ type: 'res', id: 'r3', ok: true });
    expect((await raw.next((f) => f.event === 'error')).payload.message).toMatch(/frame is not valid JSON/);
    expect((await raw.next((f) => f.id === 'r2')).error.message).toBe('invalid req frame: method: must be string');
    expect(
      (await raw.next((f) => f.event === 'error' && /req frames only/.test(f.payload.message))).payload.message,
    ).toBe('clients send req frames only, got a res frame');
    raw.send({ type: 'req', id: 'r4', method: 'health' });
    expect((await raw.next((f) => f.id === 'r4')).ok).toBe(true);
    raw.ws.close();
  });
});

describe('events', () => {
  it('sends ticks, and presence only to clients that want it, with a per-connection seq', async () => {
    const gw = await gateway({ gateway: { tickIntervalMs: 1000 } });
    const raw = await rawSocket(gw.url);
    raw.send(connectFrame({ client: { id: 'watcher', mode: 'ui' } }));
    await raw.next((f) => f.type === 'res');
    // A CLI-style client did not ask for presence: it gets ticks but no presence events.
    const cli = await rawSocket(gw.url);
    cli.send(connectFrame({ client: { id: 'quiet', mode: 'cli' } }));
    await cli.next((f) => f.type === 'res');
    const other = await open(gw.url, { client: { id: 'second-client' } });
    const presence = await raw.next((f) => f.event === 'presence' && f.payload.presence.length === 3);
    expect(presence.payload.presence.map((entry: { clientId: string }) => entry.clientId)).toEqual([
      'second-client',
      'quiet',
      'watcher',
    ]);
    expect(presence.stateVersion).toMatchObject({ presence: expect.any(Number) });
    const tick = await raw.next((f) => f.event === 'tick', 2500);
    expect(tick.payload.ts).toEqual(expect.any(Number));
    await cli.next((f) => f.event === 'tick', 2500);
    expect(cli.frames.filter((f) => f.event === 'presence')).toEqual([]);
    const seqs = raw.frames.filter((f) => f.type === 'event' && f.seq !== undefined).map((f) => f.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(((await other.request('system-presence')) as unknown[]).length).toBe(3);
    raw.ws.close();
    cli.ws.close();
    // Having asked once (system-presence), `other` now receives the coalesced update.
    const update = await new Promise<Record<string, any>>((resolve) => {
      const check = setInterval(async () => {
        const after = (await other.request('system-presence')) as Array<{ clientId: string; connected: boolean }>;
        if (after.filter((entry) => !entry.connected).length === 2) {
          clearInterval(check);
          resolve(after);
        }
      }, 50);
    });
    expect(update.find((entry: { clientId: string }) => entry.clientId === 'watcher')).toMatchObject({
      connected: false,
    });
  });

  it('coalesces a burst of connects into a few presence snapshots', async () => {
    const gw = await gateway({ gateway: { presenceIntervalMs: 300 } });
    const watcher = await rawSocket(gw.url);
    watcher.send(connectFrame({ client: { id: 'watcher', mode: 'ui' } }));
    await watcher.next((f) => f.type === 'res');
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) => open(gw.url, { client: { id: `burst-${i}` } })),
    );
    await watcher.next((f) => f.event === 'presence' && f.payload.presence.length === 31, 3000);
    const snapshots = watcher.frames.filter((f) => f.event === 'presence');
    // 31 connects; a snapshot at most every 300 ms while they land.
    expect(snapshots.length).toBeLessThanOrEqual(4);
    await Promise.all(burst.map((c) => c.close()));
    running.splice(0, running.length, ...running.filter((item) => !burst.includes(item as GatewayClient)));
    watcher.ws.close();
  });

  it('drops streaming events for a slow consumer, then closes it when its buffer passes the cap', async () => {
    const gw = await gateway({ gateway: { dropEventsAboveBytes: 256 * 1024, maxBufferedBytes: 4 * 1024 * 1024 } });
    const raw = await rawSocket(gw.url);
    raw.send(connectFrame());
    const hello = await raw.next((f) => f.type === 'res');
    const connId = hello.payload.server.connId as string;
    // Stop reading: the kernel's socket buffers fill, then the gateway's send buffer grows.
    (raw.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const blob = 'z'.repeat(64 * 1024);
    for (let i = 0; i < 400; i++) gw.kernel.protocol.emit('test.blob', { i, blob }, { connIds: [connId] });
    // The first phase is over once the gateway has started dropping blobs for this connection.
    const service = (await gw.kernel.capabilities.get('service', 'gateway')) as unknown as GatewayService;
    const conn = service.runtime.server!.connectionList().find((item) => item.id === connId)!;
    await waitFor(() => conn.dropped > 0, { what: 'the gateway to drop streaming events for the paused reader' });
    for (let i = 0; i < 200; i++) gw.kernel.protocol.emit('test.final', { i, blob }, { connIds: [connId] });
    (raw.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await raw.closed;
    expect([1013, 1006]).toContain(closed.code);
    const blobs = raw.frames.filter((f) => f.event === 'test.blob');
    expect(blobs.length).toBeGreaterThan(0);
    expect(blobs.length).toBeLessThan(400);
    const seqs = raw.frames.filter((f) => f.type === 'event').map((f) => f.seq);
    const gaps = seqs.slice(1).filter((seq, i) => seq !== seqs[i] + 1).length;
    expect(gaps).toBeGreaterThan(0);
    expect(raw.frames.filter((f) => f.event === 'test.final').length).toBeLessThan(200);
    const healthy = await open(gw.url);
    expect(await healthy.request('health')).toMatchObject({ ok: true });
  });

  it('on stop: refuses new sockets, sends shutdown, finishes running requests, runs gateway_stop, closes', async () => {
    // A request that runs until the test lets it go: it is certainly running when stop() begins.
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = definePlugin({
      id: 'gwtest-held',
      register(api) {
        api.registerGatewayMethod('test.held', {
          handler: async () => {
            entered();
            await released;
            return { released: true };
          },
        });
      },
    });
    const gw = await startGateway({ plugins: [held] });
    const c = new GatewayClient({ url: gw.url, token: TEST_TOKEN, identity: generateDeviceIdentity() });
    const events: Array<{ event: string; payload: unknown }> = [];
    const closes: number[] = [];
    const withHandlers = new GatewayClient({
      token: TEST_TOKEN,
      url: gw.url,
      identity: generateDeviceIdentity(),
      onEvent: (frame) => events.push({ event: frame.event, payload: frame.payload }),
      onClose: (info) => closes.push(info.code),
    });
    await c.connect();
    await withHandlers.connect();
    const slow = withHandlers.request('test.held');
    await inHandler;
    const stopping = gw.stop();
    // Clients hear why while the request still runs; it is let go only then, and stop() waits for it.
    await waitFor(() => events.some((e) => e.event === 'shutdown'), { what: 'the shutdown event' });
    release();
    await stopping;
    expect(await slow).toEqual({ released: true });
    expect(events.find((e) => e.event === 'shutdown')).toEqual({ event: 'shutdown', payload: { reason: 'shutdown' } });
    expect(gw.events.stopped).toEqual([{ reason: 'shutdown' }]);
    expect(closes).toEqual([1001]);
    await expect(client(gw.url)).rejects.toThrow();
    await c.close();
    await gw.kernel.dispose();
  });
});

describe('config methods', () => {
  it('reads with secrets redacted, writes validated and atomic, keeps redacted secrets, detects conflicts', async () => {
    const gw = await gateway({ gateway: { auth: { token: 'adm1n' } } });
    const c = await open(gw.url, { token: 'adm1n' });
    const configPath = join(gw.stateDir, 'openclaw.json');
    writeFileSync(
      configPath,
      JSON.stringify({ gateway: { auth: { token: 'file-secret' } }, agents: { defaults: { maxConcurrent: 2 } } }),
    );
    const got = (await c.request('config.get')) as { hash: string; config: Record<string, any>; exists: boolean };
    expect(got.exists).toBe(true);
    expect(got.config).toEqual({
      gateway: { auth: { token: '__REDACTED__' } },
      agents: { defaults: { maxConcurrent: 2 } },
    });

    const updated = { ...got.config, agents: { defaults: { maxConcurrent: 3 } } };
    const written = (await c.request('config.set', {
      config: updated,
      baseHash: got.hash,
      idempotencyKey: randomUUID(),
    })) as { hash: string };
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({
      gateway: { auth: { token: 'file-secret' } },
      agents: { defaults: { maxConcurrent: 3 } },
    });
    expect(written.hash).not.toBe(got.hash);

    const stale = await rejection(
      c.request('config.set', { config: updated, baseHash: got.hash, idempotencyKey: randomUUID() }),
    );
    expect(stale.details).toMatchObject({ code: 'CONFIG_CONFLICT' });

    // As in OpenClaw, an edit of an existing file must name the revision it is based on.
    for (const method of ['config.set', 'config.patch', 'config.apply']) {
      const unbased = await rejection(
        c.request(method, {
          [method === 'config.patch' ? 'patch' : 'config']: { agents: {} },
          idempotencyKey: randomUUID(),
        }),
      );
      expect(unbased.details).toMatchObject({ code: 'CONFIG_BASE_HASH_REQUIRED' });
      expect(unbased.message).toBe(
        `${method} needs params.baseHash (the hash from config.get) because ${configPath} exists; read it with config.get and retry`,
      );
    }

    const invalid = await rejection(
      c.request('config.patch', {
        patch: { agents: { defaults: { maxConcurrent: 0 } }, gatway: {} },
        baseHash: written.hash,
        idempotencyKey: randomUUID(),
      }),
    );
    expect(invalid.details).toMatchObject({ code: 'INVALID_CONFIG' });
    expect(invalid.message).toBe(
      'config is invalid: agents.defaults.maxConcurrent: must be >= 1; gatway: is not a known config section (no plugin declares it)',
    );

    const patched = (await c.request('config.patch', {
      raw: '{ agents: { defaults: { maxConcurrent: null, workspace: "/tmp/ws" } } }',
      baseHash: written.hash,
      idempotencyKey: randomUUID(),
    })) as { hash: string };
    expect(JSON.parse(readFileSync(configPath, 'utf8')).agents).toEqual({ defaults: { workspace: '/tmp/ws' } });

    const applied = await c.request('config.apply', {
      config: { agents: { defaults: { maxConcurrent: 2 } } },
      baseHash: patched.hash,
      idempotencyKey: randomUUID(),
    });
    expect(applied).toMatchObject({ restart: { scheduled: false, delayMs: null } });

    const schema = (await c.request('config.schema')) as { schema: { properties: Record<string, any> } };
    expect(schema.schema.properties.gateway.properties.port).toMatchObject({ type: 'integer' });
    expect(schema.schema.properties.plugins.properties.entries.properties.gateway).toBeDefined();
  });

  it('lists plugins and tails the log', async () => {
    const gw = await gateway();
    const c = await open(gw.url);
    const { plugins } = (await c.request('plugins.list')) as { plugins: Array<{ id: string; status: string }> };
    expect(plugins.map((p) => [p.id, p.status])).toEqual([
      ['gwtest', 'active'],
      ['gateway', 'active'],
      // Declared, not loaded: its methods load it on their first call.
      ['openclaw-absent', 'ready'],
    ]);
    expect(await c.request('users.list', {})).toMatchObject({ profiles: [] });
    const after = (await c.request('plugins.list')) as { plugins: Array<{ id: string; status: string }> };
    expect(after.plugins.find((p) => p.id === 'openclaw-absent')?.status).toBe('active');
    mkdirSync(join(gw.stateDir, 'logs'), { recursive: true });
    writeFileSync(join(gw.stateDir, 'logs', 'gateway.log'), '{"msg":"one"}\n{"msg":"two"}\n{"msg":"partial');
    const tail = (await c.request('logs.tail', { limit: 10 })) as { lines: string[]; cursor: number };
    expect(tail.lines).toEqual(['{"msg":"one"}', '{"msg":"two"}']);
    writeFileSync(join(gw.stateDir, 'logs', 'gateway.log'), '{"msg":"one"}\n{"msg":"two"}\n{"msg":"partial"}\n');
    expect(await c.request('logs.tail', { cursor: tail.cursor })).toMatchObject({
      lines: ['{"msg":"partial"}'],
      reset: false,
    });
    const identity = (await c.request('gateway.identity.get')) as { deviceId: string };
    expect(identity.deviceId).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('HTTP', () => {
  it('serves /health, puts plugin routes behind gateway auth, and explains a missing web UI', async () => {
    const gw = await gateway({ gateway: { auth: { token: 'http-tok' } } });
    const base = `http://127.0.0.1:${gw.port}`;
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, status: 'live', version: expect.any(String) });
    expect((await fetch(`${base}/hooks/echo`, { method: 'POST', body: 'hi' })).status).toBe(401);
    const echoed = await fetch(`${base}/hooks/echo`, {
      method: 'POST',
      headers: { authorization: 'Bearer http-tok', 'content-type': 'application/json' },
      body: '{"raw": true}',
    });
    expect(await echoed.json()).toEqual({ got: '{"raw": true}', type: 'application/json' });
    expect(await (await fetch(`${base}/public/ping`)).text()).toBe('pong');
    const root = await fetch(`${base}/`);
    expect(root.status).toBe(404);
    expect(await root.text()).toContain('no web UI plugin is installed');
    expect((await fetch(`${base}/nothing/here`)).status).toBe(404);
  });
});

describe('single instance', () => {
  it('refuses a second gateway for the same state dir, naming the running pid', async () => {
    const gw = await gateway();
    const second = await createTestKernel({
      stateDir: gw.stateDir,
      plugins: [GATEWAY_DIR],
      config: { gateway: { port: 0 } },
    });
    await second.start();
    expect(second.plugins.get('gateway')!.error).toBe(
      `service "gateway" failed to start: another gateway is already running for this state dir (pid ${process.pid}, port ${gw.port}); stop it first or use a different OPENCLAW_STATE_DIR`,
    );
    await second.stop();
  });

  it('takes over a stale lock left by a process that died', async () => {
    const stateDir = tempDir('claw-stale-');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(
      join(stateDir, 'gateway.lock'),
      JSON.stringify({
        pid: Number(dead.stdout),
        hostname: (await import('node:os')).hostname(),
        port: 1,
        startedAt: 'x',
      }),
    );
    const gw = await gateway({ stateDir });
    expect(JSON.parse(readFileSync(join(stateDir, 'gateway.lock'), 'utf8'))).toMatchObject({
      pid: process.pid,
      port: gw.port,
    });
    await gw.stop();
    running.splice(running.indexOf(gw), 1);
    expect(() => readFileSync(join(stateDir, 'gateway.lock'))).toThrow();
  });
});

describe('client', () => {
  it('reconnects with backoff after the gateway restarts, and times out slow requests', async () => {
    const stateDir = tempDir('claw-recon-');
    const gw = await startGateway({ stateDir });
    const hellos: number[] = [];
    const c = new GatewayClient({
      url: gw.url,
      token: TEST_TOKEN,
      identity: generateDeviceIdentity(),
      reconnect: { initialMs: 50, maxMs: 200 },
      onHello: () => hellos.push(Date.now()),
    });
    running.push(c);
    await c.connect();
    await expect(c.request('test.slow', { ms: 500 }, { timeoutMs: 100 })).rejects.toThrow(
      'test.slow timed out after 100 ms',
    );
    await gw.stop();
    await gw.kernel.dispose();
    const again = await startGateway({ stateDir, gateway: { port: gw.port } });
    running.push(again);
    await waitFor(() => hellos.length >= 2, { what: 'the client to reconnect to the restarted gateway' });
    expect(hellos.length).toBe(2);
    expect(await c.request('health')).toMatchObject({ ok: true });
  });

  it('refuses plaintext ws:// to another machine', () => {
    expect(() => new GatewayClient({ url: 'ws://10.1.2.3:18789' })).toThrow(
      'refusing plaintext ws:// to 10.1.2.3: use wss://',
    );
    expect(() => new GatewayClient({ url: 'wss://10.1.2.3:18789' })).not.toThrow();
    expect(() => new GatewayClient({ url: 'ws://127.0.0.1:18789' })).not.toThrow();
  });
});
