/**
 * Fuzzing the gateway over real sockets: random and mutated frames before and after the
 * handshake, on many connections at once. The gateway must answer or close each socket
 * cleanly, never crash, and still serve `health` at the end.
 */
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { client, connectFrame, rawSocket, startGateway, type RunningGateway } from './gateway-helpers.js';
import { waitFor } from './helpers.js';
import type { GatewayService } from '../plugins/gateway/service.js';

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);

/** mulberry32: small, fast, reproducible. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}

type Rng = ReturnType<typeof prng>;

const METHODS = [
  'health',
  'status',
  'system-presence',
  'config.get',
  'config.set',
  'config.patch',
  'config.schema',
  'plugins.list',
  'logs.tail',
  'device.pair.list',
  'device.pair.approve',
  'device.token.revoke',
  'gateway.identity.get',
  'test.counter',
  'test.slow',
  'nope',
  '',
  'connect',
];
const STRINGS = [
  '',
  'a',
  'req',
  'res',
  'event',
  'connect',
  '__proto__',
  'constructor',
  '😀🦀',
  '\u0000\u0001',
  'x'.repeat(300),
  '{"type":"req"}',
  '-1',
  'null',
];

function randomValue(rng: Rng, depth = 0): unknown {
  const kind = rng.int(depth > 3 ? 6 : 9);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.next() < 0.5;
    case 2:
      return rng.pick([0, -1, 1.5, 2 ** 53, -(2 ** 31), Number.MAX_SAFE_INTEGER, 1e300]);
    case 3:
      return rng.pick(STRINGS);
    case 4:
      return rng.int(100000);
    case 5:
      return String.fromCharCode(...Array.from({ length: rng.int(20) }, () => rng.int(0xffff)));
    case 6:
      return Array.from({ length: rng.int(5) }, () => randomValue(rng, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      for (let i = rng.int(5); i > 0; i--)
        out[rng.pick([...STRINGS, 'type', 'id', 'method', 'params', 'idempotencyKey', 'ms'])] = randomValue(
          rng,
          depth + 1,
        );
      return out;
    }
  }
}

/** Take a valid frame and break it in one of many ways. */
function mutate(rng: Rng, frame: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(frame);
  const keys = Object.keys(out);
  for (let i = 1 + rng.int(3); i > 0; i--) {
    const op = rng.int(5);
    if (op === 0 && keys.length) delete out[rng.pick(keys)];
    else if (op === 1 && keys.length) out[rng.pick(keys)] = randomValue(rng);
    else if (op === 2) out[rng.pick(STRINGS)] = randomValue(rng);
    else if (op === 3) out.params = randomValue(rng);
    else out.method = rng.pick(METHODS);
  }
  return out;
}

function textFrame(rng: Rng, valid: Record<string, unknown>): string | Buffer {
  const roll = rng.int(20);
  if (roll === 0) return Buffer.from(Array.from({ length: 1 + rng.int(64) }, () => rng.int(256)));
  if (roll === 1) return JSON.stringify(valid).slice(0, rng.int(JSON.stringify(valid).length));
  if (roll === 2) return JSON.stringify(randomValue(rng));
  if (roll === 3) return String.fromCharCode(...Array.from({ length: rng.int(200) }, () => rng.int(0x7f)));
  if (roll === 4) return '['.repeat(2000);
  return JSON.stringify(mutate(rng, valid));
}

let gw: RunningGateway;
afterAll(async () => {
  await gw?.stop();
  await gw?.kernel.dispose();
});

describe('gateway fuzz', () => {
  it(`survives 10,000+ random and mutated frames (seed ${SEED})`, { timeout: 120_000 }, async () => {
    gw = await startGateway({ gateway: { handshakeTimeoutMs: 2000 } });
    const rng = prng(SEED);
    let sent = 0;

    // Before connect: one mutated or random frame per socket, 20 sockets at a time.
    const preConnect = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const socket = await rawSocket(gw.url);
        const frame = textFrame(rng, connectFrame({}, `pre${i}`));
        socket.ws.send(frame, { binary: Buffer.isBuffer(frame) });
        sent++;
        // Whatever happened — refused, or admitted by a harmless mutation — the socket ends cleanly.
        setTimeout(() => socket.ws.close(), 20);
        await socket.closed;
      }
    };
    await Promise.all(Array.from({ length: 20 }, () => preConnect(60)));

    // After connect: many frames per socket; binary or oversized frames close it, then a new one.
    const afterConnect = async (worker: number, count: number) => {
      let socket = await rawSocket(gw.url);
      socket.send(connectFrame({}, `c${worker}`));
      await socket.next((f) => f.type === 'res');
      for (let i = 0; i < count; i++) {
        if (socket.ws.readyState !== WebSocket.OPEN) {
          socket = await rawSocket(gw.url);
          socket.send(connectFrame({}, `c${worker}-${i}`));
          await socket.next((f) => f.type === 'res');
        }
        const valid = {
          type: 'req',
          id: `r${worker}-${i}`,
          method: rng.pick(METHODS),
          params: rng.next() < 0.5 ? {} : randomValue(rng),
        };
        const frame = textFrame(rng, valid);
        socket.ws.send(frame, { binary: Buffer.isBuffer(frame) });
        sent++;
        // A binary frame makes the gateway close the socket: wait for that, then reconnect.
        if (Buffer.isBuffer(frame)) expect((await socket.closed).code).toBe(1003);
        if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      // Still answering on this connection (unless the last frame closed it).
      if (socket.ws.readyState === WebSocket.OPEN) {
        socket.send({ type: 'req', id: `final-${worker}`, method: 'health' });
        const final = await socket.next((f) => f.id === `final-${worker}`, 10_000);
        expect(final.ok).toBe(true);
        socket.ws.close();
      }
    };
    await Promise.all(Array.from({ length: 20 }, (_, worker) => afterConnect(worker, 450)));

    expect(sent).toBeGreaterThanOrEqual(10_000);
    const probe = await client(gw.url);
    expect(await probe.request('health')).toMatchObject({ ok: true, status: 'ok' });
    // Every refused or closed socket is forgotten: only the probe is left.
    const service = (await gw.kernel.capabilities.get('service', 'gateway')) as unknown as GatewayService;
    await waitFor(() => service.runtime.server!.connectionList().length <= 1, {
      what: 'the closed sockets to be forgotten',
    });
    expect(service.runtime.server!.connectionList().length).toBe(1);
    await probe.close();
    expect(gw.kernel.plugins.get('gateway')!.status).toBe('active');
  });
});
