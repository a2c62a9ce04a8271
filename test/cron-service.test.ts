/**
 * The cron scheduler with a controlled clock: schedules, the one timer, exactly-once
 * claims across restarts, catch-up policies, edits that never skip a missed occurrence,
 * timeouts and the watchdog, one-shot lifecycle and backoff. The executor is a fake, so
 * these tests are about time and state only (test/cron.test.ts runs real jobs).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createJob } from '../plugins/cron/jobs.js';
import { occurrenceAfter, occurrencesBetween, resolveAt, staggerOffsetMs } from '../plugins/cron/schedule.js';
import {
  CronService,
  MAX_TIMER_DELAY_MS,
  type Clock,
  type Executor,
  type RunOutcome,
} from '../plugins/cron/service.js';
import { CronStore, RunLog } from '../plugins/cron/store.js';
import type { CronJob, CronSection } from '../plugins/cron/types.js';
import { createLogger } from '../sdk/logger.js';
import { tempDir } from './helpers.js';

const T0 = Date.parse('2026-06-01T00:00:00Z');

/** A clock the test moves; timers fire when it passes them. */
class FakeClock implements Clock {
  nowMs = T0;
  timers = new Map<number, { at: number; fn: () => void }>();
  private seq = 0;
  now = () => this.nowMs;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.nowMs + ms, fn });
    return id;
  };
  clearTimeout = (handle: unknown) => void this.timers.delete(handle as number);
  pending(): number[] {
    return [...this.timers.values()].map((timer) => timer.at - this.nowMs);
  }
  /** Move time forward, firing timers in order. */
  async advance(ms: number): Promise<void> {
    const end = this.nowMs + ms;
    for (;;) {
      await flush();
      const next = [...this.timers.entries()].sort((a, b) => a[1].at - b[1].at)[0];
      if (!next || next[1].at > end) break;
      this.timers.delete(next[0]);
      this.nowMs = Math.max(this.nowMs, next[1].at);
      next[1].fn();
      await flush();
    }
    this.nowMs = end;
    await flush();
  }
}

const flush = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

const SETTINGS: CronSection = {
  enabled: true,
  maxConcurrentRuns: 1,
  skipMissedJobs: false,
  catchUp: 'once',
  missedAfterMs: 60_000,
  watchdogGraceMs: 5_000,
  runLog: { maxBytes: 2_000_000, keepLines: 2000 },
};

interface Harness {
  service: CronService;
  clock: FakeClock;
  runs: Array<{ jobId: string; at: number; trigger: string }>;
  dir: string;
  store: CronStore;
  log: RunLog;
}

interface HarnessOptions {
  dir?: string;
  clock?: FakeClock;
  settings?: Partial<CronSection>;
  runJob?: Executor;
  /** Collects what the service warns about (other log lines are dropped). */
  warnings?: string[];
}

function harness(options: HarnessOptions = {}): Harness {
  const dir = options.dir ?? tempDir('claw-cron-unit-');
  const clock = options.clock ?? new FakeClock();
  const runs: Harness['runs'] = [];
  const store = new CronStore(join(dir, 'cron', 'jobs.json'));
  const log = new RunLog(store.runsDir, 2_000_000, 2000);
  const runJob: Executor =
    options.runJob ??
    (async (job, ctx) => {
      ctx.started();
      runs.push({ jobId: job.id, at: clock.now(), trigger: ctx.trigger });
      return { status: 'ok', summary: `ran ${job.name}` };
    });
  const quiet = createLogger({ level: 'error' });
  const logger = options.warnings
    ? { ...quiet, warn: (message: string) => void options.warnings!.push(message) }
    : quiet;
  const service = new CronService({
    store,
    runLog: log,
    settings: { ...SETTINGS, ...options.settings },
    runJob,
    logger,
    clock,
  });
  return { service, clock, runs, dir, store, log };
}

const every = (ms: number, extra: Record<string, unknown> = {}) => ({
  name: `every ${ms}`,
  schedule: { kind: 'every', everyMs: ms },
  payload: { kind: 'systemEvent', text: 'tick' },
  ...extra,
});

