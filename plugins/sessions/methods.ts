/**
 * The `sessions.*` gateway methods: list, preview, patch, reset, delete, compact. Stores
 * come from the sessions service; what touches running sessions (stop, reset hooks,
 * compaction, queue settings) goes through the agent plugin's service when it is on.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  ErrorCodes,
  normalizeAgentId,
  ProtocolError,
  type JsonSchema,
  type KernelConfig,
  type GatewayMethodContext,
  type PluginApi,
  emitInternalHook,
} from '../../sdk/index.js';
import {
  agentIds,
  assertKnownAgent,
  isSilentReplyText,
  parseSessionKey,
  type AgentService,
  type ModelService,
  type SessionEntry,
  type SessionPatch,
} from '../../sdk/agent/index.js';
import type { SessionService } from './service.js';
import { openclawListDefaults, openclawRowFields } from './openclaw-row.js';
import { Transcript } from './transcript.js';
import { trimTranscript, type TrimOutcome } from './trim.js';
import type { SessionOperation } from './live-events.js';

export interface SessionsDeps {
  sessions: SessionService;
  models: ModelService;
  /** The agent plugin's service, when it is on. */
  agent(): Promise<AgentService | undefined>;
  /** session.operation to sessions.subscribe connections (set once subscriptions are registered). */
  announceOperation?: (op: SessionOperation) => void;
}

const THINKING: JsonSchema = { enum: ['off', 'minimal', 'low', 'medium', 'high'] };
export const KEY: JsonSchema = { type: 'string', minLength: 1, maxLength: 512 };

/** sessions.list params (sessions.subscribe takes the same). */
export const LIST_PARAMS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    agentId: KEY,
    activeMinutes: { type: 'number', exclusiveMinimum: 0 },
    limit: { type: 'integer', minimum: 1 },
    // OpenClaw's clients page and filter with these.
    offset: { type: 'integer', minimum: 0 },
    search: { type: 'string', maxLength: 500 },
    label: { type: 'string', maxLength: 500 },
    activeOnly: { type: 'boolean' },
    // true: only archived sessions; "all": both; false or absent: only those not archived.
    archived: { anyOf: [{ type: 'boolean' }, { const: 'all' }] },
    configuredAgentsOnly: { type: 'boolean' },
    // claw has no global or unknown-origin rows: each session belongs to an agent.
    includeGlobal: { type: 'boolean' },
    includeUnknown: { type: 'boolean' },
    spawnedBy: KEY,
    // Rows get derivedTitle (the first user message) and lastMessagePreview, read from the transcript.
    includeDerivedTitles: { type: 'boolean' },
    includeLastMessage: { type: 'boolean' },
    // OpenClaw's Dashboards page lists the sessions with a board; claw sessions have none.
    hasBoard: { type: 'boolean' },
  },
};

/** What sessions.patch (and sessions.patchMany's `patch`) may change. */
export const PATCH_FIELDS: Record<string, JsonSchema> = {
  archived: { type: 'boolean' },
  label: { type: ['string', 'null'], maxLength: 200 },
  model: { type: ['string', 'null'] },
  thinkingLevel: { anyOf: [THINKING, { type: 'null' }] },
  verboseLevel: { enum: ['on', 'off', 'full', null] },
  reasoningLevel: { enum: ['on', 'off', 'stream', null] },
  // The /usage footer mode; null inherits messages.responseUsage ("on" is OpenClaw's old name for tokens).
  responseUsage: { enum: ['off', 'tokens', 'full', 'on', null] },
  sendPolicy: { enum: ['allow', 'deny', null] },
  queueMode: {
    anyOf: [{ enum: ['steer', 'followup', 'collect', 'steer-backlog', 'interrupt'] }, { type: 'null' }],
  },
  queueDebounceMs: { type: ['integer', 'null'], minimum: 0 },
  queueCap: { type: ['integer', 'null'], minimum: 1 },
  queueDrop: { enum: ['old', 'new', 'summarize', null] },
};

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

/** Params of a method on one session: `key` and the method's own fields. */
function keyParams(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: 'object', required: ['key'], additionalProperties: false, properties: { key: KEY, ...properties } };
}

