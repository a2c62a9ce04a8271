/**
 * The `agentLoop` slot: one turn and nothing else. The agent plugin (the dispatcher) owns
 * everything around a turn — sessions, queueing, slash commands, delivery, the `agent` and
 * `chat.*` methods — and for each run hands the slot holder a TurnContext: the session's
 * store entry and transcript, the model service, the agent's settings, and callbacks for
 * streaming and steering. Swapping the slot swaps only this.
 *
 *   export default definePlugin({ id: 'my-loop', register(api) {
 *     api.registerAgentLoop(defineAgentLoop({ async runTurn(input, ctx) { … } }));
 *   } });
 */
import type { ToolDefinition, ToolResultMessage } from '../../kernel/index.js';
import type { AssistantMessage, ChatMessage, ImagePart, ThinkingLevel, ToolCallPart } from '../types/models.js';
import type { KernelServices } from '../types/plugin.js';
import { TOOL_POLICY_SERVICE, type ToolMatcher, type ToolPolicyService } from '../tool-policy.js';
import { requireService } from '../services.js';
import type { ModelOutcome, Models } from './model-service.js';
import type { AgentSettings } from './settings.js';
import type { Skill } from './skills.js';
import type { SessionEntry, SessionStore } from '../sessions/store.js';
import type { Transcript } from '../sessions/transcript.js';
import { sessionToolRestriction } from './subagents.js';

export type AgentStream = 'lifecycle' | 'assistant' | 'tool' | 'compaction';
export type PromptMode = 'full' | 'minimal' | 'none';

export interface TurnInput {
  /**
   * The user's message, with what `before_prompt_build` and `before_agent_start` handlers
   * prepend (pending system events, recalled notes) already in front of it.
   */
  message: string;
  images?: ImagePart[];
  thinking?: ThinkingLevel;
  /** A per-message model override ("provider/model" or an alias, already resolved); `chain` starts with it. */
  model?: string;
  /**
   * The models to try, in order (for `ctx.models.stream`): the message's or session's model
   * and its fallbacks, as `before_model_resolve` and `before_agent_start` left them.
   */
  chain: string[];
  /** A hook's replacement for the loop's own system prompt (see turnSystemPrompt). */
  systemPrompt?: string;
  /** What hooks add after the system prompt, whichever it is. */
  appendSystemContext?: string;
  extraSystemPrompt?: string;
  promptMode?: PromptMode;
  /** DispatchInput.origin, written on the turn's user message. */
  origin?: string;
}

/** The system prompt a turn sends: the hooks' replacement or the loop's own, then what hooks append. */
export function turnSystemPrompt(input: Pick<TurnInput, 'systemPrompt' | 'appendSystemContext'>, own: string): string {
  const prompt = input.systemPrompt ?? own;
  return input.appendSystemContext ? `${prompt}\n\n${input.appendSystemContext}` : prompt;
}

/**
 * Everything a loop may use for one turn; the dispatcher builds it fresh per run. The hooks
 * around the turn fire without the loop's help: the pre-turn ones before `runTurn` (their
 * results are in TurnInput), `llm_input`/`llm_output` in `models.stream`, the tool hooks in
 * `kernel.tools.invoke`, `before_message_write` in `transcript.appendMessage`.
 */
export interface TurnContext {
  kernel: KernelServices;
  /** Model selection, auth profiles and failover (the "models" service's `models`), bound to this run's hook context. */
  models: Models;
  store: SessionStore;
  /** The session's transcript: read history, append what the turn adds. */
  transcript: Transcript;
  settings: AgentSettings;
  runId: string;
  sessionKey: string;
  session: SessionEntry;
  /** The main session of its agent (MEMORY.md is injected there only). */
  mainSession: boolean;
  channel?: string;
  /** Aborted by /stop, chat.abort, an interrupt or the run's timeout. */
  signal: AbortSignal;
  /** Messages that arrived for this session while the turn runs (queue mode "steer"). */
  takeSteering(): string[];
  /** Whether steering is possible right now (the turn is inside its model/tool loop). */
  setStreaming(streaming: boolean): void;
  /** Stream events to UIs: `assistant` {delta | thinkingDelta | messageEnd}, `tool` {phase: start | update | result, …} (OpenClaw's phases), `lifecycle`, `compaction`. */
  emit(stream: AgentStream, data: Record<string, unknown>): void;
  /** The skills the system prompt lists (eligible, model-invocable, bounded); empty without the skills plugin. */
  skills: Skill[];
}

export interface TurnUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Token counts are estimated at four characters per token (prompt reports, compaction). */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

export interface PromptReport {
  mode: PromptMode;
  chars: number;
  projectContextChars: number;
  toolListChars: number;
  skillsChars: number;
  skills: Array<{ name: string; chars: number }>;
  files: Array<{ name: string; status: string; rawChars: number; injectedChars: number }>;
  /** JSON schema size per tool: sent with every request, never shown as text. */
  tools?: Array<{ name: string; schemaChars: number }>;
}

export interface TurnResult {
  /** The final answer (may carry `[[media:…]]` markers and NO_REPLY, parsed by the dispatcher). */
  text: string;
  /** Everything this turn added to the transcript. */
  messages: ChatMessage[];
  usage: TurnUsage;
  model?: string;
  provider?: string;
  status: 'ok' | 'aborted' | 'error';
  error?: string;
  promptReport?: PromptReport;
  /** A tool errored and no text followed: the dispatcher tells the user. */
  toolError?: string;
  /** When the run last called Anthropic (its prompt cache was refreshed). */
  cacheTouchedAt?: number;
}

