/**
 * The `cron` tool: the agent manages its own reminders and scheduled work with OpenClaw's
 * actions (status, list, add, update, remove, run, runs). Tool policy decides who has it
 * (sub-agents and sandboxed sessions do not, by default).
 */
import { textResult, type ToolDefinition } from '../../sdk/index.js';
import { CronInputError, isCronInputError } from './jobs.js';
import type { CronService } from './service.js';

const ACTIONS = ['status', 'list', 'add', 'update', 'remove', 'run', 'runs'] as const;
type Params = {
  action: (typeof ACTIONS)[number];
  jobId?: string;
  id?: string;
  job?: Record<string, unknown>;
  patch?: Record<string, unknown>;
  includeDisabled?: boolean;
  mode?: 'force' | 'due';
  limit?: number;
};

export function cronTool(cron: () => CronService): ToolDefinition<Params> {
  return {
    name: 'cron',
    label: 'Cron',
    description:
      'Manage scheduled jobs and reminders. action: status | list | add (job: {name, schedule: {kind:"at",at:"20m"|ISO} | {kind:"every",everyMs} | {kind:"cron",expr,tz?}, ' +
      'sessionTarget: "main" (payload {kind:"systemEvent",text}) | "isolated" (payload {kind:"agentTurn",message}), wakeMode?, delivery?}) | update (jobId, patch) | remove (jobId) | run (jobId) | runs (jobId).',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['action'],
      properties: {
        action: { enum: [...ACTIONS] },
        jobId: { type: 'string', minLength: 1 },
        id: { type: 'string', minLength: 1 },
        job: { type: 'object' },
        patch: { type: 'object' },
        includeDisabled: { type: 'boolean' },
        mode: { enum: ['force', 'due'] },
        limit: { type: 'integer', minimum: 1, maximum: 200 },
      },
    },
    execute(params) {
      const service = cron();
      const jobId = params.jobId ?? params.id;
      const need = () => {
        if (!jobId) throw new CronInputError(`action "${params.action}" needs jobId`);
        return jobId;
      };
      try {
        const out = (() => {
          switch (params.action) {
            case 'status':
              return service.status();
            case 'list':
              return { jobs: service.list(params.includeDisabled === true) };
            case 'add':
              if (!params.job) throw new CronInputError('action "add" needs job');
              return service.add(params.job);
            case 'update':
              if (!params.patch) throw new CronInputError('action "update" needs patch');
              return service.update(need(), params.patch);
            case 'remove':
              return { ok: true, removed: service.remove(need()) };
            case 'run':
              return service.run(need(), params.mode ?? 'force');
            case 'runs':
              return { entries: service.runs(need(), params.limit ?? 20) };
          }
        })();
        return textResult(JSON.stringify(out, null, 2), out);
      } catch (error) {
        if (isCronInputError(error))
          return { content: [{ type: 'text', text: `cron: ${error.message}` }], isError: true };
        throw error;
      }
    },
  };
}