/** The session a key names; OpenClaw's `agentId`, when given, must be the key's agent. */
function targetOf(
  deps: SessionsDeps,
  params: { key: string; agentId?: string },
): { agentId: string; sessionKey: string } {
  const target = deps.sessions.resolveTarget({
    sessionKey: params.key,
    ...(params.agentId ? { agentId: params.agentId } : {}),
  });
  if (params.agentId && normalizeAgentId(params.agentId) !== target.agentId)
    throw invalid(
      `session ${target.sessionKey} belongs to agent "${target.agentId}", not "${params.agentId}"; nothing done`,
    );
  return target;
}

export function registerSessionMethods(api: PluginApi, deps: SessionsDeps): void {
  api.registerGatewayMethod('sessions.list', {
    scope: 'operator.read',
    params: LIST_PARAMS,
    handler: async (params: SessionListOptions) => sessionListResult(deps, await listSessions(deps, params)),
  });

  api.registerGatewayMethod('sessions.describe', {
    scope: 'operator.read',
    params: keyParams({ agentId: KEY }),
    description:
      "One session's sessions.list row (with derivedTitle and lastMessagePreview): {session}, null when there is none.",
    handler: async (params: { key: string; agentId?: string }) => {
      const { agentId, sessionKey } = deps.sessions.resolveTarget({
        sessionKey: params.key,
        ...(params.agentId ? { agentId: params.agentId } : {}),
      });
      const rows = await listSessions(deps, {
        agentId,
        archived: 'all',
        includeDerivedTitles: true,
        includeLastMessage: true,
        key: sessionKey,
      });
      return { session: rows[0] ?? null };
    },
  });

  api.registerGatewayMethod('controlUi.sessionPreview', {
    scope: 'operator.read',
    params: { type: 'object', required: ['sessionKey'], additionalProperties: false, properties: { sessionKey: KEY } },
    description:
      "The Control UI's hover card for a session: {status: 'ok', sessionKey, agentId, title?, derivedTitle?, kind?, channel?, updatedAt?, lastMessagePreview?, archived} or {status: 'unavailable'}.",
    handler: async (params: { sessionKey: string }) => {
      let target;
      try {
        target = deps.sessions.resolveTarget({ sessionKey: params.sessionKey.trim() });
      } catch {
        return { status: 'unavailable' };
      }
      const [row] = await listSessions(deps, {
        agentId: target.agentId,
        key: target.sessionKey,
        archived: 'all',
        includeDerivedTitles: true,
        includeLastMessage: true,
      });
      if (!row) return { status: 'unavailable' };
      const named = row as typeof row & { derivedTitle?: string; lastMessagePreview?: string };
      const title = named.label ?? named.displayName;
      const kind = named.chatType === undefined ? undefined : named.chatType === 'direct' ? 'direct' : 'group';
      return {
        status: 'ok',
        sessionKey: row.key,
        agentId: row.agentId,
        ...(title ? { title: clip(title, 160) } : {}),
        ...(named.derivedTitle ? { derivedTitle: named.derivedTitle } : {}),
        ...(kind ? { kind } : {}),
        ...(named.channel ? { channel: named.channel } : {}),
        updatedAt: row.updatedAt,
        ...(named.lastMessagePreview ? { lastMessagePreview: named.lastMessagePreview } : {}),
        archived: row.archived,
      };
    },
  });

  api.registerGatewayMethod('sessions.preview', {
    scope: 'operator.read',
    params: {
      type: 'object',
      required: ['keys'],
      additionalProperties: false,
      properties: {
        keys: { type: 'array', items: KEY, minItems: 1, maxItems: 64 },
        limit: { type: 'integer', minimum: 1, maximum: 50 },
        maxChars: { type: 'integer', minimum: 16, maximum: 4000 },
      },
    },
    handler: async (params: { keys: string[]; limit?: number; maxChars?: number }) => {
      const limit = params.limit ?? 6;
      const maxChars = params.maxChars ?? 240;
      const previews = await Promise.all(
        params.keys.map(async (key) => {
          const { agentId, sessionKey } = deps.sessions.resolveTarget({ sessionKey: key });
          const entry = await deps.sessions.store(agentId).get(sessionKey);
          if (!entry) return { key, status: 'missing', items: [] };
          const file = deps.sessions
            .store(agentId)
            .transcriptPath(entry.sessionId, parseSessionKey(sessionKey).threadId);
          if (!existsSync(file)) return { key, status: 'empty', items: [] };
          const items = new Transcript(file)
            .messages()
            .filter((message) => message.role !== 'toolResult')
            .map((message) => ({ role: message.role, text: clip(textOf(message.content), maxChars) }))
            .filter((item) => item.text && !isSilentReplyText(item.text))
            .slice(-limit);
          return { key, status: items.length ? 'ok' : 'empty', items };
        }),
      );
      return { ts: Date.now(), previews };
    },
  });

  api.registerGatewayMethod('sessions.patch', {
    // OpenClaw's split: organising a session needs write; the fields below ADMIN_PATCH_FIELDS need admin.
    scope: 'operator.write',
    params: keyParams({
      agentId: KEY,
      // The session must still be this id (not reset since the caller listed it).
      expectedSessionId: { type: 'string', minLength: 1 },
      ...PATCH_FIELDS,
    }),
    handler: (params: PatchParams, ctx) => patchSession(api, deps, params, ctx),
  });

  api.registerGatewayMethod('sessions.reset', {
    scope: 'operator.admin',
    params: keyParams({ model: { type: 'string', minLength: 1 } }),
    handler: async (params: { key: string; model?: string }) => {
      const { agentId, sessionKey } = deps.sessions.resolveTarget({ sessionKey: params.key });
      assertKnownAgent(api.kernel.config(), agentId);
      let model: string | undefined;
      if (params.model) {
        model = await deps.models.models.resolve(params.model, deps.models.settings(agentId));
        if (!model) throw invalid(`unknown model "${params.model}" (see models.list)`);
      }
      const agent = await deps.agent();
      const patch = model ? { model } : {};
      const store = deps.sessions.store(agentId);
      const previous = await store.get(sessionKey);
      // Without the agent plugin nothing runs, so there is nothing to stop and no hooks to fire.
      const entry = agent
        ? await agent.resetSession(agentId, sessionKey, patch)
        : (await store.resolve(sessionKey, { reset: true, patch })).entry;
      // Internal hooks (session-memory, command-logger) see it as a reset; nothing is sent back.
      await emitInternalHook(api.kernel, 'command', 'reset', sessionKey, () => ({
        agentId,
        commandSource: 'gateway:sessions.reset',
        workspaceDir: deps.models.settings(agentId).workspaceDir,
        storePath: store.dir,
        sessionEntry: entry,
        ...(previous ? { previousSessionEntry: previous, sessionFile: store.transcriptPath(previous.sessionId) } : {}),
      }));
      return { ok: true, key: sessionKey, entry };
    },
  });

  api.registerGatewayMethod('sessions.delete', {
    scope: 'operator.admin',
    params: keyParams({
      deleteTranscript: { type: 'boolean' },
      // OpenClaw's: the key's agent must be this one; the session must still be this id (no reset since).
      agentId: KEY,
      expectedSessionId: { type: 'string', minLength: 1 },
      // Only an archived session (archive, then delete).
      archivedOnly: { type: 'boolean' },
    }),
    handler: async (params: {
      key: string;
      deleteTranscript?: boolean;
      agentId?: string;
      expectedSessionId?: string;
      archivedOnly?: boolean;
    }) => {
      const { agentId, sessionKey } = targetOf(deps, params);
      const store = deps.sessions.store(agentId);
      const entry = await store.get(sessionKey);
      if (params.archivedOnly && entry && (entry as Archivable).archivedAt === undefined)
        throw invalid(`session ${sessionKey} is not archived; archive it first, then delete it`);
      if (params.expectedSessionId && entry && entry.sessionId !== params.expectedSessionId) {
        throw invalid(
          `session ${sessionKey} is now ${entry.sessionId}, not ${params.expectedSessionId} (it was reset since it was listed); nothing deleted`,
        );
      }
      const agent = await deps.agent();
      agent?.stop(sessionKey, 'deleted');
      const deleted = await store.delete(sessionKey);
      agent?.sessionChanged(sessionKey, undefined);
      if (entry && params.deleteTranscript !== false) {
        // Transcripts of this session id (topic threads included) go with it.
        const dir = store.dir;
        for (const name of readdirSync(dir)) {
          if (
            name === `${entry.sessionId}.jsonl` ||
            (name.startsWith(`${entry.sessionId}-topic-`) && name.endsWith('.jsonl'))
          )
            rmSync(join(dir, name), { force: true });
        }
      }
      return { ok: true, key: sessionKey, deleted, archived: [] };
    },
  });

  api.registerGatewayMethod('sessions.compact', {
    scope: 'operator.admin',
    params: keyParams({
      instructions: { type: 'string', maxLength: 10_000 },
      agentId: KEY,
      // OpenClaw's: keep the header and the newest lines instead of summarising.
      maxLines: { type: 'integer', minimum: 1 },
    }),
    handler: async (params: { key: string; instructions?: string; agentId?: string; maxLines?: number }) => {
      const { agentId, sessionKey } = targetOf(deps, params);
      if (params.maxLines !== undefined) {
        if (params.instructions !== undefined)
          throw invalid('maxLines truncates without a summary: instructions do not apply');
        return {
          ok: true,
          key: sessionKey,
          ...(await truncateSession(api, deps, agentId, sessionKey, params.maxLines)),
        };
      }
      const agent = await deps.agent();
      if (!agent) throw invalid('compaction runs through the agent plugin, which is off');
      const operation = { operationId: randomUUID(), operation: 'compact', sessionKey, agentId } as const;
      deps.announceOperation?.({ ...operation, phase: 'start' });
      let outcome: { compacted: boolean; reason?: string };
      try {
        outcome = await agent.compactSession(agentId, sessionKey, params.instructions);
      } catch (error) {
        deps.announceOperation?.({ ...operation, phase: 'end', completed: false, reason: (error as Error).message });
        throw error;
      }
      deps.announceOperation?.({
        ...operation,
        phase: 'end',
        completed: outcome.compacted,
        ...(outcome.reason ? { reason: outcome.reason } : {}),
      });
      return { ok: true, key: sessionKey, ...outcome };
    },
  });
}

