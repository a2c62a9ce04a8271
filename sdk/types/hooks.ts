/**
 * Every hook a plugin can handle, with its payload and its result: the whole extension
 * surface of the message path, top to bottom. The kernel knows hooks by name, run mode and
 * merge rule only (kernel/hooks/catalog.ts, which also explains the modes); these types
 * narrow `api.on` and `api.kernel.hooks` so handlers and callers are fully typed.
 */
import type * as K from '../../kernel/index.js';
import type { HookContext, HookName, ModifyingHookName, SyncHookName, VoidHookName } from '../../kernel/index.js';

export type { HookContext, HookName, ModifyingHookName, SyncHookName, VoidHookName };

export interface TranscriptMessage {
  role: 'user' | 'assistant' | 'toolResult' | 'system';
  content: unknown;
  [key: string]: unknown;
}

export interface ToolCallRef {
  id: string;
  name: string;
  params: Record<string, unknown>;
}

// ── The 13 message-path hooks, in message-path order ─────────────────────────────

export interface MessageReceivedEvent {
  channel: string;
  accountId?: string;
  from: string;
  to?: string;
  content: string;
  messageId?: string;
  timestamp: number;
  metadata?: Record<string, unknown>;
}

export interface BeforeModelResolveEvent {
  prompt: string;
  provider?: string;
  model?: string;
}
export interface BeforeModelResolveResult {
  modelOverride?: string;
  providerOverride?: string;
}

export interface BeforePromptBuildEvent {
  prompt: string;
  messages: TranscriptMessage[];
}
export interface BeforePromptBuildResult {
  systemPrompt?: string;
  prependContext?: string;
  appendSystemContext?: string;
}

export interface BeforeAgentStartEvent {
  prompt: string;
  provider?: string;
  model?: string;
  messages?: TranscriptMessage[];
}
export type BeforeAgentStartResult = BeforeModelResolveResult & BeforePromptBuildResult;

export interface LlmInputEvent {
  provider: string;
  model: string;
  systemPrompt: string;
  messages: TranscriptMessage[];
  tools?: string[];
}
export interface LlmInputResult {
  systemPrompt?: string;
  messages?: TranscriptMessage[];
}

export interface LlmOutputEvent {
  provider: string;
  model: string;
  content: string;
  toolCalls: ToolCallRef[];
  usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
}
export interface LlmOutputResult {
  content?: string;
}

export interface BeforeToolCallEvent {
  toolName: string;
  toolCallId?: string;
  params: Record<string, unknown>;
}
export interface BeforeToolCallResult {
  params?: Record<string, unknown>;
  block?: boolean;
  blockReason?: string;
}

export interface ToolResultPersistEvent {
  toolName: string;
  toolCallId?: string;
  message: TranscriptMessage;
}
export interface ToolResultPersistResult {
  message?: TranscriptMessage;
}

export interface AfterToolCallEvent {
  toolName: string;
  toolCallId?: string;
  params: Record<string, unknown>;
  result?: unknown;
  error?: string;
  durationMs: number;
}
export interface AfterToolCallResult {
  result?: unknown;
}

export interface AgentEndEvent {
  messages: TranscriptMessage[];
  success: boolean;
  error?: string;
  durationMs: number;
}

export interface MessageSendingEvent {
  channel?: string;
  to: string;
  content: string;
  metadata?: Record<string, unknown>;
}
export interface MessageSendingResult {
  content?: string;
  cancel?: boolean;
  /** Attachments to send with the message (a local file must sit in the media folder or a workspace). */
  media?: Array<{ url: string; mimeType?: string; voice?: boolean }>;
}

export interface BeforeMessageWriteEvent {
  message: TranscriptMessage;
}
export interface BeforeMessageWriteResult {
  message?: TranscriptMessage;
  block?: boolean;
}

export interface MessageSentEvent {
  channel?: string;
  to: string;
  content: string;
  success: boolean;
  error?: string;
}

// ── Lifecycle hooks ─────────────────────────────────────────────────────────────

