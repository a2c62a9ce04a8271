/**
 * OpenClaw's plugin detail methods over claw's plugin records: plugins.inspect (what a plugin
 * declares, where it came from, its README), and the ones claw's plugins give nothing to —
 * credential fields (no manifest declares one) and install/uninstall from the Control UI
 * (claw installs plugins from its host's disk with `claw plugins install`).
 */
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_ADMIN_SERVICE, type ConfigAdmin } from '../../sdk/config.js';
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi, type PluginRecord } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';

/** OpenClaw's groups of what a plugin declares, in its order; claw's manifests fill the ones they have. */
const DECLARED_GROUPS = [
  'channels',
  'providers',
  'tools',
  'contracts',
  'hooks',
  'mcpServers',
  'cliCommands',
  'cliBackends',
  'skills',
  'dangerousConfigFlags',
] as const;
const MAX_README_BYTES = 512 * 1024;

type Declared = Record<(typeof DECLARED_GROUPS)[number], string[]>;

function names(values: ReadonlyArray<string | { name?: string; id?: string }> | undefined): string[] {
  return (values ?? [])
    .map((value) => (typeof value === 'string' ? value : (value.name ?? value.id ?? '')))
    .filter(Boolean)
    .sort();
}

function declaredOf(record: PluginRecord): Declared {
  const manifest = record.manifest;
  const declared = Object.fromEntries(DECLARED_GROUPS.map((group) => [group, [] as string[]])) as Declared;
  if (!manifest) return declared;
  declared.channels = names(manifest.channels);
  declared.providers = names(manifest.providers);
  declared.tools = names(manifest.tools);
  declared.hooks = names(manifest.hooks);
  declared.cliCommands = names(manifest.cliCommands);
  declared.skills = names(manifest.skills);
  return declared;
}

/** A plugin's README, read only when it is a plain file of reasonable size inside its folder. */
function readmeOf(record: PluginRecord): string | undefined {
  if (!record.dir) return undefined;
  const path = join(record.dir, 'README.md');
  try {
    const stats = lstatSync(path);
    if (!stats.isFile() || stats.size > MAX_README_BYTES) return undefined;
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function sourceOf(record: PluginRecord): Record<string, unknown> | undefined {
  if (record.install) return { kind: record.install.source, spec: record.install.spec };
  if (record.origin === 'bundled') return { kind: 'bundled' };
  return record.dir ? { kind: 'path', spec: record.dir } : undefined;
}

const PLUGIN_ID: JsonSchema = {
  type: 'object',
  required: ['pluginId'],
  properties: { pluginId: { type: 'string', minLength: 1 } },
};

export function registerPluginInspectMethods(api: PluginApi): void {
  const kernel = api.kernel;
  const recordOf = (id: string) => {
    const record = kernel.plugins().find((candidate) => candidate.id === id);
    if (!record) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `Plugin "${id}" not found.`);
    return record;
  };

  api.registerGatewayMethod('plugins.inspect', {
    params: PLUGIN_ID,
    scope: 'operator.read',
    description:
      "One plugin in detail, in OpenClaw's shape: {ok, plugin, source?, declared, grants, components, overview, credentials, reviewToken, decisions}.",
    handler: async (params: { pluginId: string }) => {
      const record = recordOf(params.pluginId);
      const summary = (
        await requireService<ConfigAdmin>(kernel, CONFIG_ADMIN_SERVICE, 'plugins.inspect')
      ).describePlugin(record);
      const declared = declaredOf(record);
      const source = sourceOf(record);
      const readme = readmeOf(record);
      const mapped = (['skills', 'mcpServers', 'cliCommands', 'hooks'] as const)
        .filter((group) => declared[group].length > 0)
        .map((group) => (group === 'cliCommands' ? 'commands' : group));
      return {
        ok: true,
        plugin: {
          id: record.id,
          name: record.name,
          ...(record.version ? { version: record.version } : {}),
          ...(record.description ? { description: record.description } : {}),
          origin: record.origin,
          installed: true,
          enabled: record.enabled,
          // claw's own view beside OpenClaw's: whether it loaded, and why it is on or off.
          status: summary.status,
          reason: summary.reason,
        },
        ...(source ? { source } : {}),
        declared,
        // claw runs every enabled plugin's hooks with the conversation: nothing is withheld per plugin.
        grants: { hooks: { allowPromptInjection: { effective: true }, allowConversationAccess: { effective: true } } },
        components: {
          mapped,
          skills: declared.skills,
          mcpServers: [],
          commands: declared.cliCommands,
          hooks: declared.hooks,
          lspServers: [],
          unavailable: { capabilities: [], mcpServers: [], lspServers: [] },
        },
        overview: readme ? { readme } : {},
        credentials: [],
        reviewToken: createHash('sha256').update(JSON.stringify(declared)).digest('hex'),
        decisions: [],
      };
    },
  });

  api.registerGatewayMethod('plugins.credentials.inspect', {
    params: { type: 'object', required: ['pluginId'], properties: { pluginId: { type: 'string' } } },
    scope: 'operator.admin',
    description: "A plugin's declared credential field: claw's manifests declare none (keys live in the config).",
    handler: (params: { pluginId: string }) => {
      recordOf(params.pluginId);
      throw new ProtocolError(
        ErrorCodes.INVALID_REQUEST,
        'This installed plugin does not declare that credential field.',
      );
    },
  });

  for (const [method, cli] of [
    ['plugins.install', 'claw plugins install <path>'],
    ['plugins.uninstall', 'claw plugins uninstall <id>'],
  ] as const) {
    api.registerGatewayMethod(method, {
      params: { type: 'object' },
      scope: 'operator.admin',
      description: `Refused: claw installs and removes plugins on its host with \`${cli}\`.`,
      handler: () => {
        throw new ProtocolError(
          ErrorCodes.UNAVAILABLE,
          `claw cannot ${method === 'plugins.install' ? 'install' : 'uninstall'} plugins over the gateway; run \`${cli}\` on the gateway host`,
        );
      },
    });
  }
}
