/**
 * Sub-agent facts every part of the agent stack must agree on: how deep a session sits in a
 * spawn chain (read from its key, `agent:<id>:subagent:<uuid>[:subagent:<uuid>…]`), the
 * `agents.defaults.subagents` limits, and the tool restriction a sub-agent session gets by
 * depth. The restriction is the kernel's: its tool choke point applies it to every call
 * made with a sub-agent session key, whoever makes it; here it only shapes what the model
 * is offered.
 */
import type { KernelConfig } from '../../kernel/index.js';
import { subagentDepth, subagentToolPolicy, type ToolMatcher } from '../tool-policy.js';
import { normalizeAgentId } from '../sessions/keys.js';

export { SUBAGENT_TOOL_DENY_ALWAYS, SUBAGENT_TOOL_DENY_LEAF, subagentDepth } from '../tool-policy.js';

type AnyRecord = Record<string, any>;

export const DEFAULT_SUBAGENT_MAX_SPAWN_DEPTH = 1;
export const DEFAULT_SUBAGENT_MAX_CHILDREN = 5;
export const DEFAULT_SUBAGENT_ARCHIVE_MINUTES = 60;
export const DEFAULT_SUBAGENT_ANNOUNCE_TIMEOUT_MS = 120_000;

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
 * The extra narrowing for a session's tool calls (the kernel's sub-agent layers), or
 * undefined when the session is not a sub-agent.
 */
export function sessionToolRestriction(config: Readonly<KernelConfig>, agentId: string, sessionKey: string | undefined): ToolMatcher | undefined {
  return subagentToolPolicy(config, agentId, sessionKey);
}