describe('schedules', () => {
  it('every: a grid from the anchor; at: an instant; durations and wall-clock times in a zone', () => {
    const job = createJob(every(60_000, { schedule: { kind: 'every', everyMs: 60_000, anchorMs: T0 } }), { now: T0 });
    expect(occurrenceAfter(job, T0)).toBe(T0 + 60_000);
    expect(occurrenceAfter(job, T0 + 60_000)).toBe(T0 + 120_000);
    expect(occurrenceAfter(job, T0 + 61_000)).toBe(T0 + 120_000);
    expect(occurrencesBetween(job, T0 + 60_000, T0 + 300_000)).toBe(5);
    expect(resolveAt('20m', T0)).toBe(new Date(T0 + 20 * 60_000).toISOString());
    expect(resolveAt('2027-02-01T16:00:00', T0, 'America/New_York')).toBe('2027-02-01T21:00:00.000Z');
    expect(resolveAt('2027-02-01T16:00:00Z', T0)).toBe('2027-02-01T16:00:00.000Z');
    expect(() => resolveAt('tomorrow-ish', T0)).toThrow(/invalid at time "tomorrow-ish"/);
  });

  it('cron: 5 fields in an IANA zone, across DST; top-of-hour expressions get a stable stagger', () => {
    const job = createJob(
      {
        name: 'brief',
        schedule: { kind: 'cron', expr: '0 7 * * *', tz: 'America/New_York' },
        payload: { kind: 'agentTurn', message: 'brief' },
      },
      { now: T0 },
    );
    // 07:00 New York is 12:00Z in winter and 11:00Z in summer (DST began 2026-03-08).
    expect(new Date(occurrenceAfter(job, Date.parse('2026-03-07T13:00:00Z'))!).toISOString()).toBe(
      '2026-03-08T11:00:00.000Z',
    );
    expect(new Date(occurrenceAfter(job, Date.parse('2026-03-06T13:00:00Z'))!).toISOString()).toBe(
      '2026-03-07T12:00:00.000Z',
    );
    const shanghai = createJob(
      {
        name: 's',
        schedule: { kind: 'cron', expr: '0 9 * * *', tz: 'Asia/Shanghai' },
        payload: { kind: 'agentTurn', message: 'x' },
      },
      { now: T0 },
    );
    expect(new Date(occurrenceAfter(shanghai, T0)!).toISOString()).toBe('2026-06-01T01:00:00.000Z');
    const hourly = createJob(
      { name: 'h', schedule: { kind: 'cron', expr: '0 * * * *' }, payload: { kind: 'agentTurn', message: 'x' } },
      { now: T0, id: 'job-a' },
    );
    const offset = staggerOffsetMs('job-a', 300_000);
    expect(offset).toBeGreaterThanOrEqual(0);
    expect(offset).toBeLessThan(300_000);
    expect(occurrenceAfter(hourly, T0)).toBe(T0 + offset + (offset === 0 ? 3_600_000 : 0));
    const exact = createJob(
      {
        name: 'h',
        schedule: { kind: 'cron', expr: '0 * * * *', staggerMs: 0 },
        payload: { kind: 'agentTurn', message: 'x' },
      },
      { now: T0, id: 'job-a' },
    );
    expect(occurrenceAfter(exact, T0)).toBe(T0 + 3_600_000);
  });

  it('rejects bad input with errors that name what is wrong', () => {
    const bad = (job: Record<string, unknown>) => () => createJob(job, { now: T0 });
    expect(
      bad({ schedule: { kind: 'cron', expr: '0 0 7 * * *' }, payload: { kind: 'agentTurn', message: 'x' } }),
    ).toThrow(/expected 5 fields .* got 6/);
    expect(
      bad({
        schedule: { kind: 'cron', expr: '0 7 * * *', tz: 'Mars/Olympus' },
        payload: { kind: 'agentTurn', message: 'x' },
      }),
    ).toThrow(/unknown time zone "Mars\/Olympus"/);
    expect(bad({ schedule: { kind: 'every', everyMs: 10 }, payload: { kind: 'systemEvent', text: 'x' } })).toThrow(
      /everyMs must be at least 1000/,
    );
    expect(
      bad({
        sessionTarget: 'main',
        schedule: { kind: 'every', everyMs: 60_000 },
        payload: { kind: 'agentTurn', message: 'x' },
      }),
    ).toThrow('main cron jobs require payload.kind="systemEvent"');
    expect(
      bad({
        sessionTarget: 'isolated',
        schedule: { kind: 'every', everyMs: 60_000 },
        payload: { kind: 'systemEvent', text: 'x' },
      }),
    ).toThrow(/isolated cron jobs require payload.kind="agentTurn"/);
    expect(
      bad({
        schedule: { kind: 'every', everyMs: 60_000 },
        payload: { kind: 'agentTurn', message: 'x' },
        delivery: { mode: 'webhook', to: 'ftp://x' },
      }),
    ).toThrow(/must be http\(s\)/);
    expect(
      bad({
        schedule: { kind: 'every', everyMs: 60_000 },
        payload: { kind: 'systemEvent', text: 'x' },
        wakeMode: 'later',
      }),
    ).toThrow(/wakeMode must be "now" or "next-heartbeat"/);
    const at = createJob(
      { schedule: { kind: 'at', at: '20m' }, payload: { kind: 'systemEvent', text: 'x' } },
      { now: T0 },
    );
    expect(at).toMatchObject({
      deleteAfterRun: true,
      sessionTarget: 'main',
      wakeMode: 'now',
      schedule: { at: new Date(T0 + 1_200_000).toISOString() },
    });
  });
});

