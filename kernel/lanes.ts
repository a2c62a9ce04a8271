/**
 * Lane scheduler: named FIFO queues, each with a concurrency cap. A run enters its
 * `session:<key>` lane (cap 1: one run per session) and, once it holds that, a global lane
 * (`main`, `subagent`, `cron`, `nested`), so a run waiting for its session never occupies a
 * global slot. Pure promises, no timers: the long-wait notice is checked when a task is
 * dequeued, so an idle scheduler leaves nothing on the event loop.
 */

export type LaneTask<T> = () => T | PromiseLike<T>;

export class LaneClearedError extends Error {
  readonly code = 'LANE_CLEARED';
  override name = 'LaneClearedError';
  constructor(readonly lane: string) {
    super(`lane "${lane}" was cleared before this task started`);
  }
}

export interface LaneStats {
  lane: string;
  max: number;
  queued: number;
  active: number;
  /** Longest time any task waited in this lane before starting. */
  longestWaitMs: number;
  /** How long the task at the head of the queue has been waiting right now. */
  oldestQueuedMs: number;
  completed: number;
  failed: number;
}

export interface LaneWaitNotice {
  lane: string;
  waitedMs: number;
  /** Tasks still queued behind the one that just started. */
  queuedBehind: number;
}

export const SESSION_LANE_PREFIX = 'session:';
export const GLOBAL_LANES = ['main', 'subagent', 'cron', 'nested'] as const;
export type GlobalLane = (typeof GLOBAL_LANES)[number];
export const DEFAULT_LANE_CAPS: Readonly<Record<GlobalLane, number>> = { main: 4, subagent: 8, cron: 1, nested: 1 };
export const LANE_WAIT_NOTICE_MS = 2000;

export function sessionLane(sessionKey: string): string {
  const key = sessionKey.trim();
  if (!key) throw new TypeError('session key must be a non-empty string');
  return SESSION_LANE_PREFIX + key;
}

export interface LaneSchedulerOptions {
  /** Caps for global lanes; unspecified lanes use DEFAULT_LANE_CAPS, unknown lanes 1. */
  caps?: Partial<Record<string, number>>;
  noticeAfterMs?: number;
  onNotice?: (notice: LaneWaitNotice) => void;
  now?: () => number;
}

interface Entry {
  task: LaneTask<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
  enqueuedAt: number;
}

/** A lane's counters, plus its queue read from `head` on (so dequeuing is O(1)). */
interface Lane extends Omit<LaneStats, 'lane' | 'queued' | 'oldestQueuedMs'> {
  name: string;
  queue: Entry[];
  head: number;
  /** Set while pump() runs, so tasks that finish synchronously do not recurse into it. */
  pumping: boolean;
}

export class LaneScheduler {
  private readonly lanes = new Map<string, Lane>();
  private readonly caps = new Map<string, number>(Object.entries(DEFAULT_LANE_CAPS));
  private readonly noticeAfterMs: number;
  private readonly onNotice?: (notice: LaneWaitNotice) => void;
  private readonly now: () => number;

  constructor(options: LaneSchedulerOptions = {}) {
    for (const [lane, max] of Object.entries(options.caps ?? {})) {
      if (max !== undefined) this.caps.set(lane, checkCap(lane, max));
    }
    this.noticeAfterMs = options.noticeAfterMs ?? LANE_WAIT_NOTICE_MS;
    this.onNotice = options.onNotice;
    this.now = options.now ?? Date.now;
  }

  /** Change a lane's cap; raising it starts queued tasks at once. */
  setConcurrency(lane: string, max: number): void {
    this.caps.set(lane, checkCap(lane, max));
    const existing = this.lanes.get(lane);
    if (existing) this.pump(Object.assign(existing, { max }));
  }

  concurrency = (lane: string): number => this.caps.get(lane) ?? 1;

  enqueue<T>(lane: string, task: LaneTask<T>): Promise<T> {
    const state = this.lane(lane);
    return new Promise<T>((resolve, reject) => {
      state.queue.push({ task, resolve: resolve as (value: unknown) => void, reject, enqueuedAt: this.now() });
      this.pump(state);
    });
  }

