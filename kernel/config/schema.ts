/**
 * The part of openclaw.json the kernel itself owns, as TypeBox. This module is read at
 * build time (`npm run gen`) to produce kernel/generated/schemas.ts; runtime code imports
 * only the generated JSON Schema and, from here, types.
 *
 * Sections owned by plugins (gateway, channels, memory, …) are declared in those plugins'
 * manifests (`configSections`) and validated against their schemas.
 */
import { Type, type Static } from 'typebox';


const Strict = { additionalProperties: false } as const;
const Open = { additionalProperties: true } as const;
const PositiveInt = Type.Integer({ minimum: 1 });
/** A plugin id, or "none" to leave the slot empty. */
const SlotHolder = Type.String({ minLength: 1 });
const PluginIds = Type.Array(Type.String({ minLength: 1 }), { uniqueItems: true });

export const PluginEntrySchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    config: Type.Optional(Type.Unknown()),
    hooks: Type.Optional(
      Type.Object(
        {
          allowConversationAccess: Type.Optional(Type.Boolean()),
          allowPromptInjection: Type.Optional(Type.Boolean()),
        },
        Strict,
      ),
    ),
  },
  Strict,
);

export const InstallRecordSchema = Type.Object(
  {
    source: Type.Union([Type.Literal('path'), Type.Literal('archive'), Type.Literal('npm')]),
    spec: Type.String(),
    installPath: Type.String(),
    version: Type.Optional(Type.String()),
    installedAt: Type.String(),
  },
  Strict,
);

export const PluginsConfigSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    allow: Type.Optional(PluginIds),
    deny: Type.Optional(PluginIds),
    load: Type.Optional(Type.Object({ paths: Type.Optional(Type.Array(Type.String({ minLength: 1 }))) }, Strict)),
    slots: Type.Optional(
      Type.Object(
        {
          memory: Type.Optional(SlotHolder),
          agentLoop: Type.Optional(SlotHolder),
          sandbox: Type.Optional(SlotHolder),
        },
        Strict,
      ),
    ),
    entries: Type.Optional(Type.Record(Type.String(), PluginEntrySchema)),
    installs: Type.Optional(Type.Record(Type.String(), InstallRecordSchema)),
  },
  Strict,
);

const ToolNames = Type.Array(Type.String({ minLength: 1 }));
const ToolLayer = {
  profile: Type.Optional(Type.Enum(['minimal', 'coding', 'messaging', 'full'] as const)),
  allow: Type.Optional(ToolNames),
  deny: Type.Optional(ToolNames),
};
export const ToolsConfigSchema = Type.Object(
  {
    ...ToolLayer,
    byProvider: Type.Optional(Type.Record(Type.String(), Type.Object(ToolLayer, Strict))),
  },
  Open,
);

export const KernelConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    meta: Type.Optional(Type.Object({}, Open)),
    plugins: Type.Optional(PluginsConfigSchema),
    agents: Type.Optional(
      Type.Object(
        {
          defaults: Type.Optional(
            Type.Object(
              {
                workspace: Type.Optional(Type.String({ minLength: 1 })),
                maxConcurrent: Type.Optional(PositiveInt),
                subagents: Type.Optional(Type.Object({ maxConcurrent: Type.Optional(PositiveInt) }, Open)),
              },
              Open,
            ),
          ),
        },
        Open,
      ),
    ),
    cron: Type.Optional(Type.Object({ maxConcurrentRuns: Type.Optional(PositiveInt) }, Open)),
    tools: Type.Optional(ToolsConfigSchema),
  },
  Open,
);

export type PluginEntry = Static<typeof PluginEntrySchema>;
export type InstallRecord = Static<typeof InstallRecordSchema>;
export type PluginsConfig = Static<typeof PluginsConfigSchema>;
export type KernelConfig = Static<typeof KernelConfigSchema> & Record<string, unknown>;
