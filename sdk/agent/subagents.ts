/**
 * Sub-agent facts every part of the agent stack must agree on: how deep a session sits in a
 * spawn chain (read from its key, `agent:<id>:subagent:<uuid>[:subagent:<uuid>…]`) and the
 * tool restriction a sub-agent session gets by depth (the limits are the subagents plugin's).
 * The restriction is the kernel's: its tool choke point applies it to every call made with a
 * sub-agent session key, whoever makes it; here it only shapes what the model is offered.
 */
import type { KernelServices } from '../types/plugin.js';
import { requireService } from '../services.js';
import { subagentDepth, TOOL_POLICY_SERVICE, type ToolMatcher, type ToolPolicyService } from '../tool-policy.js';

export { subagentDepth } from '../tool-policy.js';

export function isSubagentSessionKey(sessionKey: string | undefined): boolean {
  return subagentDepth(sessionKey) > 0;
}

/**
 * The extra narrowing for a session's tool calls (the kernel's sub-agent layers, from the
 * host's "tool-policy" service), or undefined when the session is not a sub-agent.
 */
export async function sessionToolRestriction(
  kernel: KernelServices,
  agentId: string,
  sessionKey: string | undefined,
): Promise<ToolMatcher | undefined> {
  if (!isSubagentSessionKey(sessionKey)) return undefined;
  const policy = await requireService<ToolPolicyService>(kernel, TOOL_POLICY_SERVICE, 'a sub-agent session');
  return policy.subagent(kernel.config(), agentId, sessionKey);
}