  /** Session lane outside, global lane inside: the shape of every agent run. */
  runInSession<T>(sessionKey: string, task: LaneTask<T>, globalLane: string = 'main'): Promise<T> {
    return this.enqueue(sessionLane(sessionKey), () => this.enqueue(globalLane, task));
  }

  /** Reject every task still waiting in `lane`; running tasks are left alone. Returns how many were dropped. */
  clear(lane: string): number {
    const state = this.lanes.get(lane);
    if (!state) return 0;
    const dropped = state.queue.slice(state.head);
    state.queue = [];
    state.head = 0;
    const error = new LaneClearedError(lane);
    for (const entry of dropped) entry.reject(error);
    this.collect(state);
    return dropped.length;
  }

  stats(lane: string): LaneStats | undefined {
    const state = this.lanes.get(lane);
    return state && this.snapshot(state);
  }

  allStats = (): LaneStats[] => [...this.lanes.values()].map((state) => this.snapshot(state));

  private snapshot({ name, max, queue, head, active, longestWaitMs, completed, failed }: Lane): LaneStats {
    const oldestQueuedMs = queue[head] ? Math.max(0, this.now() - queue[head].enqueuedAt) : 0;
    return { lane: name, max, queued: queue.length - head, active, longestWaitMs, oldestQueuedMs, completed, failed };
  }

  private lane(name: string): Lane {
    let state = this.lanes.get(name);
    if (!state) {
      if (!name) throw new TypeError('lane name must be a non-empty string');
      const counters = { active: 0, longestWaitMs: 0, completed: 0, failed: 0 };
      state = { name, max: this.concurrency(name), queue: [], head: 0, pumping: false, ...counters };
      this.lanes.set(name, state);
    }
    return state;
  }

  private pump(state: Lane): void {
    if (state.pumping) return;
    state.pumping = true;
    try {
      while (state.active < state.max && state.head < state.queue.length) {
        const entry = state.queue[state.head]!;
        state.queue[state.head++] = undefined as unknown as Entry;
        if (state.head === state.queue.length) {
          state.queue = [];
          state.head = 0;
        } else if (state.head > 1024 && state.head * 2 > state.queue.length) {
          state.queue = state.queue.slice(state.head);
          state.head = 0;
        }
        this.start(state, entry);
      }
    } finally {
      state.pumping = false;
    }
    this.collect(state);
  }

  private start(state: Lane, entry: Entry): void {
    const waited = this.now() - entry.enqueuedAt;
    state.longestWaitMs = Math.max(state.longestWaitMs, waited);
    if (waited >= this.noticeAfterMs && this.onNotice) {
      this.onNotice({ lane: state.name, waitedMs: waited, queuedBehind: state.queue.length - state.head });
    }
    state.active++;
    let result: unknown;
    try {
      result = entry.task();
    } catch (error) {
      return this.finish(state, entry, false, error);
    }
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then(
        (value) => this.finish(state, entry, true, value),
        (error) => this.finish(state, entry, false, error),
      );
    } else this.finish(state, entry, true, result);
  }

  /** The lane moves on before the task's caller hears of the outcome. */
  private finish(state: Lane, entry: Entry, ok: boolean, outcome: unknown): void {
    state.active--;
    state[ok ? 'completed' : 'failed']++;
    this.pump(state);
    (ok ? entry.resolve : entry.reject)(outcome);
  }

  /** Idle session lanes are dropped so a long-lived gateway does not accumulate one per conversation. */
  private collect(state: Lane): void {
    const idle = state.active === 0 && !state.pumping && state.head === state.queue.length;
    if (idle && state.name.startsWith(SESSION_LANE_PREFIX) && !this.caps.has(state.name)) this.lanes.delete(state.name);
  }
}

function checkCap(lane: string, max: number): number {
  if (!Number.isInteger(max) || max < 1) {
    throw new RangeError(`lane "${lane}" concurrency must be a positive integer, got ${String(max)}`);
  }
  return max;
}