export interface CompactOutcome {
  compacted: boolean;
  summary?: string;
  usage?: TurnUsage;
}

/** What the `agentLoop` slot holds. Only `runTurn` is required. */
export interface AgentLoopSlot {
  runTurn(input: TurnInput, ctx: TurnContext): Promise<TurnResult>;
  /** `/compact` and `sessions.compact`: summarise older turns now. */
  compact?(ctx: TurnContext, options: { instructions?: string; model?: string }): Promise<CompactOutcome>;
  /** `/context`: the system prompt this loop would build now, with its size report. */
  describePrompt?(
    ctx: Pick<TurnContext, 'kernel' | 'settings' | 'mainSession' | 'skills'> & { model?: string; thinking: string },
  ): Promise<{ prompt: string; report: PromptReport }>;
}

export function defineAgentLoop(loop: AgentLoopSlot): AgentLoopSlot {
  return loop;
}

/**
 * The tool policy for an agent and model (tools.allow/deny/profile, per agent and provider):
 * the host's "tool-policy" service, which the kernel's tool choke point enforces too, so the
 * model is offered exactly the tools it may call.
 */
export async function toolPolicy(
  kernel: KernelServices,
  settings: AgentSettings,
  provider: string | undefined,
  model: string | undefined,
): Promise<ToolMatcher> {
  const policy = await requireService<ToolPolicyService>(kernel, TOOL_POLICY_SERVICE, 'the agent loop');
  return policy.configured(kernel.config(), { agentId: settings.agentId, provider, model });
}

/**
 * Registered tools that the policy lets this agent (and model) use in this session (a
 * sub-agent session is narrowed by depth, subagents.ts); their plugins load here.
 */
export async function allowedTools(
  kernel: KernelServices,
  settings: AgentSettings,
  provider: string | undefined,
  model: string | undefined,
  sessionKey?: string,
): Promise<ToolDefinition[]> {
  const policy = await toolPolicy(kernel, settings, provider, model);
  const restriction = await sessionToolRestriction(kernel, settings.agentId, sessionKey);
  const names = kernel.capabilities
    .list('tool')
    .map((info) => info.name)
    .filter((name) => policy(name) && (!restriction || restriction(name)));
  const tools = await Promise.all(names.map((name) => kernel.capabilities.find('tool', name).catch(() => undefined)));
  return tools.filter((tool): tool is ToolDefinition => tool !== undefined);
}

/** A model's answer as the transcript keeps it: thinking, then text, then tool calls. */
export function assistantMessage(outcome: ModelOutcome): AssistantMessage {
  return {
    role: 'assistant',
    content: [
      ...outcome.thinking,
      ...(outcome.text ? [{ type: 'text' as const, text: outcome.text }] : []),
      ...outcome.toolCalls,
    ],
    provider: outcome.provider,
    model: outcome.model,
    stopReason: outcome.stopReason,
    ...(outcome.usage ? { usage: outcome.usage } : {}),
    timestamp: Date.now(),
  };
}

/** What a tool call of a reply cut at the output limit gets instead of running: its arguments may be cut too. */
export const TRUNCATED_TOOL_RESULT =
  'Not run: your reply was cut off at the output token limit, so this call may be incomplete. Make the call again with shorter arguments, or split the work into smaller steps.';

export function truncatedToolResult(
  call: Pick<ToolCallPart, 'id' | 'name'>,
  timestamp = Date.now(),
): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: 'text', text: TRUNCATED_TOOL_RESULT }],
    isError: true,
    timestamp,
  };
}

/**
 * The results of a reply's tool calls, run one after another through the kernel's tool
 * choke point (policy, approvals, the tool hooks) with the turn's context. A reply cut at
 * the token limit (`stopReason: 'length'`) runs none of them: each gets an error result
 * telling the model so, which keeps every call in the transcript paired with a result.
 */
export async function runToolCalls(ctx: TurnContext, reply: AssistantMessage): Promise<ToolResultMessage[]> {
  const calls = Array.isArray(reply.content)
    ? reply.content.filter((part): part is ToolCallPart => part.type === 'toolCall')
    : [];
  if (reply.stopReason === 'length') return calls.map((call) => truncatedToolResult(call));
  const { settings } = ctx;
  const context = {
    agentId: settings.agentId,
    sessionKey: ctx.sessionKey,
    workspaceDir: settings.workspaceDir,
    signal: ctx.signal,
    runId: ctx.runId,
  };
  const allowed = await sessionToolRestriction(ctx.kernel, settings.agentId, ctx.sessionKey);
  const model = reply.provider && reply.model ? `${reply.provider}/${reply.model}` : undefined;
  const results: ToolResultMessage[] = [];
  for (const call of calls) {
    const result = await ctx.kernel.tools.invoke({
      name: call.name,
      params: call.arguments,
      toolCallId: call.id,
      context,
      model,
      maxResultChars: settings.maxResultChars,
      ...(allowed ? { allowed } : {}),
    });
    results.push(result.message);
  }
  return results;
}
