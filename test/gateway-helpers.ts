/** Starting a gateway in-process on an ephemeral port, and talking to it over real sockets. */
import { join } from 'node:path';
import WebSocket from 'ws';
import type { PluginDefinition } from '../kernel/index.js';
import type { GatewaySection } from '../plugins/gateway/settings.js';
import { definePlugin } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { GatewayClient, type GatewayClientOptions } from '../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../sdk/device-auth.js';
import { REPO, sleep, tempDir } from './helpers.js';

export const GATEWAY_DIR = join(REPO, 'plugins', 'gateway');
/** OpenClaw's methods for features claw lacks: loaded by their first call, as in a real gateway. */
export const ABSENT_DIR = join(REPO, 'plugins', 'openclaw-absent');

/** The token test gateways require unless a test configures auth itself. */
export const TEST_TOKEN = 'test-gateway-token-0123456789abcdef';

/** The `gateway` section with its manifest defaults (for tests that build settings directly). */
export const GATEWAY_DEFAULTS: GatewaySection = {
  tickIntervalMs: 30_000,
  maxPayloadBytes: 26_214_400,
  maxBufferedBytes: 52_428_800,
  dropEventsAboveBytes: 1_048_576,
  handshakeTimeoutMs: 10_000,
  idempotencyWindowMs: 300_000,
  reload: { mode: 'hybrid' },
  shutdownDrainMs: 5000,
  pairing: { autoApproveLoopback: true, requestTtlMs: 300_000 },
  logs: { level: 'info', maxFileBytes: 10_485_760 },
  auth: { rateLimit: { maxAttempts: 10, windowMs: 60_000, lockoutMs: 300_000, exemptLoopback: true } },
  controlUi: { enabled: true, basePath: '/openclaw' },
  http: { endpoints: { chatCompletions: { enabled: false } } },
  preauth: { maxConnections: 1024, maxPerAddress: 32 },
  presenceIntervalMs: 1000,
};

export interface RunningGateway {
  kernel: TestKernel;
  port: number;
  url: string;
  stateDir: string;
  events: { started: unknown[]; stopped: unknown[] };
  stop(): Promise<void>;
}

/** A plugin with methods and events the gateway tests drive. */
export function gatewayTestPlugin(events: RunningGateway['events']): PluginDefinition {
  return definePlugin({
    id: 'gwtest',
    register(api) {
      api.kernel.protocol.registerEvent('test.blob', api.id, { droppable: true });
      api.kernel.protocol.registerEvent('test.final', api.id);
      let counter = 0;
      api.registerGatewayMethod('test.counter', {
        scope: 'operator.write',
        sideEffect: true,
        params: { type: 'object', additionalProperties: false, properties: { by: { type: 'integer' } } },
        handler: async (params: { by?: number }) => {
          await sleep(30);
          counter += params.by ?? 1;
          return { counter };
        },
      });
      api.registerGatewayMethod('test.slow', {
        params: { type: 'object', required: ['ms'], properties: { ms: { type: 'integer', minimum: 0 } } },
        handler: async (params: { ms: number }) => {
          await sleep(params.ms);
          return { slept: params.ms };
        },
      });
      api.registerGatewayMethod('test.throw', {
        handler: () => {
          throw new Error('kaput');
        },
      });
      api.registerGatewayMethod('test.echo', { handler: (params) => params });
      api.registerGatewayMethod('test.bigint', { handler: () => ({ big: 10n }) });
      api.registerGatewayMethod('test.badschema', {
        params: { type: 'object', properties: { a: { $ref: '#/nowhere' } } },
        handler: () => 1,
      });
      api.registerGatewayMethod('test.twophase', {
        handler: async (_params, ctx) => {
          ctx.ack?.({ runId: 'r1', status: 'accepted', acceptedAt: Date.now() });
          await sleep(30);
          return { runId: 'r1', status: 'ok' };
        },
      });
      api.registerHttpRoute({
        method: 'POST',
        path: '/hooks/echo',
        handler: (req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (chunk: Buffer) => chunks.push(chunk));
          req.on('end', () => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(
              JSON.stringify({
                got: Buffer.concat(chunks).toString('utf8'),
                type: req.headers['content-type'] ?? null,
              }),
            );
          });
        },
      });
      api.registerHttpRoute({
        method: 'GET',
        path: '/public/ping',
        auth: 'none',
        handler: (_req, res) => void res.end('pong'),
      });
      api.on('gateway_start', (event) => void events.started.push(event));
      api.on('gateway_stop', (event) => void events.stopped.push(event));
    },
  });
}