describe('the timer', () => {
  it('is one timer for the nearest job, clamped to 60 s, re-armed on every change', () => {
    const { service, clock } = harness();
    service.start();
    expect(clock.pending()).toEqual([]);
    service.add(every(600_000));
    expect(clock.pending()).toEqual([MAX_TIMER_DELAY_MS]);
    service.add(every(5_000));
    expect(clock.pending()).toEqual([5_000]);
    service.add(every(30 * 86_400_000));
    expect(clock.pending()).toEqual([5_000]);
    expect(service.status()).toMatchObject({
      jobs: 3,
      nextWakeAtMs: T0 + 5_000,
      timerArmedForMs: T0 + 5_000,
      running: [],
    });
  });

  it('every jobs fire on their grid, each occurrence once; a clock jump is noticed within a minute', async () => {
    const { service, clock, runs } = harness();
    service.start();
    const job = service.add(every(10_000));
    await clock.advance(35_000);
    expect(runs.map((run) => run.at - T0)).toEqual([10_000, 20_000, 30_000]);
    // The wall clock jumps 10 minutes ahead: the next wake sees it and catches up once.
    clock.nowMs += 600_000;
    await clock.advance(10_000);
    // One catch-up run for everything missed in the jump, then the grid again.
    expect(runs.map((run) => run.at - T0)).toEqual([10_000, 20_000, 30_000, 635_000, 640_000]);
    const entry = service.runs(job.id).find((run) => run.catchUp);
    expect(entry).toMatchObject({ status: 'ok', scheduledAtMs: T0 + 40_000, catchUp: { policy: 'once' } });
    expect(entry!.catchUp!.missed).toBeGreaterThanOrEqual(60);
    expect(service.get(job.id)!.state.nextRunAtMs).toBeGreaterThan(clock.now() - 10_000);
  });
});

