/**
 * The part of openclaw.json the kernel itself owns, as TypeBox: a build input. `npm run gen`
 * turns it into kernel/generated/ (JSON Schema, a precompiled validator and the static
 * types); nothing at run time imports this file.
 *
 * Sections owned by plugins (gateway, channels, memory, …) are declared in those plugins'
 * manifests (`configSections`) and validated against their schemas; keys plugins add to
 * `agents.defaults`, `agents.list[]` and `tools` (heartbeat, subagents, compaction, tools.web, …)
 * are declared in their manifests' `configContributions`, written from each plugin's schemas.ts.
 */
import { Type } from 'typebox';
import { HOOK_NAMES } from '../kernel/hooks/catalog.js';

const Strict = { additionalProperties: false } as const;
const Open = { additionalProperties: true } as const;
const PositiveInt = Type.Integer({ minimum: 1 });
/** A plugin id, or "none" to leave the slot empty. */
const SlotHolder = Type.String({ minLength: 1 });
const PluginIds = Type.Array(Type.String({ minLength: 1 }), { uniqueItems: true });
const HookTimeout = Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 });
const HOOK_NAME_PATTERN = `^(${HOOK_NAMES.join('|')})$`;

export const PluginEntrySchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    config: Type.Optional(Type.Unknown()),
    hooks: Type.Optional(
      Type.Object(
        {
          allowConversationAccess: Type.Optional(Type.Boolean()),
          allowPromptInjection: Type.Optional(Type.Boolean()),
          /** Budget for each of this plugin's async hook handlers, ms (0: wait forever). */
          timeoutMs: Type.Optional(HookTimeout),
          /** Per-hook budgets, ms; win over timeoutMs. */
          timeouts: Type.Optional(Type.Record(Type.String({ pattern: HOOK_NAME_PATTERN }), HookTimeout, Strict)),
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
const WorkspaceOnly = (description: string) => Type.Optional(Type.Boolean({ description }));
const IdListSchema = () => Type.Array(Type.Union([Type.String({ minLength: 1 }), Type.Number()]));
/** Host exec policy (OpenClaw's names); exec-approvals.json can only make it stricter. */
const ExecConfigSchema = Type.Object(
  {
    security: Type.Optional(
      Type.Enum(['deny', 'allowlist', 'full'] as const, {
        description: 'Host exec: deny all, allowlisted only, or any command (default full).',
      }),
    ),
    ask: Type.Optional(
      Type.Enum(['off', 'on-miss', 'always'] as const, {
        description: 'When to ask a person before host exec (default off).',
      }),
    ),
    safeBins: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description:
          'Stdin-only filters that run in allowlist mode without an entry (default cut, uniq, head, tail, tr, wc).',
      }),
    ),
    safeBinTrustedDirs: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'Extra directories safe bins may resolve from (always /bin and /usr/bin).',
      }),
    ),
    host: Type.Optional(
      Type.Enum(['auto', 'sandbox', 'gateway', 'node'] as const, {
        description:
          'Where exec runs: auto (the sandbox when the session has one, else the gateway host), sandbox, gateway or node (a paired node). Default auto.',
      }),
    ),
    node: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'The node exec host=node runs on (id, name, IP or id prefix); unset: the sole connected node that can run commands.',
      }),
    ),
    applyPatch: Type.Optional(
      Type.Object(
        { workspaceOnly: WorkspaceOnly('Keep apply_patch inside the agent workspace. Default true.') },
        Strict,
      ),
    ),
  },
  Open,
);
const ElevatedConfigSchema = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'Allow exec calls to escape the sandbox to the host (elevated: true); host exec approvals still apply. Default false.',
      }),
    ),
    allowFrom: Type.Optional(
      Type.Record(Type.String(), IdListSchema(), {
        description: 'Per channel: senders whose sessions may use elevated mode.',
      }),
    ),
  },
  Strict,
);
/** `agents.list[].tools`: the agent's layer of tool policy, host exec and elevated mode over `tools.*`. */
const AgentToolsSchema = Type.Object(
  {
    ...ToolLayer,
    byProvider: Type.Optional(Type.Record(Type.String(), Type.Object(ToolLayer, Strict))),
    exec: Type.Optional(ExecConfigSchema),
    elevated: Type.Optional(ElevatedConfigSchema),
  },
  Strict,
);

