/**
 * The scheduler. One timer, armed for the nearest due time (capped at 60 s so a clock jump
 * or a sleeping laptop is noticed within a minute); never a timer per job.
 *
 * Exactly once, across crashes: a due occurrence is claimed by writing, in one atomic
 * jobs.json write, the run journal (`state.runningAtMs`, `runningRunId`,
 * `runningOccurrenceMs`) and the next occurrence; the run's end is written after it. A
 * process killed before the claim finds the occurrence still due and runs it; one killed
 * after finds the journal and re-runs that occurrence once (a re-run cut off again is
 * recorded, not retried forever). Nothing moves `nextRunAtMs` past an occurrence without
 * running it, except the `skip` catch-up policy, which records every occurrence it skips.
 *
 * A run's timeout starts when it gets its lane slot. At the timeout its signal aborts;
 * if it has not ended `watchdogGraceMs` later, the watchdog ends it, records why, and frees
 * the job — so nothing stays "running" past timeout + grace.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../sdk/index.js';
import { CronInputError, createJob, patchJob } from './jobs.js';
import { occurrenceAfter, occurrencesBetween } from './schedule.js';
import { CronStoreUnreadableError, type CronStore, type RunLog } from './store.js';
import type {
  CatchUpNote,
  CatchUpPolicy,
  CronJob,
  CronSection,
  DeliveryStatus,
  RunLogEntry,
  RunStatus,
  RunTrigger,
} from './types.js';

/** Longest the one timer sleeps: the scheduler re-reads the clock at least this often. */
export const MAX_TIMER_DELAY_MS = 60_000;
/** A cron-expression job never fires again sooner than this after its last run ended. */
export const MIN_REFIRE_GAP_MS = 2000;
/** Backoff after consecutive errors (recurring jobs): 30 s, 1 min, 5 min, 15 min, then 60 min. */
export const ERROR_BACKOFF_MS = [30_000, 60_000, 300_000, 900_000, 3_600_000];
export const DEFAULT_TIMEOUT_MS = 10 * 60_000;
/** After a tick that failed (jobs.json not writable), the next try. */
const TICK_RETRY_MS = 5000;
export const AGENT_TURN_TIMEOUT_MS = 60 * 60_000;

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    // The gateway's server keeps the process alive; the scheduler alone must not (tests, CLI).
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** What an executor reports for one run. */
export interface RunOutcome {
  status: RunStatus;
  error?: string;
  summary?: string;
  delivered?: boolean;
  deliveryStatus?: DeliveryStatus;
  deliveryError?: string;
  sessionId?: string;
  sessionKey?: string;
  model?: string;
  provider?: string;
  usage?: unknown;
}

export interface RunContext {
  runId: string;
  trigger: RunTrigger;
  signal: AbortSignal;
  /** Call when the run gets its lane slot: the timeout counts from here. */
  started(): void;
  /** Settles when the scheduler is done with the run (finished, timed out past grace, or stopping). */
  ended: Promise<void>;
}

export type Executor = (job: CronJob, ctx: RunContext) => Promise<RunOutcome>;

export type CronEvent = Partial<Omit<RunLogEntry, 'action'>> & {
  jobId: string;
  action: 'added' | 'updated' | 'removed' | 'started' | 'finished';
  name?: string;
};

export interface CronServiceDeps {
  store: CronStore;
  runLog: RunLog;
  settings: CronSection;
  runJob: Executor;
  logger: Logger;
  clock?: Clock;
  emit?: (event: CronEvent) => void;
  /** After a run ended: webhook delivery (the finished entry); returns its delivery status. */
  afterRun?: (
    job: CronJob,
    entry: RunLogEntry,
  ) => Promise<{ deliveryStatus: DeliveryStatus; deliveryError?: string } | undefined>;
}

interface ActiveRun {
  runId: string;
  jobId: string;
  trigger: RunTrigger;
  controller: AbortController;
  claimedAtMs: number;
  startedAtMs?: number;
  timeoutMs: number;
  timedOut: boolean;
  scheduledAtMs?: number;
  catchUp?: CatchUpNote;
  endWatchdog: (outcome: RunOutcome) => void;
  markEnded: () => void;
  done: Promise<void>;
}

