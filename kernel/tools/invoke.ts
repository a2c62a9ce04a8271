/**
 * The one path every tool call takes, whoever makes it (the agent loop, an RPC, a channel):
 *
 *   policy → before_tool_call (may rewrite params or block) → params checked against the
 *   tool's schema → execute → secrets masked → result size cap → tool_result_persist (sync;
 *   shapes what is written to the transcript) → after_tool_call (may replace the result,
 *   which is masked again)
 *
 * Failures the model should learn from (blocked, unknown tool, bad params, a throwing
 * tool) come back as error results, never as exceptions, so one bad call cannot end a run.
 */
import type { HookBus } from '../hooks/bus.js';
import type { HookContext, TranscriptMessage } from '../hooks/catalog.js';
import type { Redactor } from '../redact.js';
import type { CapabilityLookup, ToolContent, ToolContext, ToolDefinition, ToolResult, ToolResultMessage } from '../plugin-host/capabilities.js';
import { compileSchema, formatErrors, type JsonSchema } from '../validation.js';

/** Results longer than this (characters of text) are cut, keeping the head and the tail. */
export const DEFAULT_MAX_RESULT_CHARS = 100_000;

export interface ToolCallRequest {
  name: string;
  params: Record<string, unknown>;
  toolCallId: string;
  context: Omit<ToolContext, 'toolCallId'>;
  /** Tool policy verdict; false means the call is refused before anything runs. */
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
  capabilities: Pick<CapabilityLookup, 'find'>;
  /** Masks secrets in what goes back to the model and the transcript (`exec env`, error text). */
  redact: Pick<Redactor, 'value'>;
}

function errorResult(text: string, details?: unknown): ToolResult {
  return { content: [{ type: 'text', text }], isError: true, ...(details === undefined ? {} : { details }) };
}

/** Cut oversized text content to head + tail with a note, so one tool cannot flood the context. */
export function capResult(result: ToolResult, maxChars: number): ToolResult {
  const total = result.content.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0);
  if (total <= maxChars) return result;
  const content: ToolContent[] = result.content.map((part) => {
    if (part.type !== 'text' || part.text.length <= maxChars / 2) return part;
    const keep = Math.floor(maxChars / 2);
    const omitted = part.text.length - keep * 2;
    return { type: 'text', text: `${part.text.slice(0, keep)}\n\n[… ${omitted} characters omitted …]\n\n${part.text.slice(-keep)}` };
  });
  return { ...result, content };
}

export async function invokeTool(deps: ToolRunnerDeps, request: ToolCallRequest): Promise<ToolCallOutcome> {
  const started = performance.now();
  // No run signal here: a tool call always ends with a result for the transcript, so its
  // hooks are bounded by their timeouts only.
  const hookCtx: HookContext = { agentId: request.context.agentId, sessionKey: request.context.sessionKey, runId: request.context.runId };
  let params = request.params;
  let blocked = false;
  let result: ToolResult;

  // Text and details; image bytes are left as they are (value() skips them).
  const mask = <T>(value: T): T => deps.redact.value(value);

  const finish = (value: ToolResult): ToolCallOutcome => {
    const capped = capResult(mask(value), request.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS);
    let message: ToolResultMessage = {
      role: 'toolResult',
      toolCallId: request.toolCallId,
      toolName: request.name,
      content: capped.content,
      isError: capped.isError === true,
      ...(capped.details !== undefined ? { details: capped.details } : {}),
      timestamp: Date.now(),
    };
    const persisted = deps.hooks.runSync(
      'tool_result_persist',
      { toolName: request.name, toolCallId: request.toolCallId, message: message as unknown as TranscriptMessage },
      hookCtx,
    );
    if (persisted.message) message = mask(persisted.message as unknown as ToolResultMessage);
    return { message, result: capped, params, blocked, durationMs: performance.now() - started };
  };

  if (request.allowed && !request.allowed(request.name)) {
    blocked = true;
    return after(finish(errorResult(`Tool "${request.name}" is not allowed by the tool policy for this agent.`)));
  }

  const hook = await deps.hooks.runModifying('before_tool_call', { toolName: request.name, toolCallId: request.toolCallId, params }, hookCtx);
  if (hook.params) params = hook.params;
  if (hook.block) {
    blocked = true;
    return after(finish(errorResult(`Tool call blocked: ${hook.blockReason ?? 'a before_tool_call hook refused it'}`)));
  }

  let tool: ToolDefinition | undefined;
  try {
    tool = await deps.capabilities.find('tool', request.name);
  } catch (error) {
    return after(finish(errorResult(`Tool "${request.name}" is unavailable: ${(error as Error).message}`)));
  }
  if (!tool) return after(finish(errorResult(`Unknown tool "${request.name}".`)));

  const validate = compileSchema(tool.parameters as JsonSchema);
  const checked = structuredClone(params);
  if (!validate(checked)) {
    const issues = formatErrors(validate.errors ?? [], checked, []).map((issue) => `${issue.path}: ${issue.message}`);
    return after(finish(errorResult(`Invalid arguments for ${request.name}: ${issues.join('; ')}`, { issues })));
  }
  params = checked as Record<string, unknown>;

  try {
    result = await tool.execute(params, { ...request.context, toolCallId: request.toolCallId });
    if (!result || !Array.isArray(result.content)) throw new TypeError('the tool returned no content');
  } catch (error) {
    if (request.context.signal?.aborted) result = errorResult(`Tool ${request.name} was aborted.`);
    else result = errorResult(`Tool ${request.name} failed: ${(error as Error).message ?? String(error)}`);
  }
  return after(finish(result));

  async function after(outcome: ToolCallOutcome): Promise<ToolCallOutcome> {
    const error = outcome.result.isError ? outcome.result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n') : undefined;
    const changed = await deps.hooks.runModifying(
      'after_tool_call',
      { toolName: request.name, toolCallId: request.toolCallId, params: outcome.params, result: outcome.result, ...(error ? { error } : {}), durationMs: outcome.durationMs },
      hookCtx,
    );
    if (changed.result && typeof changed.result === 'object' && Array.isArray((changed.result as ToolResult).content)) {
      const replaced = mask(changed.result as ToolResult);
      return { ...outcome, result: replaced, message: { ...outcome.message, content: replaced.content, isError: replaced.isError === true } };
    }
    return outcome;
  }
}
