/**
 * soak-gateway: the soak as the issue ran it. A real `claw gateway` process talks to an
 * OpenAI-compatible model (the fake LLM server on 127.0.0.1, streaming "ok"). One operator
 * client sends `agent` requests over the WebSocket, each waiting for its final result, spread
 * over 30 sessions. The gateway's RSS is read from /proc as it goes. 3,000 turns (600 with
 * --quick).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayClient } from '../../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../../sdk/device-auth.js';
import { startFakeLlm } from '../fakes/llm-server.js';
import { BENCH_TOKEN } from './gateway-load.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

const mb = (bytes: number) => bytes / 1024 / 1024;

function rssOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}

export async function gatewaySoakBench(
  cli: string,
  freePort: () => Promise<number>,
  line: Line,
  quick: boolean,
): Promise<void> {
  const turns = quick ? 600 : 3000;
  const fake = await startFakeLlm();
  fake.respond(() => ({ text: 'ok' }));
  const dir = mkdtempSync(join(tmpdir(), 'claw-bench-gwsoak-'));
  const stateDir = join(dir, 'state');
  mkdirSync(stateDir, { mode: 0o700 });
  writeFileSync(
    join(stateDir, 'openclaw.json'),
    JSON.stringify({
      agents: { defaults: { model: 'openai/gpt-bench' } },
      models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-bench' } } },
    }),
    { mode: 0o600 },
  );
  const port = await freePort();
  const child = spawn(process.execPath, [cli, 'gateway', '--port', String(port)], {
    env: { ...process.env, OPENCLAW_STATE_DIR: stateDir, OPENCLAW_GATEWAY_TOKEN: BENCH_TOKEN },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const client = new GatewayClient({
    url: `ws://127.0.0.1:${port}`,
    token: BENCH_TOKEN,
    identity: generateDeviceIdentity(),
    scopes: ['operator.read', 'operator.write'],
    connectTimeoutMs: 2000,
  });
  try {
    for (;;) {
      try {
        await client.connect();
        break;
      } catch {
        if (child.exitCode !== null) throw new Error('gateway exited during start-up');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    const samples: Array<{ turn: number; rss: number }> = [{ turn: 0, rss: rssOf(child.pid!) }];
    const every = turns / 10;
    const started = performance.now();
    for (let i = 1; i <= turns; i++) {
      const result = await client.request<{ status?: string }>(
        'agent',
        { message: `turn ${i}`, idempotencyKey: randomUUID(), sessionKey: `agent:main:gwsoak-${i % 30}` },
        { expectFinal: true, timeoutMs: 60_000 },
      );
      if (result.status !== 'ok') throw new Error(`turn ${i} ended ${JSON.stringify(result)}`);
      if (i % every === 0) samples.push({ turn: i, rss: rssOf(child.pid!) });
    }
    const seconds = (performance.now() - started) / 1000;
    const warm = samples.filter((sample) => sample.turn >= every * 2);
    const plateau = Math.max(...warm.map((sample) => sample.rss));
    line(
      `soak-gateway: ${turns} agent turns over WebSocket + HTTP model, gateway RSS`,
      samples.map((sample) => mb(sample.rss).toFixed(0)).join(' → ') + ' MB',
      '(info)',
      true,
    );
    line('  RSS plateau after warm-up (max)', `${mb(plateau).toFixed(0)} MB`, '≤ 150 MB', mb(plateau) <= 150);
    line('  turns per second', (turns / seconds).toFixed(1), '(info)', true);
  } finally {
    await client.close().catch(() => undefined);
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