export function jobTimeoutMs(job: CronJob): number {
  const payload = job.payload;
  const seconds = payload.kind === 'systemEvent' ? undefined : payload.timeoutSeconds;
  if (seconds !== undefined) return seconds * 1000;
  return payload.kind === 'agentTurn' ? AGENT_TURN_TIMEOUT_MS : DEFAULT_TIMEOUT_MS;
}

export class CronService {
  private jobs: CronJob[] = [];
  private readonly active = new Map<string, ActiveRun>();
  private timer: unknown;
  private timerAtMs?: number;
  private started = false;
  private stopped = false;
  private readonly clock: Clock;

  constructor(private readonly deps: CronServiceDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  get storePath(): string {
    return this.deps.store.path;
  }

  private get policy(): CatchUpPolicy {
    return this.deps.settings.skipMissedJobs ? 'skip' : this.deps.settings.catchUp;
  }

  /** Read jobs.json (for CLI-side reads and before start). */
  load(): void {
    try {
      this.jobs = this.deps.store.load();
    } catch (error) {
      if (!(error instanceof CronStoreUnreadableError)) throw error;
      this.replaceUnreadable(error);
    }
  }

  /**
   * jobs.json cannot be read: it is moved aside and written again from the jobs this process
   * holds (`current`), else from the backup of the version before the last edit, else with
   * no jobs. Refusing would stop every job; saving over it would lose the file for good.
   */
  private replaceUnreadable(error: CronStoreUnreadableError, current?: CronJob[]): void {
    const { kept, backup } = this.deps.store.setAside();
    let source: string;
    if (current) {
      this.jobs = current;
      source = `wrote the ${current.length} job(s) this process holds back to it`;
    } else if (backup) {
      this.jobs = this.afterBackup(backup.jobs);
      const when = new Date(backup.savedAtMs).toISOString();
      source = `restored ${this.jobs.length} job(s) from ${backup.path}, the version before the edit of ${when} (changes since are not in it)`;
    } else {
      this.jobs = [];
      source = `started with no jobs (there is no readable ${this.deps.store.path}.bak)`;
    }
    this.save();
    this.deps.logger.warn(`cron: ${error.message}; moved it to ${kept} and ${source}`);
  }

  /**
   * A backup knows no run since the edit it predates (claims and ends keep none): each job
   * takes its last finished run from its run history, so an occurrence that already ran is
   * not run again, and a one-shot job that ran stays done.
   */
  private afterBackup(jobs: CronJob[]): CronJob[] {
    return jobs.filter((job) => {
      const last = this.deps.runLog.read(job.id, 1)[0];
      if (last?.runAtMs === undefined || last.runAtMs < (job.state.lastRunAtMs ?? Number.NEGATIVE_INFINITY))
        return true;
      if (job.state.runningAtMs !== undefined && job.state.runningAtMs <= last.runAtMs) this.clearJournal(job);
      const { runAtMs: lastRunAtMs, status: lastStatus, error: lastError, durationMs: lastDurationMs } = last;
      Object.assign(job.state, { lastRunAtMs, lastStatus, lastRunStatus: lastStatus, lastError, lastDurationMs });
      if (job.schedule.kind === 'at') {
        if (last.trigger === 'manual' && Date.parse(job.schedule.at) > last.runAtMs) return true;
        // As the run's end did: an ok one-shot run removes the job unless kept, any other end retires it.
        if (last.status === 'ok' && job.deleteAfterRun !== false) return false;
        this.retireAt(job);
        return true;
      }
      job.state.nextRunAtMs = last.nextRunAtMs ?? this.resumeNext(job);
      return true;
    });
  }

  /** Gateway start: recover interrupted runs, fill in missing next runs, arm the timer. */
  start(): void {
    this.load();
    this.started = true;
    this.stopped = false;
    if (!this.deps.settings.enabled) {
      this.deps.logger.info(`cron is disabled (cron.enabled: false): ${this.jobs.length} job(s) kept, none run`);
      return;
    }
    const now = this.clock.now();
    const reruns: CronJob[] = [];
    let dirty = false;
    for (const job of this.jobs) {
      if (job.state.runningAtMs !== undefined) {
        dirty = true;
        const again = job.state.runningRecovery === true;
        const entry = this.entry(job, {
          runId: job.state.runningRunId ?? 'unknown',
          trigger: job.state.runningTrigger ?? (again ? 'recovery' : 'schedule'),
          status: 'error',
          error: again
            ? 'interrupted again by a gateway restart while re-running; not re-run a second time'
            : 'interrupted by a gateway restart; re-running it once',
          runAtMs: job.state.runningAtMs,
          scheduledAtMs: job.state.runningOccurrenceMs,
        });
        this.deps.runLog.append(entry);
        if (again) {
          const occurrence = job.state.runningOccurrenceMs;
          this.clearJournal(job);
          Object.assign(job.state, {
            lastStatus: 'error',
            lastRunStatus: 'error',
            lastError: entry.error,
            lastRunAtMs: entry.runAtMs,
          });
          if (job.schedule.kind === 'at') this.retireAt(job);
          else if (occurrence !== undefined && job.state.nextRunAtMs === undefined)
            job.state.nextRunAtMs = occurrenceAfter(job, Math.max(now, occurrence));
        } else {
          reruns.push(job);
        }
        continue;
      }
      if (job.enabled && job.state.nextRunAtMs === undefined) {
        const next = this.resumeNext(job);
        if (next !== undefined) {
          job.state.nextRunAtMs = next;
          dirty = true;
        }
      }
    }
    if (dirty) this.save();
    for (const job of reruns) {
      const occurrence = job.state.runningOccurrenceMs;
      this.clearJournal(job);
      this.launch([{ job, trigger: 'recovery', scheduledAtMs: occurrence, recovery: true }]);
    }
    this.tick();
  }

  /** Stop the timer; running runs are aborted but their journal stays, so the next start re-runs them. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    const runs = [...this.active.values()];
    for (const run of runs) {
      run.controller.abort(new Error('cron: gateway stopping'));
      run.endWatchdog({ status: 'error', error: 'cron: gateway stopping' });
    }
    await Promise.all(runs.map((run) => run.done.catch(() => undefined)));
  }

  // ── Jobs ───────────────────────────────────────────────────────────────────

  list(includeDisabled = false): CronJob[] {
    this.refresh();
    return this.jobs
      .filter((job) => includeDisabled || job.enabled)
      .sort((a, b) => (a.state.nextRunAtMs ?? Infinity) - (b.state.nextRunAtMs ?? Infinity));
  }

  get(id: string): CronJob | undefined {
    this.refresh();
    return this.jobs.find((job) => job.id === id);
  }

  add(input: unknown): CronJob {
    this.refresh();
    const now = this.clock.now();
    const job = createJob(input, { now });
    if (job.enabled) job.state.nextRunAtMs = this.firstRun(job, now);
    this.jobs.push(job);
    this.save();
    this.emit({ jobId: job.id, action: 'added', name: job.name, nextRunAtMs: job.state.nextRunAtMs });
    this.arm();
    return job;
  }

  /**
   * Edit a job. A changed schedule gets a new next run, but never one past an occurrence
   * that is already due and has not run: that occurrence still runs.
   */
  update(id: string, patch: unknown): CronJob {
    this.refresh();
    const index = this.jobs.findIndex((job) => job.id === id);
    if (index < 0) throw new CronInputError(`no cron job "${id}"`);
    const now = this.clock.now();
    const before = this.jobs[index]!;
    const job = patchJob(before, patch, now);
    const scheduleChanged = JSON.stringify(job.schedule) !== JSON.stringify(before.schedule);
    const pending = before.state.nextRunAtMs;
    if (!job.enabled) job.state.nextRunAtMs = undefined;
    else if (!before.enabled || pending === undefined) job.state.nextRunAtMs = this.firstRun(job, now);
    else if (scheduleChanged) {
      const next = this.firstRun(job, now);
      // A due occurrence of the old schedule is owed; a future one is replaced.
      job.state.nextRunAtMs = pending <= now ? Math.min(pending, next ?? pending) : next;
    }
    if (job.schedule.kind === 'at' && scheduleChanged)
      Object.assign(job.state, { lastStatus: undefined, lastRunStatus: undefined });
    this.jobs[index] = job;
    this.save();
    this.emit({ jobId: id, action: 'updated', name: job.name, nextRunAtMs: job.state.nextRunAtMs });
    this.arm();
    return job;
  }

  remove(id: string): boolean {
    this.refresh();
    const index = this.jobs.findIndex((job) => job.id === id);
    if (index < 0) return false;
    this.jobs.splice(index, 1);
    this.save();
    this.active.get(id)?.controller.abort(new Error('cron: job removed'));
    this.emit({ jobId: id, action: 'removed' });
    this.arm();
    return true;
  }

  /** cron.run: `force` runs now; `due` only if the job is due. */
  run(id: string, mode: 'force' | 'due' = 'force'): { ok: true; ran: boolean; reason?: string; runId?: string } {
    this.refresh();
    const job = this.jobs.find((candidate) => candidate.id === id);
    if (!job) throw new CronInputError(`no cron job "${id}"`);
    if (this.active.has(id) || job.state.runningAtMs !== undefined)
      return { ok: true, ran: false, reason: 'already-running' };
    if (!this.started)
      throw new CronInputError('the cron scheduler is not running in this process (start the gateway)');
    if (!this.deps.settings.enabled)
      throw new CronInputError('cron is disabled (cron.enabled: false): no job runs, not even by hand');
    if (mode === 'due') {
      const next = job.state.nextRunAtMs;
      const now = this.clock.now();
      if (!job.enabled || next === undefined || next > now) return { ok: true, ran: false, reason: 'not-due' };
      const claim = this.claim(job, now);
      if (!claim) {
        this.save();
        return { ok: true, ran: false, reason: 'skipped' };
      }
      const [runId] = this.launch([claim]);
      return { ok: true, ran: true, runId };
    }
    const [runId] = this.launch([{ job, trigger: 'manual' }]);
    return { ok: true, ran: true, runId };
  }

  runs(id: string, limit?: number): RunLogEntry[] {
    return this.deps.runLog.read(id, limit);
  }

  /** Every kept run of every job (removed jobs included), newest first. */
  allRuns(): RunLogEntry[] {
    return this.deps.runLog
      .jobIds()
      .flatMap((id) => this.deps.runLog.read(id, Number.POSITIVE_INFINITY))
      .sort((a, b) => b.ts - a.ts);
  }

  status() {
    this.refresh();
    const now = this.clock.now();
    const running = [...this.active.values()].map((run) => {
      const job = this.jobs.find((candidate) => candidate.id === run.jobId);
      return {
        jobId: run.jobId,
        name: job?.name,
        runId: run.runId,
        trigger: run.trigger,
        runningAtMs: run.claimedAtMs,
        startedAtMs: run.startedAtMs,
        phase: run.startedAtMs === undefined ? 'queued' : 'running',
        timeoutMs: run.timeoutMs || null,
        // When the watchdog ends it, at the latest.
        deadlineAtMs:
          run.startedAtMs !== undefined && run.timeoutMs > 0
            ? run.startedAtMs + run.timeoutMs + this.deps.settings.watchdogGraceMs
            : null,
      };
    });
    return {
      enabled: this.deps.settings.enabled,
      schedulerRunning: this.started && !this.stopped,
      storePath: this.deps.store.path,
      jobs: this.jobs.length,
      enabledJobs: this.jobs.filter((job) => job.enabled).length,
      nextWakeAtMs: this.nextWake() ?? null,
      timerArmedForMs: this.timerAtMs ?? null,
      now,
      catchUp: this.policy,
      maxConcurrentRuns: this.deps.settings.maxConcurrentRuns,
      running,
      errors: this.jobs
        .filter((job) => job.state.lastStatus === 'error' && job.state.lastError)
        .map((job) => ({
          jobId: job.id,
          name: job.name,
          lastError: job.state.lastError,
          lastRunAtMs: job.state.lastRunAtMs,
          consecutiveErrors: job.state.consecutiveErrors ?? 0,
        })),
    };
  }

  // ── Timer ─────────────────────────────────────────────────────────────────

  /** Run what is due, then re-arm. Public for tests with a controlled clock. */
  tick(): void {
    if (!this.started || this.stopped || !this.deps.settings.enabled) return;
    this.refresh();
    const now = this.clock.now();
    const claims: Claim[] = [];
    const skipped: CronJob[] = [];
    const due = this.jobs
      .filter(
        (job) =>
          job.enabled &&
          job.state.nextRunAtMs !== undefined &&
          job.state.nextRunAtMs <= now &&
          job.state.runningAtMs === undefined &&
          !this.active.has(job.id),
      )
      .sort((a, b) => a.state.nextRunAtMs! - b.state.nextRunAtMs!);
    for (const job of due) {
      const claim = this.claim(job, now);
      if (claim) claims.push(claim);
      else skipped.push(job);
    }
    if (claims.length > 0) this.launch(claims);
    else if (skipped.length > 0) this.save(true);
    this.watchdog(now);
    this.arm();
  }

  /** A due job's run, or undefined when the catch-up policy skips what it missed (recorded). */
  private claim(job: CronJob, now: number): Claim | undefined {
    const occurrence = job.state.nextRunAtMs!;
    const late = now - occurrence > this.deps.settings.missedAfterMs;
    const catchUp: CatchUpNote | undefined = late
      ? { missed: Math.max(1, occurrencesBetween(job, occurrence, now)), policy: this.policy }
      : undefined;
    if (catchUp && job.schedule.kind !== 'at' && catchUp.policy === 'skip') {
      job.state.nextRunAtMs = occurrenceAfter(job, now);
      const entry = this.entry(job, {
        runId: randomUUID(),
        trigger: 'schedule',
        status: 'skipped',
        error: `missed ${catchUp.missed} occurrence(s) while not running; skipped (catch-up policy "skip")`,
        scheduledAtMs: occurrence,
        catchUp,
        runAtMs: now,
        durationMs: 0,
      });
      this.deps.runLog.append(entry);
      this.emit({ ...entry, name: job.name });
      return undefined;
    }
    return { job, trigger: 'schedule', scheduledAtMs: occurrence, catchUp };
  }

  private nextWake(): number | undefined {
    let next: number | undefined;
    for (const job of this.jobs) {
      const at = job.state.nextRunAtMs;
      if (
        job.enabled &&
        at !== undefined &&
        job.state.runningAtMs === undefined &&
        !this.active.has(job.id) &&
        (next === undefined || at < next)
      )
        next = at;
    }
    for (const run of this.active.values()) {
      const deadline = this.deadline(run);
      if (deadline !== undefined && (next === undefined || deadline < next)) next = deadline;
    }
    return next;
  }

  /** `minDelayMs`: after a failed tick (a store that cannot be written), do not spin. */
  private arm(minDelayMs = 0): void {
    this.clearTimer();
    if (!this.started || this.stopped || !this.deps.settings.enabled) return;
    const next = this.nextWake();
    if (next === undefined) return;
    const now = this.clock.now();
    const delay = Math.min(Math.max(next - now, minDelayMs), MAX_TIMER_DELAY_MS);
    this.timerAtMs = now + delay;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.timerAtMs = undefined;
      try {
        this.tick();
      } catch (error) {
        this.deps.logger.error(`cron tick failed (retrying in ${TICK_RETRY_MS} ms): ${(error as Error).message}`);
        this.arm(TICK_RETRY_MS);
      }
    }, delay);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAtMs = undefined;
  }

  // ── Runs ──────────────────────────────────────────────────────────────────

  /** Claim (journal + next occurrence, one write), then start each run. Returns the run ids. */
  private launch(claims: Claim[]): string[] {
    const now = this.clock.now();
    const runs: Array<{ claim: Claim; runId: string }> = [];
    const before = claims.map((claim) => ({ ...claim.job.state }));
    for (const claim of claims) {
      const { job } = claim;
      const runId = randomUUID();
      Object.assign(job.state, {
        runningAtMs: now,
        runningRunId: runId,
        runningOccurrenceMs: claim.scheduledAtMs,
        runningTrigger: claim.trigger,
        runningRecovery: claim.recovery ? true : undefined,
      });
      if (claim.trigger === 'schedule') {
        const occurrence = claim.scheduledAtMs!;
        job.state.nextRunAtMs =
          job.schedule.kind === 'at'
            ? undefined
            : occurrenceAfter(job, claim.catchUp?.policy === 'all' ? occurrence : Math.max(now, occurrence));
      } else if (
        claim.trigger === 'recovery' &&
        job.schedule.kind !== 'at' &&
        claim.scheduledAtMs !== undefined &&
        job.state.nextRunAtMs === undefined
      ) {
        job.state.nextRunAtMs = occurrenceAfter(job, Math.max(now, claim.scheduledAtMs));
      }
      runs.push({ claim, runId });
    }
    // The journal is on disk before any of these runs begins; if it cannot be written, none begins.
    try {
      this.save(true);
    } catch (error) {
      claims.forEach((claim, index) => (claim.job.state = before[index]!));
      throw error;
    }
    for (const { claim, runId } of runs) this.begin(claim, runId, now);
    return runs.map((run) => run.runId);
  }

  private begin(claim: Claim, runId: string, claimedAtMs: number): void {
    const { job } = claim;
    const controller = new AbortController();
    let endWatchdog!: (outcome: RunOutcome) => void;
    const watchdog = new Promise<RunOutcome>((resolve) => (endWatchdog = resolve));
    let markEnded!: () => void;
    const ended = new Promise<void>((resolve) => (markEnded = resolve));
    const run: ActiveRun = {
      runId,
      jobId: job.id,
      trigger: claim.trigger,
      controller,
      claimedAtMs,
      timeoutMs: jobTimeoutMs(job),
      timedOut: false,
      scheduledAtMs: claim.scheduledAtMs,
      catchUp: claim.catchUp,
      endWatchdog,
      markEnded,
      done: Promise.resolve(),
    };
    this.active.set(job.id, run);
    this.emit({
      jobId: job.id,
      action: 'started',
      name: job.name,
      runId,
      runAtMs: claimedAtMs,
      trigger: claim.trigger,
      ...(claim.scheduledAtMs !== undefined ? { scheduledAtMs: claim.scheduledAtMs } : {}),
      ...(claim.catchUp ? { catchUp: claim.catchUp } : {}),
    });
    const ctx: RunContext = {
      runId,
      trigger: claim.trigger,
      signal: controller.signal,
      ended,
      started: () => {
        if (run.startedAtMs !== undefined) return;
        run.startedAtMs = this.clock.now();
        this.arm();
      },
    };
    const execution = (async () => this.deps.runJob(structuredClone(job), ctx))().catch(
      (error: unknown): RunOutcome => ({
        status: 'error',
        error: error instanceof Error ? error.message : String(error),
      }),
    );
    run.done = Promise.race([execution, watchdog]).then((outcome) => this.finish(run, outcome));
  }

  /** Deadline of the next watchdog step for a run: its timeout, then timeout + grace. */
  private deadline(run: ActiveRun): number | undefined {
    if (run.startedAtMs === undefined || run.timeoutMs <= 0) return undefined;
    return run.startedAtMs + run.timeoutMs + (run.timedOut ? this.deps.settings.watchdogGraceMs : 0);
  }

  private watchdog(now: number): void {
    for (const run of this.active.values()) {
      const deadline = this.deadline(run);
      if (deadline === undefined || now < deadline) continue;
      if (!run.timedOut) {
        run.timedOut = true;
        run.controller.abort(new Error('cron: job execution timed out'));
        continue;
      }
      const graceMs = this.deps.settings.watchdogGraceMs;
      run.endWatchdog({
        status: 'error',
        error: `cron: job execution timed out; still running ${graceMs} ms after its ${run.timeoutMs} ms timeout was signalled, so the watchdog ended it`,
      });
    }
  }

  private async finish(run: ActiveRun, outcome: RunOutcome): Promise<void> {
    run.markEnded();
    if (this.active.get(run.jobId) === run) this.active.delete(run.jobId);
    // Stopping: leave the journal, so the next start re-runs what was cut off.
    if (this.stopped) return;
    const now = this.clock.now();
    const job = this.jobs.find((candidate) => candidate.id === run.jobId);
    const status = run.timedOut && outcome.status !== 'error' ? 'error' : outcome.status;
    const error =
      run.timedOut && !outcome.error?.startsWith('cron: job execution timed out')
        ? `cron: job execution timed out${outcome.error ? ` (${outcome.error})` : ''}`
        : outcome.error;
    const entry: RunLogEntry = {
      ...this.entryBase(run.jobId, run.runId, run.trigger),
      status,
      ...(error ? { error } : {}),
      ...(outcome.summary ? { summary: outcome.summary } : {}),
      runAtMs: run.startedAtMs ?? run.claimedAtMs,
      durationMs: now - (run.startedAtMs ?? run.claimedAtMs),
      ...(run.scheduledAtMs !== undefined ? { scheduledAtMs: run.scheduledAtMs } : {}),
      ...(run.catchUp ? { catchUp: run.catchUp } : {}),
      ...pick(outcome, [
        'delivered',
        'deliveryStatus',
        'deliveryError',
        'sessionId',
        'sessionKey',
        'model',
        'provider',
        'usage',
      ]),
    };
    if (job && job.state.runningRunId === run.runId) {
      this.clearJournal(job);
      this.recordEnd(job, entry, now);
      entry.nextRunAtMs = job.state.nextRunAtMs;
      const remove = job.schedule.kind === 'at' && status === 'ok' && job.deleteAfterRun !== false;
      if (remove) this.jobs.splice(this.jobs.indexOf(job), 1);
      // The end is on disk before anything else happens: a kill from here on never re-runs it.
      this.save(true);
      if (remove) this.emit({ jobId: job.id, action: 'removed' });
    } else {
      this.deps.logger.warn(
        `cron run ${run.runId} of job ${run.jobId} ended after the job was removed or replaced; recorded in its run history only`,
      );
    }
    const webhook =
      job && this.deps.afterRun
        ? await this.deps
            .afterRun(job, entry)
            .catch((err: Error) => ({ deliveryStatus: 'not-delivered' as const, deliveryError: err.message }))
        : undefined;
    if (webhook) {
      Object.assign(entry, {
        delivered: webhook.deliveryStatus === 'delivered',
        deliveryStatus: webhook.deliveryStatus,
        ...(webhook.deliveryError ? { deliveryError: webhook.deliveryError } : {}),
      });
      const current = this.jobs.find((candidate) => candidate.id === run.jobId);
      if (current) {
        Object.assign(current.state, {
          lastDelivered: entry.delivered,
          lastDeliveryStatus: entry.deliveryStatus,
          lastDeliveryError: entry.deliveryError,
        });
        this.save(true);
      }
    }
    this.deps.runLog.append(entry);
    this.emit({ ...entry, action: 'finished', name: job?.name });
    if (status === 'error') this.deps.logger.warn(`cron job "${job?.name ?? run.jobId}" failed: ${entry.error}`);
    this.arm();
  }

  private recordEnd(job: CronJob, entry: RunLogEntry, now: number): void {
    const state = job.state;
    Object.assign(state, {
      lastRunAtMs: entry.runAtMs,
      lastStatus: entry.status,
      lastRunStatus: entry.status,
      lastDurationMs: entry.durationMs,
      lastError: entry.error,
      lastDelivered: entry.delivered,
      lastDeliveryStatus: entry.deliveryStatus,
      lastDeliveryError: entry.deliveryError,
    });
    if (entry.status === 'error') state.consecutiveErrors = (state.consecutiveErrors ?? 0) + 1;
    else if (entry.status === 'ok') state.consecutiveErrors = 0;
    if (job.schedule.kind === 'at') {
      // Any terminal status ends a one-shot job (a manual run of a future `at` job included).
      if (entry.trigger !== 'manual' || Date.parse(job.schedule.at) <= now) this.retireAt(job);
      return;
    }
    if (!job.enabled || state.nextRunAtMs === undefined) return;
    let next = state.nextRunAtMs;
    if (entry.status === 'error')
      next = Math.max(
        next,
        now + ERROR_BACKOFF_MS[Math.min(state.consecutiveErrors! - 1, ERROR_BACKOFF_MS.length - 1)]!,
      );
    if (job.schedule.kind === 'cron') next = Math.max(next, now + MIN_REFIRE_GAP_MS);
    state.nextRunAtMs = next;
  }

  private retireAt(job: CronJob): void {
    job.enabled = false;
    job.state.nextRunAtMs = undefined;
  }

  private clearJournal(job: CronJob): void {
    for (const key of [
      'runningAtMs',
      'runningRunId',
      'runningOccurrenceMs',
      'runningTrigger',
      'runningRecovery',
    ] as const)
      delete job.state[key];
  }

  /** The first run of a new, edited or re-enabled job: recurring jobs start from now. */
  private firstRun(job: CronJob, now = this.clock.now()): number | undefined {
    if (job.schedule.kind === 'at') return job.state.lastStatus === undefined ? Date.parse(job.schedule.at) : undefined;
    return occurrenceAfter(job, now);
  }

  /**
   * A stored job without a next run (written by hand, or by an older version): continue
   * from its last run (or creation), so an occurrence missed since then is still owed.
   */
  private resumeNext(job: CronJob): number | undefined {
    if (job.schedule.kind === 'at') return this.firstRun(job);
    return occurrenceAfter(job, job.state.lastRunAtMs ?? job.createdAtMs);
  }

  private entryBase(jobId: string, runId: string, trigger: RunTrigger) {
    return { ts: this.clock.now(), jobId, action: 'finished' as const, runId, trigger };
  }

  private entry(job: CronJob, fields: Omit<RunLogEntry, 'ts' | 'jobId' | 'action'>): RunLogEntry {
    return { ...this.entryBase(job.id, fields.runId, fields.trigger), ...fields };
  }

  private emit(event: CronEvent): void {
    try {
      this.deps.emit?.(event);
    } catch (error) {
      this.deps.logger.warn(`cron event listener failed: ${(error as Error).message}`);
    }
  }

  /** `journal`: a run's claim or end (see CronStore.save); everything else is flushed to disk. */
  private save(journal = false): void {
    this.deps.store.save(this.jobs, !journal);
  }

  /** jobs.json edited by someone else: take it, keeping what runs here. */
  private refresh(): void {
    if (!this.deps.store.changedOnDisk()) return;
    try {
      const jobs = this.deps.store.load();
      for (const job of jobs) {
        const run = this.active.get(job.id);
        if (run && job.state.runningRunId !== run.runId)
          Object.assign(job.state, { runningAtMs: run.claimedAtMs, runningRunId: run.runId });
        if (job.enabled && job.state.nextRunAtMs === undefined && job.state.runningAtMs === undefined)
          job.state.nextRunAtMs = this.resumeNext(job);
      }
      this.jobs = jobs;
      this.deps.logger.info(`cron: ${this.deps.store.path} changed on disk; reloaded ${jobs.length} job(s)`);
    } catch (error) {
      if (error instanceof CronStoreUnreadableError) this.replaceUnreadable(error, this.jobs);
      else this.deps.logger.error(`cron: ${(error as Error).message}; keeping the jobs in memory`);
    }
  }
}

interface Claim {
  job: CronJob;
  trigger: RunTrigger;
  scheduledAtMs?: number;
  catchUp?: CatchUpNote;
  recovery?: boolean;
}

function pick<T extends object, K extends keyof T>(value: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key];
  return out;
}
