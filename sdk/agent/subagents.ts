/**
 * Sub-agent facts every part of the agent stack must agree on: how deep a session sits in a
 * spawn chain (read from its key, `agent:<id>:subagent:<uuid>[:subagent:<uuid>…]`) and the
 * tool restriction a sub-agent session gets by depth (the limits are the subagents plugin's).
 * The restriction is the kernel's: its tool choke point applies it to every call made with a
 * sub-agent session key, whoever makes it; here it only shapes what the model is offered.
 */
import type { KernelConfig } from '../../kernel/index.js';
import { subagentDepth, subagentToolPolicy, type ToolMatcher } from '../tool-policy.js';

export { SUBAGENT_TOOL_DENY_ALWAYS, SUBAGENT_TOOL_DENY_LEAF, subagentDepth } from '../tool-policy.js';

export function isSubagentSessionKey(sessionKey: string | undefined): boolean {
  return subagentDepth(sessionKey) > 0;
}

/**
 * The extra narrowing for a session's tool calls (the kernel's sub-agent layers), or
 * undefined when the session is not a sub-agent.
 */
export function sessionToolRestriction(
  config: Readonly<KernelConfig>,
  agentId: string,
  sessionKey: string | undefined,
): ToolMatcher | undefined {
  return subagentToolPolicy(config, agentId, sessionKey);
}
