/**
 * The agent loop's gateway methods: `agent` (two-phase), `agent.wait`, `chat.*` for chat
 * UIs, `sessions.*` and `models.list`. Every run goes through AgentRuntime.dispatch, the
 * same door channels and the HTTP endpoint use.
 */
import { join } from 'node:path';
import {
  type GatewayMethodContext,
  type JsonSchema,
  type PluginApi,
  type ThinkingLevel,
  ProtocolError,
  ErrorCodes,
  decodeImageAttachments,
  imageAttachmentsSchema,
  type AttachmentParam,
  acceptMediaAttachments,
} from '../../sdk/index.js';
import {
  IntakeClosedError,
  isSilentReplyText,
  unknownAgentProblem,
  parseSessionKey,
  DEFAULT_ACK_MAX_CHARS,
} from '../../sdk/agent/index.js';
import type { TranscriptEntry } from '../../sdk/sessions/index.js';
import { inputReceipts } from './input-receipts.js';
import { normalizeQueueMode } from './queue-settings.js';
import type { AgentRuntime, DeliveryTarget, DispatchInput, RunResult } from './runtime.js';
import { ackMaxCharsFor, withoutHeartbeatNoise } from './history-filter.js';
import { commandList } from './commands.js';

export const AGENT_WAIT_DEFAULT_MS = 30_000;
const HISTORY_DEFAULT_LIMIT = 200;
const HISTORY_MAX_LIMIT = 1000;

const THINKING: JsonSchema = { enum: ['off', 'minimal', 'low', 'medium', 'high'] };
const KEY: JsonSchema = { type: 'string', minLength: 1, maxLength: 512 };
const MESSAGE: JsonSchema = { type: 'string', maxLength: 1_000_000 };
const ATTACHMENTS = imageAttachmentsSchema(16);
const MEDIA_ATTACHMENTS = imageAttachmentsSchema(16, { audio: true });

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

/** Images from `attachments` (base64 or data: URLs). */
export function imagesFrom(attachments: AttachmentParam[] | undefined): DispatchInput['images'] {
  if (!attachments?.length) return undefined;
  return decodeImageAttachments(attachments).map(({ data, mimeType }) => ({ type: 'image' as const, data, mimeType }));
}

/** Dispatch; a gateway that is shutting down answers UNAVAILABLE (retryable), nothing is half-accepted. */
export async function admit(runtime: AgentRuntime, input: DispatchInput, runId?: string) {
  // session.sendPolicy guards the operator's way in too (OpenClaw enforces it at chat.send and agent).
  const { agentId, sessionKey } = runtime.resolveTarget(input);
  if (runtime.sessions.sendPolicy({ sessionKey, entry: await runtime.store(agentId).get(sessionKey) }) === 'deny') {
    throw new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      `send blocked by session policy: ${sessionKey} (session.sendPolicy, or the session's sendPolicy set with sessions.patch)`,
    );
  }
  try {
    return await runtime.dispatch(input, { runId });
  } catch (error) {
    if (error instanceof IntakeClosedError)
      throw new ProtocolError(ErrorCodes.UNAVAILABLE, error.message, undefined, true, 2000);
    throw error;
  }
}

/** What `agent` and `agent.wait` report about a finished run. */
function runSummary(result: RunResult) {
  return {
    runId: result.runId,
    status: result.status,
    summary: result.error ?? result.text,
    sessionKey: result.sessionKey,
    startedAt: result.startedAt,
    endedAt: result.endedAt,
    ...(result.error ? { error: result.error } : {}),
    result: {
      text: result.text,
      payloads: result.payloads.map((payload) => ({
        text: payload.text,
        media: payload.media,
        ...(payload.replyTo ? { replyTo: payload.replyTo } : {}),
      })),
      sessionId: result.sessionId,
      provider: result.provider,
      model: result.model,
      usage: result.usage,
      durationMs: result.endedAt - result.startedAt,
    },
  };
}

/** A run that finished in a process that stopped before it could say so: its status, and where its answer is. */
function finishedSummary(runId: string, status: string) {
  return {
    runId,
    status,
    summary: 'finished before the gateway restarted; the answer is in the session transcript (chat.history)',
    recovered: true,
  };
}

