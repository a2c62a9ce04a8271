/**
 * Nodes through a real `claw gateway` process, with fake nodes (OpenClaw's node wire, signed
 * identities) and an operator over real sockets from this process:
 *
 *   node-rtt    node.invoke round trips, operator → gateway → node → gateway → operator, one in flight: p50 / p99
 *   node-fleet  50 nodes connecting at once: all admitted?, time to admit all, gateway RSS added per node
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayClient } from '../../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../../sdk/device-auth.js';
import { BENCH_TOKEN } from './gateway-load.js';
import { FakeNode } from '../node-fake.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

async function startGateway(
  cli: string,
  port: number,
): Promise<{ child: ChildProcess; admin: GatewayClient; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'claw-bench-nodes-'));
  const child = spawn(process.execPath, [cli, 'gateway', '--port', String(port)], {
    env: { ...process.env, OPENCLAW_STATE_DIR: join(dir, 'state'), OPENCLAW_GATEWAY_TOKEN: BENCH_TOKEN },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (;;) {
    const admin = new GatewayClient({
      url: `ws://127.0.0.1:${port}`,
      token: BENCH_TOKEN,
      identity: generateDeviceIdentity(),
      scopes: ['operator.read', 'operator.write', 'operator.admin', 'operator.pairing'],
      connectTimeoutMs: 2000,
    });
    try {
      await admin.connect();
      return { child, admin, dir };
    } catch {
      if (child.exitCode !== null) throw new Error('gateway exited during start-up');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

async function stop(child: ChildProcess, dir: string): Promise<void> {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}

/** A node's surface approved by the admin, as a user would after `claw nodes approve`. */
async function approveAll(admin: GatewayClient): Promise<void> {
  const { pending } = await admin.request<{ pending: Array<{ requestId: string }> }>('node.pair.list', {});
  for (const request of pending) await admin.request('node.pair.approve', { requestId: request.requestId });
}

export async function nodeRoundTripBench(cli: string, port: number, line: Line, quick: boolean): Promise<void> {
  const { child, admin, dir } = await startGateway(cli, port);
  const url = `ws://127.0.0.1:${port}`;
  const node = new FakeNode({
    url,
    token: BENCH_TOKEN,
    commands: ['system.notify'],
    onInvoke: (request) => ({ payload: { ok: true, id: request.id } }),
  });
  try {
    await node.connect();
    await approveAll(admin);
    const invoke = (i: number) =>
      admin.request('node.invoke', {
        nodeId: node.nodeId,
        command: 'system.notify',
        params: { title: 'bench', body: `#${i}` },
        idempotencyKey: `bench-${i}`,
      });
    for (let i = 0; i < 200; i++) await invoke(-1 - i);
    const count = quick ? 500 : 3000;
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const start = performance.now();
      await invoke(i);
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const p50 = percentile(times, 50);
    const p99 = percentile(times, 99);
    line(
      `nodes: node.invoke round trip p50 / p99 (${count})`,
      `${p50.toFixed(2)} / ${p99.toFixed(2)} ms`,
      '(info)',
      true,
    );
  } finally {
    await node.close();
    await admin.close();
    await stop(child, dir);
  }
}

export async function nodeFleetBench(cli: string, port: number, line: Line): Promise<void> {
  const { child, admin, dir } = await startGateway(cli, port);
  const url = `ws://127.0.0.1:${port}`;
  const nodes = Array.from(
    { length: 50 },
    (_, i) => new FakeNode({ url, token: BENCH_TOKEN, displayName: `node-${i}`, commands: ['system.notify'] }),
  );
  try {
    await admin.request('health');
    const before = rssOf(child.pid!);
    const start = performance.now();
    const results = await Promise.allSettled(nodes.map((node) => node.connect()));
    const elapsed = performance.now() - start;
    const admitted = results.filter((r) => r.status === 'fulfilled').length;
    const listed = await admin.request<{ nodes: Array<{ connected: boolean }> }>('node.list', {});
    const connected = listed.nodes.filter((n) => n.connected).length;
    const perNodeKb = (rssOf(child.pid!) - before) / 50 / 1024;
    line(
      'nodes: 50 nodes at once, admitted / listed connected',
      `${admitted} / ${connected}`,
      '50 / 50',
      admitted === 50 && connected === 50,
    );
    line('nodes: … time to admit all 50', `${elapsed.toFixed(0)} ms`, '(info)', true);
    line('nodes: … gateway RSS added per node', `${perNodeKb.toFixed(0)} KB`, '(info)', true);
  } finally {
    await Promise.all(nodes.map((node) => node.close()));
    await admin.close();
    await stop(child, dir);
  }
}
