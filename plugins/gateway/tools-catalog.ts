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
import { assertKnownAgent, defaultAgentId } from '../../sdk/agent/index.js';
import { normalizeAgentId, type KernelConfig, type PluginApi, TOOL_GROUPS, TOOL_PROFILES } from '../../sdk/index.js';

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
};

/** The profiles whose allow list takes this tool (directly or by group); `full` takes all. */
export function profilesOf(tool: string): string[] {
  const name = tool.toLowerCase();
  return Object.entries(TOOL_PROFILES)
    .filter(
      ([, allow]) =>
        allow === undefined || allow.some((entry) => entry === name || (TOOL_GROUPS[entry]?.includes(name) ?? false)),
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
      // Shipped with claw: bundled, or loaded from the folder this plugin came from (a checkout, tests).
      const home = kernel.plugins().find((record) => record.id === api.id)?.dir;
      const shipped = home ? dirname(home) : undefined;
      const bundled = new Set(
        kernel
          .plugins()
          .filter(
            (record) =>
              record.origin === 'bundled' ||
              (shipped !== undefined && record.dir !== undefined && dirname(record.dir) === shipped),
          )
          .map((record) => record.id),
      );
      const names = new Map(kernel.plugins().map((record) => [record.id, record.manifest?.name ?? record.id]));
      const groups = new Map<string, CatalogGroup>();
      for (const info of kernel.capabilities.list('tool')) {
        const core = bundled.has(info.pluginId);
        if (!core && params.includePlugins === false) continue;
        const tool = await kernel.capabilities.find('tool', info.name).catch(() => undefined);
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
      for (const group of groups.values()) group.tools.sort((a, b) => a.id.localeCompare(b.id));
      // Core groups first, then plugins, each by label.
      const ordered = [...groups.values()].sort((a, b) =>
        a.source === b.source ? a.label.localeCompare(b.label) : a.source === 'core' ? -1 : 1,
      );
      const profiles = Object.keys(TOOL_PROFILES).map((id) => ({ id, label: id[0]!.toUpperCase() + id.slice(1) }));
      return { agentId, profiles, groups: ordered };
    },
  });
}
