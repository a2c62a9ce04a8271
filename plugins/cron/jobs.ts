/**
 * Turning what a caller sends (cron.add / cron.update params, the cron tool, the CLI) into
 * a valid job, with errors that name the field. OpenClaw's rules: `main` jobs carry a
 * systemEvent, `isolated` ones an agentTurn (or, in claw, a command); chat delivery is for
 * isolated jobs; a webhook needs an http(s) URL; `at` jobs delete after a successful run
 * unless told to keep.
 */
import { randomUUID } from 'node:crypto';
import { MIN_EVERY_MS, parseDurationMs, resolveAt, validateCron } from './schedule.js';
import type { CronDelivery, CronJob, CronPayload, CronSchedule, SessionTarget } from './types.js';
import type { WakeMode } from '../../sdk/index.js';

export class CronInputError extends Error {
  override readonly name = 'CronInputError';
}

/** By name: a transpiled plugin (jiti) may not keep `instanceof` for Error subclasses. */
export function isCronInputError(error: unknown): error is CronInputError {
  return error instanceof Error && error.name === 'CronInputError';
}

const fail = (message: string): never => {
  throw new CronInputError(message);
};

type Loose = Record<string, unknown>;

function str(value: unknown, field: string, { required = false, allowEmpty = false } = {}): string | undefined {
  if (value === undefined || value === null) return required ? fail(`${field} is required`) : undefined;
  if (typeof value !== 'string') return fail(`${field} must be a string`);
  if (!allowEmpty && !value.trim()) return fail(`${field} must not be empty`);
  return value;
}

function seconds(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    return fail(`${field} must be a whole number of seconds >= 0 (0 = no timeout)`);
  return value;
}

export function normalizeSchedule(input: unknown, now: number): CronSchedule {
  if (!input || typeof input !== 'object')
    return fail('schedule is required: {kind: "at", at} | {kind: "every", everyMs} | {kind: "cron", expr, tz?}');
  const raw = input as Loose;
  switch (raw.kind) {
    case 'at': {
      if (typeof raw.atMs === 'number' && raw.at === undefined)
        return { kind: 'at', at: new Date(raw.atMs).toISOString() };
      const at = str(raw.at, 'schedule.at', { required: true })!;
      try {
        return { kind: 'at', at: resolveAt(at, now, typeof raw.tz === 'string' ? raw.tz : undefined) };
      } catch (error) {
        return fail((error as Error).message);
      }
    }
    case 'every': {
      const everyMs = typeof raw.everyMs === 'string' ? parseDurationMs(raw.everyMs) : raw.everyMs;
      if (typeof everyMs !== 'number' || !Number.isFinite(everyMs) || everyMs < MIN_EVERY_MS)
        return fail(`schedule.everyMs must be at least ${MIN_EVERY_MS} ms (or a duration such as "10m")`);
      if (raw.anchorMs !== undefined && (typeof raw.anchorMs !== 'number' || !Number.isFinite(raw.anchorMs)))
        return fail('schedule.anchorMs must be epoch milliseconds');
      return {
        kind: 'every',
        everyMs: Math.round(everyMs),
        ...(raw.anchorMs !== undefined ? { anchorMs: raw.anchorMs as number } : {}),
      };
    }
    case 'cron': {
      const expr = str(raw.expr, 'schedule.expr', { required: true })!.trim();
      const tz = str(raw.tz, 'schedule.tz');
      try {
        validateCron(expr, tz);
      } catch (error) {
        return fail((error as Error).message);
      }
      if (
        raw.staggerMs !== undefined &&
        (typeof raw.staggerMs !== 'number' || !Number.isInteger(raw.staggerMs) || raw.staggerMs < 0)
      )
        return fail('schedule.staggerMs must be a whole number of milliseconds >= 0 (0 = exact)');
      return {
        kind: 'cron',
        expr,
        ...(tz ? { tz } : {}),
        ...(raw.staggerMs !== undefined ? { staggerMs: raw.staggerMs as number } : {}),
      };
    }
    default:
      return fail(`schedule.kind must be "at", "every" or "cron", got ${JSON.stringify(raw.kind)}`);
  }
}

