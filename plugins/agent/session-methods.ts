/**
 * The session methods of OpenClaw's Control UI that start, feed or stop runs, so they live
 * beside chat.send: `sessions.create` (a new session, optionally with its first turn),
 * `sessions.send` (a message into an existing session), `sessions.abort`, and the chat
 * view's `chat.metadata` (commands and models for the composer) and `chat.message.get`
 * (one stored message by id). Every run goes through the same door as chat.send.
 */
import { randomUUID } from 'node:crypto';
import {
  ErrorCodes,
  ProtocolError,
  imageAttachmentsSchema,
  normalizeAgentId,
  type AttachmentParam,
  type GatewayMethodContext,
  type JsonSchema,
  type PluginApi,
  type ThinkingLevel,
} from '../../sdk/index.js';
import { assertKnownAgent, isMessageEntry, parseSessionKey, type SessionPatch } from '../../sdk/agent/index.js';
import { admit, commandRows, imagesFrom } from './methods.js';
import type { AgentRuntime } from './runtime.js';

const KEY: JsonSchema = { type: 'string', minLength: 1, maxLength: 512 };
const LABEL: JsonSchema = { type: 'string', minLength: 1, maxLength: 200 };
const MESSAGE_MAX_CHARS_DEFAULT = 1_000_000;

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

interface CreateParams {
  key?: string;
  agentId?: string;
  label?: string;
  displayName?: string;
  model?: string;
  thinkingLevel?: ThinkingLevel;
  parentSessionKey?: string;
  spawnDepth?: number;
  message?: string;
  task?: string;
  attachments?: AttachmentParam[];
  timeoutMs?: number;
  permissionMode?: string;
  toolOverrides?: Record<string, unknown>;
  fork?: boolean;
  incognito?: boolean;
  [feature: string]: unknown;
}

/**
 * sessions.create fields for features claw lacks: set, they are refused with the reason
 * rather than dropped, so a session never silently starts without what was asked for.
 */
const ABSENT_CREATE_FEATURES: Record<string, string> = {
  catalogId: 'claw has no session catalogs',
  projectId: 'claw has no projects',
  projectGitUrl: 'claw has no projects',
  repository: 'claw does not check out repositories for a session',
  worktree: 'claw has no managed worktrees',
  worktreeSource: 'claw has no managed worktrees',
  worktreeBaseRef: 'claw has no managed worktrees',
  worktreeName: 'claw has no managed worktrees',
  execNode: 'claw has no nodes to run a session’s commands on',
  cwd: 'claw runs each agent in its workspace; a session has no working directory of its own',
  agentRuntime: 'claw has one agent runtime (the agentLoop slot)',
  contextWindow: 'claw takes the context window from the model',
  category: 'claw has no custom session groups',
  mentions: 'claw has no people to mention: a gateway serves one operator',
  forkFrom: 'claw does not fork sessions',
};

const CREATE_PARAMS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    key: KEY,
    agentId: KEY,
    label: LABEL,
    displayName: { type: 'string', minLength: 1, maxLength: 500 },
    // A topic for background naming; claw names a session from its first message (derivedTitle).
    titleSource: { type: 'string', maxLength: 1000 },
    model: KEY,
    thinkingLevel: { enum: ['off', 'minimal', 'low', 'medium', 'high'] },
    fastMode: { anyOf: [{ const: false }, { type: 'boolean' }, { const: 'auto' }] },
    // One operator sees every session: OpenClaw's visibilities all read the same here.
    visibility: { type: 'string' },
    // claw's tool policy and exec approvals govern every session; "full" would loosen them, so it is refused.
    permissionMode: { enum: ['read-only', 'guarded', 'workspace', 'full'] },
    toolOverrides: { type: 'object' },
    incognito: { type: 'boolean' },
    parentSessionKey: KEY,
    spawnDepth: { type: 'integer', minimum: 1 },
    fork: { type: 'boolean' },
    emitCommandHooks: { type: 'boolean' },
    succeedsParent: { type: 'boolean' },
    timeoutMs: { type: 'integer', minimum: 0 },
    task: { type: 'string' },
    message: { type: 'string' },
    attachments: imageAttachmentsSchema(16),
    ...Object.fromEntries(Object.keys(ABSENT_CREATE_FEATURES).map((name) => [name, {}])),
  },
};

