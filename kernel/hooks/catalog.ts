/**
 * Every hook a plugin can handle, with its payload, its result and how results combine.
 * This file is the whole extension surface of the message path: read it top to bottom.
 *
 * Modes:
 *  - void       all handlers run in parallel; results are ignored.
 *  - modifying  handlers run one after another (higher priority first) and each result
 *               is merged into the running result by the hook's own rule; later handlers
 *               see the event with earlier changes applied.
 *  - sync       like modifying but never awaited: a handler returning a promise is reported.
 */

export type HookMode = 'void' | 'modifying' | 'sync';

/** Where the hook fired; which fields are present depends on the emitting path. */
export interface HookContext {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  runId?: string;
  channel?: string;
  accountId?: string;
  /** Plugin whose handler is running; filled in by the bus. */
  pluginId?: string;
  /** The run's abort signal: the bus stops waiting when it fires; pass it on to your own I/O. */
  signal?: AbortSignal;
}

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

export type HookName = keyof HookTypes;
export type HookEvent<H extends HookName> = HookTypes[H]['event'];
export type HookResult<H extends HookName> = HookTypes[H]['result'];

export type HookHandler<H extends HookName> = (
  event: HookEvent<H>,
  ctx: HookContext,
) => HookResult<H> | void | undefined | Promise<HookResult<H> | void | undefined>;

type Modes = { [H in HookName]: HookResult<H> extends void ? 'void' : 'modifying' | 'sync' };

/** The 13 message-path hooks, in the order a message meets them. */
export const MESSAGE_HOOKS = [
  'message_received',
  'before_model_resolve',
  'before_prompt_build',
  'before_agent_start',
  'llm_input',
  'before_tool_call',
  'tool_result_persist',
  'after_tool_call',
  'llm_output',
  'agent_end',
  'message_sending',
  'before_message_write',
  'message_sent',
] as const satisfies readonly HookName[];

export const LIFECYCLE_HOOKS = [
  'gateway_start',
  'gateway_stop',
  'session_start',
  'session_end',
  'before_compaction',
  'after_compaction',
  'before_install',
] as const satisfies readonly HookName[];

export const HOOK_NAMES: readonly HookName[] = [...MESSAGE_HOOKS, ...LIFECYCLE_HOOKS];

export const HOOK_MODES: Readonly<Modes> = {
  message_received: 'void',
  before_model_resolve: 'modifying',
  before_prompt_build: 'modifying',
  before_agent_start: 'modifying',
  llm_input: 'modifying',
  before_tool_call: 'modifying',
  tool_result_persist: 'sync',
  after_tool_call: 'modifying',
  llm_output: 'modifying',
  agent_end: 'void',
  message_sending: 'modifying',
  before_message_write: 'sync',
  message_sent: 'void',
  gateway_start: 'void',
  gateway_stop: 'void',
  session_start: 'void',
  session_end: 'void',
  before_compaction: 'void',
  after_compaction: 'void',
  before_install: 'modifying',
};

/**
 * How long the bus waits for one async handler unless its registration (`timeoutMs`) or the
 * operator (`plugins.entries.<id>.hooks.timeoutMs` / `.timeouts.<hook>`) says otherwise.
 * As in OpenClaw, prompt building gets 15 s so it cannot eat the model's time; every other
 * async hook 30 s. Sync hooks have none (0): they cannot be interrupted.
 */
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
export const HOOK_TIMEOUT_DEFAULTS: { readonly [H in HookName]?: number } = {
  before_prompt_build: 15_000,
  before_agent_start: 15_000,
};
export function defaultHookTimeoutMs(hook: HookName): number {
  return HOOK_MODES[hook] === 'sync' ? 0 : (HOOK_TIMEOUT_DEFAULTS[hook] ?? DEFAULT_HOOK_TIMEOUT_MS);
}

export function isHookName(name: string): name is HookName {
  return Object.prototype.hasOwnProperty.call(HOOK_MODES, name);
}

// ── Merge rules ─────────────────────────────────────────────────────────────────