export function normalizePayload(input: unknown): CronPayload {
  if (!input || typeof input !== 'object')
    return fail(
      'payload is required: {kind: "systemEvent", text} | {kind: "agentTurn", message} | {kind: "command", command}',
    );
  const raw = input as Loose;
  switch (raw.kind) {
    case 'systemEvent':
      return { kind: 'systemEvent', text: str(raw.text, 'payload.text', { required: true })! };
    case 'agentTurn': {
      const model = str(raw.model, 'payload.model');
      const thinking = str(raw.thinking, 'payload.thinking');
      if (thinking && !['off', 'minimal', 'low', 'medium', 'high'].includes(thinking))
        fail(`payload.thinking must be off, minimal, low, medium or high, got "${thinking}"`);
      const timeoutSeconds = seconds(raw.timeoutSeconds, 'payload.timeoutSeconds');
      return {
        kind: 'agentTurn',
        message: str(raw.message, 'payload.message', { required: true })!,
        ...(model ? { model } : {}),
        ...(thinking ? { thinking } : {}),
        ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
      };
    }
    case 'command': {
      const cwd = str(raw.cwd, 'payload.cwd');
      const timeoutSeconds = seconds(raw.timeoutSeconds, 'payload.timeoutSeconds');
      return {
        kind: 'command',
        command: str(raw.command, 'payload.command', { required: true })!,
        ...(cwd ? { cwd } : {}),
        ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
      };
    }
    default:
      return fail(`payload.kind must be "systemEvent", "agentTurn" or "command", got ${JSON.stringify(raw.kind)}`);
  }
}

