/**
 * Which tools an agent may use, as the host resolves it: the kernel's tool choke point asks
 * this through clawPolicy (host/policy.ts), `claw security` audits with it, and plugins reach
 * it as the host's "tool-policy" service (the contract is sdk/tool-policy.ts). Layers apply in
 * order and each can only narrow the set: profile → provider profile → global allow/deny →
 * global by-provider → agent allow/deny → agent by-provider → group (→ sandbox and sub-agent
 * layers, added by the callers that know about those). Lists accept tool names, `group:*`
 * names and `*` globs, matched without regard to case; within a layer deny beats allow; an
 * empty or missing allow list allows everything the earlier layers let through.
 */
import {
  subagentDepth,
  TOOL_GROUPS,
  TOOL_PROFILES,
  type PolicySubject,
  type ToolMatcher,
  type ToolPolicyLayer,
  type ToolPolicyService,
  type ToolsConfig,
} from '../sdk/tool-policy.js';

export interface PolicyInput {
  global?: ToolsConfig;
  agent?: ToolsConfig;
  group?: ToolPolicyLayer;
  /** Extra layers (sandbox, sub-agent) appended by callers. */
  extra?: ToolPolicyLayer[];
  provider?: string;
  /** Full model ref, "provider/model". */
  model?: string;
}

function expand(entries: readonly string[]): string[] {
  return entries.flatMap((entry) => {
    const key = entry.trim().toLowerCase();
    return TOOL_GROUPS[key] ? [...TOOL_GROUPS[key]!] : [key];
  });
}

function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`, 'i');
}

/** A matcher for one allow/deny layer. */
export function compileLayer(layer: ToolPolicyLayer): ToolMatcher {
  const profileAllow = layer.profile ? TOOL_PROFILES[layer.profile] : undefined;
  const allowSets = [profileAllow, layer.allow && layer.allow.length > 0 ? layer.allow : undefined]
    .filter((list): list is readonly string[] => list !== undefined)
    .map((list) => expand(list).map(globToRegExp));
  const deny = expand(layer.deny ?? []).map(globToRegExp);
  return (name) => {
    if (deny.some((pattern) => pattern.test(name))) return false;
    return allowSets.every((patterns) => patterns.some((pattern) => pattern.test(name)));
  };
}

function providerLayers(config: ToolsConfig | undefined, provider?: string, model?: string): ToolPolicyLayer[] {
  if (!config?.byProvider) return [];
  const out: ToolPolicyLayer[] = [];
  for (const [key, layer] of Object.entries(config.byProvider)) {
    const k = key.toLowerCase();
    if ((provider && k === provider.toLowerCase()) || (model && k === model.toLowerCase())) out.push(layer);
  }
  return out;
}

/** The effective policy: a tool is allowed only if every layer allows it. */
export function compileToolPolicy(input: PolicyInput): ToolMatcher {
  const layers: ToolPolicyLayer[] = [];
  const push = (layer: ToolPolicyLayer | undefined) => layer && layers.push(layer);
  push(input.global?.profile ? { profile: input.global.profile } : undefined);
  for (const layer of providerLayers(input.global, input.provider, input.model))
    push(layer.profile ? { profile: layer.profile } : undefined);
  push(input.global && { allow: input.global.allow, deny: input.global.deny });
  for (const layer of providerLayers(input.global, input.provider, input.model))
    push({ allow: layer.allow, deny: layer.deny });
  push(input.agent && { profile: input.agent.profile, allow: input.agent.allow, deny: input.agent.deny });
  for (const layer of providerLayers(input.agent, input.provider, input.model)) push(layer);
  push(input.group);
  for (const layer of input.extra ?? []) push(layer);
  const matchers = layers.map(compileLayer);
  return (name) => matchers.every((matcher) => matcher(name));
}

interface AgentEntry {
  id?: string;
  default?: boolean;
  tools?: ToolsConfig;
  subagents?: { maxSpawnDepth?: number };
}

/** Denied to every sub-agent: system and cross-session tools; memory stays the parent's. */
export const SUBAGENT_TOOL_DENY_ALWAYS: readonly string[] = [
  'gateway',
  'agents_list',
  'whatsapp_login',
  'session_status',
  'cron',
  'memory_search',
  'memory_get',
  'sessions_send',
  'message',
];
/** Also denied once a sub-agent may not spawn (depth >= maxSpawnDepth): a leaf gets no session tools. */
export const SUBAGENT_TOOL_DENY_LEAF: readonly string[] = [
  'sessions_list',
  'sessions_history',
  'sessions_spawn',
  'subagents',
];

/**
 * The sub-agent layers for a session, from its key (a child cannot shed its depth by editing
 * its entry): the fixed deny lists by depth, then `tools.subagents.tools`. Empty for others.
 */
function subagentLayers(
  config: { tools?: unknown; agents?: unknown },
  agent: AgentEntry | undefined,
  sessionKey: string | undefined,
): ToolPolicyLayer[] {
  const depth = subagentDepth(sessionKey);
  if (depth === 0) return [];
  const defaults = (config.agents as { defaults?: AgentEntry } | undefined)?.defaults;
  const maxDepth = agent?.subagents?.maxSpawnDepth ?? defaults?.subagents?.maxSpawnDepth ?? 1;
  const own = (config.tools as { subagents?: { tools?: ToolPolicyLayer } } | undefined)?.subagents?.tools ?? {};
  return [
    {
      deny: depth >= maxDepth ? [...SUBAGENT_TOOL_DENY_ALWAYS, ...SUBAGENT_TOOL_DENY_LEAF] : SUBAGENT_TOOL_DENY_ALWAYS,
    },
    { allow: own.allow, deny: own.deny },
  ];
}

function agentEntry(config: { agents?: unknown }, agentId: string | undefined): AgentEntry | undefined {
  const list = ((config.agents as { list?: AgentEntry[] } | undefined)?.list ?? []).filter(
    (entry) => entry && typeof entry === 'object',
  );
  const wanted = agentId?.trim().toLowerCase();
  return wanted
    ? list.find((entry) => entry.id?.trim().toLowerCase() === wanted)
    : (list.find((entry) => entry.default) ?? list[0]);
}

/**
 * The policy the config sets for one agent and model: `tools.*` and the agent's
 * `agents.list[].tools`. A call with no agent id gets the default agent's policy.
 */
export function configuredToolPolicy(
  config: { tools?: unknown; agents?: unknown },
  subject: PolicySubject,
): ToolMatcher {
  const agent = agentEntry(config, subject.agentId);
  const slash = subject.model?.indexOf('/') ?? -1;
  const provider = subject.provider ?? (subject.model && slash > 0 ? subject.model.slice(0, slash) : undefined);
  return compileToolPolicy({
    global: config.tools as ToolsConfig | undefined,
    agent: agent?.tools,
    provider,
    model: subject.model,
    extra: subagentLayers(config, agent, subject.sessionKey),
  });
}

/** Only the sub-agent layers of a session (undefined when it is not a sub-agent's). */
export function subagentToolPolicy(
  config: { tools?: unknown; agents?: unknown },
  agentId: string | undefined,
  sessionKey: string | undefined,
): ToolMatcher | undefined {
  const layers = subagentLayers(config, agentEntry(config, agentId), sessionKey).map(compileLayer);
  return layers.length ? (name) => layers.every((layer) => layer(name)) : undefined;
}

/** The host's "tool-policy" service: the same resolution the kernel's tool choke point enforces. */
export const toolPolicyService: ToolPolicyService = {
  configured: configuredToolPolicy,
  subagent: subagentToolPolicy,
  layer: compileLayer,
};
