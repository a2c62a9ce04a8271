/**
 * Cron benchmarks.
 *
 *   cron-start  `claw gateway` from spawn until `cron.status` answers (the cron plugin loaded,
 *               jobs.json read, timer armed): 1,000 stored jobs vs none, interleaved medians
 *               (target ≤ 20 ms added)
 *   cron-drift  how late `every 1s` jobs start, over a minute (`--quick`: 10 s): the scheduler
 *               with its real timer, jobs.json journal writes (fsync) and run log, 10 jobs
 *               with a no-op payload; p50 / p95 / max of start − scheduled time
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayClient } from '../../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../../sdk/device-auth.js';
import { createLogger } from '../../sdk/logger.js';
import { createJob } from '../../plugins/cron/jobs.js';
import { occurrenceAfter } from '../../plugins/cron/schedule.js';
import { CronService } from '../../plugins/cron/service.js';
import { CronStore, RunLog } from '../../plugins/cron/store.js';
import type { CronJob } from '../../plugins/cron/types.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;
const TOKEN = 'bench-cron-token-0123456789abcdef0123';
const SETTINGS = {
  enabled: true,
  maxConcurrentRuns: 1,
  skipMissedJobs: false,
  catchUp: 'once' as const,
  missedAfterMs: 60_000,
  watchdogGraceMs: 60_000,
  runLog: { maxBytes: 2_000_000, keepLines: 2000 },
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const signed = (ms: number) => `${ms < 0 ? '−' : '+'}${Math.abs(ms).toFixed(1)}`;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** 1,000 jobs as a running gateway leaves them: a mix of every, cron (with zones) and at, next runs stored. */
function thousandJobs(now: number): CronJob[] {
  const jobs: CronJob[] = [];
  for (let i = 0; i < 1000; i++) {
    const kind = i % 3;
    const input =
      kind === 0
        ? {
            name: `every ${i}`,
            schedule: { kind: 'every', everyMs: 60_000 * (1 + (i % 60)) },
            payload: { kind: 'systemEvent', text: `check ${i}` },
          }
        : kind === 1
          ? {
              name: `cron ${i}`,
              schedule: {
                kind: 'cron',
                expr: `${i % 60} ${i % 24} * * *`,
                tz: ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'][i % 4],
              },
              payload: { kind: 'agentTurn', message: `brief ${i}` },
            }
          : {
              name: `at ${i}`,
              schedule: { kind: 'at', at: new Date(now + 86_400_000 + i * 60_000).toISOString() },
              payload: { kind: 'systemEvent', text: `remind ${i}` },
            };
    const job = createJob(input, { now: now - 86_400_000 });
    job.state.nextRunAtMs = occurrenceAfter(job, now);
    jobs.push(job);
  }
  return jobs;
}