type PatchParams = Record<string, unknown> & { key: string; agentId?: string; expectedSessionId?: string };

/** sessions.patch on one session (sessions.patchMany applies it to each target). */
export async function patchSession(api: PluginApi, deps: SessionsDeps, params: PatchParams, ctx: GatewayMethodContext) {
  const admin = ADMIN_PATCH_FIELDS.filter((field) => field in params);
  if (admin.length && ctx.role !== undefined && !ctx.scopes?.includes('operator.admin'))
    throw new ProtocolError(ErrorCodes.FORBIDDEN, `missing scope: operator.admin (to set ${admin.join(', ')})`, {
      code: 'MISSING_SCOPE',
      missingScope: 'operator.admin',
      requiredScopes: ['operator.admin'],
    });
  const { agentId, sessionKey } = targetOf(deps, params);
  assertKnownAgent(api.kernel.config(), agentId); // writing would create the agent's folders
  if (typeof params.archived === 'boolean') await checkArchiveTarget(deps, agentId, sessionKey, params);
  const patch: SessionPatch & Archivable = {};
  if (params.archived === true) patch.archivedAt = deps.sessions.now();
  if (params.archived === false) patch.archivedAt = undefined;
  const value = <T>(name: string): T | undefined => (params[name] === null ? undefined : (params[name] as T));
  for (const field of ['label', 'thinkingLevel', 'verboseLevel', 'reasoningLevel', 'sendPolicy'] as const) {
    if (field in params) (patch as Record<string, unknown>)[field] = value(field);
  }
  if ('responseUsage' in params)
    patch.responseUsage =
      params.responseUsage === 'on' ? 'tokens' : value<SessionEntry['responseUsage']>('responseUsage');
  if ('model' in params) {
    const model = value<string>('model');
    if (model !== undefined) {
      const ref = await deps.models.models.resolve(model, deps.models.settings(agentId));
      if (!ref) throw invalid(`unknown model "${model}" (see models.list)`);
      patch.model = ref;
    } else patch.model = undefined;
  }
  const queueFields = ['queueMode', 'queueDebounceMs', 'queueCap', 'queueDrop'].filter((field) => field in params);
  const updated = await deps.sessions.store(agentId).upsert(sessionKey, (entry) => {
    // Archiving again keeps the first archive time.
    const was = (entry as Archivable | undefined)?.archivedAt;
    if (was !== undefined && params.archived === true) patch.archivedAt = was;
    if (queueFields.length === 0) return patch;
    const queue = { ...entry?.queue };
    const set = (name: keyof typeof queue, field: string) => {
      if (!(field in params)) return;
      if (params[field] === null) delete queue[name];
      else (queue as Record<string, unknown>)[name] = params[field];
    };
    set('mode', 'queueMode');
    set('debounceMs', 'queueDebounceMs');
    set('cap', 'queueCap');
    set('drop', 'queueDrop');
    return { ...patch, queue: Object.keys(queue).length ? queue : undefined };
  });
  (await deps.agent())?.sessionChanged(sessionKey, updated);
  return { ok: true, key: sessionKey, entry: updated };
}

