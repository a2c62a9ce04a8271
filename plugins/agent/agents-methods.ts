/**
 * `agents.list` and `agent.identity.get` in OpenClaw's shapes: the configured agents (the
 * implicit "main" when `agents.list` is empty), the default one and how each presents
 * itself. Clients (OpenClaw's CLI and apps) call `agents.list` before they send anything.
 */
import {
  agentEntry,
  agentIds,
  agentPaths,
  agentValue,
  assertKnownAgent,
  defaultAgentId,
  modelChain,
  resolveAgentIdentity,
  type ModelSetting,
} from '../../sdk/agent/index.js';
import {
  ErrorCodes,
  normalizeAgentId,
  normalizeMainKey,
  parseSessionKey,
  ProtocolError,
  type JsonSchema,
  type KernelConfig,
  type PluginApi,
} from '../../sdk/index.js';
import type { SessionService } from '../../sdk/sessions/index.js';

const AGENT_OR_SESSION: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { agentId: { type: 'string', minLength: 1 }, sessionKey: { type: 'string', minLength: 1 } },
};

export function registerAgentListMethods(api: PluginApi, sessions: Pick<SessionService, 'openclawListDefaults'>): void {
  const kernel = api.kernel;
  const config = () => kernel.config() as KernelConfig;
  const identityOf = (agentId: string) => {
    return resolveAgentIdentity(config(), agentId, agentPaths(config(), agentId, kernel.paths).workspaceDir);
  };

  api.registerGatewayMethod('agents.list', {
    params: { type: 'object', additionalProperties: false, properties: {} },
    scope: 'operator.read',
    description:
      'The configured agents: {defaultId, mainKey, scope, agents: [{id, name?, identity?, model?: {primary, fallbacks}, workspace}]}.',
    handler: () => {
      const session = (config().session ?? {}) as { mainKey?: string; scope?: string };
      const agents = [...new Set(agentIds(config()).map((id) => normalizeAgentId(id)))].map((id) => {
        const name = agentEntry(config(), id)?.name as string | undefined;
        const identity = identityOf(id);
        // OpenClaw's clients read the agent's model here (its Control UI asks for a provider when there is none).
        const [primary, ...fallbacks] = modelChain(agentValue<ModelSetting>(config(), id, 'model'));
        return {
          id,
          ...(name ? { name } : {}),
          ...(Object.keys(identity).length > 0 ? { identity } : {}),
          ...(primary ? { model: { primary, fallbacks } } : {}),
          // The Control UI shows where each agent's files live.
          workspace: agentPaths(config(), id, kernel.paths).workspaceDir,
          // claw does not track whether a workspace is a git checkout; every agent runs in claw's own loop.
          workspaceGit: null,
          agentRuntime: { id: 'claw', source: 'implicit' },
          ...thinkingOf(
            sessions.openclawListDefaults(null, agentValue<string>(config(), id, 'thinkingDefault') ?? 'off'),
          ),
          defaultPermissionMode: 'full',
        };
      });
      return {
        defaultId: defaultAgentId(config()),
        // One gateway owns every agent it lists; clients pick one only when told to.
        ownership: 'sole',
        selectionRequired: false,
        mainKey: normalizeMainKey(session.mainKey),
        scope: session.scope === 'global' ? 'global' : 'per-sender',
        agents,
      };
    },
  });

  api.registerGatewayMethod('agent.identity.get', {
    params: AGENT_OR_SESSION,
    scope: 'operator.read',
    description:
      "An agent's identity (by agentId, or the agent of sessionKey; default: the default agent): {agentId, name?, avatar?, emoji?}.",
    handler: (params: { agentId?: string; sessionKey?: string }) => {
      const fromKey = params.sessionKey ? parseSessionKey(params.sessionKey).agentId : undefined;
      if (params.agentId && fromKey && normalizeAgentId(params.agentId) !== normalizeAgentId(fromKey)) {
        throw new ProtocolError(
          ErrorCodes.INVALID_REQUEST,
          `agentId "${params.agentId}" does not match the agent of sessionKey "${params.sessionKey}"`,
        );
      }
      const agentId = normalizeAgentId(params.agentId ?? fromKey ?? defaultAgentId(config()));
      assertKnownAgent(config(), agentId);
      const { name, avatar, emoji } = identityOf(agentId);
      // As OpenClaw: a name and avatar always, saying whether the name was configured.
      return {
        agentId,
        name: name ?? 'Assistant',
        nameSource: name ? 'config' : 'default',
        avatar: avatar ?? (emoji || (name ?? 'Assistant').slice(0, 1).toUpperCase()),
        ...(emoji ? { emoji } : {}),
      };
    },
  });
}

/** An agent's thinking choices, as its sessions list them. */
function thinkingOf({ thinkingLevels, thinkingOptions, thinkingDefault }: Record<string, unknown>) {
  return { thinkingLevels, thinkingOptions, thinkingDefault };
}