describe('exactly once across restarts', () => {
  it('a job due while the process was down runs once at start, noted as catch-up with the missed count', async () => {
    const dir = tempDir('claw-cron-unit-');
    const first = harness({ dir });
    first.service.start();
    const job = first.service.add(every(3_600_000));
    await first.service.stop();
    // Down for five and a half hours.
    const clock = new FakeClock();
    clock.nowMs = T0 + 5.5 * 3_600_000;
    const second = harness({ dir, clock });
    second.service.start();
    await clock.advance(1);
    expect(second.runs).toEqual([{ jobId: job.id, at: clock.nowMs - 1, trigger: 'schedule' }]);
    expect(second.service.runs(job.id)[0]).toMatchObject({
      status: 'ok',
      trigger: 'schedule',
      scheduledAtMs: T0 + 3_600_000,
      catchUp: { missed: 5, policy: 'once' },
    });
    expect(second.service.get(job.id)!.state.nextRunAtMs).toBe(T0 + 6 * 3_600_000);
    await clock.advance(3_600_000);
    expect(second.runs).toHaveLength(2);
  });

  it('catch-up "all" runs every missed occurrence; "skip" records them as skipped and runs none', async () => {
    for (const policy of ['all', 'skip'] as const) {
      const dir = tempDir('claw-cron-unit-');
      const first = harness({ dir });
      first.service.start();
      const job = first.service.add(every(3_600_000));
      await first.service.stop();
      const clock = new FakeClock();
      clock.nowMs = T0 + 3.5 * 3_600_000;
      const second = harness({ dir, clock, settings: { catchUp: policy } });
      second.service.start();
      await clock.advance(1000);
      if (policy === 'all') {
        expect(second.runs).toHaveLength(3);
        expect(
          second.service
            .runs(job.id)
            .map((entry) => entry.scheduledAtMs! - T0)
            .sort((a, b) => a - b),
        ).toEqual([3_600_000, 7_200_000, 10_800_000]);
      } else {
        expect(second.runs).toHaveLength(0);
        expect(second.service.runs(job.id)[0]).toMatchObject({
          status: 'skipped',
          catchUp: { missed: 3, policy: 'skip' },
        });
        expect(second.service.get(job.id)!.state.nextRunAtMs).toBe(T0 + 4 * 3_600_000);
      }
    }
  });

  it('a run cut off by a crash (journal on disk) is re-run once at start; a second cut-off is recorded, not retried', async () => {
    const dir = tempDir('claw-cron-unit-');
    const clock = new FakeClock();
    const hang: Executor = (_job, ctx) => {
      ctx.started();
      return new Promise<RunOutcome>(() => {});
    };
    const first = harness({ dir, clock, runJob: hang });
    first.service.start();
    const job = first.service.add(every(60_000, { payload: { kind: 'systemEvent', text: 'x' } }));
    await clock.advance(60_000);
    // "kill -9": the process is gone; its journal stays in jobs.json.
    const stored = JSON.parse(readFileSync(first.store.path, 'utf8')) as { jobs: CronJob[] };
    expect(stored.jobs[0]!.state).toMatchObject({
      runningAtMs: T0 + 60_000,
      runningOccurrenceMs: T0 + 60_000,
      nextRunAtMs: T0 + 120_000,
    });
    expect(statSync(first.store.path).mode & 0o777).toBe(0o600);

    const second = harness({ dir, clock: new FakeClock(), runJob: hang });
    second.clock.nowMs = T0 + 70_000;
    second.service.start();
    expect(second.service.status().running).toMatchObject([{ jobId: job.id, trigger: 'recovery' }]);
    expect(second.service.runs(job.id)[0]).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/interrupted by a gateway restart; re-running it once/),
      scheduledAtMs: T0 + 60_000,
    });

    // Killed again during the re-run: recorded, not re-run a third time.
    const third = harness({ dir, clock: new FakeClock() });
    third.clock.nowMs = T0 + 80_000;
    third.service.start();
    await third.clock.advance(1);
    expect(third.runs).toEqual([]);
    expect(third.service.runs(job.id)[0]).toMatchObject({
      status: 'error',
      trigger: 'recovery',
      error: expect.stringMatching(/interrupted again/),
    });
    expect(third.service.get(job.id)!.state).toMatchObject({ nextRunAtMs: T0 + 120_000 });
    expect(third.service.get(job.id)!.state.runningAtMs).toBeUndefined();
    await third.clock.advance(40_000);
    expect(third.runs.map((run) => run.at - T0)).toEqual([120_000]);
  });

  it('a claim that cannot be written starts nothing; the occurrence runs once the store is writable again', async () => {
    const { service, clock, store, runs } = harness();
    service.start();
    const job = service.add(every(60_000));
    const save = store.save.bind(store);
    store.save = () => {
      throw new Error('ENOSPC: no space left on device');
    };
    await clock.advance(60_000);
    expect(runs).toEqual([]);
    expect(service.get(job.id)!.state).toMatchObject({ nextRunAtMs: T0 + 60_000 });
    expect(service.get(job.id)!.state.runningAtMs).toBeUndefined();
    // No spinning meanwhile: one retry timer, seconds away.
    expect(clock.pending()).toEqual([5000]);
    store.save = save;
    await clock.advance(5000);
    expect(runs).toEqual([{ jobId: job.id, at: T0 + 65_000, trigger: 'schedule' }]);
  });

  it('jobs.json edited on disk is picked up on the next tick', async () => {
    const { service, clock, store, runs } = harness();
    service.start();
    const job = service.add(every(3_600_000));
    const file = JSON.parse(readFileSync(store.path, 'utf8')) as { jobs: CronJob[] };
    file.jobs[0]!.name = 'renamed by hand';
    file.jobs[0]!.state.nextRunAtMs = T0 + 30_000;
    writeFileSync(store.path, JSON.stringify(file));
    await clock.advance(60_000);
    expect(runs).toEqual([{ jobId: job.id, at: T0 + 60_000, trigger: 'schedule' }]);
    expect(service.get(job.id)!.name).toBe('renamed by hand');
  });
});

