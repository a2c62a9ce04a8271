/**
 * When a job's occurrences fall. `at` is one instant, `every` a fixed grid from its
 * anchor, `cron` a 5-field expression in an IANA time zone (croner does the calendar
 * maths, loaded on first use so a gateway whose stored next runs are still ahead never
 * parses an expression at start). Top-of-hour expressions get OpenClaw's default stagger:
 * a per-job offset in [0, 5 min) derived from the job id.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { CronJob, CronSchedule } from './types.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
export const DEFAULT_TOP_OF_HOUR_STAGGER_MS = 5 * 60_000;
/** `every` faster than this would make the scheduler its own load. */
export const MIN_EVERY_MS = 1000;

/** "20m", "1h30m", "90s", "1500ms", "2d" → milliseconds; undefined when it is not a duration. */
export function parseDurationMs(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  if (!/^(\d+(\.\d+)?\s*(ms|s|m|h|d|w)\s*)+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)/g))
    total += Number(match[1]) * UNITS[match[2]!]!;
  return Math.round(total);
}

/** "2mb", "500kb", "2000000" → bytes (decimal units, as OpenClaw's byte-size strings). */
export function parseByteSize(value: number | string): number {
  if (typeof value === 'number') return value;
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(value.trim());
  if (!match) throw new Error(`not a byte size: "${value}" (use e.g. 2000000, "500kb" or "2mb")`);
  const scale = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9 }[(match[2] ?? 'b').toLowerCase() as 'b']!;
  return Math.round(Number(match[1]) * scale);
}

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Wall-clock "2027-02-01T16:00" in `tz` → epoch ms (offset-less ISO times are read in tz, UTC by default). */
function zonedToEpoch(local: string, tz: string): number {
  const asUtc = Date.parse(`${local}Z`);
  if (Number.isNaN(asUtc)) return NaN;
  // The zone's offset at that instant, applied twice so DST edges land right.
  const offsetAt = (ms: number) => {
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      })
        .formatToParts(new Date(ms))
        .map((part) => [part.type, part.value]),
    );
    return Date.UTC(+parts.year!, +parts.month! - 1, +parts.day!, +parts.hour!, +parts.minute!, +parts.second!) - ms;
  };
  const first = asUtc - offsetAt(asUtc);
  return asUtc - offsetAt(first);
}

/**
 * `--at`: an ISO time (with offset, or wall-clock in `tz`/UTC) or a duration from now.
 * Returns the absolute ISO time stored in the job.
 */
export function resolveAt(text: string, now: number, tz?: string): string {
  const duration = parseDurationMs(text.replace(/^\+/, ''));
  if (duration !== undefined) {
    if (duration <= 0) throw new Error(`--at duration must be positive, got "${text}"`);
    return new Date(now + duration).toISOString();
  }
  const trimmed = text.trim();
  const hasOffset = /(z|[+-]\d\d:?\d\d)$/i.test(trimmed);
  const ms = hasOffset
    ? Date.parse(trimmed)
    : /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d+)?)?)?$/.test(trimmed)
      ? zonedToEpoch(trimmed.includes('T') ? trimmed : `${trimmed}T00:00:00`, tz ?? 'UTC')
      : NaN;
  if (Number.isNaN(ms))
    throw new Error(
      `invalid at time "${text}": use an ISO time such as 2027-02-01T16:00:00Z or a duration such as 20m`,
    );
  return new Date(ms).toISOString();
}

type CronCtor = new (
  pattern: string,
  options: { timezone?: string; paused: boolean },
) => { nextRun(from?: Date): Date | null };
let CronClass: CronCtor | undefined;
function cronClass(): CronCtor {
  // croner is loaded the first time an expression needs evaluating.
  CronClass ??= (createRequire(import.meta.url)('croner') as { Cron: CronCtor }).Cron;
  return CronClass;
}

const compiled = new Map<string, { nextRun(from?: Date): Date | null }>();
function compile(expr: string, tz?: string) {
  const key = `${tz ?? ''}\u0000${expr}`;
  let cron = compiled.get(key);
  if (!cron) {
    cron = new (cronClass())(expr, { ...(tz ? { timezone: tz } : {}), paused: true });
    if (compiled.size > 2000) compiled.clear();
    compiled.set(key, cron);
  }
  return cron;
}

