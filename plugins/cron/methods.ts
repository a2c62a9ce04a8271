/**
 * The cron.* gateway methods, with OpenClaw's names and shapes. Reads need operator.read;
 * anything that creates, edits, removes or runs a job needs operator.admin (a job runs
 * later with the gateway's authority).
 */
import { createHash } from 'node:crypto';
import { ErrorCodes, normalizeAgentId, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { defaultAgentId } from '../../sdk/agent/index.js';
import { isCronInputError } from './jobs.js';
import type { CronService } from './service.js';
import type { CronJob } from './types.js';

interface CronListParams {
  includeDisabled?: boolean;
  limit?: number;
  offset?: number;
  query?: string;
  agentId?: string;
  enabled?: 'all' | 'enabled' | 'disabled';
  sortBy?: 'nextRunAtMs' | 'updatedAtMs' | 'name';
  sortDir?: 'asc' | 'desc';
  scheduleKind?: 'all' | 'at' | 'every' | 'cron' | 'on-exit' | 'stream';
  lastRunStatus?: 'all' | 'ok' | 'error' | 'skipped' | 'unknown';
  trigger?: 'all' | 'conditional' | 'unconditional';
}

interface CronRunsParams {
  id?: string;
  jobId?: string;
  agentId?: string;
  scope?: 'job' | 'all';
  runId?: string;
  limit?: number;
  offset?: number;
  statuses?: string[];
  status?: 'all' | 'ok' | 'error' | 'skipped';
  deliveryStatuses?: string[];
  deliveryStatus?: string;
  query?: string;
  sortDir?: 'asc' | 'desc';
}

const RUN_STATUS = { enum: ['ok', 'error', 'skipped'] } as const;
const DELIVERY_STATUS = { enum: ['delivered', 'not-delivered', 'unknown', 'not-requested'] } as const;

/** One page of a list, as OpenClaw's clients page through jobs and runs. */
function page<T>(items: T[], offset = 0, limit = 50) {
  const slice = items.slice(offset, offset + limit);
  const hasMore = offset + slice.length < items.length;
  return { slice, total: items.length, offset, limit, hasMore, nextOffset: hasMore ? offset + slice.length : null };
}

/** Jobs in the order OpenClaw's clients ask for; a job with no next run sorts last. */
function jobOrder(by: NonNullable<CronListParams['sortBy']>, dir: 'asc' | 'desc') {
  const sign = dir === 'asc' ? 1 : -1;
  return (a: CronJob, b: CronJob): number => {
    if (by === 'name') return sign * a.name.localeCompare(b.name);
    const value = (job: CronJob) =>
      (by === 'nextRunAtMs' ? job.state.nextRunAtMs : job.updatedAtMs) ?? (dir === 'asc' ? Infinity : -Infinity);
    return sign * (value(a) - value(b)) || a.id.localeCompare(b.id);
  };
}

const ID: JsonSchema = { type: 'string', minLength: 1, maxLength: 200 };
const idParams = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties: { id: ID, jobId: ID, idempotencyKey: { type: 'string' }, ...extra },
});

/** `id` or `jobId` (OpenClaw accepts both). */
function jobIdOf(params: { id?: string; jobId?: string }): string {
  const id = params.jobId ?? params.id;
  if (!id) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'jobId is required');
  return id;
}

/** Input errors become INVALID_REQUEST with the message that names the field. */
export function guarded<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (isCronInputError(error)) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message);
    throw error;
  }
}