/** Deliver to a channel, when the caller asked for delivery (through the outbound path: no transport of its own). */
async function channelTarget(
  api: PluginApi,
  params: { deliver?: boolean; channel?: string; to?: string; accountId?: string },
): Promise<DeliveryTarget | undefined> {
  if (!params.deliver) return undefined;
  if (!params.channel || !params.to) throw invalid('deliver needs channel and to');
  const channel = await api.kernel.capabilities.find('channel', params.channel).catch(() => undefined);
  if (!channel) throw invalid(`channel "${params.channel}" is not available (is its plugin enabled?)`);
  return {
    channel: params.channel,
    to: params.to,
    accountId: params.accountId,
  };
}

export function registerAgentMethods(api: PluginApi, runtime: AgentRuntime): void {
  const method = api.registerGatewayMethod.bind(api);
  const events = api.kernel.protocol;
  events.registerEvent('agent', api.id, {
    scope: 'operator.read',
    description: '{runId, seq, stream: lifecycle|assistant|tool|compaction, ts, data} for every run.',
  });
  events.registerEvent('chat', api.id, {
    scope: 'operator.read',
    description: '{runId, sessionKey, seq, state: delta|final|aborted|error, message} for chat UIs.',
  });

  method('agent', {
    scope: 'operator.write',
    sideEffect: true,
    description: 'Run the agent: first res {runId, status:"accepted", acceptedAt}, final res when the run ends.',
    params: {
      type: 'object',
      required: ['message'],
      additionalProperties: false,
      properties: {
        message: MESSAGE,
        agentId: KEY,
        sessionKey: KEY,
        thinking: THINKING,
        model: { type: 'string', minLength: 1 },
        extraSystemPrompt: { type: 'string', maxLength: 100_000 },
        timeout: {
          type: 'number',
          exclusiveMinimum: 0,
          description: 'seconds (default agents.defaults.timeoutSeconds)',
        },
        attachments: ATTACHMENTS,
        deliver: { type: 'boolean' },
        channel: { type: 'string', minLength: 1 },
        to: { type: 'string', minLength: 1 },
        accountId: { type: 'string' },
        queueMode: { type: 'string' },
      },
    },
    handler: async (
      params: {
        message: string;
        agentId?: string;
        sessionKey?: string;
        thinking?: ThinkingLevel;
        model?: string;
        extraSystemPrompt?: string;
        timeout?: number;
        attachments?: AttachmentParam[];
        deliver?: boolean;
        channel?: string;
        to?: string;
        accountId?: string;
        queueMode?: string;
      },
      ctx: GatewayMethodContext,
    ) => {
      if (params.queueMode && !normalizeQueueMode(params.queueMode))
        throw invalid(`queueMode must be steer, followup, collect, steer-backlog or interrupt`);
      const agentProblem =
        params.agentId === undefined ? undefined : unknownAgentProblem(api.kernel.config(), params.agentId);
      if (agentProblem) throw invalid(agentProblem);
      const handle = await admit(
        runtime,
        {
          agentId: params.agentId,
          sessionKey: params.sessionKey,
          message: params.message,
          images: imagesFrom(params.attachments),
          thinking: params.thinking,
          model: params.model,
          extraSystemPrompt: params.extraSystemPrompt,
          timeoutMs: params.timeout ? params.timeout * 1000 : undefined,
          deliver: await channelTarget(api, params),
          channel: params.deliver ? params.channel : undefined,
          queueMode: params.queueMode,
          authorized: true,
          ...(ctx.idempotencyKey ? { requestKey: `agent:${ctx.idempotencyKey}` } : {}),
        },
        ctx.idempotencyKey,
      );
      ctx.ack?.({
        runId: handle.runId,
        status: 'accepted',
        acceptedAt: handle.acceptedAt,
        ...(handle.status !== 'started' ? { disposition: handle.status } : {}),
      });
      return runSummary(await handle.done);
    },
    // A retry after a restart: the acceptance again and then the result, the result, or "never accepted".
    recover: async (_params, ctx) => {
      const state = await runtime.request(`agent:${ctx.idempotencyKey}`);
      if (state.state === 'unknown') return { state: 'not-accepted' };
      if (state.state === 'finished') return { state: 'done', payload: finishedSummary(state.runId, state.status) };
      return {
        state: 'pending',
        acks: [{ runId: state.runId, status: 'accepted', acceptedAt: state.acceptedAt, recovered: true }],
        result: state.done.then(runSummary),
      };
    },
  });

  method('agent.wait', {
    scope: 'operator.write',
    description: 'Wait for a run to end (default 30 s; waiting never stops the run).',
    params: {
      type: 'object',
      required: ['runId'],
      additionalProperties: false,
      properties: { runId: KEY, timeoutMs: { type: 'integer', minimum: 0, maximum: 86_400_000 } },
    },
    handler: async (params: { runId: string; timeoutMs?: number }) => {
      const record = runtime.run(params.runId);
      if (!record)
        throw invalid(`unknown runId "${params.runId}" (finished runs are remembered for a while, not forever)`);
      const timeoutMs = params.timeoutMs ?? AGENT_WAIT_DEFAULT_MS;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      try {
        const outcome = await Promise.race([record.done, timeout]);
        if (outcome === 'timeout')
          return {
            runId: params.runId,
            status: 'timeout',
            ...(record.startedAt ? { startedAt: record.startedAt } : {}),
          };
        return runSummary(outcome);
      } catch (error) {
        return { runId: params.runId, status: 'error', error: (error as Error).message ?? String(error) };
      } finally {
        clearTimeout(timer);
      }
    },
  });

  method('chat.send', {
    scope: 'operator.write',
    sideEffect: true,
    description: 'Send a chat message; the answer streams as chat events. Returns {runId, status} at once.',
    params: {
      type: 'object',
      required: ['sessionKey', 'message'],
      additionalProperties: false,
      properties: {
        sessionKey: KEY,
        message: MESSAGE,
        thinking: THINKING,
        attachments: MEDIA_ATTACHMENTS,
        timeoutMs: { type: 'integer', minimum: 1 },
        queueMode: { type: 'string' },
        // OpenClaw's clients send deliver:false; the reply of a chat.send stays in the chat.
        deliver: { type: 'boolean' },
        // The session the client is showing: refused when the session has been reset since.
        sessionId: KEY,
        // The last transcript entry the client showed (chat.history's sessionInfo.activeLeafEntryId).
        expectedLeafEntryId: { type: ['string', 'null'], maxLength: 200 },
      },
    },
    handler: async (
      params: {
        sessionKey: string;
        message: string;
        thinking?: ThinkingLevel;
        attachments?: AttachmentParam[];
        timeoutMs?: number;
        queueMode?: string;
        deliver?: boolean;
        sessionId?: string;
        expectedLeafEntryId?: string | null;
      },
      ctx: GatewayMethodContext,
    ) => {
      if (params.deliver)
        throw invalid(
          'chat.send does not deliver the reply to a channel; use the agent method with deliver:true for that',
        );
      if (params.sessionId) {
        const { agentId, sessionKey } = runtime.resolveTarget({ sessionKey: params.sessionKey });
        const current = (await runtime.store(agentId).get(sessionKey))?.sessionId;
        if (current !== params.sessionId)
          throw invalid(
            `session ${sessionKey} is now ${current ?? 'empty'}, not ${params.sessionId} (it was reset); reload it and send again`,
          );
      }
      if (params.queueMode && !normalizeQueueMode(params.queueMode))
        throw invalid(`queueMode must be steer, followup, collect, steer-backlog or interrupt`);
      if (params.expectedLeafEntryId !== undefined && params.queueMode !== 'steer')
        await expectLeaf(runtime, params.sessionKey, params.expectedLeafEntryId, params.sessionId !== undefined);
      // A voice note is saved under <stateDir>/media/webchat/ for the media step to transcribe.
      const media = acceptMediaAttachments(params.attachments, join(api.kernel.paths.stateDir, 'media', 'webchat'));
      const handle = await admit(
        runtime,
        {
          sessionKey: params.sessionKey,
          message: params.message,
          images: media.images.length
            ? media.images.map(({ data, mimeType }) => ({ type: 'image' as const, data, mimeType }))
            : undefined,
          ...(media.files.length ? { attachments: media.files } : {}),
          thinking: params.thinking,
          timeoutMs: params.timeoutMs,
          queueMode: params.queueMode,
          authorized: true,
          ...(ctx.idempotencyKey ? { requestKey: `chat.send:${ctx.idempotencyKey}` } : {}),
        },
        // OpenClaw runs a chat.send under its idempotencyKey: the Control UI asks chat.history
        // for receipts of its sends by that id and holds its next message until one arrives.
        ctx.idempotencyKey,
      );
      // Failures surface as chat error events; nobody awaits this promise.
      handle.done.catch(() => {});
      return { runId: handle.runId, status: handle.status, acceptedAt: handle.acceptedAt };
    },
    // chat.send's answer is the acceptance: a journaled message was accepted (it resumes, or it finished).
    recover: async (_params, ctx) => {
      const state = await runtime.request(`chat.send:${ctx.idempotencyKey}`);
      if (state.state === 'unknown') return { state: 'not-accepted' };
      if (state.state === 'finished')
        return {
          state: 'done',
          payload: { runId: state.runId, status: 'finished', finalStatus: state.status, recovered: true },
        };
      return {
        state: 'done',
        payload: { runId: state.runId, status: 'queued', acceptedAt: state.acceptedAt, recovered: true },
      };
    },
  });

  const history = async (params: { sessionKey: string; limit?: number; maxBytes?: number; inputRunIds?: string[] }) => {
    const { agentId, sessionKey } = runtime.resolveTarget({ sessionKey: params.sessionKey });
    const entry = await runtime.store(agentId).get(sessionKey);
    const settings = runtime.settings(agentId);
    const modelRef = runtime.models.chain(settings)[0];
    const slash = modelRef?.indexOf('/') ?? -1;
    // OpenClaw's page frame: the model new turns use, no pending inputs (claw queues none a
    // client could see) and no delta cursor (claw always answers whole pages).
    const frame = {
      pendingInputs: { items: [], total: 0 },
      deltaCursor: null,
      defaults: {
        modelProvider: modelRef && slash > 0 ? modelRef.slice(0, slash) : null,
        model: modelRef && slash > 0 ? modelRef.slice(slash + 1) : (modelRef ?? null),
        ...runtime.sessions.openclawListDefaults(null, settings.thinkingDefault),
      },
    };
    const receiptsFrom = (entries: readonly TranscriptEntry[]) =>
      params.inputRunIds ? inputReceipts(params.inputRunIds, (runId) => runtime.run(runId), entries) : {};
    if (!entry)
      return {
        sessionKey,
        sessionId: null,
        messages: [],
        hasMore: false,
        totalMessages: 0,
        hasActiveRun: false,
        ...frame,
        sessionInfo: null,
        ...receiptsFrom([]),
      };
    const transcript = runtime.sessions.transcript(
      runtime.store(agentId).transcriptPath(entry.sessionId, parseSessionKey(sessionKey).threadId),
    );
    const entries = transcript.entries();
    const ackMaxChars = ackMaxCharsFor(api.kernel.config() as Record<string, unknown>, agentId, DEFAULT_ACK_MAX_CHARS);
    const messages = withoutHeartbeatNoise(transcript.messages(), ackMaxChars).filter(
      (message) =>
        !(message.role === 'assistant' && isSilentReplyText(textOf(message.content)) && !hasToolCall(message.content)),
    );
    let page = messages.slice(-(params.limit ?? HISTORY_DEFAULT_LIMIT));
    // OpenClaw's maxBytes: the oldest messages go until the page fits.
    if (params.maxBytes !== undefined)
      while (page.length > 1 && Buffer.byteLength(JSON.stringify(page)) > params.maxBytes) page = page.slice(1);
    return {
      sessionKey,
      sessionId: entry.sessionId,
      thinkingLevel: entry.thinkingLevel ?? runtime.settings(agentId).thinkingDefault,
      // OpenClaw numbers each message in its transcript (__openclaw.seq), as clients key rows by it.
      messages: page.map((message, index) => ({
        ...message,
        __openclaw: { seq: messages.length - page.length + index + 1 },
      })),
      hasMore: page.length < messages.length,
      totalMessages: messages.length,
      hasActiveRun: runtime.isActive(sessionKey),
      ...frame,
      sessionInfo: {
        ...runtime.sessions.openclawRow({
          key: sessionKey,
          agentId,
          entry,
          hasActiveRun: runtime.isActive(sessionKey),
          activeRunIds: runtime.activeRunIds().filter((id) => runtime.run(id)?.sessionKey === sessionKey),
          thinkingDefault: settings.thinkingDefault,
          modelRef,
        }),
        activitySummary: null,
        activeLeafEntryId: leafOf(entries),
      },
      ...receiptsFrom(entries),
    };
  };
  const historyParams = {
    type: 'object',
    required: ['sessionKey'],
    additionalProperties: false,
    properties: {
      sessionKey: KEY,
      limit: { type: 'integer', minimum: 1, maximum: HISTORY_MAX_LIMIT },
      maxBytes: { type: 'integer', minimum: 1024 },
      // OpenClaw's Control UI asks which of its sends have reached the session (inputReceipts).
      inputRunIds: { type: 'array', items: KEY, maxItems: 50 },
    },
  } as const;

  method('commands.list', {
    scope: 'operator.read',
    description:
      'The slash commands an agent answers: {commands: [{name, textAliases, description, source: native|plugin|skill, scope, acceptsArgs}]}.',
    params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        agentId: { type: 'string', minLength: 1 },
        // OpenClaw's surface switches: claw's commands are the same typed and native, so they change no entry.
        scope: { enum: ['text', 'native', 'both'] },
        provider: { type: 'string' },
        includeArgs: { type: 'boolean' },
      },
    },
    handler: async (params: { agentId?: string }) => {
      const agentId = params.agentId ?? runtime.defaultAgent();
      const problem = unknownAgentProblem(api.kernel.config(), agentId);
      if (problem) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, problem);
      return { commands: await commandRows(runtime, agentId) };
    },
  });

  method('chat.history', {
    scope: 'operator.read',
    params: historyParams,
    handler: history,
  });

  method('chat.startup', {
    scope: 'operator.read',
    params: historyParams,
    description:
      "What a chat view needs to open a session (OpenClaw's Control UI): chat.history's page, with pendingInputs.",
    // claw queues no inputs a client could see, so the pendingInputs page is always empty.
    handler: async (params: { sessionKey: string; limit?: number; maxBytes?: number; inputRunIds?: string[] }) => {
      const page = await history(params);
      return {
        ...page,
        sessionInfo: page.sessionInfo && {
          ...page.sessionInfo,
          thinkingLevel: 'thinkingLevel' in page ? page.thinkingLevel : undefined,
        },
      };
    },
  });

  method('chat.abort', {
    scope: 'operator.write',
    params: {
      type: 'object',
      required: ['sessionKey'],
      additionalProperties: false,
      properties: { sessionKey: KEY, runId: KEY },
    },
    handler: (params: { sessionKey: string; runId?: string }) => {
      const { sessionKey } = runtime.resolveTarget({ sessionKey: params.sessionKey });
      const before = runtime.activeRunIds();
      if (params.runId) {
        const record = runtime.run(params.runId);
        if (!record || record.sessionKey !== sessionKey) return { ok: true, aborted: false, runIds: [] };
        const aborted = runtime.abortRun(params.runId, 'aborted');
        return { ok: true, aborted, runIds: aborted ? [params.runId] : [] };
      }
      const count = runtime.stop(sessionKey, 'aborted');
      return {
        ok: true,
        aborted: count > 0,
        runIds: before.filter((id) => runtime.run(id)?.sessionKey === sessionKey),
        stopped: count,
      };
    },
  });
}