async function timeToCronStatus(
  cli: string,
  freePort: () => Promise<number>,
  stateDir: string,
  expectJobs: number,
): Promise<number> {
  const port = await freePort();
  const identity = generateDeviceIdentity();
  const start = performance.now();
  const child: ChildProcess = spawn(process.execPath, [cli, 'gateway', '--port', String(port)], {
    env: { ...process.env, OPENCLAW_STATE_DIR: stateDir, OPENCLAW_GATEWAY_TOKEN: TOKEN },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (;;) {
      const client = new GatewayClient({
        url: `ws://127.0.0.1:${port}`,
        token: TOKEN,
        identity,
        connectTimeoutMs: 2000,
      });
      try {
        await client.connect();
        const status = (await client.request('cron.status', {})) as { jobs: number; schedulerRunning: boolean };
        await client.close();
        if (status.jobs !== expectJobs) throw new Error(`cron.status says ${status.jobs} jobs, expected ${expectJobs}`);
        // Answered before the scheduler's start ran: not started yet, ask again.
        if (status.schedulerRunning) return performance.now() - start;
      } catch (error) {
        await client.close().catch(() => undefined);
        if ((error as Error).message.startsWith('cron.status says')) throw error;
        if (child.exitCode !== null) throw new Error('gateway exited during start-up');
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

export async function cronStartBench(cli: string, freePort: () => Promise<number>, line: Line): Promise<void> {
  const now = Date.now();
  const empty = mkdtempSync(join(tmpdir(), 'claw-bench-cron0-'));
  const full = mkdtempSync(join(tmpdir(), 'claw-bench-cron1k-'));
  mkdirSync(join(full, 'cron'), { recursive: true, mode: 0o700 });
  writeFileSync(join(full, 'cron', 'jobs.json'), JSON.stringify({ version: 1, jobs: thousandJobs(now) }, null, 2), {
    mode: 0o600,
  });
  try {
    await timeToCronStatus(cli, freePort, empty, 0);
    await timeToCronStatus(cli, freePort, full, 1000);
    const times = { none: [] as number[], thousand: [] as number[] };
    for (let i = 0; i < 21; i++) {
      times.none.push(await timeToCronStatus(cli, freePort, empty, 0));
      times.thousand.push(await timeToCronStatus(cli, freePort, full, 1000));
    }
    const base = median(times.none);
    const added = median(times.thousand) - base;
    line('cron: gateway start → cron.status, no jobs', `${base.toFixed(0)} ms`, '(info)', true);
    line('cron: … with 1,000 stored jobs', `${signed(added)} ms`, '≤ 20 ms', added <= 20);
    // The part that grows with the job count, without process start-up noise: the scheduler's start.
    const startOf = (stateDir: string) => {
      const store = new CronStore(join(stateDir, 'cron', 'jobs.json'));
      const service = new CronService({
        store,
        runLog: new RunLog(store.runsDir, 2_000_000, 2000),
        settings: SETTINGS,
        logger: createLogger({ level: 'error' }),
        runJob: async () => ({ status: 'ok' }),
      });
      const t0 = performance.now();
      service.start();
      const ms = performance.now() - t0;
      void service.stop();
      return ms;
    };
    const inProcess = { none: [] as number[], thousand: [] as number[] };
    for (let i = 0; i < 21; i++) {
      inProcess.none.push(startOf(empty));
      inProcess.thousand.push(startOf(full));
    }
    line(
      '  … of which the scheduler start (read, recover, arm)',
      `${signed(median(inProcess.thousand) - median(inProcess.none))} ms`,
      '(info)',
      true,
    );
  } finally {
    rmSync(empty, { recursive: true, force: true });
    rmSync(full, { recursive: true, force: true });
  }
}

/** The same load on bare setTimeout (10 timers re-armed each second): what the machine gives any timer. */
async function timerBaseline(durationMs: number): Promise<number[]> {
  const lateness: number[] = [];
  const start = Date.now();
  await Promise.all(
    Array.from(
      { length: 10 },
      () =>
        new Promise<void>((resolve) => {
          let n = 0;
          const arm = () => {
            const target = start + ++n * 1000;
            setTimeout(() => {
              lateness.push(Date.now() - target);
              if ((n + 1) * 1000 <= durationMs) arm();
              else resolve();
            }, target - Date.now());
          };
          arm();
        }),
    ),
  );
  return lateness;
}

export async function cronDriftBench(line: Line, quick: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'claw-bench-drift-'));
  const durationMs = quick ? 10_000 : 60_000;
  const store = new CronStore(join(dir, 'cron', 'jobs.json'));
  const drift: number[] = [];
  const service = new CronService({
    store,
    runLog: new RunLog(store.runsDir, 2_000_000, 2000),
    settings: { ...SETTINGS, maxConcurrentRuns: 10 },
    logger: createLogger({ level: 'error' }),
    runJob: async (_job, ctx) => {
      ctx.started();
      return { status: 'ok', summary: 'tick' };
    },
    emit: (event) => {
      if (event.action === 'started' && event.scheduledAtMs !== undefined)
        drift.push(event.runAtMs! - event.scheduledAtMs);
    },
  });
  try {
    service.start();
    for (let i = 0; i < 10; i++)
      service.add({
        name: `every 1s #${i}`,
        schedule: { kind: 'every', everyMs: 1000 },
        payload: { kind: 'systemEvent', text: 'tick' },
      });
    await new Promise((resolve) => setTimeout(resolve, durationMs));
    await service.stop();
    const label = `cron: every-1s drift, 10 jobs × ${durationMs / 1000} s (${drift.length} runs)`;
    line(label, `p50 ${percentile(drift, 50)} ms`, '(info)', true);
    line(
      '  … p95 / max',
      `${percentile(drift, 95)} / ${Math.max(...drift)} ms`,
      '≤ 50 ms p95',
      percentile(drift, 95) <= 50,
    );
    const bare = await timerBaseline(durationMs);
    line(
      '  … bare setTimeout on this machine, p50 / p95 / max',
      `${percentile(bare, 50)} / ${percentile(bare, 95)} / ${Math.max(...bare)} ms`,
      '(info)',
      true,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