describe('a jobs.json that cannot be read', () => {
  const corruptCopies = (store: CronStore) =>
    readdirSync(dirname(store.path)).filter((name) => name.startsWith('jobs.json.corrupt-'));

  it('is moved aside; the jobs come back from jobs.json.bak, and what ran since the backup is not run again', async () => {
    const dir = tempDir('claw-cron-unit-');
    const clock = new FakeClock();
    const first = harness({ dir, clock });
    first.service.start();
    const minutely = first.service.add(every(60_000));
    const at = new Date(T0 + 30_000).toISOString();
    first.service.add({ name: 'once', schedule: { kind: 'at', at }, payload: { kind: 'systemEvent', text: 'once' } });
    // The last edit: jobs.json.bak now holds the two jobs above, as they were before any run.
    first.service.add(every(3_600_000, { name: 'added last' }));
    await clock.advance(60_000);
    expect(first.runs.map((run) => run.at - T0)).toEqual([30_000, 60_000]);
    await first.service.stop();
    const damaged = '{"version": 1, "jobs": [{"id": ';
    writeFileSync(first.store.path, damaged);

    const warnings: string[] = [];
    const second = harness({ dir, clock: new FakeClock(), warnings });
    second.clock.nowMs = T0 + 61_000;
    second.service.start();
    await second.clock.advance(1);
    // The one-shot job ran and was removed; the minutely one's 60 s occurrence ran: neither runs again.
    expect(second.runs).toEqual([]);
    expect(second.service.list().map((job) => job.id)).toEqual([minutely.id]);
    expect(second.service.get(minutely.id)!.state).toMatchObject({
      lastRunAtMs: T0 + 60_000,
      nextRunAtMs: T0 + 120_000,
      lastStatus: 'ok',
    });
    const kept = corruptCopies(second.store);
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(dirname(second.store.path), kept[0]!), 'utf8')).toBe(damaged);
    expect(statSync(join(dirname(second.store.path), kept[0]!)).mode & 0o777).toBe(0o600);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`cron store ${second.store.path} is not valid JSON`);
    const keptPath = join(dirname(second.store.path), kept[0]!);
    expect(warnings[0]).toContain(`moved it to ${keptPath} and restored 1 job(s) from ${second.store.path}.bak`);
    expect(warnings[0]).toContain('(changes since are not in it)');
    expect(
      (JSON.parse(readFileSync(second.store.path, 'utf8')) as { jobs: CronJob[] }).jobs.map((job) => job.id),
    ).toEqual([minutely.id]);
    await second.clock.advance(60_000);
    expect(second.runs.map((run) => run.at - T0)).toEqual([120_000]);
  });

  it('without a backup, starts with no jobs and says so', () => {
    const dir = tempDir('claw-cron-unit-');
    const first = harness({ dir });
    first.service.add(every(60_000));
    writeFileSync(first.store.path, '{"jobs": "not a list"}');
    const warnings: string[] = [];
    const second = harness({ dir, warnings });
    second.service.start();
    expect(second.service.list()).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/has no "jobs" array; moved it to .*jobs\.json\.corrupt-\d+ and started with no jobs/);
    expect(warnings[0]).toContain(`(there is no readable ${second.store.path}.bak)`);
    expect(JSON.parse(readFileSync(second.store.path, 'utf8'))).toEqual({ version: 1, jobs: [] });
    expect(corruptCopies(second.store)).toHaveLength(1);
  });

  it('damaged while the scheduler runs: moved aside, the jobs it holds are written back, the backup is untouched', async () => {
    const warnings: string[] = [];
    const { service, clock, store, runs } = harness({ warnings });
    service.start();
    const job = service.add(every(60_000));
    service.add(every(3_600_000));
    const backup = readFileSync(`${store.path}.bak`, 'utf8');
    writeFileSync(store.path, 'not json at all');
    await clock.advance(60_000);
    expect(runs.map((run) => [run.jobId, run.at - T0])).toEqual([[job.id, 60_000]]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/is not valid JSON .*; moved it to .*jobs\.json\.corrupt-\d+ and /);
    expect(warnings[0]).toMatch(/ and wrote the 2 job\(s\) this process holds back to it$/);
    expect((JSON.parse(readFileSync(store.path, 'utf8')) as { jobs: CronJob[] }).jobs).toHaveLength(2);
    expect(readFileSync(`${store.path}.bak`, 'utf8')).toBe(backup);
    expect(readFileSync(join(dirname(store.path), corruptCopies(store)[0]!), 'utf8')).toBe('not json at all');
  });
});

