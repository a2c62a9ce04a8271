/**
 * The one path every tool call takes, whoever makes it (the agent loop, an RPC, a channel):
 *   policy (from config; the caller can only narrow it) → before_tool_call (may rewrite
 *   params or block) → params checked against the tool's schema → sandbox routing and
 *   approval (the policy's steps; approval sees the exact params and where they run) →
 *   execute → secrets masked → size cap → tool_result_persist (sync; shapes the
 *   transcript entry) → after_tool_call (may replace the result, which is masked again)
 * Failures the model should learn from (blocked, unknown tool, bad params, a throwing tool)
 * come back as error results, never exceptions, so one bad call cannot end a run.
 */
import type { HookBus } from '../hooks/bus.js';
import type { HookContext } from '../hooks/catalog.js';
import type { KernelConfig } from '../generated/types.js';
import type { KernelPolicy } from '../policy.js';
import type { Redactor } from '../log.js';
import type {
  CapabilityLookup,
  ToolContent,
  ToolContext,
  ToolDefinition,
  ToolResult,
  ToolResultMessage,
} from '../plugin-host/capabilities.js';
import { compileSchema, formatErrors } from '../validation.js';

/** Results longer than this (characters of text) are cut, keeping the head and the tail. */
export const DEFAULT_MAX_RESULT_CHARS = 100_000;

export interface ToolCallRequest {
  name: string;
  params: Record<string, unknown>;
  toolCallId: string;
  context: Omit<ToolContext, 'toolCallId'>;
  /** The run's model ("provider/model"): `byProvider` policy layers match it. */
  model?: string;
  /** A caller's own restriction (sandbox, sub-agent, group): it can only narrow the configured policy. */
  allowed?: (name: string) => boolean;
  maxResultChars?: number;
}

export interface ToolCallOutcome {
  /** What goes back to the model and into the transcript. */
  message: ToolResultMessage;
  result: ToolResult;
  /** The params the tool actually ran with (after before_tool_call). */
  params: Record<string, unknown>;
  blocked: boolean;
  durationMs: number;
}

export interface ToolRunnerDeps {
  hooks: Pick<HookBus, 'runModifying' | 'runSync'>;
  capabilities: Pick<CapabilityLookup, 'find' | 'slot'>;
  /** Masks secrets in what goes back to the model and the transcript (`exec env`, error text). */
  redact: Pick<Redactor, 'value'>;
  /** The live config: the tool policy is read from it on every call. */
  config: () => KernelConfig;
  policy: Pick<KernelPolicy, 'toolPolicy' | 'sandbox' | 'approve'>;
  paths: { stateDir: string; workspaceDir: string };
}

const errorResult = (text: string, details?: unknown): ToolResult => ({
  content: [{ type: 'text', text }],
  isError: true,
  ...(details === undefined ? {} : { details }),
});

/** Cut oversized text content to head + tail with a note, so one tool cannot flood the context. */
export function capResult(result: ToolResult, maxChars: number): ToolResult {
  const total = result.content.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0);
  if (total <= maxChars) return result;
  const content: ToolContent[] = result.content.map((part) => {
    if (part.type !== 'text' || part.text.length <= maxChars / 2) return part;
    const keep = Math.floor(maxChars / 2);
    const omitted = part.text.length - keep * 2;
    return {
      type: 'text',
      text: `${part.text.slice(0, keep)}\n\n[… ${omitted} characters omitted …]\n\n${part.text.slice(-keep)}`,
    };
  });
  return { ...result, content };
}

export async function invokeTool(deps: ToolRunnerDeps, request: ToolCallRequest): Promise<ToolCallOutcome> {
  const started = performance.now();
  const { name, toolCallId, context } = request;
  // No run signal here: a tool call always ends with a result for the transcript, so its
  // hooks are bounded by their timeouts only.
  const hookCtx: HookContext = { agentId: context.agentId, sessionKey: context.sessionKey, runId: context.runId };
  // Text and details; image bytes are left as they are (value() skips them).
  const mask = <T>(value: T): T => deps.redact.value(value);
  let params = request.params;
  let blocked = false;

  const run = async (): Promise<ToolResult> => {
    const config = deps.config();
    const policy = deps.policy.toolPolicy(config, {
      agentId: context.agentId,
      model: request.model,
      sessionKey: context.sessionKey,
    });
    if (!policy(name) || (request.allowed && !request.allowed(name))) {
      blocked = true;
      return errorResult(`Tool "${name}" is not allowed by the tool policy for this agent.`);
    }
    const hook = await deps.hooks.runModifying('before_tool_call', { toolName: name, toolCallId, params }, hookCtx);
    if (hook.params) params = hook.params;
    if (hook.block) {
      blocked = true;
      return errorResult(`Tool call blocked: ${hook.blockReason ?? 'a before_tool_call hook refused it'}`);
    }
    let tool: ToolDefinition | undefined;
    try {
      tool = await deps.capabilities.find('tool', name);
    } catch (error) {
      return errorResult(`Tool "${name}" is unavailable: ${(error as Error).message}`);
    }
    if (!tool) return errorResult(`Unknown tool "${name}".`);
    const validate = compileSchema(tool.parameters);
    const checked = structuredClone(params);
    if (!validate(checked)) {
      const issues = formatErrors(validate.errors ?? [], checked, []).map((issue) => `${issue.path}: ${issue.message}`);
      return errorResult(`Invalid arguments for ${name}: ${issues.join('; ')}`, { issues });
    }
    params = checked;
    const { capabilities, paths } = deps;
    const call = { tool, params, context: { ...context, toolCallId }, capabilities, config, paths };
    const sandbox = tool.runsInSandbox ? await deps.policy.sandbox(call) : undefined;
    if (typeof sandbox === 'string') return errorResult(sandbox);
    if (sandbox) call.context.sandbox = sandbox;
    const refusal = await deps.policy.approve(call);
    if (refusal) return ((blocked = true), errorResult(refusal));
    try {
      const result = await tool.execute(params, call.context);
      if (!result || !Array.isArray(result.content)) throw new TypeError('the tool returned no content');
      return result;
    } catch (error) {
      if (context.signal?.aborted) return errorResult(`Tool ${name} was aborted.`);
      return errorResult(`Tool ${name} failed: ${(error as Error).message ?? String(error)}`);
    }
  };

  const result = capResult(mask(await run()), request.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS);
  const { content, details } = result;
  const isError = result.isError === true;
  let message: ToolResultMessage = {
    role: 'toolResult',
    toolCallId,
    toolName: name,
    content,
    isError,
    ...(details !== undefined ? { details } : {}),
    timestamp: Date.now(),
  };
  const persisted = deps.hooks.runSync('tool_result_persist', { toolName: name, toolCallId, message }, hookCtx);
  if (persisted.message) message = mask(persisted.message as ToolResultMessage);
  const durationMs = performance.now() - started;

  const error = isError ? content.map((part) => (part.type === 'text' ? part.text : '')).join('\n') : undefined;
  const event = { toolName: name, toolCallId, params, result, ...(error ? { error } : {}), durationMs };
  const changed = (await deps.hooks.runModifying('after_tool_call', event, hookCtx)).result as ToolResult | undefined;
  if (changed && typeof changed === 'object' && Array.isArray(changed.content)) {
    const replaced = mask(changed);
    message = { ...message, content: replaced.content, isError: replaced.isError === true };
    return { message, result: replaced, params, blocked, durationMs };
  }
  return { message, result, params, blocked, durationMs };
}
