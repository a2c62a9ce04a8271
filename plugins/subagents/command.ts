/**
 * `/subagents list | kill <id|#|all> | log <id> [n] | info <id> | send <id> <message>` for
 * the operator, acting on the children of the session the command is typed in.
 */
import type { SessionService } from '../../sdk/agent/index.js';
import type { CommandDefinition } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import type { PluginApi } from '../../sdk/index.js';
import type { SubagentService } from './service.js';
import { describeRun } from './tools.js';
import { formatDuration } from './prompt.js';

const USAGE = 'Usage: /subagents list | kill <id|#|all> | log <id> [lines] | info <id> | send <id> <message>';

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string; name?: string }) =>
      part.type === 'text' ? part.text : part.type === 'toolCall' ? `[tool ${part.name}]` : '',
    )
    .filter(Boolean)
    .join(' ');
}

export function subagentsCommand(api: PluginApi, service: () => SubagentService): CommandDefinition {
  return {
    name: 'subagents',
    description:
      'Sub-agents of this session: /subagents list | kill <id|#|all> | log <id> | info <id> | send <id> <msg>',
    acceptsArgs: true,
    async handler({ args, sessionKey }) {
      const subagents = service();
      const [action = 'list', target, ...rest] = args.trim().split(/\s+/).filter(Boolean);
      const requester = (await subagents.requesterOf({ sessionKey })).sessionKey;
      const runs = subagents.registry.forRequester(requester);
      if (action === 'list') {
        if (runs.length === 0) return { text: 'No sub-agents in this session.' };
        const active = runs.filter((run) => run.endedAt === undefined).length;
        return {
          text: [
            `Sub-agents: ${active} running, ${runs.length - active} finished`,
            ...runs.map((run, index) => describeRun(run, index)),
          ].join('\n'),
        };
      }
      if (!['kill', 'log', 'info', 'send'].includes(action))
        return { text: `Unknown /subagents action "${action}". ${USAGE}` };
      if (!target) return { text: `/subagents ${action} needs a target (#n, run id or label). ${USAGE}` };
      if (action === 'kill' && target === 'all') {
        let killed = 0;
        for (const run of runs) killed += (await subagents.kill(run.runId)).killed;
        return {
          text: killed > 0 ? `Killed ${killed} sub-agent${killed === 1 ? '' : 's'}.` : 'No sub-agent was running.',
        };
      }
      const run = subagents.resolveTarget(requester, target);
      if (!run) return { text: `No sub-agent "${target}" in this session (/subagents list shows them).` };
      switch (action) {
        case 'kill': {
          const { killed } = await subagents.kill(run.runId);
          return {
            text:
              killed > 0
                ? `Killed ${run.label ?? run.runId}${killed > 1 ? ` and ${killed - 1} of its sub-agents` : ''}.`
                : `${run.label ?? run.runId} is not running (${run.status}).`,
          };
        }
        case 'info':
          return {
            text: [
              `Run ${run.runId}${run.label ? ` (${run.label})` : ''}`,
              `status: ${run.status}${run.error ? ` — ${run.error}` : ''}`,
              `session: ${run.childSessionKey} (agent ${run.childAgentId})`,
              `task: ${run.task}`,
              `started: ${new Date(run.startedAt ?? run.createdAt).toISOString()}${run.endedAt ? `, ran ${formatDuration(run.endedAt - (run.startedAt ?? run.createdAt))}` : ''}`,
              `cleanup: ${run.cleanup}${run.model ? `, model ${run.model}` : ''}${run.usage ? `, tokens ${run.usage.input} in / ${run.usage.output} out` : ''}`,
            ].join('\n'),
          };
        case 'log': {
          const sessions = await requireService<SessionService>(api.kernel, 'sessions', '/subagents log');
          const store = sessions.store(run.childAgentId);
          const entry = await store.get(run.childSessionKey);
          if (!entry) return { text: `The session of ${run.label ?? run.runId} is gone (cleanup or archive).` };
          const limit = Math.max(1, Number(rest[0]) || 20);
          const lines = sessions
            .transcript(store.transcriptPath(entry.sessionId))
            .messages()
            .slice(-limit)
            .map((message) => `${message.role}: ${textOf(message.content).slice(0, 500)}`);
          return { text: lines.length ? api.kernel.redact.text(lines.join('\n')) : 'The transcript is empty.' };
        }
        default: {
          const message = rest.join(' ').trim();
          if (!message) return { text: `/subagents send needs a message. ${USAGE}` };
          const sent = await subagents.steer(run.runId, message);
          return { text: `Sent to ${run.label ?? run.runId} (${sent.status}).` };
        }
      }
    },
  };
}