/**
 * `sessions.compact {maxLines}`: refused while a run is going on (OpenClaw's rule), then
 * done in the session lane under the session lock, so neither a run of this gateway nor a
 * local `claw agent` appends while the file is replaced.
 */
async function truncateSession(
  api: PluginApi,
  deps: SessionsDeps,
  agentId: string,
  sessionKey: string,
  maxLines: number,
): Promise<TrimOutcome> {
  const store = deps.sessions.store(agentId);
  const entry = await store.get(sessionKey);
  if (!entry) return { compacted: false, reason: 'no sessionId' };
  const agent = await deps.agent();
  if (agent?.isActive(sessionKey)) throw invalid(`session ${sessionKey} has an active run; retry after it finishes`);
  return api.kernel.lanes.runInSession(sessionKey, async () => {
    const lock = await store.lock(sessionKey, { timeoutMs: TRUNCATE_LOCK_TIMEOUT_MS });
    try {
      const current = await store.get(sessionKey);
      if (current?.sessionId !== entry.sessionId)
        throw invalid(`session ${sessionKey} changed (reset or deleted) before it could be truncated; retry`);
      const outcome = trimTranscript(
        store.transcriptPath(entry.sessionId, parseSessionKey(sessionKey).threadId),
        maxLines,
      );
      if (outcome.compacted) {
        // The context size measured by the last run no longer holds.
        const updated = await store.upsert(sessionKey, () => ({ totalTokens: 0 }));
        agent?.sessionChanged(sessionKey, updated);
      }
      return outcome;
    } finally {
      lock.release();
    }
  });
}