export async function startGateway(
  options: {
    gateway?: Record<string, unknown>;
    stateDir?: string;
    env?: Record<string, string | undefined>;
    plugins?: Array<PluginDefinition | string>;
    /** More openclaw.json content beside `gateway`. */
    config?: Record<string, unknown>;
  } = {},
): Promise<RunningGateway> {
  const stateDir = options.stateDir ?? tempDir('claw-gw-');
  const events: RunningGateway['events'] = { started: [], stopped: [] };
  const kernel = await createTestKernel({
    stateDir,
    env: options.env,
    plugins: [GATEWAY_DIR, ABSENT_DIR, gatewayTestPlugin(events), ...(options.plugins ?? [])],
    config: { ...options.config, gateway: { port: 0, auth: { token: TEST_TOKEN }, ...options.gateway } },
  });
  await kernel.start();
  const record = kernel.plugins.get('gateway')!;
  if (record.status !== 'active') throw new Error(`gateway did not start: ${record.error}`);
  const port = (events.started[0] as { port: number }).port;
  return {
    kernel,
    port,
    url: `ws://127.0.0.1:${port}`,
    stateDir,
    events,
    stop: () => kernel.stop(),
  };
}

export async function client(url: string, options: Partial<GatewayClientOptions> = {}): Promise<GatewayClient> {
  // The test token, unless the test brings its own credentials (or says `token: undefined`).
  const credentials =
    'token' in options || 'password' in options || 'deviceToken' in options ? {} : { token: TEST_TOKEN };
  const c = new GatewayClient({
    url,
    ...credentials,
    identity: generateDeviceIdentity(),
    scopes: ['operator.read', 'operator.write', 'operator.admin', 'operator.pairing'],
    ...options,
  });
  await c.connect();
  return c;
}

export interface RawSocket {
  ws: WebSocket;
  frames: Array<Record<string, any>>;
  /** Resolves with the first received frame matching `test` (including ones already received). */
  next(test: (frame: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  closed: Promise<{ code: number; reason: string }>;
  send(value: unknown): void;
}

export function rawSocket(url: string, headers?: Record<string, string>): Promise<RawSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    const frames: Array<Record<string, any>> = [];
    const waiters: Array<{
      test: (frame: Record<string, any>) => boolean;
      resolve: (frame: Record<string, any>) => void;
    }> = [];
    ws.on('message', (data) => {
      let frame: Record<string, any>;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return;
      }
      frames.push(frame);
      for (const waiter of [...waiters]) {
        if (waiter.test(frame)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(frame);
        }
      }
    });
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      ws.on('close', (code, reason) => done({ code, reason: reason.toString() })),
    );
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        ws,
        frames,
        closed,
        send: (value) => ws.send(typeof value === 'string' || Buffer.isBuffer(value) ? value : JSON.stringify(value)),
        next: (test, timeoutMs = 3000) =>
          new Promise((done, fail) => {
            const found = frames.find(test);
            if (found) return done(found);
            const timer = setTimeout(
              () =>
                fail(
                  new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames).slice(0, 500)}`),
                ),
              timeoutMs,
            );
            waiters.push({ test, resolve: (frame) => (clearTimeout(timer), done(frame)) });
          }),
      }),
    );
  });
}

/** A connect request for raw-socket tests (loopback, no device identity, the test token). */
export function connectFrame(params: Record<string, unknown> = {}, id = 'c1') {
  return {
    type: 'req',
    id,
    method: 'connect',
    params: {
      minProtocol: 3,
      maxProtocol: 4,
      client: { id: 'raw-test', mode: 'test' },
      auth: { token: TEST_TOKEN },
      ...params,
    },
  };
}

/**
 * How a gateway request was refused, for tests that assert the code and message: the error's
 * `{code, message}`, or `{unexpectedSuccess}` when it was answered instead.
 */
export async function refusal(request: Promise<unknown>): Promise<Record<string, unknown>> {
  return request.then(
    (payload) => ({ unexpectedSuccess: payload }),
    (error: { code?: string; message?: string }) => ({ code: error.code, message: error.message }),
  );
}
