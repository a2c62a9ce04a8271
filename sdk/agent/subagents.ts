/**
 * Sub-agent facts every part of the agent stack must agree on: how deep a session sits in a
 * spawn chain (read from its key, `agent:<id>:subagent:<uuid>[:subagent:<uuid>…]`), the
 * `agents.defaults.subagents` limits, and the tool restriction a sub-agent session gets by
 * depth. The agent loop hands that restriction to the kernel's tool choke point as
 * `allowed`, which can only narrow the configured policy — a child never gains a tool.
 */
import type { KernelConfig } from '../../kernel/index.js';
import { compileLayer, type ToolMatcher, type ToolPolicyLayer } from '../tool-policy.js';
import { normalizeAgentId } from '../sessions/keys.js';

type AnyRecord = Record<string, any>;

export const DEFAULT_SUBAGENT_MAX_SPAWN_DEPTH = 1;
export const DEFAULT_SUBAGENT_MAX_CHILDREN = 5;
export const DEFAULT_SUBAGENT_ARCHIVE_MINUTES = 60;
export const DEFAULT_SUBAGENT_ANNOUNCE_TIMEOUT_MS = 120_000;

/** Denied to every sub-agent: system and cross-session tools; memory stays the parent's. */
export const SUBAGENT_TOOL_DENY_ALWAYS: readonly string[] = ['gateway', 'agents_list', 'whatsapp_login', 'session_status', 'cron', 'memory_search', 'memory_get', 'sessions_send', 'message'];
/** Also denied once a sub-agent may not spawn (depth >= maxSpawnDepth): a leaf gets no session tools. */
export const SUBAGENT_TOOL_DENY_LEAF: readonly string[] = ['sessions_list', 'sessions_history', 'sessions_spawn', 'subagents'];

export interface SubagentSettings {
  maxSpawnDepth: number;
  maxChildrenPerAgent: number;
  /** Seconds; 0 = no timeout. */
  runTimeoutSeconds: number;
  /** 0 disables archiving. */
  archiveAfterMinutes: number;
  announceTimeoutMs: number;
  model?: string;
  thinking?: string;
  /** Agent ids this agent may spawn children as (`*` = any); its own id is always allowed. */
  allowAgents: string[];
}

/** How many `subagent:<id>` segments the key has: 0 for a main or channel session. */
export function subagentDepth(sessionKey: string | undefined): number {
  if (!sessionKey) return 0;
  const parts = sessionKey.trim().toLowerCase().split(':');
  let depth = 0;
  for (let i = 0; i < parts.length - 1; i++) if (parts[i] === 'subagent' && parts[i + 1]) depth++;
  return depth;
}

export function isSubagentSessionKey(sessionKey: string | undefined): boolean {
  return subagentDepth(sessionKey) > 0;
}

/** `agents.defaults.subagents` with the agent's own `agents.list[].subagents` over it. */
export function subagentSettings(config: Readonly<KernelConfig>, agentId: string): SubagentSettings {
  const agents = (config.agents ?? {}) as AnyRecord;
  const defaults = (agents.defaults?.subagents ?? {}) as AnyRecord;
  const wanted = normalizeAgentId(agentId);
  const own = (((agents.list ?? []) as AnyRecord[]).find((entry) => normalizeAgentId(entry?.id) === wanted)?.subagents ?? {}) as AnyRecord;
  const pick = (key: string) => own[key] ?? defaults[key];
  const model = pick('model');
  return {
    maxSpawnDepth: pick('maxSpawnDepth') ?? DEFAULT_SUBAGENT_MAX_SPAWN_DEPTH,
    maxChildrenPerAgent: pick('maxChildrenPerAgent') ?? DEFAULT_SUBAGENT_MAX_CHILDREN,
    runTimeoutSeconds: pick('runTimeoutSeconds') ?? 0,
    archiveAfterMinutes: pick('archiveAfterMinutes') ?? DEFAULT_SUBAGENT_ARCHIVE_MINUTES,
    announceTimeoutMs: pick('announceTimeoutMs') ?? DEFAULT_SUBAGENT_ANNOUNCE_TIMEOUT_MS,
    ...(typeof model === 'string' ? { model } : model?.primary ? { model: String(model.primary) } : {}),
    ...(pick('thinking') ? { thinking: String(pick('thinking')) } : {}),
    allowAgents: ((pick('allowAgents') ?? []) as string[]).map((id) => (id === '*' ? id : normalizeAgentId(id))),
  };
}

/**
 * The extra narrowing for a session's tool calls, or undefined when the session is not a
 * sub-agent. Depth comes from the key, so a child cannot shed it by editing its entry.
 */
export function sessionToolRestriction(config: Readonly<KernelConfig>, agentId: string, sessionKey: string | undefined): ToolMatcher | undefined {
  const depth = subagentDepth(sessionKey);
  if (depth === 0) return undefined;
  const { maxSpawnDepth } = subagentSettings(config, agentId);
  const deny = depth >= maxSpawnDepth ? [...SUBAGENT_TOOL_DENY_ALWAYS, ...SUBAGENT_TOOL_DENY_LEAF] : SUBAGENT_TOOL_DENY_ALWAYS;
  const layers = [compileLayer({ deny }), compileLayer(((config.tools as AnyRecord | undefined)?.subagents?.tools ?? {}) as ToolPolicyLayer)];
  return (name) => layers.every((layer) => layer(name));
}