export function registerCronMethods(api: PluginApi, cron: () => CronService): void {
  // A job without agentId runs as the default agent: an agent filter must count it there.
  const agentOf = (job: CronJob | undefined): string | undefined =>
    job ? normalizeAgentId(job.agentId ?? defaultAgentId(api.kernel.config())) : undefined;
  const sameAgent = (job: CronJob | undefined, wanted: string | undefined) =>
    !wanted || agentOf(job) === normalizeAgentId(wanted);
  api.registerGatewayMethod('cron.status', {
    scope: 'operator.read',
    description: 'Scheduler status: enabled, store path, job counts, next wake, running jobs, last errors.',
    params: { type: 'object', additionalProperties: false, properties: {} },
    // claw keeps jobs in a JSON file, not OpenClaw's SQLite store; every job triggers while cron is on.
    handler: async () => {
      const status = await cron().status();
      return { ...status, triggersEnabled: status.enabled, storage: 'file', sqlitePath: null };
    },
  });
  api.registerGatewayMethod('cron.list', {
    scope: 'operator.read',
    description: 'Jobs, soonest first: {jobs}. Disabled ones with includeDisabled.',
    params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        includeDisabled: { type: 'boolean' },
        // OpenClaw's clients page and filter.
        limit: { type: 'integer', minimum: 1, maximum: 200 },
        offset: { type: 'integer', minimum: 0 },
        query: { type: 'string', maxLength: 500 },
        agentId: { type: 'string', minLength: 1 },
        enabled: { enum: ['all', 'enabled', 'disabled'] },
        sortBy: { enum: ['nextRunAtMs', 'updatedAtMs', 'name'] },
        sortDir: { enum: ['asc', 'desc'] },
        // Presentation hints of OpenClaw's Control UI: claw's job rows are already compact and carry no delivery previews.
        compact: { type: 'boolean' },
        includeDeliveryPreviews: { type: 'boolean' },
        // OpenClaw's filters. claw has no on-exit, stream or conditional (scripted-trigger) jobs:
        // those filters match nothing, "unconditional" matches every job.
        scheduleKind: { enum: ['all', 'at', 'every', 'cron', 'on-exit', 'stream'] },
        lastRunStatus: { enum: ['all', 'ok', 'error', 'skipped', 'unknown'] },
        trigger: { enum: ['all', 'conditional', 'unconditional'] },
      },
    },
    handler: (params: CronListParams) => {
      const query = params.query?.trim().toLowerCase();
      const wanted = params.enabled ?? (params.includeDisabled ? 'all' : 'enabled');
      const matching = cron()
        .list(true)
        .filter((job) => wanted === 'all' || job.enabled === (wanted === 'enabled'))
        .filter(
          (job) =>
            (!query || `${job.name ?? ''} ${job.id}`.toLowerCase().includes(query)) && sameAgent(job, params.agentId),
        )
        .filter(
          (job) => !params.scheduleKind || params.scheduleKind === 'all' || job.schedule.kind === params.scheduleKind,
        )
        .filter((job) => {
          const last = params.lastRunStatus;
          if (!last || last === 'all') return true;
          const status = job.state.lastRunStatus ?? job.state.lastStatus;
          return last === 'unknown' ? status === undefined : status === last;
        })
        .filter(() => params.trigger !== 'conditional')
        .sort(jobOrder(params.sortBy ?? 'nextRunAtMs', params.sortDir ?? 'asc'));
      // One page of a revision OpenClaw's CLI can check: a client that sees another revision starts over.
      const offset = params.offset ?? 0;
      const limit = params.limit ?? 200;
      const jobs = matching.slice(offset, offset + limit);
      const hasMore = offset + jobs.length < matching.length;
      const snapshotRevision = createHash('sha256')
        .update(JSON.stringify(matching.map((job) => [job.id, job.updatedAtMs])))
        .digest('hex')
        .slice(0, 16);
      const fallbackAgent = defaultAgentId(api.kernel.config());
      return {
        // OpenClaw's row extras: claw declares no jobs in config, so there is no declaration key or revision.
        jobs: jobs.map((job) => ({
          ...job,
          declarationKey: null,
          displayName: job.name ?? job.id,
          agentId: job.agentId ?? null,
          configRevision: null,
          nextRunAtMs: job.state.nextRunAtMs ?? null,
          effectiveAgentId: job.agentId ?? fallbackAgent,
        })),
        deliveryPreviews: Object.fromEntries(jobs.map((job) => [job.id, deliveryPreview(job)])),
        total: matching.length,
        offset,
        limit,
        hasMore,
        nextOffset: hasMore ? offset + jobs.length : null,
        snapshotRevision,
      };
    },
  });
  api.registerGatewayMethod('cron.add', {
    scope: 'operator.admin',
    sideEffect: 'optional',
    description:
      'Create a job: {name, schedule, sessionTarget, wakeMode, payload, delivery?, deleteAfterRun?, enabled?, agentId?}; returns the job.',
    params: { type: 'object', properties: { idempotencyKey: { type: 'string' } } },
    handler: (params: Record<string, unknown>) => {
      const { idempotencyKey: _key, job, ...rest } = params;
      return guarded(() => cron().add(job && typeof job === 'object' ? job : rest));
    },
  });
  api.registerGatewayMethod('cron.update', {
    scope: 'operator.admin',
    sideEffect: 'optional',
    description: 'Edit a job: {jobId, patch}; returns the job.',
    params: { ...idParams({ patch: { type: 'object' } }), required: ['patch'] },
    handler: (params: { id?: string; jobId?: string; patch: Record<string, unknown> }) =>
      guarded(() => cron().update(jobIdOf(params), params.patch)),
  });
  api.registerGatewayMethod('cron.remove', {
    scope: 'operator.admin',
    sideEffect: 'optional',
    description: 'Delete a job (its run history stays): {ok, removed}.',
    params: idParams(),
    handler: (params: { id?: string; jobId?: string }) => ({ ok: true, removed: cron().remove(jobIdOf(params)) }),
  });
  api.registerGatewayMethod('cron.run', {
    scope: 'operator.admin',
    sideEffect: 'optional',
    description: 'Run a job now (mode "force", the default) or only if due ("due"): {ok, ran, reason?, runId?}.',
    params: idParams({ mode: { enum: ['force', 'due'] } }),
    handler: (params: { id?: string; jobId?: string; mode?: 'force' | 'due' }) =>
      guarded(() => cron().run(jobIdOf(params), params.mode ?? 'force')),
  });
  api.registerGatewayMethod('cron.runs', {
    scope: 'operator.read',
    description:
      'Run history, newest first: {entries, total, offset, limit, hasMore, nextOffset}. One job (id/jobId), or every job with scope "all" (removed jobs included); filters by agent, run, status, delivery and text.',
    params: idParams({
      agentId: { type: 'string', minLength: 1 },
      scope: { enum: ['job', 'all'] },
      runId: { type: 'string', minLength: 1 },
      limit: { type: 'integer', minimum: 1, maximum: 5000 },
      offset: { type: 'integer', minimum: 0 },
      statuses: { type: 'array', items: RUN_STATUS, minItems: 1, maxItems: 3 },
      status: { enum: ['all', 'ok', 'error', 'skipped'] },
      deliveryStatuses: { type: 'array', items: DELIVERY_STATUS, minItems: 1, maxItems: 4 },
      deliveryStatus: DELIVERY_STATUS,
      query: { type: 'string', maxLength: 500 },
      sortDir: { enum: ['asc', 'desc'] },
    }),
    handler: (params: CronRunsParams) =>
      guarded(() => {
        const all = params.scope === 'all' && !params.id && !params.jobId;
        const service = cron();
        let entries = all ? service.allRuns() : service.runs(jobIdOf(params), Number.POSITIVE_INFINITY);
        const jobs = new Map(service.list(true).map((job) => [job.id, job]));
        const statuses = new Set(params.statuses ?? (params.status && params.status !== 'all' ? [params.status] : []));
        const deliveries = new Set(params.deliveryStatuses ?? (params.deliveryStatus ? [params.deliveryStatus] : []));
        const query = params.query?.trim().toLowerCase();
        entries = entries.filter(
          (entry) =>
            sameAgent(jobs.get(entry.jobId), params.agentId) &&
            (!params.runId || entry.runId === params.runId) &&
            (statuses.size === 0 || statuses.has(entry.status)) &&
            (deliveries.size === 0 || deliveries.has(entry.deliveryStatus ?? 'unknown')) &&
            (!query ||
              `${jobs.get(entry.jobId)?.name ?? ''} ${entry.jobId} ${entry.summary ?? ''} ${entry.error ?? ''}`
                .toLowerCase()
                .includes(query)),
        );
        if (params.sortDir === 'asc') entries.reverse();
        const { slice, ...paging } = page(entries, params.offset, params.limit);
        return { entries: slice, ...paging };
      }),
  });
}

/** Where a job's output goes, in words (OpenClaw's cron.list deliveryPreviews). */
function deliveryPreview(job: CronJob): { label: string; detail: string } {
  const delivery = job.delivery;
  if (!delivery || delivery.mode === 'none') return { label: 'none', detail: 'output stays in the run session' };
  const target = delivery.channel ?? 'last';
  return {
    label: `${delivery.mode} -> ${target}`,
    detail: delivery.to ? `${target} -> ${delivery.to}` : `${target} (the main session's last route)`,
  };
}
