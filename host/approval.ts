/**
 * The approval step of the tool choke point (KernelPolicy.approve). A tool that reaches past
 * the agent's own space (exec on the host) declares what would need approving; this asks the
 * service that owns the decision (a plugin) with the params as they will run, after
 * before_tool_call, the params check and sandbox routing. No approver, or one that fails,
 * means no: fail closed.
 */
import type { KernelPolicy } from '../kernel/index.js';
import type { ToolApprover } from '../sdk/types/capabilities.js';

export const approvalStep: KernelPolicy['approve'] = async ({ tool, params, context, capabilities }) => {
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
};
