/**
 * The session tools (OpenClaw's group:sessions minus spawning): sessions_list,
 * sessions_history, sessions_send and session_status. Each call reads the session stores
 * fresh, decides what the calling session may reach (access.ts) and answers in OpenClaw's
 * shapes. Like every tool they run through the kernel's tool choke point, so the tool
 * policy, hooks, approvals and secret masking apply to them.
 */
import {
  definePlugin,
  errorResult,
  jsonResult,
  textResult,
  type KernelServices,
  type ToolContext,
  type ToolResult,
} from '../../sdk/index.js';
import {
  modelChain,
  newSessionEntry,
  type AgentService,
  type ModelService,
  type SessionService,
} from '../../sdk/agent/index.js';
import { requireService, useService } from '../../sdk/services.js';
import { SANDBOX_ROUTE_SERVICE, type SandboxRouter } from '../../sdk/sandbox/index.js';
import { agentOfKey, SessionAccess, snapshot, type SessionRecord } from './access.js';
import { listRow, readMessages, RESERVED_KEYS, SESSION_KINDS, shownKey, trimMessage, kindOf } from './rows.js';
import { DEFAULT_SEND_TIMEOUT_SECONDS, sendToSession, type SendDeps } from './send.js';
import { statusCard } from './status.js';
import type { A2AOutcome } from './a2a.js';

/** Rows sessions_list returns at most, and its default. */
const LIST_MAX = 200;
const LIST_DEFAULT = 100;
const MESSAGES_PER_ROW_MAX = 20;
/** sessions_history keeps the newest messages that fit in this many bytes of JSON. */
const HISTORY_MAX_BYTES = 80_000;

type Params = Record<string, unknown>;

interface Ctx {
  kernel: KernelServices;
  sessions: SessionService;
  models: ModelService;
  records: Map<string, SessionRecord>;
  access: SessionAccess;
}

export interface SessionToolsObserver {
  /** Called when an agent-to-agent flow started by sessions_send finishes (tests wait on it). */
  onFlowDone?: (outcome: A2AOutcome | { error: string }) => void;
}

const FORBIDDEN = 'forbidden: ';

/** Throws this to answer the model with an error result. */
class ToolRefusal extends Error {}

function isGlobalScope(kernel: KernelServices): boolean {
  return (kernel.config().session as { scope?: string } | undefined)?.scope === 'global';
}

/** A key, "main", "current" or a sessionId → the session record (or a refusal naming why). */
function findSession(ctx: Ctx, given: string, options: { mayCreateMain?: boolean } = {}): SessionRecord {
  const { requester } = ctx.access;
  const input = given.trim();
  let key = input;
  if (input === 'current') key = requester.sessionKey;
  else if (input === 'main') key = isGlobalScope(ctx.kernel) ? 'global' : ctx.sessions.mainKey(requester.agentId);
  if (RESERVED_KEYS.has(input) && !(input === 'global' && isGlobalScope(ctx.kernel)))
    throw new ToolRefusal(`"${input}" is a reserved key, not a session`);
  let record = ctx.records.get(key);
  if (!record && !key.startsWith('agent:')) record = ctx.records.get(`agent:${requester.agentId}:${key}`);
  if (!record) record = [...ctx.records.values()].find((candidate) => candidate.entry.sessionId === input);
  if (!record && options.mayCreateMain) {
    // A configured agent's main session may not have run yet: sending starts it.
    const agentId = agentOfKey(key, requester.agentId);
    if (ctx.sessions.knownAgents().includes(agentId) && key === ctx.sessions.mainKey(agentId))
      record = { key, agentId, entry: newSessionEntry() };
  }
  if (!record) throw new ToolRefusal(`no session "${input}" (sessions_list shows the sessions you can use)`);
  const refusal = ctx.access.refusal(record);
  if (refusal) throw new ToolRefusal(`${FORBIDDEN}${refusal}`);
  return record;
}

