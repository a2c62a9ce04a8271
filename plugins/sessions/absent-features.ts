/**
 * Session features OpenClaw has and claw does not, answered as an OpenClaw gateway without
 * them answers, so its Control UI loads without errors:
 *
 * - sharing (members, visibility, public links), suggestions and typing, discussions: claw
 *   is one operator's gateway; sessions are never shared with other people.
 * - the companion (a side model answering questions about a session), activity summaries,
 *   title inference, provider reviews: claw runs no utility model beside the agent.
 * - GitHub publication, session catalogs (other CLIs' sessions), workspace placement
 *   (dispatch to devices, move, reclaim), owners and involvement, custom groups, cold
 *   storage of transcripts: claw has none of these.
 *
 * Reads answer OpenClaw's empty shape; anything that would change or start something answers
 * UNAVAILABLE naming what claw lacks, never a pretended success.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { KEY, type SessionsDeps } from './methods.js';
import { STORE_FILE } from './store.js';

/** OpenClaw's clients may send params newer than claw knows: tolerated, not refused. */
const ANY_PARAMS: JsonSchema = { type: 'object' };

/** Params naming one session by `sessionKey` (OpenClaw's session.* and most sessions.* feature methods). */
const TARGET: JsonSchema = {
  type: 'object',
  required: ['sessionKey'],
  properties: { sessionKey: KEY, agentId: KEY },
};

type Scope = 'operator.read' | 'operator.write' | 'operator.admin';

const SHARING =
  'claw has no shared sessions: a gateway serves one operator, so there are no members, visibility or public links';
const SUGGESTIONS = 'claw has no shared sessions, so nobody suggests messages or shows typing';
const DISCUSSION = 'claw has no session discussions';
const COMPANION = 'claw has no session companion (no side model answers questions about a session)';
const GITHUB = 'claw does not publish sessions to GitHub';
const CATALOG = 'claw has no session catalogs (it does not list or continue other CLIs’ sessions)';
const TERMINAL = 'claw has no terminal sessions';
const PLACEMENT =
  'claw runs every session on this gateway: there are no devices or profiles to dispatch, move or reclaim it to';
const OWNERS = 'claw has no session owners or involvement lists: a gateway serves one operator';
const GROUPS = 'claw has no custom session groups';
const STORAGE = 'claw has no cold storage of transcripts: they stay as JSONL files beside sessions.json';
const PROVIDER_REVIEW = 'claw has no provider reviews to continue';

function unavailable(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.UNAVAILABLE, message);
}

