/**
 * A session's transcript as branches, in OpenClaw's terms: every entry names the one
 * before it, so the tips of that tree are the branches, and the newest entry's path is the
 * active one. claw only ever appends to the active path (an OpenClaw import keeps just the
 * branch its pointer chose), so rewinding, forking from an earlier message or switching to
 * another tip is not something claw does: those answer UNAVAILABLE.
 */
import { existsSync } from 'node:fs';
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { isMessageEntry, parseSessionKey } from '../../sdk/agent/index.js';
import { KEY, type SessionsDeps } from './methods.js';
import { isSessionHeader, Transcript } from './transcript.js';

const HEADLINE_CHARS = 80;

const TARGET: JsonSchema = {
  type: 'object',
  required: ['sessionKey'],
  additionalProperties: false,
  properties: { sessionKey: KEY, agentId: KEY },
};

/** OpenClaw's clients may send params newer than claw knows: tolerated, not refused. */
const ANY_PARAMS: JsonSchema = { type: 'object' };

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : ''))
    .join(' ');
}

async function branchesOf(deps: SessionsDeps, params: { sessionKey: string; agentId?: string }) {
  const { agentId, sessionKey } = deps.sessions.resolveTarget({
    sessionKey: params.sessionKey,
    ...(params.agentId ? { agentId: params.agentId } : {}),
  });
  const store = deps.sessions.store(agentId);
  const entry = await store.get(sessionKey);
  // A session not written yet (a new chat) has no branches.
  const file = entry && store.transcriptPath(entry.sessionId, parseSessionKey(sessionKey).threadId);
  const entries =
    file && existsSync(file) ? new Transcript(file).entries().filter((item) => !isSessionHeader(item)) : [];
  const byId = new Map(entries.map((item) => [(item as { id: string }).id, item]));
  const parents = new Set(entries.map((item) => (item as { parentId: string | null }).parentId));
  const active = (entries.at(-1) as { id: string } | undefined)?.id;
  return entries
    .filter((item) => !parents.has((item as { id: string }).id))
    .map((tip) => {
      let messageCount = 0;
      let headline = '';
      for (let at: typeof tip | undefined = tip; at;) {
        if (isMessageEntry(at)) {
          messageCount++;
          if (!headline && at.message.role === 'user') headline = textOf(at.message.content);
        }
        const parentId: string | null = (at as { parentId: string | null }).parentId;
        at = parentId ? byId.get(parentId) : undefined;
      }
      const flat = headline.replace(/\s+/g, ' ').trim();
      const tipId = (tip as { id: string }).id;
      return {
        leafEntryId: tipId,
        headline: flat.length > HEADLINE_CHARS ? `${flat.slice(0, HEADLINE_CHARS - 1)}…` : flat,
        messageCount,
        updatedAt: (tip as { timestamp: string }).timestamp,
        active: tipId === active,
      };
    });
}

export function registerBranchMethods(api: PluginApi, deps: SessionsDeps): void {
  api.registerGatewayMethod('sessions.branches.list', {
    scope: 'operator.read',
    params: TARGET,
    description:
      "The tips of a session's transcript: {branches: [{leafEntryId, headline (latest user message), messageCount, updatedAt, active}]}.",
    handler: async (params: { sessionKey: string; agentId?: string }) => ({ branches: await branchesOf(deps, params) }),
  });

  api.registerGatewayMethod('sessions.branches.switch', {
    scope: 'operator.admin',
    params: {
      ...TARGET,
      required: ['sessionKey', 'leafEntryId'],
      properties: { ...(TARGET.properties as object), leafEntryId: KEY },
    },
    description: 'Switch to a branch: the active one answers {}; claw continues only from the newest entry.',
    handler: async (params: { sessionKey: string; agentId?: string; leafEntryId: string }) => {
      const branch = (await branchesOf(deps, params)).find((item) => item.leafEntryId === params.leafEntryId);
      if (!branch) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `no branch ends at entry ${params.leafEntryId}`);
      if (!branch.active)
        throw new ProtocolError(
          ErrorCodes.UNAVAILABLE,
          'claw continues a session from its newest entry: switching to an older branch is not available',
        );
      return {};
    },
  });

  const refuse = (name: string, scope: 'operator.write' | 'operator.admin', message: string) =>
    api.registerGatewayMethod(name, {
      scope,
      params: ANY_PARAMS,
      description: `UNAVAILABLE: ${message}.`,
      handler: () => {
        throw new ProtocolError(ErrorCodes.UNAVAILABLE, message);
      },
    });
  refuse(
    'sessions.rewind',
    'operator.admin',
    'claw does not rewind sessions (a session only grows from its newest entry)',
  );
  refuse('sessions.fork', 'operator.write', 'claw does not fork sessions from an earlier message');
  refuse(
    'sessions.recover',
    'operator.write',
    'claw leaves no sessions to recover after a restart: interrupted turns resume from the intake journal',
  );
}