function refuseAbsentFeatures(params: CreateParams): void {
  for (const [name, reason] of Object.entries(ABSENT_CREATE_FEATURES)) {
    const value = params[name];
    if (value === undefined || value === false || (Array.isArray(value) && value.length === 0)) continue;
    throw invalid(`sessions.create: ${name} is not available (${reason})`);
  }
  if (params.fork) throw invalid('sessions.create: fork is not available (claw does not fork sessions)');
  if (params.incognito) throw invalid('sessions.create: incognito is not available (claw keeps every session)');
  if (params.fastMode === true || params.fastMode === 'auto')
    throw invalid('sessions.create: fastMode is not available (claw has no fast mode)');
  if (params.permissionMode === 'full')
    throw invalid(
      'sessions.create: permissionMode "full" is not available (claw’s tool policy and exec approvals apply to every session)',
    );
  if (params.toolOverrides && Object.keys(params.toolOverrides).length > 0)
    throw invalid('sessions.create: toolOverrides are not available (tools.allow/deny in the config set the tools)');
  if (params.spawnDepth !== undefined && !params.parentSessionKey)
    throw invalid('sessions.create: spawnDepth requires parentSessionKey');
}

export function registerSessionRunMethods(api: PluginApi, runtime: AgentRuntime): void {
  const method = api.registerGatewayMethod.bind(api);

  method('sessions.create', {
    scope: 'operator.write',
    // OpenClaw's idempotencyKey is optional here: a retry with one is answered once.
    sideEffect: 'optional',
    params: CREATE_PARAMS,
    description:
      'A new session (key given, or agent:<id>:dashboard:<uuid>) with label, model and thinking level; message or task starts its first turn. {ok, key, sessionId, entry, runStarted, runId?, resolved}.',
    handler: async (params: CreateParams, ctx: GatewayMethodContext) => {
      refuseAbsentFeatures(params);
      const agentId = normalizeAgentId(
        params.agentId ?? (params.key ? parseSessionKey(params.key).agentId : undefined) ?? runtime.defaultAgent(),
      );
      assertKnownAgent(api.kernel.config(), agentId);
      const sessionKey = params.key
        ? runtime.resolveTarget({ agentId, sessionKey: params.key }).sessionKey
        : `agent:${agentId}:dashboard:${randomUUID()}`;
      if (parseSessionKey(sessionKey).agentId !== undefined && parseSessionKey(sessionKey).agentId !== agentId)
        throw invalid(`session ${sessionKey} belongs to another agent than "${agentId}"`);
      const store = runtime.store(agentId);
      const settings = runtime.settings(agentId);
      const patch: SessionPatch = {};
      if (params.model) {
        const ref = await runtime.models.resolve(params.model, settings);
        if (!ref) throw invalid(`unknown model "${params.model}" (see models.list)`);
        patch.model = ref;
      }
      if (params.label) {
        const taken = (await store.list()).find(({ key, entry }) => key !== sessionKey && entry.label === params.label);
        if (taken) throw invalid(`label "${params.label}" is already used by session ${taken.key}`);
        patch.label = params.label;
      }
      if (params.thinkingLevel) patch.thinkingLevel = params.thinkingLevel;
      if (params.parentSessionKey) {
        patch.spawnedBy = runtime.resolveTarget({ sessionKey: params.parentSessionKey }).sessionKey;
        patch.spawnDepth = params.spawnDepth ?? 1;
      }
      const existing = await store.get(sessionKey);
      // An existing key is adopted as it is: displayName only names a session being created.
      if (params.displayName && !existing) patch.displayName = params.displayName;
      const { entry } = await store.resolve(sessionKey, { patch });
      const [ref] = runtime.models.chain(settings, entry.model);
      const resolved = ref
        ? { modelProvider: ref.split('/')[0], model: ref.slice(ref.indexOf('/') + 1) }
        : { modelProvider: null, model: null };
      const text = params.message ?? params.task ?? '';
      if (!text.trim() && !params.attachments?.length)
        return { ok: true, key: sessionKey, sessionId: entry.sessionId, entry, runStarted: false, resolved };
      const handle = await admit(runtime, {
        sessionKey,
        message: text,
        images: imagesFrom(params.attachments),
        timeoutMs: params.timeoutMs,
        authorized: true,
        ...(ctx.idempotencyKey ? { requestKey: `sessions.create:${ctx.idempotencyKey}` } : {}),
      });
      handle.done.catch(() => {});
      return {
        ok: true,
        key: sessionKey,
        sessionId: entry.sessionId,
        entry,
        runStarted: true,
        runId: handle.runId,
        resolved,
      };
    },
  });

  method('sessions.send', {
    scope: 'operator.write',
    sideEffect: 'optional',
    params: {
      type: 'object',
      required: ['key', 'message'],
      additionalProperties: false,
      properties: {
        key: KEY,
        agentId: KEY,
        message: { type: 'string', maxLength: 1_000_000 },
        thinking: { enum: ['off', 'minimal', 'low', 'medium', 'high'] },
        attachments: imageAttachmentsSchema(16),
        timeoutMs: { type: 'integer', minimum: 0 },
      },
    },
    description:
      'A message into an existing session (an agent’s main session is created on first use); as chat.send: {runId, status, acceptedAt}.',
    handler: async (
      params: {
        key: string;
        agentId?: string;
        message: string;
        thinking?: ThinkingLevel;
        attachments?: AttachmentParam[];
        timeoutMs?: number;
      },
      ctx: GatewayMethodContext,
    ) => {
      const { agentId, sessionKey } = runtime.resolveTarget({
        sessionKey: params.key,
        ...(params.agentId ? { agentId: params.agentId } : {}),
      });
      assertKnownAgent(api.kernel.config(), agentId);
      if (!(await runtime.store(agentId).get(sessionKey)) && sessionKey !== runtime.mainKey(agentId))
        throw invalid(`session not found: ${params.key}`);
      const requestKey = ctx.idempotencyKey;
      const handle = await admit(runtime, {
        sessionKey,
        message: params.message,
        images: imagesFrom(params.attachments),
        thinking: params.thinking,
        timeoutMs: params.timeoutMs,
        authorized: true,
        ...(requestKey ? { requestKey: `sessions.send:${requestKey}` } : {}),
      });
      handle.done.catch(() => {});
      return { runId: handle.runId, status: handle.status, acceptedAt: handle.acceptedAt };
    },
  });

  method('sessions.abort', {
    scope: 'operator.write',
    params: {
      type: 'object',
      additionalProperties: false,
      properties: { key: KEY, runId: KEY, agentId: KEY, clearQueued: { type: 'boolean' } },
    },
    description:
      "Stop a session's run (the named one, or whatever runs; clearQueued also drops queued messages): {ok, abortedRunId, status: aborted|no-active-run}.",
    handler: (params: { key?: string; runId?: string; agentId?: string; clearQueued?: boolean }) => {
      if (!params.key && !params.runId) throw invalid('sessions.abort needs key or runId');
      const record = params.runId ? runtime.run(params.runId) : undefined;
      const sessionKey = params.key
        ? runtime.resolveTarget({ sessionKey: params.key, ...(params.agentId ? { agentId: params.agentId } : {}) })
            .sessionKey
        : record?.sessionKey;
      if (params.runId) {
        if (!record || record.sessionKey !== sessionKey)
          return { ok: true, abortedRunId: null, status: 'no-active-run' };
        const aborted = runtime.abortRun(params.runId, 'aborted');
        return { ok: true, abortedRunId: aborted ? params.runId : null, status: aborted ? 'aborted' : 'no-active-run' };
      }
      const running = runtime.activeRunIds().find((id) => runtime.run(id)?.sessionKey === sessionKey);
      if (params.clearQueued) {
        const stopped = runtime.stop(sessionKey!, 'aborted');
        return { ok: true, abortedRunId: running ?? null, status: stopped > 0 ? 'aborted' : 'no-active-run' };
      }
      const aborted = running ? runtime.abortRun(running, 'aborted') : false;
      return { ok: true, abortedRunId: aborted ? running! : null, status: aborted ? 'aborted' : 'no-active-run' };
    },
  });

  method('chat.metadata', {
    scope: 'operator.read',
    params: {
      type: 'object',
      additionalProperties: false,
      properties: { agentId: KEY, sessionKey: KEY, authProfileId: { type: 'string', minLength: 1, maxLength: 256 } },
    },
    description:
      "What a chat composer offers: the agent's slash commands and the models it may pick ({commands, models, swarmEnabled, runtimeSelectionLocked}).",
    handler: async (params: { agentId?: string; sessionKey?: string; authProfileId?: string }) => {
      if (params.sessionKey && params.authProfileId)
        throw invalid('authProfileId previews a new chat: leave out sessionKey');
      const agentId = normalizeAgentId(
        params.agentId ??
          (params.sessionKey ? parseSessionKey(params.sessionKey).agentId : undefined) ??
          runtime.defaultAgent(),
      );
      assertKnownAgent(api.kernel.config(), agentId);
      const settings = runtime.settings(agentId);
      const aliases = new Map(Object.entries(settings.models).map(([ref, value]) => [ref, value?.alias]));
      const catalog = await runtime.models.catalog();
      const models = catalog.map((model) => ({
        id: model.id,
        name: model.name ?? model.id,
        provider: model.provider,
        ...(aliases.get(model.ref) ? { alias: aliases.get(model.ref) } : {}),
      }));
      // claw picks the agent runtime by slot, not per chat, so the choice is fixed.
      return {
        commands: await commandRows(runtime, agentId),
        models,
        swarmEnabled: false,
        runtimeSelectionLocked: true,
      };
    },
  });

  method('chat.message.get', {
    scope: 'operator.read',
    params: {
      type: 'object',
      required: ['sessionKey', 'messageId'],
      additionalProperties: false,
      properties: {
        sessionKey: KEY,
        agentId: KEY,
        messageId: KEY,
        maxChars: { type: 'integer', minimum: 1, maximum: 2_000_000 },
      },
    },
    description:
      'One stored message of a session by its transcript entry id: {ok:true, message}, or {ok:false, unavailableReason: not_found|oversized}.',
    handler: async (params: { sessionKey: string; agentId?: string; messageId: string; maxChars?: number }) => {
      const { agentId, sessionKey } = runtime.resolveTarget({
        sessionKey: params.sessionKey,
        ...(params.agentId ? { agentId: params.agentId } : {}),
      });
      const store = runtime.store(agentId);
      const entry = await store.get(sessionKey);
      if (!entry) return { ok: false, unavailableReason: 'not_found' };
      const transcript = runtime.sessions.transcript(
        store.transcriptPath(entry.sessionId, parseSessionKey(sessionKey).threadId),
      );
      const found = transcript.entries().find((item) => isMessageEntry(item) && item.id === params.messageId);
      if (!found || !isMessageEntry(found)) return { ok: false, unavailableReason: 'not_found' };
      const maxChars = params.maxChars ?? MESSAGE_MAX_CHARS_DEFAULT;
      if (JSON.stringify(found.message).length > maxChars) return { ok: false, unavailableReason: 'oversized' };
      return { ok: true, message: { ...found.message, id: found.id } };
    },
  });
}