export function normalizeDelivery(input: unknown): CronDelivery | undefined {
  if (input === undefined || input === null) return undefined;
  if (typeof input !== 'object') return fail('delivery must be an object {mode, channel?, to?}');
  const raw = input as Loose;
  const mode = raw.mode ?? 'announce';
  if (mode !== 'announce' && mode !== 'webhook' && mode !== 'none')
    return fail(`delivery.mode must be announce, webhook or none, got ${JSON.stringify(mode)}`);
  const channel = str(raw.channel, 'delivery.channel');
  const to = str(raw.to, 'delivery.to');
  const accountId = str(raw.accountId, 'delivery.accountId');
  const threadId = raw.threadId;
  if (threadId !== undefined && typeof threadId !== 'string' && typeof threadId !== 'number')
    fail('delivery.threadId must be a string or number');
  if (mode === 'webhook') {
    if (!to) return fail('delivery.mode "webhook" needs delivery.to: an http(s) URL');
    let url: URL;
    try {
      url = new URL(to);
    } catch {
      return fail(`delivery.to is not a URL: "${to}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      fail(`webhook delivery.to must be http(s), got "${url.protocol}"`);
    if (url.username || url.password)
      fail('webhook delivery.to must not embed credentials; set cron.webhookToken for bearer auth');
  }
  return {
    mode,
    ...(channel ? { channel } : {}),
    ...(to ? { to } : {}),
    ...(accountId ? { accountId } : {}),
    ...(threadId !== undefined ? { threadId: threadId as string | number } : {}),
  };
}

function checkCombination(job: CronJob): void {
  const { sessionTarget, payload, delivery } = job;
  if (sessionTarget === 'main' && payload.kind !== 'systemEvent')
    fail('main cron jobs require payload.kind="systemEvent"');
  if (sessionTarget === 'isolated' && payload.kind === 'systemEvent')
    fail('isolated cron jobs require payload.kind="agentTurn" (or "command")');
  if (sessionTarget === 'main' && delivery?.mode === 'announce')
    fail('chat delivery (announce) is for isolated jobs; main jobs can use delivery.mode "webhook" or "none"');
}

export interface CreateDefaults {
  now: number;
  id?: string;
}

/** A new job from cron.add params. */
export function createJob(input: unknown, { now, id = randomUUID() }: CreateDefaults): CronJob {
  if (!input || typeof input !== 'object') fail('job must be an object');
  const raw = input as Loose;
  const payload = normalizePayload(raw.payload);
  const schedule = normalizeSchedule(raw.schedule, now);
  const sessionTarget = (raw.sessionTarget ?? (payload.kind === 'systemEvent' ? 'main' : 'isolated')) as SessionTarget;
  if (sessionTarget !== 'main' && sessionTarget !== 'isolated')
    fail(`sessionTarget must be "main" or "isolated", got ${JSON.stringify(raw.sessionTarget)}`);
  const wakeMode = (raw.wakeMode ?? 'now') as WakeMode;
  if (wakeMode !== 'now' && wakeMode !== 'next-heartbeat')
    fail(`wakeMode must be "now" or "next-heartbeat", got ${JSON.stringify(raw.wakeMode)}`);
  if (raw.enabled !== undefined && typeof raw.enabled !== 'boolean') fail('enabled must be true or false');
  if (raw.deleteAfterRun !== undefined && typeof raw.deleteAfterRun !== 'boolean')
    fail('deleteAfterRun must be true or false');
  const text =
    payload.kind === 'systemEvent' ? payload.text : payload.kind === 'agentTurn' ? payload.message : payload.command;
  const name = str(raw.name, 'name') ?? text.replace(/\s+/g, ' ').trim().slice(0, 48);
  const description = str(raw.description, 'description');
  const agentId = str(raw.agentId, 'agentId');
  // Isolated jobs announce by default (to the main session's last channel), as OpenClaw's do.
  const delivery =
    normalizeDelivery(raw.delivery) ??
    (sessionTarget === 'isolated' ? { mode: 'announce' as const, channel: 'last' } : undefined);
  const job: CronJob = {
    id,
    name,
    ...(description ? { description } : {}),
    ...(agentId ? { agentId } : {}),
    enabled: (raw.enabled as boolean | undefined) ?? true,
    createdAtMs: now,
    updatedAtMs: now,
    schedule,
    sessionTarget,
    wakeMode,
    payload,
    ...(delivery ? { delivery } : {}),
    ...(schedule.kind === 'at'
      ? { deleteAfterRun: (raw.deleteAfterRun as boolean | undefined) ?? true }
      : raw.deleteAfterRun !== undefined
        ? { deleteAfterRun: raw.deleteAfterRun as boolean }
        : {}),
    state: {},
  };
  checkCombination(job);
  return job;
}

const PATCHABLE = new Set([
  'name',
  'description',
  'agentId',
  'enabled',
  'schedule',
  'sessionTarget',
  'wakeMode',
  'payload',
  'delivery',
  'deleteAfterRun',
]);

/** The job after cron.update's patch (validated as a whole); `state` is the caller's to adjust. */
export function patchJob(job: CronJob, patch: unknown, now: number): CronJob {
  if (!patch || typeof patch !== 'object') fail('patch must be an object');
  const raw = patch as Loose;
  for (const key of Object.keys(raw))
    if (!PATCHABLE.has(key)) fail(`cannot patch "${key}" (patchable: ${[...PATCHABLE].join(', ')})`);
  const merged: Loose = { ...job, state: undefined };
  for (const [key, value] of Object.entries(raw)) {
    if (
      key === 'payload' &&
      value &&
      typeof value === 'object' &&
      ((value as Loose).kind ?? job.payload.kind) === job.payload.kind
    ) {
      merged.payload = { ...job.payload, ...(value as Loose), kind: job.payload.kind };
    } else if (key === 'delivery' && value && typeof value === 'object' && job.delivery) {
      merged.delivery = { ...job.delivery, ...(value as Loose) };
    } else {
      merged[key] = value === null ? undefined : value;
    }
  }
  const rebuilt = createJob(
    { ...merged, schedule: raw.schedule === undefined ? job.schedule : raw.schedule },
    { now, id: job.id },
  );
  return { ...rebuilt, createdAtMs: job.createdAtMs, updatedAtMs: now, state: { ...job.state } };
}
