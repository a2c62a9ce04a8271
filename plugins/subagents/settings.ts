/**
 * `agents.defaults.subagents` with the agent's own `agents.list[].subagents` over it, read
 * with the types generated from schemas.ts (the shapes are checked before the plugin runs).
 */
import { normalizeAgentId, type KernelConfig } from '../../sdk/index.js';
import type { SubagentsConfig } from './generated/types.js';

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

type Agents = {
  defaults?: { subagents?: SubagentsConfig };
  list?: Array<{ id?: string; subagents?: SubagentsConfig }>;
};

/** The `subagent` lane's cap (`agents.defaults.subagents.maxConcurrent`), when set. */
export function subagentLaneCap(config: Readonly<KernelConfig>): number | undefined {
  return (config.agents as Agents | undefined)?.defaults?.subagents?.maxConcurrent;
}

export function subagentSettings(config: Readonly<KernelConfig>, agentId: string): SubagentSettings {
  const agents = (config.agents ?? {}) as Agents;
  const wanted = normalizeAgentId(agentId);
  const own = agents.list?.find((entry) => normalizeAgentId(entry?.id) === wanted)?.subagents ?? {};
  const merged: SubagentsConfig = { ...agents.defaults?.subagents, ...own };
  const model = typeof merged.model === 'string' ? merged.model : merged.model?.primary;
  return {
    maxSpawnDepth: merged.maxSpawnDepth ?? DEFAULT_SUBAGENT_MAX_SPAWN_DEPTH,
    maxChildrenPerAgent: merged.maxChildrenPerAgent ?? DEFAULT_SUBAGENT_MAX_CHILDREN,
    runTimeoutSeconds: merged.runTimeoutSeconds ?? 0,
    archiveAfterMinutes: merged.archiveAfterMinutes ?? DEFAULT_SUBAGENT_ARCHIVE_MINUTES,
    announceTimeoutMs: merged.announceTimeoutMs ?? DEFAULT_SUBAGENT_ANNOUNCE_TIMEOUT_MS,
    ...(model ? { model } : {}),
    ...(merged.thinking ? { thinking: merged.thinking } : {}),
    allowAgents: (merged.allowAgents ?? []).map((id) => (id === '*' ? id : normalizeAgentId(id))),
  };
}