describe('edits', () => {
  it('never push nextRunAtMs past a missed occurrence; a future one follows the new schedule', async () => {
    const { service, clock, runs } = harness();
    service.start();
    const job = service.add(every(60_000));
    // The process is too busy to run it (no tick) and the owner edits the schedule meanwhile.
    clock.nowMs = T0 + 90_000;
    const edited = service.update(job.id, { schedule: { kind: 'every', everyMs: 3_600_000 }, name: 'hourly' });
    expect(edited.state.nextRunAtMs).toBe(T0 + 60_000);
    await clock.advance(1);
    expect(runs.map((run) => run.at - T0)).toEqual([90_000]);
    // The grid stays anchored at the job's creation.
    expect(service.get(job.id)!.state.nextRunAtMs).toBe(T0 + 3_600_000);
    // Renaming never moves it; a change while nothing is owed follows the new schedule.
    expect(service.update(job.id, { name: 'again' }).state.nextRunAtMs).toBe(T0 + 3_600_000);
    expect(service.update(job.id, { schedule: { kind: 'every', everyMs: 120_000 } }).state.nextRunAtMs).toBe(
      T0 + 120_000,
    );
  });
});

describe('timeouts and the watchdog', () => {
  it('a run that ignores its abort is ended by the watchdog at timeout + grace, with the reason recorded', async () => {
    let aborted = false;
    const clock = new FakeClock();
    const { service } = harness({
      clock,
      runJob: (_job, ctx) => {
        ctx.started();
        ctx.signal.addEventListener('abort', () => (aborted = true));
        return new Promise<RunOutcome>(() => {});
      },
    });
    service.start();
    const job = service.add({
      name: 'hung',
      schedule: { kind: 'every', everyMs: 3_600_000 },
      payload: { kind: 'command', command: 'sleep 999', timeoutSeconds: 30 },
    });
    await clock.advance(3_600_000);
    expect(service.status().running).toMatchObject([
      { jobId: job.id, phase: 'running', deadlineAtMs: T0 + 3_600_000 + 35_000 },
    ]);
    await clock.advance(30_000);
    expect(aborted).toBe(true);
    expect(service.status().running).toHaveLength(1);
    await clock.advance(5_000);
    expect(service.status().running).toEqual([]);
    expect(service.get(job.id)!.state).toMatchObject({
      lastStatus: 'error',
      lastError: expect.stringMatching(
        /timed out; still running 5000 ms after its 30000 ms timeout .* watchdog ended it/,
      ),
    });
    expect(service.get(job.id)!.state.runningAtMs).toBeUndefined();
    expect(service.status().errors).toMatchObject([{ jobId: job.id, consecutiveErrors: 1 }]);
  });

  it('a run that stops when aborted ends at its timeout as "cron: job execution timed out"', async () => {
    const clock = new FakeClock();
    const { service } = harness({
      clock,
      runJob: (_job, ctx) => {
        ctx.started();
        return new Promise<RunOutcome>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve({ status: 'error', error: 'aborted' })),
        );
      },
    });
    service.start();
    const job = service.add({
      name: 't',
      schedule: { kind: 'every', everyMs: 3_600_000 },
      payload: { kind: 'command', command: 'x', timeoutSeconds: 10 },
    });
    await clock.advance(3_610_000);
    expect(service.runs(job.id)[0]).toMatchObject({
      status: 'error',
      error: 'cron: job execution timed out (aborted)',
      durationMs: 10_000,
    });
    // Error backoff: the next run is at least 30 s after the end.
    expect(service.get(job.id)!.state.nextRunAtMs).toBe(T0 + 7_200_000);
  });
});