/** Throws a clear error for anything that is not a 5-field expression with a known zone. */
export function validateCron(expr: string, tz?: string): void {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5)
    throw new Error(
      `invalid cron expression "${expr}": expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`,
    );
  if (tz !== undefined && !isValidTimeZone(tz))
    throw new Error(`unknown time zone "${tz}" (use an IANA name such as Europe/Berlin)`);
  try {
    compile(expr.trim(), tz);
  } catch (error) {
    throw new Error(`invalid cron expression "${expr}": ${(error as Error).message}`);
  }
}

/** OpenClaw's default: recurring top-of-hour expressions (minute 0, wildcard hour) get 5 minutes. */
export function defaultStaggerMs(expr: string): number {
  const [minute, hour] = expr.trim().split(/\s+/);
  return minute === '0' && hour !== undefined && hour.includes('*') ? DEFAULT_TOP_OF_HOUR_STAGGER_MS : 0;
}

export function staggerOffsetMs(jobId: string, staggerMs: number): number {
  if (staggerMs <= 0) return 0;
  return createHash('sha256').update(jobId).digest().readUInt32BE(0) % staggerMs;
}

/** The first occurrence strictly after `afterMs`; undefined when there is none (an `at` in the past of it). */
export function occurrenceAfter(
  job: Pick<CronJob, 'id' | 'createdAtMs' | 'schedule'>,
  afterMs: number,
): number | undefined {
  const schedule: CronSchedule = job.schedule;
  switch (schedule.kind) {
    case 'at': {
      const at = Date.parse(schedule.at);
      return at > afterMs ? at : undefined;
    }
    case 'every': {
      const anchor = schedule.anchorMs ?? job.createdAtMs;
      if (afterMs < anchor) return anchor;
      return anchor + (Math.floor((afterMs - anchor) / schedule.everyMs) + 1) * schedule.everyMs;
    }
    case 'cron': {
      const offset = staggerOffsetMs(job.id, schedule.staggerMs ?? defaultStaggerMs(schedule.expr));
      const next = compile(schedule.expr, schedule.tz).nextRun(new Date(afterMs - offset));
      return next ? next.getTime() + offset : undefined;
    }
  }
}

/** How many occurrences fall in [fromMs, toMs] (counting stops at `cap`). */
export function occurrencesBetween(
  job: Pick<CronJob, 'id' | 'createdAtMs' | 'schedule'>,
  fromMs: number,
  toMs: number,
  cap = 10_000,
): number {
  if (toMs < fromMs) return 0;
  if (job.schedule.kind === 'at') {
    const at = Date.parse(job.schedule.at);
    return at >= fromMs && at <= toMs ? 1 : 0;
  }
  if (job.schedule.kind === 'every') {
    const first = occurrenceAfter(job, fromMs - 1)!;
    return first > toMs ? 0 : Math.min(cap, Math.floor((toMs - first) / job.schedule.everyMs) + 1);
  }
  let count = 0;
  let at = occurrenceAfter(job, fromMs - 1);
  while (at !== undefined && at <= toMs && count < cap) {
    count++;
    at = occurrenceAfter(job, at);
  }
  return count;
}

/** "every 1m 30s", "cron 0 7 * * * (America/New_York)", "at 2027-02-01T16:00:00.000Z". */
export function describeSchedule(schedule: CronSchedule): string {
  if (schedule.kind === 'at') return `at ${schedule.at}`;
  if (schedule.kind === 'cron')
    return `cron ${schedule.expr}${schedule.tz ? ` (${schedule.tz})` : ''}${schedule.staggerMs ? ` stagger ${formatDuration(schedule.staggerMs)}` : ''}`;
  return `every ${formatDuration(schedule.everyMs)}`;
}

export function formatDuration(ms: number): string {
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0 || parts.length === 0) parts.push(`${rest}ms`);
  return parts.join(' ');
}
