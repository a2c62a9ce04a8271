/**
 * Every hook by name, with its run mode, default time limit and how results combine; the
 * payload and result types are the SDK's (sdk/types/hooks.ts), where authors read them.
 *  - void       all handlers run in parallel; results are ignored.
 *  - modifying  handlers run in priority order; each result is merged by the hook's rule
 *               and later handlers see the event with earlier changes applied.
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

/** The 13 message-path hooks, in the order a message meets them. */
const MESSAGE_HOOK_MODES = {
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
} as const satisfies Record<string, HookMode>;

const LIFECYCLE_HOOK_MODES = {
  gateway_start: 'void',
  gateway_stop: 'void',
  session_start: 'void',
  session_end: 'void',
  before_compaction: 'void',
  after_compaction: 'void',
  before_install: 'modifying',
} as const satisfies Record<string, HookMode>;

export const HOOK_MODES = { ...MESSAGE_HOOK_MODES, ...LIFECYCLE_HOOK_MODES };
export type HookName = keyof typeof HOOK_MODES;
export const MESSAGE_HOOKS = Object.keys(MESSAGE_HOOK_MODES) as readonly (keyof typeof MESSAGE_HOOK_MODES)[];
export const LIFECYCLE_HOOKS = Object.keys(LIFECYCLE_HOOK_MODES) as readonly (keyof typeof LIFECYCLE_HOOK_MODES)[];
export const HOOK_NAMES = [...MESSAGE_HOOKS, ...LIFECYCLE_HOOKS] as readonly HookName[];

export type VoidHookName = { [H in HookName]: (typeof HOOK_MODES)[H] extends 'void' ? H : never }[HookName];
export type SyncHookName = { [H in HookName]: (typeof HOOK_MODES)[H] extends 'sync' ? H : never }[HookName];
export type ModifyingHookName = Exclude<HookName, VoidHookName | SyncHookName>;

export function isHookName(name: string): name is HookName {
  return Object.prototype.hasOwnProperty.call(HOOK_MODES, name);
}

/** A merged result: open, typed only in the keys the tool choke point reads (the SDK types the rest). */
export interface HookOutcome {
  params?: Record<string, unknown>;
  block?: boolean;
  blockReason?: string;
  message?: unknown;
  result?: unknown;
  [key: string]: unknown;
}

/** A handler as the kernel stores it; what it returns is folded by the merge rule (the SDK's HookHandler<H> is typed). */
export type HookHandler = (event: object, ctx: HookContext) => void;

/**
 * How long the bus waits for one async handler unless its registration or the operator
 * (`plugins.entries.<id>.hooks`) says otherwise. As in OpenClaw, prompt building gets 15 s
 * so it cannot eat the model's time; other async hooks 30 s; sync hooks cannot be cut off.
 */
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
export const HOOK_TIMEOUT_DEFAULTS: { readonly [H in HookName]?: number } = {
  before_prompt_build: 15_000,
  before_agent_start: 15_000,
};
export function defaultHookTimeoutMs(hook: HookName): number {
  return HOOK_MODES[hook] === 'sync' ? 0 : (HOOK_TIMEOUT_DEFAULTS[hook] ?? DEFAULT_HOOK_TIMEOUT_MS);
}

type Result = Record<string, unknown>;

/** How a result folds in (`merge`; default shallow, later wins), what the next handler sees (`apply`), whether it ends the chain (`stops`). */
export interface MergeRule {
  merge?(acc: Result, next: Result): Result;
  apply?(event: Result, acc: Result): Result;
  stops?(next: Result): boolean;
}

/** Keep the first value a handler gave for each of `keys`; later handlers cannot replace it. */
function firstWins(acc: Result, next: Result, keys: readonly string[]): Result {
  const out: Result = { ...acc };
  for (const key of keys) if (out[key] === undefined && next[key] !== undefined) out[key] = next[key];
  return out;
}

function concat(a: unknown, b: unknown): string | undefined {
  const parts = [a, b].filter((part): part is string => typeof part === 'string' && part.length > 0);
  return parts.length ? parts.join('\n\n') : undefined;
}

function mergePromptBuild(acc: Result, next: Result): Result {
  const out = firstWins(acc, next, ['systemPrompt']);
  const prepend = concat(acc.prependContext, next.prependContext);
  const append = concat(acc.appendSystemContext, next.appendSystemContext);
  if (prepend !== undefined) out.prependContext = prepend;
  if (append !== undefined) out.appendSystemContext = append;
  return out;
}

/** The next handler sees the event with the result's `keys` (those set) applied. */
function applying(...keys: string[]): MergeRule['apply'] {
  return (event, acc) => {
    const set = keys.filter((key) => acc[key] !== undefined);
    return set.length ? { ...event, ...Object.fromEntries(set.map((key) => [key, acc[key]])) } : event;
  };
}

const MODEL_KEYS = ['modelOverride', 'providerOverride'];
const blocks = (next: Result) => next.block === true;

export const MERGE_RULES: { readonly [H in HookName]?: MergeRule } = {
  before_model_resolve: { merge: (acc, next) => firstWins(acc, next, MODEL_KEYS) },
  before_prompt_build: { merge: mergePromptBuild },
  before_agent_start: { merge: (acc, next) => firstWins(mergePromptBuild(acc, next), next, MODEL_KEYS) },
  llm_input: { apply: applying('systemPrompt', 'messages') },
  before_tool_call: { apply: applying('params'), stops: blocks },
  tool_result_persist: { apply: applying('message') },
  // A handler may set the result to undefined on purpose.
  after_tool_call: { apply: (event, acc) => ('result' in acc ? { ...event, result: acc.result } : event) },
  llm_output: { apply: applying('content') },
  message_sending: { apply: applying('content'), stops: (next) => next.cancel === true },
  before_message_write: { apply: applying('message'), stops: blocks },
  before_install: { stops: blocks },
};