export const ToolsConfigSchema = Type.Object(
  {
    ...ToolLayer,
    exec: Type.Optional(ExecConfigSchema),
    elevated: Type.Optional(ElevatedConfigSchema),
    byProvider: Type.Optional(Type.Record(Type.String(), Type.Object(ToolLayer, Strict))),
    subagents: Type.Optional(
      Type.Object(
        {
          tools: Type.Optional(
            Type.Object({ allow: Type.Optional(ToolNames), deny: Type.Optional(ToolNames) }, Strict),
          ),
        },
        { ...Strict, description: 'Extra tool policy for every sub-agent session (narrows only).' },
      ),
    ),
    fs: Type.Optional(
      Type.Object(
        {
          workspaceOnly: WorkspaceOnly(
            'Keep read, write, edit and apply_patch inside the agent workspace (real paths: symlinks, hard links, "..", absolute). Default true (OpenClaw: false); sandboxed sessions are always confined.',
          ),
        },
        Strict,
      ),
    ),
    agentToAgent: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(
            Type.Boolean({ description: 'Let session tools reach sessions of other agents (default false).' }),
          ),
          allow: Type.Optional(
            Type.Array(Type.String({ minLength: 1 }), {
              description: 'Agent ids (globs) allowed on both ends of a cross-agent call; empty or omitted: any.',
            }),
          ),
        },
        Strict,
      ),
    ),
    sessions: Type.Optional(
      Type.Object(
        {
          visibility: Type.Optional(
            Type.Enum(['self', 'tree', 'agent', 'all'] as const, {
              description:
                'Which sessions the session tools see: self, tree (itself and what it spawned; from a main session its whole agent), agent, or all (default; other agents only through tools.agentToAgent).',
            }),
          ),
        },
        Strict,
      ),
    ),
  },
  Open,
);

const IdList = Type.Array(Type.Union([Type.String({ minLength: 1 }), Type.Number()]));

/** What the channel pipeline reads from `channels.<id>` (and each `accounts.<id>`); channels add their own keys. */
const ChannelPolicyFields = {
  enabled: Type.Optional(Type.Boolean()),
  dmPolicy: Type.Optional(
    Type.Enum(['pairing', 'allowlist', 'open', 'disabled'] as const, {
      description: 'Who may send direct messages (default pairing).',
    }),
  ),
  allowFrom: Type.Optional(IdList),
  groupPolicy: Type.Optional(
    Type.Enum(['open', 'allowlist', 'disabled'] as const, {
      description: 'Which groups are answered (default allowlist).',
    }),
  ),
  groupAllowFrom: Type.Optional(IdList),
  groups: Type.Optional(
    Type.Record(
      Type.String(),
      Type.Object(
        {
          requireMention: Type.Optional(Type.Boolean()),
          enabled: Type.Optional(Type.Boolean()),
          agentId: Type.Optional(Type.String({ minLength: 1 })),
        },
        Open,
      ),
    ),
  ),
  historyLimit: Type.Optional(Type.Integer({ minimum: 0 })),
  textChunkLimit: Type.Optional(PositiveInt),
  agentId: Type.Optional(Type.String({ minLength: 1 })),
  retry: Type.Optional(
    Type.Object(
      {
        attempts: Type.Optional(PositiveInt),
        minDelayMs: Type.Optional(Type.Integer({ minimum: 0 })),
        maxDelayMs: Type.Optional(Type.Integer({ minimum: 0 })),
        jitter: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
      },
      Strict,
    ),
  ),
};
export const ChannelConfigSchema = Type.Object(
  {
    ...ChannelPolicyFields,
    accounts: Type.Optional(Type.Record(Type.String(), Type.Object(ChannelPolicyFields, Open))),
  },
  Open,
);

