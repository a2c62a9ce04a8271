/**
 * cron.get (one job in OpenClaw's read view: the job, its config revision and its last-run
 * fields lifted to the top) and cron.scratch.get/set, OpenClaw's per-job scratch pad. claw's
 * jobs carry no scratch pad: reading one answers OpenClaw's empty pad, writing is refused.
 */
import { createHash } from 'node:crypto';
import { defaultAgentId, normalizeAgentId } from '../../sdk/agent/index.js';
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import type { CronService } from './service.js';
import type { CronJob } from './types.js';

/** OpenClaw's cap on a scratch pad, reported so its clients size their editor alike. */
const SCRATCH_MAX_BYTES = 262_144;

const JOB_PARAMS: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1 }, jobId: { type: 'string', minLength: 1 } },
};

/** Keys sorted at every level, so the revision depends on the definition, not on key order. */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, stable((value as Record<string, unknown>)[key])]),
    );
  return value;
}

/** A hash of what the job does (not when it last ran), as OpenClaw's configRevision. */
function configRevision(job: CronJob): string {
  const { state: _state, updatedAtMs: _updated, ...definition } = job;
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(stable(definition)))
    .digest('base64url')}`;
}

export function cronJobReadView(job: CronJob, fallbackAgentId: string) {
  const state = job.state;
  return {
    ...job,
    effectiveAgentId: normalizeAgentId(job.agentId ?? fallbackAgentId),
    configRevision: configRevision(job),
    nextRunAtMs: state.nextRunAtMs ?? null,
    lastRunAtMs: state.lastRunAtMs ?? null,
    lastRunStatus: state.lastRunStatus ?? state.lastStatus ?? null,
    lastRunError: state.lastError ?? null,
    lastDelivered: state.lastDelivered ?? null,
    lastDeliveryStatus: state.lastDeliveryStatus ?? null,
    lastDeliveryError: state.lastDeliveryError ?? null,
    // claw sends no failure notifications and never suppresses a delivery.
    deliverySuppressionReason: null,
    lastFailureNotificationDelivered: null,
    lastFailureNotificationDeliveryStatus: null,
    lastFailureNotificationDeliveryError: null,
  };
}

export function registerCronJobRead(api: PluginApi, cron: () => CronService): void {
  const find = (params: { id?: string; jobId?: string }, method: string): CronJob => {
    const id = params.jobId ?? params.id;
    if (!id) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `invalid ${method} params: missing id`);
    const job = cron().get(id);
    if (!job)
      throw new ProtocolError(
        ErrorCodes.INVALID_REQUEST,
        `cron job not found: ${id}. List jobs (cron.list) and retry with a current job id.`,
        { code: 'CRON_JOB_NOT_FOUND', jobId: id },
      );
    return job;
  };

  api.registerGatewayMethod('cron.get', {
    params: JOB_PARAMS,
    scope: 'operator.read',
    description: "One job (id or jobId) in OpenClaw's read view: the job, configRevision and its last-run fields.",
    handler: (params: { id?: string; jobId?: string }) =>
      cronJobReadView(find(params, 'cron.get'), defaultAgentId(api.kernel.config())),
  });

  api.registerGatewayMethod('cron.scratch.get', {
    params: JOB_PARAMS,
    scope: 'operator.admin',
    description: "A job's scratch pad: claw's jobs keep none, so {scratch: null, currentRevision: 0}.",
    handler: (params: { id?: string; jobId?: string }) => {
      find(params, 'cron.scratch.get');
      return { scratch: null, currentRevision: 0, maxBytes: SCRATCH_MAX_BYTES };
    },
  });

  api.registerGatewayMethod('cron.scratch.set', {
    params: JOB_PARAMS,
    scope: 'operator.admin',
    description: "Write a job's scratch pad: unavailable, claw's cron jobs have no scratch pad.",
    handler: (params: { id?: string; jobId?: string }) => {
      find(params, 'cron.scratch.set');
      throw new ProtocolError(ErrorCodes.UNAVAILABLE, "claw's cron jobs have no scratch pad");
    },
  });
}