export function registerAbsentSessionFeatures(api: PluginApi, deps: SessionsDeps): void {
  /**
   * The session a feature read names. A session not written yet (a new chat's main session)
   * has nothing of these features either, so it gets the same empty answer.
   */
  const existing = async (params: { sessionKey?: string; key?: string; agentId?: string }) =>
    deps.sessions.resolveTarget({
      sessionKey: params.sessionKey ?? params.key ?? '',
      ...(params.agentId ? { agentId: params.agentId } : {}),
    });

  const read = (
    name: string,
    params: JsonSchema,
    description: string,
    answer: (params: Record<string, unknown>) => unknown,
  ) =>
    api.registerGatewayMethod(name, {
      scope: 'operator.read',
      params,
      description,
      handler: (request: Record<string, unknown>) => answer(request),
    });
  const refuse = (name: string, scope: Scope, message: string) =>
    api.registerGatewayMethod(name, {
      scope,
      params: ANY_PARAMS,
      description: `UNAVAILABLE: ${message}.`,
      handler: () => {
        throw unavailable(message);
      },
    });

  // Sharing: the operator owns every session; nobody else is a member.
  read(
    'session.members.listEvidence',
    TARGET,
    "A session's sharing: the operator owns it; no members, no identities to add, no visibility to pick.",
    async (params) => ({
      sessionKey: (await existing(params)).sessionKey,
      members: [],
      identities: [],
      role: 'owner',
      allowedVisibilities: [],
    }),
  );
  for (const name of [
    'session.members.add',
    'session.members.remove',
    'session.visibility.set',
    'session.publicShare.set',
  ])
    refuse(name, 'operator.write', SHARING);

  read(
    'session.suggestions.list',
    TARGET,
    "Suggested messages for a session: none, as claw's sessions are not shared.",
    async (params) => {
      await existing(params);
      return { suggestions: [], role: 'owner' };
    },
  );
  for (const name of ['session.suggestions.add', 'session.suggestions.resolve', 'session.typing'])
    refuse(name, 'operator.write', SUGGESTIONS);

  read('session.discussion.info', TARGET, 'Discussion state of a session: none.', async (params) => {
    await existing(params);
    return { state: 'none' };
  });
  refuse('session.discussion.open', 'operator.write', DISCUSSION);

  read('sessions.companion.state', TARGET, 'Companion exchanges of a session: none.', async (params) => {
    await existing(params);
    return { exchanges: [] };
  });
  refuse('sessions.companion.ask', 'operator.read', COMPANION);
  refuse('sessions.companion.reset', 'operator.write', COMPANION);

  read(
    'sessions.github.options',
    TARGET,
    'GitHub publication options of a session: no personal or shared publisher, nothing pending or published.',
    async (params) => {
      await existing(params);
      return { personal: null, shared: null, pendingPersonal: null, latestShared: null };
    },
  );
  // A status names a publication request; claw never started one, so every id is unknown.
  read(
    'sessions.github.status',
    { ...TARGET, required: ['sessionKey', 'requestId'] },
    'Status of a GitHub publication request: claw has none.',
    () => {
      throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `${GITHUB}: no publication request to report on`);
    },
  );
  refuse('sessions.github.publish', 'operator.write', GITHUB);
  refuse('sessions.github.confirm', 'operator.write', GITHUB);

  read('sessions.catalog.list', ANY_PARAMS, 'Session catalogs (other CLIs’ sessions): none.', () => ({ catalogs: [] }));
  read('sessions.catalog.read', ANY_PARAMS, 'Reading a catalog session: claw has no catalogs.', () => {
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `${CATALOG}: no catalog session to read`);
  });
  refuse('sessions.catalog.continue', 'operator.write', CATALOG);
  refuse('sessions.catalog.archive', 'operator.write', CATALOG);
  refuse('sessions.catalog.startTerminal', 'operator.admin', TERMINAL);

  // Placement: sessions.dispatch and sessions.move are scoped by their params in OpenClaw; write is the least.
  for (const name of ['sessions.dispatch', 'sessions.move', 'sessions.reclaim'])
    refuse(name, 'operator.write', PLACEMENT);
  refuse('sessions.assignOwner', 'operator.write', OWNERS);
  refuse('sessions.setInvolvement', 'operator.read', OWNERS);

  read('sessions.groups.list', ANY_PARAMS, 'Custom session groups: none.', () => ({ groups: [], sectionOrder: [] }));
  api.registerGatewayMethod('sessions.groups.defaults', {
    scope: 'operator.write',
    params: ANY_PARAMS,
    description: 'New Session defaults of custom groups: none.',
    handler: () => ({ defaults: [] }),
  });
  for (const name of [
    'sessions.groups.put',
    'sessions.groups.rename',
    'sessions.groups.update',
    'sessions.groups.delete',
  ])
    refuse(name, 'operator.write', GROUPS);

  api.registerGatewayMethod('sessions.storage.status', {
    scope: 'operator.admin',
    params: ANY_PARAMS,
    description:
      'Per agent, its session store and how many transcripts it holds (all hot: claw keeps no database or cold archive).',
    handler: () => ({
      agents: deps.sessions.knownAgents().map((agentId) => {
        const dir = deps.sessions.store(agentId).dir;
        const hotTranscripts = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.jsonl')).length : 0;
        return {
          agentId,
          storePath: join(dir, STORE_FILE),
          hotTranscripts,
          coldTranscripts: 0,
          databaseBytes: 0,
          walBytes: 0,
          archiveBytes: 0,
          embeddedArchiveBytes: 0,
        };
      }),
      maintenance: {
        running: false,
        lastStartedAt: null,
        lastCompletedAt: null,
        lastError: null,
        archivedTranscripts: 0,
        externalizedTranscripts: 0,
      },
    }),
  });
  refuse('sessions.storage.run', 'operator.admin', STORAGE);
  refuse('sessions.providerReview.continue', 'operator.write', PROVIDER_REVIEW);

  // Utility-model features: OpenClaw answers these "unavailable" when it has no utility model.
  api.registerGatewayMethod('sessions.activitySummary.ensure', {
    scope: 'operator.write',
    params: {
      type: 'object',
      required: ['sessions'],
      properties: {
        sessions: {
          type: 'array',
          minItems: 1,
          maxItems: 20,
          items: { type: 'object', required: ['key'], properties: { key: KEY, agentId: KEY } },
        },
      },
    },
    description: 'Activity summaries of sessions: unavailable, as claw writes none.',
    handler: async (params: { sessions: Array<{ key: string; agentId?: string }> }) => ({
      sessions: await Promise.all(
        params.sessions.map(async (session) => {
          const { agentId, sessionKey } = await existing(session);
          return { key: sessionKey, agentId, activitySummary: { canEnsure: false, state: 'unavailable' } };
        }),
      ),
    }),
  });
  api.registerGatewayMethod('sessions.title.prepare', {
    scope: 'operator.write',
    params: {
      type: 'object',
      required: ['agentId', 'message'],
      properties: { agentId: KEY, message: { type: 'string', maxLength: 1000 } },
    },
    description: 'A title inferred for a new session: null, as claw runs no title model (the first message names it).',
    handler: () => ({ title: null }),
  });
}
