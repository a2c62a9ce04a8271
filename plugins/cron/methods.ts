/**
 * The cron.* gateway methods, with OpenClaw's names and shapes. Reads need operator.read;
 * anything that creates, edits, removes or runs a job needs operator.admin (a job runs
 * later with the gateway's authority).
 */
import { createHash } from 'node:crypto';
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
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
}

/** Jobs in the order OpenClaw's clients ask for; a job with no next run sorts last. */
function jobOrder(by: NonNullable<CronListParams['sortBy']>, dir: 'asc' | 'desc') {
  const sign = dir === 'asc' ? 1 : -1;
  return (a: CronJob, b: CronJob): number => {
    if (by === 'name') return sign * a.name.localeCompare(b.name);
    const value = (job: CronJob) => (by === 'nextRunAtMs' ? job.state.nextRunAtMs : job.updatedAtMs) ?? (dir === 'asc' ? Infinity : -Infinity);
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
  api.registerGatewayMethod('cron.status', {
    scope: 'operator.read',
    description: 'Scheduler status: enabled, store path, job counts, next wake, running jobs, last errors.',
    params: { type: 'object', additionalProperties: false, properties: {} },
    handler: () => cron().status(),
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
      },
    },
    handler: (params: CronListParams) => {
      const query = params.query?.trim().toLowerCase();
      const wanted = params.enabled ?? (params.includeDisabled ? 'all' : 'enabled');
      const matching = cron()
        .list(true)
        .filter((job) => wanted === 'all' || job.enabled === (wanted === 'enabled'))
        .filter((job) => (!query || `${job.name ?? ''} ${job.id}`.toLowerCase().includes(query)) && (!params.agentId || job.agentId === params.agentId))
        .sort(jobOrder(params.sortBy ?? 'nextRunAtMs', params.sortDir ?? 'asc'));
      // One page of a revision OpenClaw's CLI can check: a client that sees another revision starts over.
      const offset = params.offset ?? 0;
      const limit = params.limit ?? 200;
      const jobs = matching.slice(offset, offset + limit);
      const hasMore = offset + jobs.length < matching.length;
      const snapshotRevision = createHash('sha256').update(JSON.stringify(matching.map((job) => [job.id, job.updatedAtMs]))).digest('hex').slice(0, 16);
      return { jobs, total: matching.length, offset, limit, hasMore, nextOffset: hasMore ? offset + jobs.length : null, snapshotRevision };
    },
  });
  api.registerGatewayMethod('cron.add', {
    scope: 'operator.admin',
    sideEffect: 'optional',
    description: 'Create a job: {name, schedule, sessionTarget, wakeMode, payload, delivery?, deleteAfterRun?, enabled?, agentId?}; returns the job.',
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
    handler: (params: { id?: string; jobId?: string; patch: Record<string, unknown> }) => guarded(() => cron().update(jobIdOf(params), params.patch)),
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
    handler: (params: { id?: string; jobId?: string; mode?: 'force' | 'due' }) => guarded(() => cron().run(jobIdOf(params), params.mode ?? 'force')),
  });
  api.registerGatewayMethod('cron.runs', {
    scope: 'operator.read',
    description: 'Run history of a job, newest first: {entries}.',
    params: idParams({ limit: { type: 'integer', minimum: 1, maximum: 5000 } }),
    handler: (params: { id?: string; jobId?: string; limit?: number }) => guarded(() => ({ entries: cron().runs(jobIdOf(params), params.limit ?? 50) })),
  });
}
