/**
 * The model's side: `sessions_spawn` (non-blocking; returns at once with the child's key
 * and run id) and `subagents` (list, kill, steer the caller's children). Both go through
 * the kernel's tool choke point like every tool, so tool policy decides who has them.
 */
import { textResult, type ToolDefinition, type ToolResult } from '../../sdk/index.js';
import type { SubagentRunRecord } from './registry.js';
import type { SpawnParams, SubagentService } from './service.js';
import { formatDuration } from './prompt.js';

function jsonResult(value: unknown, isError = false): ToolResult {
  return { ...textResult(JSON.stringify(value, null, 2), value), ...(isError ? { isError: true } : {}) };
}

export function spawnTool(service: () => SubagentService): ToolDefinition<SpawnParams> {
  return {
    name: 'sessions_spawn',
    label: 'Spawn sub-agent',
    description:
      'Start a background sub-agent in its own session to do one task. Returns at once ({status:"accepted", childSessionKey, runId}); ' +
      'the result is announced back to this session when it ends, so do not poll. Give the task everything it needs: the child has no access to this conversation.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['task'],
      properties: {
        task: { type: 'string', minLength: 1 },
        label: { type: 'string', minLength: 1, maxLength: 80 },
        agentId: { type: 'string', minLength: 1 },
        model: { type: 'string', minLength: 1 },
        thinking: { enum: ['off', 'minimal', 'low', 'medium', 'high'] },
        runTimeoutSeconds: { type: 'integer', minimum: 0 },
        cleanup: { enum: ['delete', 'keep'] },
      },
    },
    async execute(params, ctx) {
      const outcome = await service().spawn({ agentId: ctx.agentId, sessionKey: ctx.sessionKey }, params);
      return jsonResult(outcome, outcome.status !== 'accepted');
    },
  };
}

export function describeRun(run: SubagentRunRecord, index: number, now = Date.now()): string {
  const runtime = formatDuration((run.endedAt ?? now) - (run.startedAt ?? run.createdAt));
  return `#${index + 1} ${run.label ?? run.task.slice(0, 40)} — ${run.status} (${runtime}) run ${run.runId.slice(0, 8)} ${run.childSessionKey}`;
}

type SubagentsParams = { action: 'list' | 'kill' | 'steer'; target?: string; message?: string; recentMinutes?: number };

export function subagentsTool(service: () => SubagentService): ToolDefinition<SubagentsParams> {
  return {
    name: 'subagents',
    label: 'Sub-agents',
    description:
      'Your sub-agents. action: list (running and recent) | kill (target: #n, run id, label or "all"; its own children stop too) | steer (target, message: guidance for a running child).',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['action'],
      properties: {
        action: { enum: ['list', 'kill', 'steer'] },
        target: { type: 'string', minLength: 1 },
        message: { type: 'string', minLength: 1 },
        recentMinutes: { type: 'integer', minimum: 1 },
      },
    },
    async execute(params, ctx) {
      const subagents = service();
      const requester = await subagents.listingRequester({ agentId: ctx.agentId, sessionKey: ctx.sessionKey });
      const runs = subagents.registry.forRequester(requester);
      if (params.action === 'list') {
        const since = Date.now() - (params.recentMinutes ?? 30) * 60_000;
        const shown = runs
          .map((run, index) => ({ run, index }))
          .filter(({ run }) => run.endedAt === undefined || run.endedAt >= since);
        return jsonResult({
          requesterSessionKey: requester,
          active: shown
            .filter(({ run }) => run.endedAt === undefined)
            .map(({ run, index }) => ({
              index: index + 1,
              runId: run.runId,
              label: run.label,
              childSessionKey: run.childSessionKey,
              status: run.status,
            })),
          recent: shown
            .filter(({ run }) => run.endedAt !== undefined)
            .map(({ run, index }) => ({
              index: index + 1,
              runId: run.runId,
              label: run.label,
              childSessionKey: run.childSessionKey,
              status: run.status,
            })),
        });
      }
      if (!params.target) return jsonResult({ status: 'error', error: `action "${params.action}" needs target` }, true);
      if (params.action === 'kill' && params.target === 'all') {
        let killed = 0;
        for (const run of runs) killed += (await subagents.kill(run.runId)).killed;
        return jsonResult({ status: 'ok', killed });
      }
      const run = subagents.resolveTarget(requester, params.target);
      if (!run)
        return jsonResult(
          { status: 'error', error: `no sub-agent "${params.target}" among this session's children` },
          true,
        );
      if (params.action === 'kill') return jsonResult({ status: 'ok', ...(await subagents.kill(run.runId)) });
      if (!params.message) return jsonResult({ status: 'error', error: 'action "steer" needs message' }, true);
      if (run.endedAt !== undefined)
        return jsonResult(
          { status: 'error', error: `sub-agent ${run.label ?? run.runId} already ended (${run.status})` },
          true,
        );
      const steered = await subagents.steer(run.runId, params.message);
      return jsonResult({ status: 'ok', dispatch: steered.status, runId: steered.runId });
    },
  };
}