/**
 * An archived session's entry carries `archivedAt` (ms since the epoch); lists leave it out
 * unless asked. Only this plugin reads it, so it is not part of the SDK's SessionEntry.
 */
export interface Archivable {
  archivedAt?: number;
}

/** sessions.patch fields OpenClaw reserves for operator.admin. */
const ADMIN_PATCH_FIELDS = [
  'verboseLevel',
  'reasoningLevel',
  'sendPolicy',
  'queueMode',
  'queueDebounceMs',
  'queueCap',
  'queueDrop',
];

/**
 * Archiving (or restoring) needs the session to exist and, when the caller names it, to
 * still be the id it listed; an agent's main session is never archived (it is where
 * direct messages land).
 */
async function checkArchiveTarget(
  deps: SessionsDeps,
  agentId: string,
  sessionKey: string,
  params: { archived?: unknown; expectedSessionId?: string },
): Promise<void> {
  const entry = await deps.sessions.store(agentId).get(sessionKey);
  if (!entry) throw invalid(`no session ${sessionKey} to ${params.archived ? 'archive' : 'restore'}`);
  if (params.expectedSessionId && entry.sessionId !== params.expectedSessionId)
    throw invalid(
      `session ${sessionKey} is now ${entry.sessionId}, not ${params.expectedSessionId} (it was reset since it was listed); nothing changed`,
    );
  if (params.archived === true && sessionKey === deps.sessions.mainKey(agentId))
    throw invalid(`cannot archive ${sessionKey}: it is agent "${agentId}"'s main session`);
}

/** How long truncation waits for another process (a local `claw agent` run) to release the session. */
const TRUNCATE_LOCK_TIMEOUT_MS = 10_000;

export interface SessionListOptions {
  agentId?: string;
  /** true: only archived sessions; "all": both; absent or false: only those not archived. */
  archived?: boolean | 'all';
  activeMinutes?: number;
  limit?: number;
  offset?: number;
  /** Case-insensitive substring of the key, label or display name. */
  search?: string;
  label?: string;
  activeOnly?: boolean;
  /** Only agents the config lists (not those left on disk). */
  configuredAgentsOnly?: boolean;
  /** Only sessions spawned by this session (sub-agents). */
  spawnedBy?: string;
  /** Only this session key. */
  key?: string;
  includeDerivedTitles?: boolean;
  includeLastMessage?: boolean;
  /** true: only sessions with a board, which claw does not have; false: all of them. */
  hasBoard?: boolean;
}

