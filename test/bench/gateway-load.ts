/**
 * The gateway under many clients, measured from outside: a real `claw gateway` process,
 * clients over real sockets from this process, and the gateway's event loop watched from
 * inside by a small preloaded probe (monitorEventLoopDelay at 1 ms resolution) that
 * answers over an IPC channel. The probe is the only thing added to the process.
 *
 *   burst   1,000 authenticated clients connect at once (a tenth of them UI clients that
 *           receive presence): all admitted?, total time, connect p99, longest stall
 *   load    200 connected clients × 20 requests each, all at once: p99 latency
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayClient } from '../../apps/cli/gateway-client.js';
import { generateDeviceIdentity, type DeviceIdentity } from '../../sdk/device-auth.js';

export const BENCH_TOKEN = 'bench-gateway-token-0123456789abcdef0123456789';

const PROBE = `
const { monitorEventLoopDelay, PerformanceObserver } = require('node:perf_hooks');
const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
let gcMaxMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMaxMs = Math.max(gcMaxMs, entry.duration);
}).observe({ entryTypes: ['gc'] });
process.on('message', (message) => {
  if (message === 'reset') {
    histogram.reset();
    gcMaxMs = 0;
  }
  if (message === 'read') process.send({ maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6, gcMaxMs });
});
process.channel && process.channel.unref();
`;

interface ProbedGateway {
  child: ChildProcess;
  url: string;
  read(): Promise<{ maxMs: number; p99Ms: number; gcMaxMs: number }>;
  reset(): void;
  stop(): Promise<void>;
}

async function startProbedGateway(cli: string, port: number): Promise<ProbedGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'claw-bench-load-'));
  const probe = join(dir, 'probe.cjs');
  writeFileSync(probe, PROBE);
  const child = spawn(process.execPath, ['--require', probe, cli, 'gateway', '--port', String(port)], {
    env: { ...process.env, OPENCLAW_STATE_DIR: join(dir, 'state'), OPENCLAW_GATEWAY_TOKEN: BENCH_TOKEN },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = `ws://127.0.0.1:${port}`;
  for (;;) {
    const client = new GatewayClient({
      url,
      token: BENCH_TOKEN,
      identity: generateDeviceIdentity(),
      connectTimeoutMs: 2000,
    });
    try {
      await client.connect();
      await client.close();
      break;
    } catch {
      if (child.exitCode !== null) throw new Error('gateway exited during start-up');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return {
    child,
    url,
    read: () =>
      new Promise((resolve) => {
        child.once('message', (message) => resolve(message as { maxMs: number; p99Ms: number; gcMaxMs: number }));
        child.send('read');
      }),
    reset: () => void child.send('reset'),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

export interface BurstResult {
  clients: number;
  admitted: number;
  totalMs: number;
  connectP50Ms: number;
  connectP99Ms: number;
  stallMaxMs: number;
  /** Longest garbage-collection pause in the burst (part of the stall, when it is the cause). */
  gcMaxMs: number;
  loadRequests: number;
  loadP50Ms: number;
  loadP99Ms: number;
  loadPerSec: number;
}

export async function gatewayLoadBench(cli: string, port: number, clients = 1000): Promise<BurstResult> {
  const gw = await startProbedGateway(cli, port);
  const connected: GatewayClient[] = [];
  try {
    // Identities are made up front: key generation is the clients' cost, not the gateway's.
    const identities: DeviceIdentity[] = Array.from({ length: clients }, () => generateDeviceIdentity());
    gw.reset();
    const started = performance.now();
    const latencies: number[] = [];
    let admitted = 0;
    await Promise.all(
      identities.map(async (identity, i) => {
        const ui = i % 10 === 0;
        const client = new GatewayClient({
          url: gw.url,
          token: BENCH_TOKEN,
          identity,
          connectTimeoutMs: 60_000,
          requestTimeoutMs: 60_000,
          ...(ui ? { client: { id: `bench-ui-${i}`, version: '0', mode: 'ui' } } : {}),
        });
        const t0 = performance.now();
        try {
          await client.connect();
          latencies.push(performance.now() - t0);
          admitted++;
          connected.push(client);
        } catch {
          await client.close();
        }
      }),
    );
    const totalMs = performance.now() - started;
    // Let the last coalesced presence snapshot go out before reading the probe.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const burstStall = await gw.read();
    latencies.sort((a, b) => a - b);

    // Load: 200 of them, 20 requests each, all at once.
    const loaders = connected.slice(0, 200);
    const requestLatencies: number[] = [];
    gw.reset();
    const loadStart = performance.now();
    await Promise.all(
      loaders.map(async (client) => {
        for (let i = 0; i < 20; i++) {
          const t0 = performance.now();
          await client.request('status');
          requestLatencies.push(performance.now() - t0);
        }
      }),
    );
    const loadMs = performance.now() - loadStart;
    requestLatencies.sort((a, b) => a - b);
    return {
      clients,
      admitted,
      totalMs,
      connectP50Ms: percentile(latencies, 0.5),
      connectP99Ms: percentile(latencies, 0.99),
      stallMaxMs: burstStall.maxMs,
      gcMaxMs: burstStall.gcMaxMs,
      loadRequests: requestLatencies.length,
      loadP50Ms: percentile(requestLatencies, 0.5),
      loadP99Ms: percentile(requestLatencies, 0.99),
      loadPerSec: requestLatencies.length / (loadMs / 1000),
    };
  } finally {
    await Promise.all(connected.map((client) => client.close()));
    await gw.stop();
  }
}
