/**
 * `openclaw.plugin.json`, as TypeBox: a build input. `npm run gen` turns it into
 * manifests/openclaw.plugin.schema.json and kernel/generated/ (JSON Schema, validator, types).
 *
 * A manifest is what the host reads instead of running plugin code: identity, config
 * schema, and every capability the plugin will register, so listing, validation, routing
 * and help work while the plugin's module stays unloaded.
 */
import { Type } from 'typebox';
import { HOOK_NAMES } from '../kernel/hooks/catalog.js';
import { SLOT_NAMES } from '../kernel/config/keys.js';

const Strict = { additionalProperties: false } as const;
const Open = { additionalProperties: true } as const;

const Name = Type.String({ minLength: 1, maxLength: 128 });
const Names = (description: string) => Type.Optional(Type.Array(Name, { uniqueItems: true, description }));

const SlotKind = Type.Enum(SLOT_NAMES);
/**
 * Kinds OpenClaw defines that claw has no slot for: its manifests may declare them, and
 * such a plugin loads with a diagnostic naming the kind (kernel/plugin-host/manifest.ts).
 */
export const FOREIGN_KINDS = ['context-engine'] as const;
const PluginKind = Type.Enum([...SLOT_NAMES, ...FOREIGN_KINDS]);
/** Config keys a plugin contributes to one kernel-owned object, each with its JSON Schema. */
const ContributedKeys = (description: string) =>
  Type.Record(Type.String({ pattern: '^[a-zA-Z][a-zA-Z0-9]*$' }), Type.Object({}, Open), { description });