/** An agent's slash commands as OpenClaw's commands.list rows. */
export async function commandRows(runtime: AgentRuntime, agentId: string) {
  return (await commandList(runtime, agentId)).map((command) => ({
    name: command.name,
    // claw's commands have one name on every surface and are not grouped into categories.
    nativeName: command.name,
    category: null,
    textAliases: [command.name, ...(command.aliases ?? [])].map((name) => `/${name}`),
    description: command.description,
    source: command.source === 'builtin' ? 'native' : command.source,
    scope: 'both',
    acceptsArgs: command.acceptsArgs ?? false,
  }));
}

/** The id of a transcript's last entry (its active leaf: claw's transcripts do not branch). */
function leafOf(entries: readonly TranscriptEntry[]): string | null {
  const last = entries.at(-1);
  return last && 'id' in last ? last.id : null;
}

/**
 * OpenClaw's guard against sending into a conversation that moved on while the client showed
 * it: the client's leaf must be the transcript's leaf, or (when it also names the session id)
 * an earlier entry of it.
 */
async function expectLeaf(runtime: AgentRuntime, key: string, expected: string | null, namedSession: boolean) {
  const { agentId, sessionKey } = runtime.resolveTarget({ sessionKey: key });
  const entry = await runtime.store(agentId).get(sessionKey);
  const entries = entry
    ? runtime.sessions
        .transcript(runtime.store(agentId).transcriptPath(entry.sessionId, parseSessionKey(sessionKey).threadId))
        .entries()
    : [];
  const exact = leafOf(entries) === expected;
  const ancestor = expected !== null && entries.some((item) => 'id' in item && item.id === expected);
  if (!exact && !(ancestor && namedSession))
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'active branch changed; review and retry', {
      reason: 'active-leaf-changed',
    });
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : ''))
    .join('');
}

function hasToolCall(content: unknown): boolean {
  return Array.isArray(content) && content.some((part: { type?: string }) => part.type === 'toolCall');
}
