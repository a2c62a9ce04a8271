/**
 * When an MCP tool call (plugins/mcp) needs a person, by the server's
 * `codex.defaultToolsApprovalMode` (OpenClaw's key) and the agent's exec `ask`:
 *   approve — never asks;  prompt — asks on every call (a grant does not stop it);
 *   auto or unset — asks when ask is `always`, or when ask is `on-miss` and the tool is neither
 *   annotated read-only nor covered by an allow-always grant in `agents.<id>.mcpTools`.
 * Exec's `security` is about host commands and does not apply to MCP tools.
 */
import type { ApprovalsDocument, McpToolGrant } from './file.js';
import type { Policy } from './policy.js';

export interface McpCall {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; title?: string };
  mode: 'auto' | 'prompt' | 'approve';
}

export function mcpCall(raw: Record<string, unknown>): McpCall {
  const mode = raw.approvalMode === 'prompt' || raw.approvalMode === 'approve' ? raw.approvalMode : 'auto';
  const args = raw.arguments;
  return {
    server: String(raw.server ?? ''),
    tool: String(raw.tool ?? ''),
    arguments: args && typeof args === 'object' ? (args as Record<string, unknown>) : {},
    annotations: (raw.annotations as McpCall['annotations'] | undefined) ?? {},
    mode,
  };
}

export function mcpGrant(doc: ApprovalsDocument, agentId: string, call: McpCall): McpToolGrant | undefined {
  return doc.agents?.[agentId]?.mcpTools?.find((grant) => grant.server === call.server && grant.tool === call.tool);
}

/** Whether a person must decide this call (see the module comment); `layers` are the session's and its ancestors'. */
export function mcpNeedsAsking(call: McpCall, layers: readonly Policy[], granted: boolean): boolean {
  if (call.mode === 'approve') return false;
  if (call.mode === 'prompt') return true;
  if (layers.some((layer) => layer.ask === 'always')) return true;
  if (!layers.some((layer) => layer.ask === 'on-miss')) return false;
  return call.annotations.readOnlyHint !== true && !granted;
}

/** Adds the allow-always grant; false when it was already there. */
export function addMcpGrant(doc: ApprovalsDocument, agentId: string, call: McpCall): boolean {
  const level = ((doc.agents ??= {})[agentId] ??= {});
  const grants = (level.mcpTools ??= []);
  if (grants.some((grant) => grant.server === call.server && grant.tool === call.tool)) return false;
  grants.push({ server: call.server, tool: call.tool, source: 'allow-always', addedAt: Date.now() });
  return true;
}
