/**
 * Session methods over many sessions: `sessions.patchMany` (one sessions.patch applied to
 * each target, each with its own outcome) and `sessions.cleanup` (what `openclaw sessions
 * cleanup` asks: entries whose transcript file is gone are counted, and removed with
 * `fixMissing` under `enforce`). claw keeps no size caps or age limits on its stores, so
 * nothing is pruned or capped.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { parseSessionKey } from '../../sdk/agent/index.js';
import { KEY, PATCH_FIELDS, patchSession, type SessionsDeps } from './methods.js';
import { STORE_FILE } from './store.js';

const PATCH_MANY_PARAMS: JsonSchema = {
  type: 'object',
  required: ['targets', 'patch'],
  additionalProperties: false,
  properties: {
    targets: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: {
        type: 'object',
        required: ['key'],
        additionalProperties: false,
        properties: { key: KEY, agentId: KEY, expectedSessionId: { type: 'string', minLength: 1 } },
      },
    },
    patch: { type: 'object', additionalProperties: false, properties: PATCH_FIELDS },
  },
};

const CLEANUP_PARAMS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    agent: KEY,
    allAgents: { type: 'boolean' },
    enforce: { type: 'boolean' },
    // The session the caller is in: never removed.
    activeKey: KEY,
    fixMissing: { type: 'boolean' },
    // claw keys direct messages by session.dmScope as they arrive: no old-scope entries to retire.
    fixDmScope: { type: 'boolean' },
  },
};

interface CleanupParams {
  agent?: string;
  allAgents?: boolean;
  enforce?: boolean;
  activeKey?: string;
  fixMissing?: boolean;
}

export function registerBulkSessionMethods(api: PluginApi, deps: SessionsDeps): void {
  api.registerGatewayMethod('sessions.patchMany', {
    // OpenClaw's least: admin-only fields are checked per target, as sessions.patch checks them.
    scope: 'operator.write',
    params: PATCH_MANY_PARAMS,
    description:
      'One sessions.patch applied to each target: {outcomes: [{ok:true, key, agentId?} | {ok:false, key, agentId?, error}]}.',
    handler: async (
      params: { targets: Array<{ key: string; agentId?: string; expectedSessionId?: string }>; patch: object },
      ctx,
    ) => {
      const outcomes = [];
      for (const target of params.targets) {
        const identity = { key: target.key, ...(target.agentId ? { agentId: target.agentId } : {}) };
        try {
          await patchSession(api, deps, { ...params.patch, ...target }, ctx);
          outcomes.push({ ok: true as const, ...identity });
        } catch (error) {
          // Read by shape: a plugin loaded apart from the SDK instance here throws its own ProtocolError class.
          const code = (error as { code?: unknown }).code;
          outcomes.push({
            ok: false as const,
            ...identity,
            error: {
              code: typeof code === 'string' ? code : ErrorCodes.UNAVAILABLE,
              message: (error as Error).message,
            },
          });
        }
      }
      return { outcomes };
    },
  });

  api.registerGatewayMethod('sessions.cleanup', {
    scope: 'operator.admin',
    params: CLEANUP_PARAMS,
    description:
      'Session store upkeep per agent: entries whose transcript is gone are counted (missing) and, with enforce and fixMissing, removed.',
    handler: async (params: CleanupParams) => {
      if (params.agent && params.allAgents)
        throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'agent and allAgents do not go together');
      const agents = params.allAgents ? deps.sessions.knownAgents() : [params.agent ?? deps.sessions.defaultAgent()];
      const mode = params.enforce ? 'enforce' : 'warn';
      const activeKey = params.activeKey && deps.sessions.resolveTarget({ sessionKey: params.activeKey }).sessionKey;
      const agent = await deps.agent();
      const summaries = [];
      for (const agentId of agents) {
        const store = deps.sessions.store(agentId);
        const rows = await store.list();
        // Only a session that ran a turn (its transcript was written) can miss one: a new,
        // unused session has none yet; a running one may be writing its first lines.
        const missing = rows.filter(
          ({ key, entry }) =>
            key !== activeKey &&
            (entry.systemSent === true || entry.inputTokens > 0 || entry.outputTokens > 0) &&
            !agent?.isActive(key) &&
            !existsSync(store.transcriptPath(entry.sessionId, parseSessionKey(key).threadId)),
        );
        const apply = mode === 'enforce' && params.fixMissing === true && missing.length > 0;
        if (apply) for (const { key } of missing) await store.delete(key);
        summaries.push({
          agentId,
          storePath: join(store.dir, STORE_FILE),
          mode,
          dryRun: false,
          beforeCount: rows.length,
          afterCount: rows.length - (apply ? missing.length : 0),
          missing: missing.length,
          dmScopeRetired: 0,
          modelRunPruned: 0,
          pruned: 0,
          capped: 0,
          unreferencedArtifacts: { removedFiles: 0 },
          diskBudget: null,
          wouldMutate: params.fixMissing === true && missing.length > 0,
          ...(apply ? { applied: true, appliedCount: missing.length } : {}),
        });
      }
      if (summaries.length === 1) return summaries[0];
      return { allAgents: true, mode, dryRun: false, stores: summaries };
    },
  });
}