export const BindingSchema = Type.Object(
  {
    agentId: Type.String({ minLength: 1 }),
    match: Type.Object(
      {
        channel: Type.Optional(Type.String({ minLength: 1 })),
        accountId: Type.Optional(
          Type.String({
            minLength: 1,
            description: 'One account of the channel; "*" (or omitted) matches every account.',
          }),
        ),
        peer: Type.Optional(
          Type.Object(
            {
              kind: Type.Optional(Type.Enum(['direct', 'group', 'channel'] as const)),
              id: Type.String({ minLength: 1 }),
            },
            Strict,
          ),
        ),
        guildId: Type.Optional(Type.String({ minLength: 1, description: 'A Discord server (guild) id.' })),
        teamId: Type.Optional(Type.String({ minLength: 1, description: 'A Slack workspace (team) id.' })),
        roles: Type.Optional(
          Type.Array(Type.String({ minLength: 1 }), {
            minItems: 1,
            description: 'With guildId: the sender must have one of these role ids.',
          }),
        ),
      },
      Strict,
    ),
    session: Type.Optional(
      Type.Object(
        {
          groupScope: Type.Optional(
            Type.Enum(['per-group', 'main'] as const, {
              description:
                "For the groups and rooms this binding routes: per-group (own session each) or main (the agent's main session); overrides session.groupScope.",
            }),
          ),
        },
        { ...Strict, description: 'How the conversations this binding routes are keyed into sessions.' },
      ),
    ),
  },
  Strict,
);

/** `agents.defaults.sandbox` / `agents.list[].sandbox` (OpenClaw's names; defaults in the descriptions). */
export const SandboxConfigSchema = Type.Object(
  {
    backend: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "Which sandbox backend runs it (OpenClaw's names): docker (plugin sandbox-docker) or bwrap (sandbox-bwrap); it must be the plugin holding plugins.slots.sandbox, which it sets when that is unset.",
      }),
    ),
    mode: Type.Optional(
      Type.Enum(['off', 'non-main', 'all'] as const, {
        description: 'Which sessions run tools in a sandbox (default off; non-main: all but the agent main session).',
      }),
    ),
    scope: Type.Optional(
      Type.Enum(['session', 'agent', 'shared'] as const, {
        description: 'One sandbox per session, per agent (default) or one shared by all.',
      }),
    ),
    workspaceAccess: Type.Optional(
      Type.Enum(['none', 'ro', 'rw'] as const, {
        description:
          'What the sandbox sees of the agent workspace (default none: its own workspace under workspaceRoot).',
      }),
    ),
    workspaceRoot: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Where per-scope sandbox workspaces live (default ~/.openclaw/sandboxes).',
      }),
    ),
    sessionToolsVisibility: Type.Optional(
      Type.Enum(['spawned', 'all'] as const, {
        description:
          'What the session tools of a sandboxed session see: spawned (default: itself and the sessions it spawned) or all (tools.sessions.visibility).',
      }),
    ),
    docker: Type.Optional(
      Type.Object(
        {
          image: Type.Optional(Type.String({ minLength: 1, description: 'Container image (Docker backend).' })),
          network: Type.Optional(
            Type.String({ minLength: 1, description: 'Network: "none" (default) or a backend network name.' }),
          ),
          binds: Type.Optional(
            Type.Array(Type.String({ pattern: '^[^:]+:[^:]+(:(ro|rw))?$' }), {
              description: 'Extra mounts "host:sandbox[:ro]"; sensitive host paths are refused.',
            }),
          ),
          env: Type.Optional(
            Type.Record(Type.String(), Type.String(), { description: 'Environment inside the sandbox.' }),
          ),
          memory: Type.Optional(
            Type.Union(
              [Type.Integer({ minimum: 1 }), Type.String({ pattern: '^\\d+(\\.\\d+)?\\s*[bkmgBKMG]?[bB]?$' })],
              { description: 'Memory limit: bytes or "512m", "1g".' },
            ),
          ),
          pidsLimit: Type.Optional(PositiveInt),
          cpus: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
          readOnlyRoot: Type.Optional(Type.Boolean({ description: 'Read-only root filesystem (default true).' })),
          user: Type.Optional(
            Type.String({
              pattern: '^[0-9]+(:[0-9]+)?$',
              description:
                'Who commands run as in the container, "uid" or "uid:gid" (numbers; gid defaults to uid; root is refused). ' +
                'Default: the owner of the workspace, or 65534:65534 when root owns it (Docker backend).',
            }),
          ),
          containerPrefix: Type.Optional(
            Type.String({
              minLength: 1,
              description: 'Name prefix of sandbox containers (Docker backend, default openclaw-sbx-).',
            }),
          ),
        },
        Strict,
      ),
    ),
    browser: Type.Optional(
      Type.Object(
        {
          allowHostControl: Type.Optional(
            Type.Boolean({
              description:
                'Let sandboxed sessions use the host browser (default false); they get their own browser that reaches public addresses only.',
            }),
          ),
        },
        Strict,
      ),
    ),
    prune: Type.Optional(
      Type.Object(
        {
          idleHours: Type.Optional(
            Type.Number({ minimum: 0, description: 'Remove a sandbox idle this long (Docker backend, default 24).' }),
          ),
          maxAgeDays: Type.Optional(
            Type.Number({ minimum: 0, description: 'Remove a sandbox this old (Docker backend, default 7).' }),
          ),
        },
        Strict,
      ),
    ),
  },
  Strict,
);

