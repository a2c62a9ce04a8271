/**
 * OpenClaw's HTTP probes (/healthz, /startupz, /readyz and their short forms), answered by the
 * gateway's node:http server before the HTTP app loads.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../sdk/index.js';
import { startGateway, TEST_TOKEN, type RunningGateway } from './gateway-helpers.js';
import { startCliGateway, tempDir, waitFor } from './helpers.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function probe(port: number, path: string, options: { method?: string; headers?: Record<string, string> } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const json = (answer: Answer) => JSON.parse(answer.body) as Record<string, unknown>;

let gw: RunningGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

describe('gateway HTTP probes', () => {
  it('answers liveness, start-up and readiness, with details for a local caller', async () => {
    gw = await startGateway();
    for (const path of ['/health', '/healthz']) {
      const live = await probe(gw.port, path);
      expect(live.status).toBe(200);
      expect(live.headers['cache-control']).toBe('no-store');
      expect(json(live)).toMatchObject({ ok: true, status: 'live', version: expect.any(String) });
      expect(json(live).uptimeMs).toEqual(expect.any(Number));
    }
    for (const path of ['/startup', '/startupz']) {
      expect(json(await probe(gw.port, path))).toMatchObject({ ok: true, status: 'started' });
    }
    // No models plugin in this kernel: nothing to find wanting.
    await waitFor(async () => (await probe(gw!.port, '/readyz')).status === 200, { what: 'readyz 200' });
    for (const path of ['/ready', '/readyz']) {
      expect(json(await probe(gw.port, path))).toMatchObject({ ok: true, status: 'ready' });
    }
  });

  it('tells a forwarded caller only ok and status, unless it sends the gateway secret', async () => {
    gw = await startGateway();
    const forwarded = { 'x-forwarded-for': '203.0.113.9' };
    expect(json(await probe(gw.port, '/healthz', { headers: forwarded }))).toEqual({ ok: true, status: 'live' });
    const wrong = await probe(gw.port, '/healthz', { headers: { ...forwarded, authorization: 'Bearer nope' } });
    expect(json(wrong)).toEqual({ ok: true, status: 'live' });
    const right = await probe(gw.port, '/healthz', {
      headers: { ...forwarded, authorization: `Bearer ${TEST_TOKEN}` },
    });
    expect(json(right)).toMatchObject({ ok: true, status: 'live', version: expect.any(String) });
  });

  it('answers HEAD without a body, and leaves other methods and paths to the routes', async () => {
    gw = await startGateway();
    const head = await probe(gw.port, '/healthz', { method: 'HEAD' });
    expect([head.status, head.body]).toEqual([200, '']);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
    expect((await probe(gw.port, '/healthz', { method: 'POST' })).status).not.toBe(200);
    expect((await probe(gw.port, '/healthzz')).status).toBe(404);
  });

  it('is not ready while an enabled plugin has failed, and names it', async () => {
    const broken = definePlugin({
      id: 'broken-at-register',
      register() {
        throw new Error('cannot start');
      },
    });
    gw = await startGateway({ plugins: [broken] });
    await waitFor(async () => (await probe(gw!.port, '/startupz')).status === 200, { what: 'startupz 200' });
    const ready = await probe(gw.port, '/readyz');
    expect(ready.status).toBe(503);
    expect(json(ready)).toMatchObject({ ok: false, status: 'not-ready', failing: ['plugin:broken-at-register'] });
    // Liveness is not readiness: the server itself is fine.
    expect((await probe(gw.port, '/healthz')).status).toBe(200);
  });

  it('on `claw gateway` with no model configured: live and started, not ready because of the model', async () => {
    const home = tempDir('claw-probes-');
    const gateway = await startCliGateway({ HOME: home, OPENCLAW_GATEWAY_TOKEN: TEST_TOKEN });
    expect((await probe(gateway.port, '/healthz')).status).toBe(200);
    await waitFor(async () => (await probe(gateway.port, '/startupz')).status === 200, { what: 'startupz 200' });
    await waitFor(async () => json(await probe(gateway.port, '/readyz')).status === 'not-ready', {
      what: 'readyz to read the model',
    });
    expect(json(await probe(gateway.port, '/readyz'))).toMatchObject({ ok: false, failing: ['model'] });
  });
});
