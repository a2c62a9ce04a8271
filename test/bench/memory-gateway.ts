/**
 * memory-gateway: `memory.search` through a running `claw gateway` (what `claw memory search`
 * does when a gateway runs) on ≈ 700 generated daily notes, per backend: the first search
 * (which waits for the index build), then p50/p95 of the questions asked in turn, and the
 * gateway's RSS before and after them (an index loaded per query would show as growth).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GatewayClient } from '../../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../../sdk/device-auth.js';
import { generatePersonalCorpus } from './personal-corpus.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

const TOKEN = 'bench-memory-gateway-token-0123456789';
const QMD = fileURLToPath(new URL('../../../.cache/qmd/bin/qmd', import.meta.url));

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function connect(port: number, child: ChildProcess): Promise<GatewayClient> {
  const identity = generateDeviceIdentity();
  for (;;) {
    const client = new GatewayClient({ url: `ws://127.0.0.1:${port}`, token: TOKEN, identity, connectTimeoutMs: 2000 });
    try {
      await client.connect();
      return client;
    } catch {
      if (child.exitCode !== null) throw new Error('the gateway exited during start-up');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

export async function memoryGatewayBench(
  cli: string,
  freePort: () => Promise<number>,
  line: Line,
  quick: boolean,
): Promise<void> {
  const backends: Array<{ id: string; target: number; config?: Record<string, unknown> }> = [
    { id: 'memory-sqlite', target: 10 },
    { id: 'memory-minisearch', target: 10 },
    ...(existsSync(QMD) ? [{ id: 'memory-qmd', target: 50, config: { command: QMD } }] : []),
  ];
  if (!existsSync(QMD)) line('memory via gateway: qmd', 'skipped', 'npm run setup:qmd', true);
  for (const backend of backends) {
    const root = mkdtempSync(join(tmpdir(), 'claw-bench-memgw-'));
    const corpus = generatePersonalCorpus(root, { days: 700 });
    const config = {
      agents: { defaults: { workspace: corpus.workspace, memorySearch: { provider: 'none' } } },
      plugins: {
        slots: { memory: backend.id },
        entries: { [backend.id]: { enabled: true, ...(backend.config ? { config: backend.config } : {}) } },
      },
    };
    writeFileSync(join(root, 'openclaw.json'), JSON.stringify(config));
    const port = await freePort();
    const child = spawn(process.execPath, [cli, 'gateway', '--port', String(port)], {
      env: { ...process.env, OPENCLAW_STATE_DIR: root, OPENCLAW_GATEWAY_TOKEN: TOKEN },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const name = backend.id.replace('memory-', '');
    try {
      const client = await connect(port, child);
      const ask = (query: string) => client.request('memory.search', { query }, { timeoutMs: 600_000 });
      let started = performance.now();
      await ask(corpus.queries[0]!.query);
      line(
        `memory via gateway (${name}): first search, ${corpus.files} files`,
        `${((performance.now() - started) / 1000).toFixed(1)} s`,
        '(info: the index build)',
        true,
      );
      const rounds = quick ? 50 : 200;
      await ask(corpus.queries[1]!.query);
      const before = rssMb(child.pid!);
      const times: number[] = [];
      for (let i = 0; i < rounds; i++) {
        started = performance.now();
        await ask(corpus.queries[i % corpus.queries.length]!.query);
        times.push(performance.now() - started);
      }
      const after = rssMb(child.pid!);
      const p50 = percentile(times, 0.5);
      line(
        `memory via gateway (${name}): p50 / p95 of ${rounds}`,
        `${p50.toFixed(1)} / ${percentile(times, 0.95).toFixed(1)} ms`,
        `≤ ${backend.target} ms`,
        p50 <= backend.target,
      );
      line(
        `  gateway RSS before → after`,
        `${before.toFixed(0)} → ${after.toFixed(0)} MB`,
        '(flat)',
        after - before < 50,
      );
      await client.close();
      // The same search in a new process, as `claw memory search` did with no gateway to ask.
      const local: number[] = [];
      for (let i = 0; i < 3; i++) {
        started = performance.now();
        spawnSync(process.execPath, [cli, 'memory', 'search', corpus.queries[i]!.query, '--local', '--json'], {
          env: { ...process.env, OPENCLAW_STATE_DIR: root },
          stdio: 'ignore',
        });
        local.push(performance.now() - started);
      }
      line(
        `  for comparison: claw memory search --local (median of 3)`,
        `${percentile(local, 0.5).toFixed(0)} ms`,
        '(info)',
        true,
      );
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(root, { recursive: true, force: true });
    }
  }
}