/** `agents.list[].model` (and `agents.defaults.model`): "provider/model", an alias, or a primary with fallbacks. */
const AgentModel = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object(
    {
      primary: Type.Optional(Type.String({ minLength: 1 })),
      fallbacks: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    },
    Strict,
  ),
]);
/** `agents.list[].identity`: how the agent presents itself (agents.list, agent.identity.get). */
export const AgentIdentitySchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1 })),
    emoji: Type.Optional(Type.String({ minLength: 1 })),
    avatar: Type.Optional(
      Type.String({ minLength: 1, description: 'Workspace-relative path, http(s) URL or data: URI.' }),
    ),
    theme: Type.Optional(Type.String({ minLength: 1 })),
  },
  Strict,
);

/**
 * The agent's model, in `agents.defaults` and `agents.list[]`. The other settings the agent
 * stack reads (timeoutSeconds, thinkingDefault, compaction, …) are its plugins' contributions.
 */
const AgentModelSettings = {
  model: Type.Optional(AgentModel),
  models: Type.Optional(
    Type.Record(
      Type.String({ minLength: 1 }),
      Type.Object(
        {
          alias: Type.Optional(Type.String({ minLength: 1, description: 'A short name for this model (/model gpt).' })),
        },
        Strict,
      ),
      {
        description: 'Per-model settings by "provider/model"; an agent\'s entries add to the defaults\'.',
      },
    ),
  ),
};

/**
 * `agents.defaults` and each `agents.list[]` entry hold the kernel's keys above and the keys
 * installed plugins contribute (manifest `configContributions`): a key neither declares is an
 * error naming it, checked with those contributions by host/contributed-config.ts.
 */
const AgentKeys = { additionalProperties: true } as const;

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
                sandbox: Type.Optional(SandboxConfigSchema),
                ...AgentModelSettings,
              },
              AgentKeys,
            ),
          ),
          list: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  id: Type.String({
                    minLength: 1,
                    pattern: '^[a-z0-9][a-z0-9_-]{0,63}$',
                    description:
                      'Agent id: lower-case letters, digits, "-" and "_" (its folders and session keys use it as is).',
                  }),
                  default: Type.Optional(
                    Type.Boolean({
                      description: 'Answers everything no binding routes elsewhere (else the first agent in the list).',
                    }),
                  ),
                  name: Type.Optional(Type.String({ minLength: 1, description: 'Display name.' })),
                  workspace: Type.Optional(
                    Type.String({
                      minLength: 1,
                      description:
                        'Workspace folder (default ~/.openclaw/workspace-<id>; the default agent: agents.defaults.workspace).',
                    }),
                  ),
                  agentDir: Type.Optional(
                    Type.String({
                      minLength: 1,
                      description:
                        'Agent state folder with auth-profiles.json (default ~/.openclaw/agents/<id>/agent).',
                    }),
                  ),
                  tools: Type.Optional(AgentToolsSchema),
                  identity: Type.Optional(AgentIdentitySchema),
                  sandbox: Type.Optional(SandboxConfigSchema),
                  ...AgentModelSettings,
                },
                AgentKeys,
              ),
            ),
          ),
        },
        Strict,
      ),
    ),
    tools: Type.Optional(ToolsConfigSchema),
    channels: Type.Optional(
      Type.Record(Type.String(), ChannelConfigSchema, { description: 'Messaging channels, by channel id.' }),
    ),
    bindings: Type.Optional(
      Type.Array(BindingSchema, { description: 'Which agent answers which channel, account or peer.' }),
    ),
    logging: Type.Optional(
      Type.Object(
        {
          redactPatterns: Type.Optional(
            Type.Array(Type.String({ minLength: 1 }), {
              description:
                'Extra secrets to mask in every output: regex strings (flags gi), or "/pattern/flags". Built-in masking always applies.',
            }),
          ),
        },
        Strict,
      ),
    ),
  },
  Open,
);
