/**
 * The approval step of the tool choke point. A tool that reaches past the agent's own space
 * (exec on the host) declares what would need approving; the kernel asks the service that
 * owns the decision (a plugin) with the params as they will run, after before_tool_call and
 * the params check. No approver, or one that fails, means no: fail closed.
 */
import type { CapabilityLookup, ToolContext, ToolDefinition } from '../plugin-host/capabilities.js';

/** The api an approver service registers. */
export interface ToolApprover {
  authorize(
    request: Record<string, unknown>,
    context: ToolContext & { toolName: string },
  ): Promise<{ allowed: boolean; reason?: string }>;
}

/** Undefined when the call may run; otherwise why not. */
export async function approvalRefusal(
  capabilities: Pick<CapabilityLookup, 'find'>,
  tool: ToolDefinition,
  params: Record<string, unknown>,
  context: ToolContext,
): Promise<string | undefined> {
  const subject = tool.approval?.(params, context);
  if (!subject) return undefined;
  const approver = (await capabilities.find('service', subject.service).catch(() => undefined))?.api as
    ToolApprover | undefined;
  if (typeof approver?.authorize !== 'function')
    return `${tool.name} needs approval and no approver is available (enable the plugin that provides the "${subject.service}" service).`;
  const decision = await approver
    .authorize(subject.request, { ...context, toolName: tool.name })
    .catch((error: Error) => ({ allowed: false, reason: `the approver failed (${error.message})` }));
  return decision.allowed ? undefined : `${tool.name} was not approved: ${decision.reason ?? 'denied'}`;
}