export interface GatewayStartEvent {
  port: number;
  host: string;
}
export interface GatewayStopEvent {
  reason: string;
}
export interface SessionStartEvent {
  sessionId: string;
  sessionKey?: string;
  resumedFrom?: string;
}
export interface SessionEndEvent {
  sessionId: string;
  sessionKey?: string;
  messageCount: number;
}
export interface BeforeCompactionEvent {
  messageCount: number;
  tokenCount?: number;
}
export interface AfterCompactionEvent {
  messageCount: number;
  compactedCount: number;
  summary?: string;
}
export interface BeforeInstallEvent {
  pluginId: string;
  source: 'path' | 'archive' | 'npm';
  spec: string;
  dir: string;
  manifest: Record<string, unknown>;
}
export interface BeforeInstallResult {
  block?: boolean;
  blockReason?: string;
}

/** Payload and result type of every hook. Results of void hooks are `void`. */
export interface HookTypes {
  message_received: { event: MessageReceivedEvent; result: void };
  before_model_resolve: { event: BeforeModelResolveEvent; result: BeforeModelResolveResult };
  before_prompt_build: { event: BeforePromptBuildEvent; result: BeforePromptBuildResult };
  before_agent_start: { event: BeforeAgentStartEvent; result: BeforeAgentStartResult };
  llm_input: { event: LlmInputEvent; result: LlmInputResult };
  before_tool_call: { event: BeforeToolCallEvent; result: BeforeToolCallResult };
  tool_result_persist: { event: ToolResultPersistEvent; result: ToolResultPersistResult };
  after_tool_call: { event: AfterToolCallEvent; result: AfterToolCallResult };
  llm_output: { event: LlmOutputEvent; result: LlmOutputResult };
  agent_end: { event: AgentEndEvent; result: void };
  message_sending: { event: MessageSendingEvent; result: MessageSendingResult };
  before_message_write: { event: BeforeMessageWriteEvent; result: BeforeMessageWriteResult };
  message_sent: { event: MessageSentEvent; result: void };
  gateway_start: { event: GatewayStartEvent; result: void };
  gateway_stop: { event: GatewayStopEvent; result: void };
  session_start: { event: SessionStartEvent; result: void };
  session_end: { event: SessionEndEvent; result: void };
  before_compaction: { event: BeforeCompactionEvent; result: void };
  after_compaction: { event: AfterCompactionEvent; result: void };
  before_install: { event: BeforeInstallEvent; result: BeforeInstallResult };
}

export type HookEvent<H extends HookName> = HookTypes[H]['event'];
export type HookResult<H extends HookName> = HookTypes[H]['result'];

export type HookHandler<H extends HookName> = (
  event: HookEvent<H>,
  ctx: HookContext,
) => HookResult<H> | void | undefined | Promise<HookResult<H> | void | undefined>;

/** The kernel's hook bus with every payload and result typed (the same object at run time). */
export interface HookBus extends Omit<K.HookBus, 'on' | 'runVoid' | 'runModifying' | 'runSync'> {
  on<H extends HookName>(hook: H, handler: HookHandler<H>, options?: K.HookOptions): () => void;
  runVoid<H extends VoidHookName>(hook: H, event: HookEvent<H>, ctx?: HookContext): Promise<void>;
  /** Rejects with the abort reason when `ctx.signal` aborts. */
  runModifying<H extends ModifyingHookName>(
    hook: H,
    event: HookEvent<H>,
    ctx?: HookContext,
  ): Promise<Partial<NonNullable<HookResult<H>>>>;
  runSync<H extends SyncHookName>(hook: H, event: HookEvent<H>, ctx?: HookContext): Partial<NonNullable<HookResult<H>>>;
}

/** Running hooks (not registering them: that goes through `api.on`, which checks the manifest). */
export type HookRunner = Pick<HookBus, 'runVoid' | 'runModifying' | 'runSync' | 'has' | 'list' | 'ready'>;