/**
 * How one handler's result folds into the running result (`merge`), how the event seen
 * by the next handler changes (`apply`), and whether the result ends the chain (`stops`).
 */
export interface MergeRule<H extends HookName> {
  merge(acc: HookResult<H>, next: HookResult<H>): HookResult<H>;
  apply?(event: HookEvent<H>, acc: HookResult<H>): HookEvent<H>;
  stops?(next: HookResult<H>): boolean;
}

type AnyResult = Record<string, unknown>;

/** Shallow merge, later keys win: the rule for hooks without a specific one. */
const lastWins = {
  merge: (acc: AnyResult, next: AnyResult) => ({ ...acc, ...next }),
};

/** Keep the first value a handler gave for each of `keys`; later handlers cannot replace it. */
function firstWins(acc: AnyResult, next: AnyResult, keys: readonly string[]): AnyResult {
  const out: AnyResult = { ...acc };
  for (const key of keys) {
    if (out[key] === undefined && next[key] !== undefined) out[key] = next[key];
  }
  return out;
}

function concat(a: unknown, b: unknown): string | undefined {
  const parts = [a, b].filter((part): part is string => typeof part === 'string' && part.length > 0);
  return parts.length ? parts.join('\n\n') : undefined;
}

function mergePromptBuild(acc: AnyResult, next: AnyResult): AnyResult {
  const out = firstWins(acc, next, ['systemPrompt']);
  const prepend = concat(acc.prependContext, next.prependContext);
  const append = concat(acc.appendSystemContext, next.appendSystemContext);
  if (prepend !== undefined) out.prependContext = prepend;
  if (append !== undefined) out.appendSystemContext = append;
  return out;
}

const MODEL_KEYS = ['modelOverride', 'providerOverride'] as const;

export const MERGE_RULES: { [H in HookName]?: MergeRule<H> } = {
  before_model_resolve: {
    merge: (acc, next) => firstWins(acc as AnyResult, next as AnyResult, MODEL_KEYS),
  },
  before_prompt_build: {
    merge: (acc, next) => mergePromptBuild(acc as AnyResult, next as AnyResult),
  },
  before_agent_start: {
    merge: (acc, next) =>
      firstWins(mergePromptBuild(acc as AnyResult, next as AnyResult), next as AnyResult, MODEL_KEYS),
  },
  llm_input: {
    merge: lastWins.merge,
    apply: (event, acc) => ({
      ...event,
      ...(acc.systemPrompt !== undefined ? { systemPrompt: acc.systemPrompt } : {}),
      ...(acc.messages !== undefined ? { messages: acc.messages } : {}),
    }),
  },
  before_tool_call: {
    merge: lastWins.merge,
    apply: (event, acc) => (acc.params !== undefined ? { ...event, params: acc.params } : event),
    stops: (next) => next.block === true,
  },
  tool_result_persist: {
    merge: lastWins.merge,
    apply: (event, acc) => (acc.message !== undefined ? { ...event, message: acc.message } : event),
  },
  after_tool_call: {
    merge: lastWins.merge,
    apply: (event, acc) => ('result' in acc ? { ...event, result: acc.result } : event),
  },
  llm_output: {
    merge: lastWins.merge,
    apply: (event, acc) => (acc.content !== undefined ? { ...event, content: acc.content } : event),
  },
  message_sending: {
    merge: lastWins.merge,
    apply: (event, acc) => (acc.content !== undefined ? { ...event, content: acc.content } : event),
    stops: (next) => next.cancel === true,
  },
  before_message_write: {
    merge: lastWins.merge,
    apply: (event, acc) => (acc.message !== undefined ? { ...event, message: acc.message } : event),
    stops: (next) => next.block === true,
  },
  before_install: {
    merge: lastWins.merge,
    stops: (next) => next.block === true,
  },
};

export function mergeRuleFor<H extends HookName>(hook: H): MergeRule<H> {
  return (MERGE_RULES[hook] as MergeRule<H> | undefined) ?? (lastWins as unknown as MergeRule<H>);
}
