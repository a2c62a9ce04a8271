/**
 * OpenClaw's `tools.invoke`: an operator runs one tool without an agent turn, in a session's
 * context, through the same choke point as the agent's own calls (tool policy, hooks, sandbox
 * routing, approvals, masking). A person asked to approve is asked as for any call, and the
 * request waits for the answer (OpenClaw's `confirm: true`).
 *
 * Tools that reach a shell, a paired node or the gateway's control plane are the owner's:
 * a caller needs operator.admin for them, so operator.write alone never becomes a shell.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { agentPaths, assertKnownAgent, defaultAgentId } from '../../sdk/agent/index.js';
import {
  buildAgentMainSessionKey,
  ErrorCodes,
  normalizeAgentId,
  normalizeMainKey,
  parseSessionKey,
  ProtocolError,
  type KernelConfig,
  type PluginApi,
  type ToolResult,
} from '../../sdk/index.js';
import { hasScope } from './handshake.js';
import { shippedPluginIds } from './tools-catalog.js';

/** Tools only an owner (operator.admin) may invoke directly: OpenClaw's owner-only set and exec. */
export const OWNER_ONLY_TOOLS = new Set(['exec', 'process', 'nodes', 'cron', 'gateway', 'sessions_spawn']);

export interface InvokeParams {
  name?: string;
  tool?: string;
  action?: string;
  args?: Record<string, unknown>;
  sessionKey?: string;
  agentId?: string;
  idempotencyKey?: string;
}

type Failure = { code: string; message: string };

const text = (result: ToolResult): string =>
  result.content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('')
    .trim();

export type InvokeOutcome =
  | { ok: true; toolName: string; output: ToolResult; source: 'core' | 'plugin' }
  | { ok: false; toolName: string; error: Failure; output?: ToolResult };

/**
 * One tool call for an operator, WebSocket or HTTP: resolves the session, then goes through
 * the kernel's tool choke point. Bad params throw a ProtocolError (INVALID_REQUEST).
 */
export async function invokeForOperator(
  api: PluginApi,
  params: InvokeParams,
  caller: { admin: boolean; signal?: AbortSignal },
): Promise<InvokeOutcome> {
  const kernel = api.kernel;
  const toolName = (params.name ?? params.tool ?? '').trim();
  if (!toolName) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'invalid tools.invoke params: name required');
  const fail = (error: Failure): InvokeOutcome => ({ ok: false, toolName, error });
  if (OWNER_ONLY_TOOLS.has(toolName) && !caller.admin)
    return fail({
      code: 'forbidden',
      message: `tool "${toolName}" is the owner's: invoking it directly needs operator.admin`,
    });
  const listed = () => kernel.capabilities.list('tool').find((tool) => tool.name === toolName);

  const config = kernel.config() as KernelConfig;
  const fromKey = params.sessionKey && params.sessionKey !== 'main' ? parseSessionKey(params.sessionKey) : undefined;
  if (params.agentId && fromKey?.agentId && normalizeAgentId(params.agentId) !== normalizeAgentId(fromKey.agentId))
    throw new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      `agentId "${params.agentId}" does not match the agent of sessionKey "${params.sessionKey}"`,
    );
  const agentId = normalizeAgentId(params.agentId ?? fromKey?.agentId ?? defaultAgentId(config));
  assertKnownAgent(config, agentId);
  const mainKey = normalizeMainKey((config.session as { mainKey?: string } | undefined)?.mainKey);
  const sessionKey = fromKey ? params.sessionKey! : buildAgentMainSessionKey(agentId, mainKey);
  const { workspaceDir } = agentPaths(config, agentId, kernel.paths);
  mkdirSync(workspaceDir, { recursive: true, mode: 0o700 });

  const args = { ...(params.args ?? {}) };
  if (params.action !== undefined && args.action === undefined) args.action = params.action;
  const call = await kernel.tools.invoke({
    name: toolName,
    params: args,
    toolCallId: `rpc-${params.idempotencyKey ?? randomUUID()}`,
    context: { agentId, sessionKey, workspaceDir, ...(caller.signal ? { signal: caller.signal } : {}) },
  });
  // Asked even when the tool is not listed yet: a plugin may add it on first use (an MCP
  // server's `<server>__<tool>` starts from the call's before_tool_call hook).
  const info = listed();
  if (!info) return fail({ code: 'not_found', message: `no tool named "${toolName}"` });
  const source = shippedPluginIds(api).has(info.pluginId) ? 'core' : 'plugin';
  if (call.blocked) return fail({ code: 'forbidden', message: text(call.result) || 'the call was blocked' });
  if (call.result.isError)
    return {
      ok: false,
      toolName,
      error: { code: 'tool_error', message: text(call.result) || 'the tool failed' },
      output: call.result,
    };
  return { ok: true, toolName, output: call.result, source };
}

export function registerToolsInvoke(api: PluginApi): void {
  api.registerGatewayMethod('tools.invoke', {
    params: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1 },
        tool: { type: 'string', minLength: 1 },
        action: { type: 'string' },
        args: { type: 'object' },
        sessionKey: { type: 'string', minLength: 1 },
        agentId: { type: 'string', minLength: 1 },
        idempotencyKey: { type: 'string', minLength: 1 },
        confirm: { type: 'boolean' },
        dryRun: { type: 'boolean' },
      },
    },
    scope: 'operator.write',
    description:
      'Run one tool in a session without an agent turn, through the tool policy, hooks and approvals: {ok, toolName, output, source} or {ok: false, toolName, error: {code, message}}.',
    handler: (params: InvokeParams, ctx) =>
      invokeForOperator(api, params, {
        admin: hasScope(ctx.scopes ?? [], 'operator.admin'),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      }),
  });
}
