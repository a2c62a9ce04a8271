/**
 * `tools.catalog` in OpenClaw's shape: every registered tool, grouped, with where it comes
 * from and which tool profiles include it. The Control UI's tools panel and `openclaw` read
 * it. Tools of claw's bundled plugins count as "core" (they are what OpenClaw builds in);
 * tools of plugins the user installed are "plugin", grouped per plugin.
 *
 * Descriptions come from the tools themselves, so the owning plugins load (as they would for
 * the agent's next turn); a plugin that fails to load still lists its tools by name.
 */
import { dirname } from 'node:path';
import { agentValue, assertKnownAgent, defaultAgentId, modelChain, type ModelSetting } from '../../sdk/agent/index.js';
import {
  ErrorCodes,
  normalizeAgentId,
  parseSessionKey,
  ProtocolError,
  type KernelConfig,
  type PluginApi,
  TOOL_GROUPS,
  TOOL_POLICY_SERVICE,
  TOOL_PROFILES,
  type ToolPolicyService,
} from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';

interface CatalogTool {
  id: string;
  label: string;
  description: string;
  source: 'core' | 'plugin';
  pluginId?: string;
  defaultProfiles: string[];
}

interface CatalogGroup {
  id: string;
  label: string;
  source: 'core' | 'plugin';
  pluginId?: string;
  tools: CatalogTool[];
}

const GROUP_LABELS: Record<string, string> = {
  'group:fs': 'Files',
  'group:runtime': 'Runtime',
  'group:sessions': 'Sessions',
  'group:memory': 'Memory',
  'group:web': 'Web',
  'group:ui': 'UI',
  'group:nodes': 'Nodes',
};

/** The profiles whose allow list takes this tool (directly or by group); `full` takes all. */
export function profilesOf(tool: string): string[] {
  const name = tool.toLowerCase();
  return Object.entries(TOOL_PROFILES)
    .filter(
      ([, allow]) =>
        allow === undefined ||
        allow.some(
          (entry) =>
            entry === name ||
            (TOOL_GROUPS[entry]?.includes(name) ?? false) ||
            (entry === '*__*' && name.includes('__')), // MCP servers' tools
        ),
    )
    .map(([profile]) => profile);
}

function firstSentence(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  const end = line.search(/\.(\s|$)/);
  return (end > 0 ? line.slice(0, end + 1) : line).slice(0, 300);
}

export function registerToolsCatalog(api: PluginApi): void {
  const kernel = api.kernel;
  api.registerGatewayMethod('tools.catalog', {
    params: {
      type: 'object',
      additionalProperties: false,
      properties: { agentId: { type: 'string', minLength: 1 }, includePlugins: { type: 'boolean' } },
    },
    scope: 'operator.read',
    description:
      'The tools an agent can be given: {agentId, profiles: [{id, label}], groups: [{id, label, source: core|plugin, pluginId?, tools: [{id, label, description, source, pluginId?, defaultProfiles}]}]}.',
    handler: async (params: { agentId?: string; includePlugins?: boolean }) => {
      const config = kernel.config() as KernelConfig;
      const agentId = params.agentId ? normalizeAgentId(params.agentId) : defaultAgentId(config);
      assertKnownAgent(config, agentId);
      const groups = await catalogGroups(api, params.includePlugins !== false);
      for (const group of groups.values()) group.tools.sort((a, b) => a.id.localeCompare(b.id));
      // Core groups first, then plugins, each by label.
      const ordered = [...groups.values()].sort((a, b) =>
        a.source === b.source ? a.label.localeCompare(b.label) : a.source === 'core' ? -1 : 1,
      );
      const profiles = Object.keys(TOOL_PROFILES).map((id) => ({ id, label: id[0]!.toUpperCase() + id.slice(1) }));
      return { agentId, profiles, groups: ordered };
    },
  });
  registerToolsEffective(api);
}

/**
 * OpenClaw's tools.effective: the tools an agent's turn in a session would be offered, after
 * the tool policy (tools.*, the agent's own tools, the session's sub-agent narrowing, the
 * policy of the agent's primary model's provider), grouped core then plugin.
 */