export async function listSessions(deps: SessionsDeps, options: SessionListOptions) {
  if (options.hasBoard === true) return [];
  const configured = new Set(agentIds(deps.sessions.kernel.config() as KernelConfig).map((id) => normalizeAgentId(id)));
  const agents = (options.agentId ? [options.agentId] : deps.sessions.knownAgents()).filter(
    (id) => !options.configuredAgentsOnly || configured.has(normalizeAgentId(id)),
  );
  const cutoff = options.activeMinutes ? deps.sessions.now() - options.activeMinutes * 60_000 : undefined;
  const agent = await deps.agent();
  const search = options.search?.trim().toLowerCase();
  const rows: Array<
    Omit<ReturnType<typeof openclawRowFields>, 'model'> &
      SessionEntry & { key: string; agentId: string; archived: boolean; hasActiveRun: boolean }
  > = [];
  for (const agentId of agents) {
    for (const { key, entry } of await deps.sessions.store(agentId).list()) {
      if (cutoff !== undefined && entry.updatedAt < cutoff) continue;
      const named = entry as SessionEntry & { label?: string; displayName?: string };
      if (options.label !== undefined && named.label !== options.label) continue;
      if (search && ![key, named.label, named.displayName].some((text) => text?.toLowerCase().includes(search)))
        continue;
      const hasActiveRun = agent?.isActive(key) ?? false;
      if (options.activeOnly && !hasActiveRun) continue;
      if (options.spawnedBy !== undefined && entry.spawnedBy !== options.spawnedBy) continue;
      if (options.key !== undefined && key !== options.key) continue;
      const archived = (entry as Archivable).archivedAt !== undefined;
      if (options.archived !== 'all' && archived !== (options.archived === true)) continue;
      const fields = openclawRowFields({
        key,
        agentId,
        entry,
        hasActiveRun,
        activeRunIds: [],
        thinkingDefault: deps.models.settings(agentId).thinkingDefault,
        modelRef: deps.models.models.chain(deps.models.settings(agentId))[0],
        responseUsageDefault: (deps.sessions.kernel.config().messages as { responseUsage?: unknown } | undefined)
          ?.responseUsage,
      });
      // The session's own model override wins; without one, OpenClaw's row names the model turns use.
      rows.push({
        ...fields,
        ...entry,
        model: entry.model ?? fields.model ?? undefined,
        key,
        agentId,
        archived,
        hasActiveRun,
      });
    }
  }
  rows.sort((a, b) => b.updatedAt - a.updatedAt);
  const from = options.offset ?? 0;
  const page = rows.slice(from, options.limit ? from + options.limit : undefined);
  if (!options.includeDerivedTitles && !options.includeLastMessage) return page;
  return page.map((row) => ({ ...row, ...transcriptSummary(deps, row.agentId, row.key, row.sessionId, options) }));
}

/** sessions.list's answer: the rows, and (as OpenClaw) the model new turns use by default. */
export function sessionListResult(deps: SessionsDeps, sessions: unknown[]) {
  const [ref] = deps.models.models.chain(deps.models.settings(deps.models.defaultAgent()));
  const settings = deps.models.settings(deps.models.defaultAgent());
  const defaults = {
    ...(ref ? { modelProvider: ref.split('/')[0], model: ref.slice(ref.indexOf('/') + 1) } : {}),
    ...openclawListDefaults(null, settings.thinkingDefault),
  };
  const defaultAgent = deps.models.defaultAgent();
  // OpenClaw pages the list; claw answers the whole page it was asked for, so there is no next one.
  return {
    ts: Date.now(),
    path: deps.sessions.store(defaultAgent).file,
    count: sessions.length,
    totalCount: sessions.length,
    limitApplied: null,
    nextOffset: null,
    hasMore: false,
    owners: [],
    defaults,
    sessions,
  };
}

/** The first user message (as a title) and the last visible message of a session, clipped. */
function transcriptSummary(
  deps: SessionsDeps,
  agentId: string,
  key: string,
  sessionId: string,
  options: SessionListOptions,
) {
  const file = deps.sessions.store(agentId).transcriptPath(sessionId, parseSessionKey(key).threadId);
  if (!existsSync(file)) return {};
  const visible = new Transcript(file)
    .messages()
    .filter((message) => message.role === 'user' || message.role === 'assistant')
    .map((message) => ({ role: message.role, text: textOf(message.content) }))
    .filter((item) => item.text.trim() && !isSilentReplyText(item.text));
  const firstUser = visible.find((item) => item.role === 'user');
  const last = visible.at(-1);
  return {
    ...(options.includeDerivedTitles && firstUser ? { derivedTitle: clip(firstUser.text, 60) } : {}),
    ...(options.includeLastMessage && last ? { lastMessagePreview: clip(last.text, 160) } : {}),
  };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : ''))
    .join('');
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