export const PluginManifestSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    id: Type.String({
      pattern: '^[a-z0-9][a-z0-9._-]*$',
      maxLength: 128,
      description: 'Canonical plugin id; the key under plugins.entries.',
    }),
    configSchema: Type.Object({}, { ...Open, description: 'JSON Schema for plugins.entries.<id>.config.' }),
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    version: Type.Optional(Type.String()),
    entry: Type.Optional(
      Type.String({ minLength: 1, description: 'Module to import on activation, relative to the plugin root.' }),
    ),
    kind: Type.Optional(Type.Union([PluginKind, Type.Array(PluginKind, { minItems: 1, uniqueItems: true })])),
    enabledByDefault: Type.Optional(Type.Boolean()),
    requiresPlugins: Names('Plugin ids this plugin needs to be useful.'),
    requires: Type.Optional(
      Type.Object(
        {
          services: Names('Services (by id) of other plugins that this plugin cannot run without.'),
          slots: Type.Optional(
            Type.Array(SlotKind, { uniqueItems: true, description: 'Slots that must have a holder.' }),
          ),
        },
        {
          ...Strict,
          description:
            'Checked before the plugin is loaded: when one is missing the plugin does not run, and a diagnostic names the plugin that would provide it.',
        },
      ),
    ),
    channels: Names('Channel ids this plugin registers.'),
    providers: Names('Model provider ids this plugin registers.'),
    tools: Names('Agent tool names this plugin registers.'),
    commands: Type.Optional(
      Type.Array(
        Type.Union([
          Name,
          // OpenClaw-style rows: the name, and what else its tooling describes the command with.
          Type.Object({ name: Name, description: Type.Optional(Type.String()) }, Open),
        ]),
        {
          description:
            'Chat slash commands (without "/") this plugin registers: names; rows that are objects (with a name) mark an OpenClaw-format manifest.',
        },
      ),
    ),
    gatewayMethods: Names('Gateway RPC methods this plugin registers.'),
    gatewayEvents: Names('Gateway events this plugin emits (listed in hello-ok before the plugin loads).'),
    services: Names('Background services this plugin registers.'),
    httpRoutes: Type.Optional(
      Type.Array(Type.String({ pattern: '^/' }), { uniqueItems: true, description: 'HTTP path prefixes served.' }),
    ),
    hooks: Type.Optional(
      Type.Array(Type.Enum(HOOK_NAMES), {
        uniqueItems: true,
        description: 'Hooks this plugin handles; the plugin is loaded when one of them first runs.',
      }),
    ),
    skills: Names('Skill directories, relative to the plugin root.'),
    cliCommands: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ pattern: '^[a-z][a-z0-9-]*$' }),
            description: Type.String(),
            hasSubcommands: Type.Optional(Type.Boolean()),
          },
          Strict,
        ),
      ),
    ),
    configSections: Type.Optional(
      Type.Record(Type.String({ pattern: '^[a-zA-Z][a-zA-Z0-9]*$' }), Type.Object({}, Open), {
        description: 'Top-level openclaw.json sections this plugin owns, each with its JSON Schema.',
      }),
    ),
    configContributions: Type.Optional(
      Type.Object(
        {
          agents: Type.Optional(
            ContributedKeys(
              "Keys of agents.defaults and of every agents.list[] entry (an agent's value is merged over the defaults by the plugin that reads it).",
            ),
          ),
          agentDefaults: Type.Optional(ContributedKeys('Keys of agents.defaults only.')),
          tools: Type.Optional(ContributedKeys('Keys of the tools section.')),
        },
        {
          ...Strict,
          description:
            'Keys this plugin adds to the sections the kernel owns, each with its JSON Schema. Checked from the manifests of all installed plugins, on or off, without loading any; a key several plugins contribute must satisfy all of them (their object schemas are merged property by property).',
        },
      ),
    ),
    runtimeDependencies: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 214 }),
            version: Type.String({ minLength: 1, description: 'A semver range.' }),
            platformPackages: Type.Optional(
              Type.Record(Type.String({ pattern: '^[a-z0-9]+-[a-z0-9]+$' }), Type.String({ minLength: 1 }), {
                description: '"<platform>-<arch>" → the one optional binary package to add for that machine.',
              }),
            ),
            approxSizeMb: Type.Optional(Type.Number({ minimum: 0 })),
            scripts: Type.Optional(Type.Boolean({ description: 'Run install scripts (default false).' })),
          },
          Strict,
        ),
        {
          description:
            'Heavy npm packages not installed with claw: `claw plugins enable` (or first use) installs them into <stateDir>/runtime-deps.',
        },
      ),
    ),
    activation: Type.Optional(
      Type.Object(
        {
          onStartup: Type.Optional(Type.Boolean({ description: 'Load at every start.' })),
          onStartupIfState: Type.Optional(
            Type.Array(Type.String(), {
              description:
                "Load as the gateway starts when one of these files under the state directory holds data: work a previous process left, which a service of the plugin resumes as it starts (the agent plugin names each agent's intake journal). A `*` segment matches any name.",
            }),
          ),
        },
        { ...Open, description: 'When to load the plugin at start rather than at first use.' },
      ),
    ),
    uiHints: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object(
          {
            label: Type.Optional(Type.String()),
            help: Type.Optional(Type.String()),
            placeholder: Type.Optional(Type.String()),
            sensitive: Type.Optional(Type.Boolean()),
          },
          Open,
        ),
      ),
    ),
  },
  { ...Open, description: 'claw / OpenClaw plugin manifest (openclaw.plugin.json).' },
);

/**
 * OpenClaw manifest fields claw accepts but does not act on, so OpenClaw plugins still
 * load; any other unknown key is reported as a warning.
 */
export const FOREIGN_FIELDS = [
  'enabledByDefaultOnPlatforms',
  'legacyPluginIds',
  'autoEnableWhenConfiguredProviders',
  'providerCatalogEntry',
  'capabilityCatalogEntry',
  'modelSupport',
  'modelCatalog',
  'modelPricing',
  'modelIdNormalization',
  'providerEndpoints',
  'providerRequest',
  'secretProviderIntegrations',
  'cliBackends',
  'syntheticAuthRefs',
  'nonSecretAuthMarkers',
  'commandAliases',
  'providerUsageAuthEnvVars',
  'providerAuthAliases',
  'providerAuthChoices',
  'backupResources',
  'setup',
  'doctorContract',
  'doctorHealthChecks',
  'sessionRouteStateOwners',
  'qaRunners',
  'dashboard',
  'mcpServers',
  'themes',
  'contracts',
  'transcriptSources',
  'configContracts',
  'mediaUnderstandingProviderMetadata',
  'imageGenerationProviderMetadata',
  'videoGenerationProviderMetadata',
  'musicGenerationProviderMetadata',
  'toolMetadata',
  'channelConfigs',
  'channelAccountKeyPolicies',
  'catalog',
  'categories',
  'configGroups',
];
