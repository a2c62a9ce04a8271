import { describe, expect, it, vi } from 'vitest';
import { LaneClearedError, LaneScheduler, sessionLane } from '../kernel/index.js';
import { bundledPluginDir, createTestKernel } from '../sdk/testing.js';
import { sleep } from './helpers.js';

/** A task that records when it runs and how many of its kind run at once. */
function tracker() {
  let active = 0;
  let peak = 0;
  const order: number[] = [];
  const task =
    (id: number, ms = 5) =>
    async () => {
      active++;
      peak = Math.max(peak, active);
      order.push(id);
      await sleep(ms);
      active--;
      return id;
    };
  return { task, order, peak: () => peak };
}

describe('lane scheduler', () => {
  it('serializes 50 concurrent tasks on one session lane, in FIFO order', async () => {
    const lanes = new LaneScheduler();
    const t = tracker();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => lanes.enqueue(sessionLane('A'), t.task(i, 1))),
    );
    expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(t.order).toEqual(results);
    expect(t.peak()).toBe(1);
  });

  it('caps main at 4, subagent at 8, cron and nested at 1', async () => {
    const lanes = new LaneScheduler();
    for (const [lane, cap] of [
      ['main', 4],
      ['subagent', 8],
      ['cron', 1],
      ['nested', 1],
    ] as const) {
      const t = tracker();
      await Promise.all(Array.from({ length: 20 }, (_, i) => lanes.enqueue(lane, t.task(i))));
      expect(t.peak(), lane).toBe(cap);
    }
  });

  it('runs sessions outside and the global lane inside: a run waiting for its session holds no global slot', async () => {
    const lanes = new LaneScheduler();
    const t = tracker();
    // Ten runs on one session plus three on other sessions: the three must not wait behind the ten.
    const busy = Array.from({ length: 10 }, (_, i) => lanes.runInSession('busy', t.task(i, 20)));
    const started: string[] = [];
    const others = ['x', 'y', 'z'].map((key) =>
      lanes.runInSession(key, async () => {
        started.push(key);
        await sleep(5);
      }),
    );
    await Promise.all(others);
    expect(started.sort()).toEqual(['x', 'y', 'z']);
    expect(t.order.length).toBeLessThan(10);
    await Promise.all(busy);
    expect(t.peak()).toBe(1);
  });

  it('keeps ten sessions to a peak of exactly 4 through the main lane', async () => {
    const lanes = new LaneScheduler();
    const t = tracker();
    await Promise.all(Array.from({ length: 10 }, (_, i) => lanes.runInSession(`s${i}`, t.task(i, 10))));
    expect(t.peak()).toBe(4);
  });

  it('returns the task promise: values and errors reach the caller, and a failure does not block the lane', async () => {
    const lanes = new LaneScheduler();
    const failing = lanes.enqueue('main', async () => {
      throw new Error('boom');
    });
    const syncFailing = lanes.enqueue(sessionLane('k'), () => {
      throw new Error('sync boom');
    });
    const next = lanes.enqueue(sessionLane('k'), () => 'after');
    await expect(failing).rejects.toThrow('boom');
    await expect(syncFailing).rejects.toThrow('sync boom');
    await expect(next).resolves.toBe('after');
  });

  it('clear(lane) rejects queued tasks with LaneClearedError and leaves the running one alone', async () => {
    const lanes = new LaneScheduler();
    const lane = sessionLane('clear-me');
    let release!: () => void;
    const running = lanes.enqueue(lane, () => new Promise<string>((resolve) => (release = () => resolve('done'))));
    const queued = [lanes.enqueue(lane, () => 1), lanes.enqueue(lane, () => 2)];
    expect(lanes.stats(lane)).toMatchObject({ queued: 2, active: 1 });
    expect(lanes.clear(lane)).toBe(2);
    for (const promise of queued) {
      const error = await promise.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LaneClearedError);
      expect(error).toMatchObject({ code: 'LANE_CLEARED', lane });
    }
    release();
    await expect(running).resolves.toBe('done');
    expect(lanes.clear('never-used')).toBe(0);
  });

  it('reports per-lane stats and a notice when a wait passes 2 s (checked at dequeue, no timers)', async () => {
    let now = 0;
    const notices: unknown[] = [];
    const lanes = new LaneScheduler({ now: () => now, onNotice: (notice) => notices.push(notice) });
    let release!: () => void;
    const first = lanes.enqueue('cron', () => new Promise<void>((resolve) => (release = resolve)));
    const second = lanes.enqueue('cron', () => 'second');
    now = 1500;
    expect(lanes.stats('cron')).toMatchObject({ lane: 'cron', max: 1, queued: 1, active: 1, oldestQueuedMs: 1500 });
    now = 2500;
    release();
    await first;
    await second;
    expect(notices).toEqual([{ lane: 'cron', waitedMs: 2500, queuedBehind: 0 }]);
    expect(lanes.stats('cron')).toMatchObject({ queued: 0, active: 0, longestWaitMs: 2500, completed: 2, failed: 0 });
  });

  it('drops idle session lanes and honours setConcurrency', async () => {
    const lanes = new LaneScheduler();
    await lanes.enqueue(sessionLane('gone'), () => 1);
    expect(lanes.stats(sessionLane('gone'))).toBeUndefined();
    lanes.setConcurrency('main', 2);
    const t = tracker();
    await Promise.all(Array.from({ length: 6 }, (_, i) => lanes.enqueue('main', t.task(i))));
    expect(t.peak()).toBe(2);
    expect(() => lanes.setConcurrency('main', 0)).toThrow(/positive integer/);
    expect(() => sessionLane('  ')).toThrow(/non-empty/);
  });

  it('does not overflow the stack when thousands of synchronous tasks drain at once', async () => {
    const lanes = new LaneScheduler();
    let release!: () => void;
    const gate = lanes.enqueue('nested', () => new Promise<void>((resolve) => (release = resolve)));
    const many = Array.from({ length: 20_000 }, (_, i) => lanes.enqueue('nested', () => i));
    release();
    await gate;
    const values = await Promise.all(many);
    expect(values[19_999]).toBe(19_999);
  });

  it('leaves nothing on the event loop when idle', async () => {
    vi.useFakeTimers();
    try {
      const lanes = new LaneScheduler();
      await lanes.enqueue('main', () => 'x');
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("takes global caps from config (the subagent lane's from the subagents plugin, the only one using it)", async () => {
    const kernel = await createTestKernel({
      plugins: [bundledPluginDir('subagents')],
      config: { agents: { defaults: { maxConcurrent: 2, subagents: { maxConcurrent: 3 } } } },
    });
    expect(kernel.lanes.concurrency('main')).toBe(2);
    expect(kernel.lanes.concurrency('subagent')).toBe(8);
    await kernel.plugins.activate('subagents');
    expect(kernel.lanes.concurrency('subagent')).toBe(3);
    expect(kernel.lanes.concurrency('cron')).toBe(1);
    expect(kernel.lanes.concurrency('nested')).toBe(1);
    await kernel.dispose();
  });
});