function findByLabel(ctx: Ctx, label: string, agentId: string | undefined): SessionRecord {
  const matches = ctx.access
    .visible()
    .filter((record) => record.entry.label === label && (!agentId || record.agentId === agentId));
  if (matches.length === 0)
    throw new ToolRefusal(`no visible session is labelled "${label}"${agentId ? ` for agent "${agentId}"` : ''}`);
  if (matches.length > 1)
    throw new ToolRefusal(
      `${matches.length} sessions are labelled "${label}" (${matches.map((m) => shownKey(m.key)).join(', ')}); give sessionKey or agentId`,
    );
  return matches[0]!;
}

export default definePlugin({
  id: 'session-tools',
  async register(api) {
    const kernel = api.kernel;
    const observer: SessionToolsObserver = {};
    api.registerService({ id: 'session-tools', api: observer });
    let services: Promise<{ sessions: SessionService; models: ModelService; router: SandboxRouter }> | undefined;
    const shared = () =>
      (services ??= (async () => ({
        sessions: await requireService<SessionService>(kernel, 'sessions', 'the session tools'),
        models: await requireService<ModelService>(kernel, 'models', 'the session tools'),
        router: await requireService<SandboxRouter>(kernel, SANDBOX_ROUTE_SERVICE, 'the session tools'),
      }))());

    const context = async (tool: ToolContext): Promise<Ctx> => {
      const { sessions, models, router } = await shared();
      const agentId = tool.agentId ?? sessions.defaultAgent();
      const records = await snapshot(sessions);
      records.delete('unknown');
      const access = new SessionAccess(
        kernel.config(),
        { agentId, sessionKey: tool.sessionKey ?? '' },
        records,
        kernel.paths.stateDir,
        router,
      );
      return { kernel, sessions, models, records, access };
    };
    const guarded =
      (run: (params: Params, ctx: Ctx, tool: ToolContext) => Promise<ToolResult>) =>
      async (params: Params, tool: ToolContext) => {
        try {
          return await run(params, await context(tool), tool);
        } catch (error) {
          if (error instanceof ToolRefusal) return errorResult(error.message);
          throw error;
        }
      };

    // `/send on|off|inherit`: this chat's own send policy (commands run only for authorized senders).
    api.registerCommand({
      name: 'send',
      description: 'Allow or block replies to this chat: /send on | off | inherit (back to session.sendPolicy)',
      acceptsArgs: true,
      async handler({ args, sessionKey }) {
        if (!sessionKey) return { text: '/send works inside a session.' };
        const { sessions } = await shared();
        const agentId = agentOfKey(sessionKey, sessions.defaultAgent());
        const store = sessions.store(agentId);
        const word = args.trim().toLowerCase();
        const wanted = { on: 'allow', allow: 'allow', off: 'deny', deny: 'deny', inherit: undefined } as const;
        if (!word) {
          const entry = await store.get(sessionKey);
          const effective = sessions.sendPolicy({ sessionKey, entry });
          return {
            text: `📤 Send policy: ${effective}${entry?.sendPolicy ? ' (set for this session)' : ' (from session.sendPolicy)'}. Use /send on | off | inherit.`,
          };
        }
        if (!(word in wanted)) return { text: `⚠️ /send takes on, off or inherit, not "${args.trim()}".` };
        const policy = wanted[word as keyof typeof wanted];
        const entry = await store.upsert(sessionKey, { sendPolicy: policy });
        (await useService<AgentService>(kernel, 'agent'))?.sessionChanged(sessionKey, entry);
        const effective = sessions.sendPolicy({ sessionKey, entry });
        return {
          text: policy
            ? `📤 Send policy for this session: ${policy}.`
            : `📤 Send policy for this session follows session.sendPolicy again (now ${effective}).`,
        };
      },
    });

    api.registerTool({
      name: 'sessions_list',
      label: 'Sessions',
      description:
        'List the sessions you can see (this agent, what you spawned, other agents when allowed), newest first: key, kind, channel, model, token counts and, with messageLimit, their last messages (tool results left out).',
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          kinds: {
            type: 'array',
            items: { enum: [...SESSION_KINDS] },
            uniqueItems: true,
            description: 'Only these kinds: main, group, cron, hook, node, other',
          },
          limit: {
            type: 'integer',
            minimum: 1,
            description: `Most rows (default ${LIST_DEFAULT}, at most ${LIST_MAX})`,
          },
          activeMinutes: {
            type: 'number',
            exclusiveMinimum: 0,
            description: 'Only sessions updated within this many minutes',
          },
          messageLimit: {
            type: 'integer',
            minimum: 0,
            description: `Include the last N messages of each session (default 0: none; at most ${MESSAGES_PER_ROW_MAX})`,
          },
        },
      },
      execute: guarded(async (params, ctx) => {
        const kinds = params.kinds as string[] | undefined;
        const limit = Math.min((params.limit as number | undefined) ?? LIST_DEFAULT, LIST_MAX);
        const cutoff =
          params.activeMinutes === undefined
            ? undefined
            : ctx.sessions.now() - (params.activeMinutes as number) * 60_000;
        const messageLimit = Math.min((params.messageLimit as number | undefined) ?? 0, MESSAGES_PER_ROW_MAX);
        const rows = ctx.access
          .visible()
          .filter((record) => !kinds?.length || kinds.includes(kindOf(record.key)))
          .filter((record) => cutoff === undefined || record.entry.updatedAt >= cutoff)
          .sort((a, b) => b.entry.updatedAt - a.entry.updatedAt)
          .slice(0, limit)
          .map((record) => {
            if (messageLimit === 0) return listRow(ctx.sessions, record);
            const messages = readMessages(ctx.sessions, record).filter((message) => message.role !== 'toolResult');
            return listRow(ctx.sessions, record, messages.slice(-messageLimit).map(trimMessage));
          });
        return jsonResult({ count: rows.length, sessions: rows });
      }),
    });

    api.registerTool({
      name: 'sessions_history',
      label: 'Session history',
      description:
        'Read the messages of one session you can see (a key from sessions_list, "main", "current" or a sessionId), oldest first. Tool results are left out unless includeTools is true.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        required: ['sessionKey'],
        properties: {
          sessionKey: { type: 'string', minLength: 1, description: 'Session key or sessionId' },
          limit: { type: 'integer', minimum: 1, description: 'Only the last N messages' },
          includeTools: { type: 'boolean', description: 'Include tool results (default false)' },
        },
      },
      execute: guarded(async (params, ctx) => {
        const record = findSession(ctx, params.sessionKey as string);
        let messages = readMessages(ctx.sessions, record).filter(
          (message) => params.includeTools === true || message.role !== 'toolResult',
        );
        if (params.limit !== undefined) messages = messages.slice(-(params.limit as number));
        messages = messages.map(trimMessage);
        let dropped = 0;
        while (messages.length > 1 && Buffer.byteLength(JSON.stringify(messages)) > HISTORY_MAX_BYTES) {
          messages = messages.slice(1);
          dropped++;
        }
        return jsonResult({
          sessionKey: shownKey(record.key),
          sessionId: record.entry.sessionId,
          count: messages.length,
          messages,
          ...(dropped ? { truncated: true, droppedMessages: dropped } : {}),
        });
      }),
    });

    api.registerTool({
      name: 'sessions_send',
      label: 'Send to session',
      description:
        'Send a message to another session (by sessionKey, or by label) and, unless timeoutSeconds is 0, wait for its reply. ' +
        `The other agent may answer back and forth with you afterwards (reply exactly REPLY_SKIP to stop) and may post a summary to its own chat. Default wait ${DEFAULT_SEND_TIMEOUT_SECONDS}s.`,
      parameters: {
        type: 'object',
        additionalProperties: false,
        required: ['message'],
        properties: {
          sessionKey: { type: 'string', minLength: 1, description: 'Session key or sessionId of the target' },
          label: { type: 'string', minLength: 1, description: 'Target the session with this label instead' },
          agentId: { type: 'string', minLength: 1, description: 'With label: the agent the session belongs to' },
          message: { type: 'string', minLength: 1, maxLength: 100_000 },
          timeoutSeconds: {
            type: 'integer',
            minimum: 0,
            maximum: 3600,
            description: `Seconds to wait for the reply (default ${DEFAULT_SEND_TIMEOUT_SECONDS}; 0: send and return at once)`,
          },
        },
      },
      execute: guarded(async (params, ctx) => {
        if (!params.sessionKey && !params.label) throw new ToolRefusal('sessions_send needs sessionKey or label');
        if (params.sessionKey && params.label) throw new ToolRefusal('give sessionKey or label, not both');
        let target: SessionRecord;
        try {
          target = params.sessionKey
            ? findSession(ctx, params.sessionKey as string, { mayCreateMain: true })
            : findByLabel(ctx, params.label as string, params.agentId as string | undefined);
        } catch (error) {
          if (!(error instanceof ToolRefusal)) throw error;
          // OpenClaw's shape: a refused target is status "forbidden", an unknown one "error".
          const forbidden = error.message.startsWith(FORBIDDEN);
          const result = {
            status: forbidden ? 'forbidden' : 'error',
            sessionKey: (params.sessionKey as string | undefined) ?? null,
            error: forbidden ? error.message.slice(FORBIDDEN.length) : error.message,
          };
          return { ...jsonResult(result), isError: true };
        }
        const agent = await requireService<AgentService>(kernel, 'agent', 'sessions_send');
        const deps: SendDeps = {
          kernel,
          agent,
          sessions: ctx.sessions,
          entryOf: (record) => ctx.sessions.store(record.agentId).get(record.key),
          onFlowDone: (outcome) => {
            if ('error' in outcome)
              api.logger.warn(
                `agent-to-agent flow ${ctx.access.requester.sessionKey} → ${target.key} failed: ${outcome.error}`,
              );
            else
              api.logger.debug(
                `agent-to-agent flow ${ctx.access.requester.sessionKey} → ${target.key}: ${outcome.turns} reply turn(s), ended by ${outcome.endedBy}, ${outcome.announced ? 'announced' : `no announce (${outcome.announceSkipped})`}`,
              );
            observer.onFlowDone?.(outcome);
          },
        };
        const requesterEntry = ctx.records.get(ctx.access.requester.sessionKey)?.entry;
        const result = await sendToSession(deps, ctx.access, {
          target,
          message: params.message as string,
          timeoutSeconds: (params.timeoutSeconds as number | undefined) ?? DEFAULT_SEND_TIMEOUT_SECONDS,
          requesterChannel: requesterEntry?.deliveryContext?.channel ?? requesterEntry?.lastChannel,
        });
        return result.status === 'forbidden' || result.status === 'error'
          ? { ...jsonResult(result), isError: true }
          : jsonResult(result);
      }),
    });

    api.registerTool({
      name: 'session_status',
      label: 'Session status',
      description:
        'Show the status of this session (or another you can see): model, tokens, context use, last activity and the current time. With model, set this session\'s model ("default" goes back to the agent\'s model).',
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          sessionKey: { type: 'string', minLength: 1, description: 'Session key or sessionId (default: this session)' },
          model: {
            type: 'string',
            minLength: 1,
            description:
              'Model to use in that session from now on, e.g. openai/gpt-4.1 or an alias; "default" clears the override',
          },
        },
      },
      execute: guarded(async (params, ctx) => {
        let record = findSession(ctx, (params.sessionKey as string | undefined) ?? 'current');
        const settings = ctx.models.settings(record.agentId);
        const agent = await useService<AgentService>(kernel, 'agent');
        let changed: string | undefined;
        if (params.model !== undefined) {
          const wanted = (params.model as string).trim();
          let model: string | undefined;
          if (wanted.toLowerCase() !== 'default') {
            model = await ctx.models.models.resolve(wanted, settings);
            if (!model)
              throw new ToolRefusal(
                `unknown model "${wanted}" (known models are the configured ones and their aliases)`,
              );
          }
          const entry = await ctx.sessions
            .store(record.agentId)
            .upsert(record.key, { model, updatedAt: record.entry.updatedAt });
          agent?.sessionChanged(record.key, entry);
          record = { ...record, entry };
          changed = model ?? 'default';
        }
        const card = statusCard({
          record,
          model: record.entry.model ?? modelChain(settings.model)[0] ?? record.entry.lastModel ?? 'unknown',
          active: agent?.isActive(record.key) ?? false,
          now: Date.now(),
          timezone: settings.userTimezone,
        });
        const text = changed ? `Model set to ${changed} for ${shownKey(record.key)}.\n${card.text}` : card.text;
        return textResult(text, { ...card.details, ...(changed ? { changedModel: changed } : {}) });
      }),
    });
  },
});
