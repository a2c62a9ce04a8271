/**
 * Which tools an agent may use: the names and shapes of `tools.*` (groups, profiles, layers)
 * and the host's "tool-policy" service, which resolves them exactly as the kernel's tool
 * choke point enforces them (host/tool-policy.ts). Lists accept tool names, `group:*` names
 * and `*` globs, matched without regard to case; within a layer deny beats allow.
 */
import type { ToolSubject } from '../kernel/index.js';

export const TOOL_GROUPS: Readonly<Record<string, readonly string[]>> = {
  'group:fs': ['read', 'write', 'edit', 'apply_patch'],
  'group:runtime': ['exec', 'process'],
  'group:sessions': [
    'sessions_list',
    'sessions_history',
    'sessions_send',
    'sessions_spawn',
    'subagents',
    'session_status',
  ],
  'group:memory': ['memory_search', 'memory_get'],
  'group:web': ['web_search', 'web_fetch'],
  'group:ui': ['browser', 'canvas'],
  'group:nodes': ['nodes'],
  'group:media': ['pdf'],
};

export type ToolProfile = 'minimal' | 'coding' | 'messaging' | 'full';

/** What each profile allows, as allow-list entries (undefined = everything); `*__*` is every MCP server's tools. */
export const TOOL_PROFILES: Readonly<Record<ToolProfile, readonly string[] | undefined>> = {
  minimal: ['session_status'],
  coding: ['group:fs', 'group:runtime', 'group:sessions', 'group:memory', 'group:web', 'image', '*__*'],
  messaging: ['message', 'group:sessions', '*__*'],
  full: undefined,
};

export interface ToolPolicyLayer {
  profile?: ToolProfile;
  allow?: readonly string[];
  deny?: readonly string[];
}

export interface ToolsConfig extends ToolPolicyLayer {
  /** Keyed by provider id ("openai") or full model ref ("openai/gpt-4o"). */
  byProvider?: Record<string, ToolPolicyLayer>;
}

export type ToolMatcher = (name: string) => boolean;

/** Who is calling and with which model; everything else comes from config. */
export type PolicySubject = ToolSubject & {
  /** Defaults to the provider part of `model`. */
  provider?: string;
};

/** How many `subagent:<id>` segments a session key has: 0 for a main or channel session. */
export function subagentDepth(sessionKey: string | undefined): number {
  const parts = (sessionKey ?? '').trim().toLowerCase().split(':');
  let depth = 0;
  for (let i = 0; i < parts.length - 1; i++) if (parts[i] === 'subagent' && parts[i + 1]) depth++;
  return depth;
}

export const TOOL_POLICY_SERVICE = 'tool-policy';

/** The host's "tool-policy" service; a plugin that uses it declares `requires: { services: ["tool-policy"] }`. */
export interface ToolPolicyService {
  /**
   * Which tools `subject` may call under `config` (`tools.*`, the agent's `agents.list[].tools`,
   * a sub-agent session's narrowing by depth); no agent id means the default agent.
   */
  configured(config: { tools?: unknown; agents?: unknown }, subject: PolicySubject): ToolMatcher;
  /** Only a session's sub-agent narrowing (undefined when it is not a sub-agent's). */
  subagent(
    config: { tools?: unknown; agents?: unknown },
    agentId: string | undefined,
    sessionKey: string | undefined,
  ): ToolMatcher | undefined;
  /** One allow/deny layer on its own. */
  layer(layer: ToolPolicyLayer): ToolMatcher;
}
