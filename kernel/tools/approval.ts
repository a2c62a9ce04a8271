/**
 * The approval step of the tool choke point. A tool that can reach past the agent's own
 * space (exec on the host) declares what a person would have to approve; the kernel asks
 * the service that owns that decision (exec approvals live in a plugin, not here) and runs
 * the tool only on a yes. It runs after before_tool_call and the params check, so what is
 * approved is exactly what the tool runs with. No approver service means no: fail closed.
 */
import type { CapabilityLookup, ToolContext, ToolDefinition } from '../plugin-host/capabilities.js';

export interface ToolApprovalDecision {
  allowed: boolean;
  reason?: string;
}

/** The api an approver service registers. */
export interface ToolApprover {
  authorize(request: Record<string, unknown>, context: ToolContext & { toolName: string }): Promise<ToolApprovalDecision>;
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
  const service = await capabilities.find('service', subject.service).catch(() => undefined);
  const approver = service?.api as ToolApprover | undefined;
  if (typeof approver?.authorize !== 'function') {
    return `${tool.name} needs approval and no approver is available (enable the plugin that provides the "${subject.service}" service).`;
  }
  try {
    const decision = await approver.authorize(subject.request, { ...context, toolName: tool.name });
    return decision.allowed ? undefined : `${tool.name} was not approved: ${decision.reason ?? 'denied'}`;
  } catch (error) {
    return `${tool.name} was not approved: the approver failed (${(error as Error).message})`;
  }
}