describe('the run log', () => {
  it('appends one line per run, owner-only, and past maxBytes keeps only its last keepLines', () => {
    const dir = tempDir('claw-cron-log-');
    const log = new RunLog(join(dir, 'runs'), 2000, 5);
    for (let i = 0; i < 30; i++)
      log.append({
        ts: i,
        jobId: 'job-1',
        action: 'finished',
        runId: `r${i}`,
        status: 'ok',
        trigger: 'schedule',
        summary: 'x'.repeat(50),
      });
    const file = log.file('job-1');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'runs')).mode & 0o777).toBe(0o700);
    const kept = readFileSync(file, 'utf8').trim().split('\n');
    expect(kept.length).toBeLessThanOrEqual(20);
    expect(JSON.parse(kept[kept.length - 1]!).runId).toBe('r29');
    expect(log.read('job-1', 3).map((entry) => entry.runId)).toEqual(['r29', 'r28', 'r27']);
    expect(() => log.file('../escape')).toThrow(/invalid job id/);
  });
});

describe('one-shot jobs and errors', () => {
  it('an at job fires once and is deleted after success; kept (disabled) with --keep-after-run or on error', async () => {
    const clock = new FakeClock();
    let fail = false;
    const { service, runs } = harness({
      clock,
      runJob: async (job, ctx) => {
        ctx.started();
        runs.push({ jobId: job.id, at: clock.now(), trigger: ctx.trigger });
        return fail ? { status: 'error', error: 'boom' } : { status: 'ok', summary: 'done' };
      },
    });
    service.start();
    const gone = service.add({
      name: 'once',
      schedule: { kind: 'at', at: '1m' },
      payload: { kind: 'systemEvent', text: 'hi' },
    });
    const kept = service.add({
      name: 'kept',
      schedule: { kind: 'at', at: '2m' },
      payload: { kind: 'systemEvent', text: 'hi' },
      deleteAfterRun: false,
    });
    await clock.advance(121_000);
    expect(runs.map((run) => run.jobId)).toEqual([gone.id, kept.id]);
    expect(service.get(gone.id)).toBeUndefined();
    expect(service.get(kept.id)).toMatchObject({ enabled: false, state: { lastStatus: 'ok' } });
    expect(service.get(kept.id)!.state.nextRunAtMs).toBeUndefined();
    fail = true;
    const failing = service.add({
      name: 'f',
      schedule: { kind: 'at', at: '1m' },
      payload: { kind: 'systemEvent', text: 'x' },
    });
    await clock.advance(3_600_000);
    expect(runs.filter((run) => run.jobId === failing.id)).toHaveLength(1);
    expect(service.get(failing.id)).toMatchObject({
      enabled: false,
      state: { lastStatus: 'error', lastError: 'boom' },
    });
  });

  it('consecutive errors back off 30 s, 1 min, 5 min, 15 min, 60 min; success resets', async () => {
    const clock = new FakeClock();
    let ok = false;
    const { service } = harness({
      clock,
      runJob: async (_job, ctx) => (ctx.started(), ok ? { status: 'ok' } : { status: 'error', error: 'nope' }),
    });
    service.start();
    const job = service.add(every(1000));
    const gaps: number[] = [];
    for (let i = 0; i < 6; i++) {
      const before = service.get(job.id)!.state.nextRunAtMs!;
      await clock.advance(before - clock.now());
      gaps.push(service.get(job.id)!.state.nextRunAtMs! - clock.now());
    }
    expect(gaps).toEqual([30_000, 60_000, 300_000, 900_000, 3_600_000, 3_600_000]);
    ok = true;
    await clock.advance(service.get(job.id)!.state.nextRunAtMs! - clock.now());
    expect(service.get(job.id)!.state.consecutiveErrors).toBe(0);
  });

  it('maxConcurrentRuns is honoured by the lane, not by the scheduler: all due jobs are claimed at once', async () => {
    const clock = new FakeClock();
    const { service } = harness({ clock, runJob: () => new Promise<RunOutcome>(() => {}) });
    service.start();
    for (let i = 0; i < 3; i++) service.add(every(60_000));
    await clock.advance(60_000);
    // Claimed (journaled) but not started: they wait for a lane slot, and no timeout runs meanwhile.
    expect(service.status().running.map((run) => run.phase)).toEqual(['queued', 'queued', 'queued']);
  });
});