function registerToolsEffective(api: PluginApi): void {
  const kernel = api.kernel;
  api.registerGatewayMethod('tools.effective', {
    params: {
      type: 'object',
      required: ['sessionKey'],
      properties: { agentId: { type: 'string', minLength: 1 }, sessionKey: { type: 'string', minLength: 1 } },
    },
    scope: 'operator.read',
    description:
      'The tools a turn of sessionKey gets after the tool policy: {agentId, profile, groups: [{id: core|plugin, label, source, tools: [{id, label, description, rawDescription, source, pluginId?}]}]}.',
    handler: async (params: { agentId?: string; sessionKey: string }) => {
      const config = kernel.config() as KernelConfig;
      const fromKey = parseSessionKey(params.sessionKey).agentId;
      if (params.agentId && fromKey && normalizeAgentId(params.agentId) !== normalizeAgentId(fromKey))
        throw new ProtocolError(
          ErrorCodes.INVALID_REQUEST,
          `agentId "${params.agentId}" does not match the agent of sessionKey "${params.sessionKey}"`,
        );
      const agentId = normalizeAgentId(params.agentId ?? fromKey ?? defaultAgentId(config));
      assertKnownAgent(config, agentId);
      const policy = await requireService<ToolPolicyService>(kernel, TOOL_POLICY_SERVICE, 'tools.effective');
      const [model] = modelChain(agentValue<ModelSetting>(config, agentId, 'model'));
      const allowed = policy.configured(config, {
        agentId,
        sessionKey: params.sessionKey,
        ...(model ? { model } : {}),
      });
      const raw = new Map<string, string>();
      const bySource = new Map<'core' | 'plugin', Array<Record<string, unknown>>>();
      for (const group of (await catalogGroups(api, true, raw)).values()) {
        for (const tool of group.tools) {
          if (!allowed(tool.id)) continue;
          const list = bySource.get(tool.source) ?? [];
          list.push({
            id: tool.id,
            label: tool.label,
            description: tool.description,
            rawDescription: raw.get(tool.id) ?? '',
            source: tool.source,
            ...(tool.pluginId ? { pluginId: tool.pluginId } : {}),
          });
          bySource.set(tool.source, list);
        }
      }
      const groups = (['core', 'plugin'] as const)
        .filter((source) => bySource.has(source))
        .map((source) => ({
          id: source,
          label: source === 'core' ? 'Built-in tools' : 'Plugin tools',
          source,
          tools: bySource.get(source)!.sort((a, b) => String(a.id).localeCompare(String(b.id))),
        }));
      const layer = (agentValue<{ profile?: string }>(config, agentId, 'tools') ?? {}) as { profile?: string };
      const profile = layer.profile ?? (config.tools as { profile?: string } | undefined)?.profile ?? 'full';
      return { agentId, profile, groups };
    },
  });
}

/** Plugins shipped with claw: bundled, or loaded from the folder this plugin came from (a checkout, tests). */
export function shippedPluginIds(api: PluginApi): Set<string> {
  const plugins = api.kernel.plugins();
  const home = plugins.find((record) => record.id === api.id)?.dir;
  const shipped = home ? dirname(home) : undefined;
  return new Set(
    plugins
      .filter(
        (record) =>
          record.origin === 'bundled' ||
          (shipped !== undefined && record.dir !== undefined && dirname(record.dir) === shipped),
      )
      .map((record) => record.id),
  );
}

/** Every registered tool, grouped as tools.catalog shows them (plugin tools only when `includePlugins`). */
async function catalogGroups(
  api: PluginApi,
  includePlugins: boolean,
  rawDescriptions = new Map<string, string>(),
): Promise<Map<string, CatalogGroup>> {
  const kernel = api.kernel;
  const bundled = shippedPluginIds(api);
  const names = new Map(kernel.plugins().map((record) => [record.id, record.manifest?.name ?? record.id]));
  const groups = new Map<string, CatalogGroup>();
  for (const info of kernel.capabilities.list('tool')) {
    const core = bundled.has(info.pluginId);
    if (!core && !includePlugins) continue;
    const tool = await kernel.capabilities.find('tool', info.name).catch(() => undefined);
    rawDescriptions.set(info.name, tool?.description ?? '');
    const entry: CatalogTool = {
      id: info.name,
      label: info.name,
      description: tool?.description
        ? firstSentence(tool.description)
        : `Tool from ${names.get(info.pluginId) ?? info.pluginId}`,
      source: core ? 'core' : 'plugin',
      ...(core ? {} : { pluginId: info.pluginId }),
      defaultProfiles: profilesOf(info.name),
    };
    const groupId = core
      ? (Object.keys(TOOL_GROUPS).find((group) => TOOL_GROUPS[group]!.includes(info.name)) ?? 'group:other')
      : `plugin:${info.pluginId}`;
    const group = groups.get(groupId) ?? {
      id: groupId,
      label: core ? (GROUP_LABELS[groupId] ?? 'Other') : (names.get(info.pluginId) ?? info.pluginId),
      source: core ? 'core' : 'plugin',
      ...(core ? {} : { pluginId: info.pluginId }),
      tools: [],
    };
    group.tools.push(entry);
    groups.set(groupId, group);
  }
  return groups;
}
