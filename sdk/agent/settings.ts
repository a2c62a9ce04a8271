/**
 * The agent loop's view of config: `agents.defaults` merged with the `agents.list[]` entry of
 * one agent, plus the sections this plugin owns (`session`, `models`, `messages`). Defaults
 * follow OpenClaw's documented values.
 */
import { join } from 'node:path';
import { expandHome, type KernelConfig } from '../../kernel/index.js';
import type { SandboxRouter } from '../sandbox/index.js';
import type { ToolsConfig } from '../tool-policy.js';
import type { ThinkingLevel } from '../types/models.js';
import { normalizeAgentId } from '../sessions/keys.js';
import { ErrorCodes } from '../protocol/constants.js';
import { ProtocolError } from '../protocol/frames.js';

export type ModelSetting = string | { primary?: string; fallbacks?: string[] };

export interface CompactionSettings {
  reserveTokensFloor: number;
  /** Tokens of recent history kept verbatim when older turns are summarised. */
  keepRecentTokens: number;
  memoryFlush: { enabled: boolean; softThresholdTokens: number; systemPrompt: string; prompt: string };
}

export interface PruningSettings {
  mode: 'off' | 'cache-ttl';
  ttlMs: number;
  keepLastAssistants: number;
  softTrimRatio: number;
  hardClearRatio: number;
  minPrunableToolChars: number;
  softTrim: { maxChars: number; headChars: number; tailChars: number };
  hardClear: { enabled: boolean; placeholder: string };
  tools?: { allow?: string[]; deny?: string[] };
}

export interface AgentSettings {
  agentId: string;
  workspaceDir: string;
  /** The agent's state folder (auth-profiles.json): `agents.list[].agentDir`, else `<stateDir>/agents/<id>/agent`. */
  agentDir: string;
  model?: ModelSetting;
  /** "provider/model" → { alias } */
  models: Record<string, { alias?: string }>;
  timeoutSeconds: number;
  bootstrapMaxChars: number;
  userTimezone?: string;
  thinkingDefault: ThinkingLevel;
  contextTokens?: number;
  compaction: CompactionSettings;
  pruning: PruningSettings;
  blockStreaming: { enabled: boolean; minChars: number; maxChars: number };
  tools?: ToolsConfig;
  maxResultChars: number;
}

export interface ProviderSettings {
  baseUrl?: string;
  apiKey?: string;
  api?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  /** OpenClaw's name for the request timeout; `timeoutMs` wins when both are set. */
  timeoutSeconds?: number;
  models?: Array<{ id: string; name?: string; contextWindow?: number; maxTokens?: number; reasoning?: boolean }>;
}

export type QueueMode = 'steer' | 'followup' | 'collect' | 'steer-backlog' | 'interrupt';
export type DropPolicy = 'old' | 'new' | 'summarize';

export interface QueueSettings {
  mode: QueueMode;
  debounceMs: number;
  cap: number;
  drop: DropPolicy;
}

export interface MessagesSection {
  queue?: Partial<QueueSettings> & { mode?: QueueMode | 'queue'; byChannel?: Record<string, QueueMode | 'queue'> };
}

export const DEFAULT_QUEUE: QueueSettings = { mode: 'collect', debounceMs: 1000, cap: 20, drop: 'summarize' };

const MEMORY_FLUSH_SYSTEM = 'Session nearing compaction. Store durable memories now.';
const MEMORY_FLUSH_PROMPT =
  'Pre-compaction memory flush: append anything worth keeping (decisions, facts about the user, open tasks) to memory/YYYY-MM-DD.md in the workspace. If there is nothing to store, reply with NO_REPLY.';

type AnyRecord = Record<string, any>;

function durationMs(value: unknown, fallback: number): number {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return fallback;
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(value.trim());
  if (!match) return fallback;
  const n = Number(match[1]);
  return Math.round(n * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 'ms'] ?? 1));
}

export function agentIds(config: KernelConfig): string[] {
  const list = ((config.agents as AnyRecord | undefined)?.list ?? []) as Array<{ id?: string }>;
  const ids = list.map((agent) => agent.id).filter((id): id is string => typeof id === 'string');
  return ids.length > 0 ? ids : ['main'];
}

/**
 * Why `agentId` cannot be used, or undefined when it can: an agent exists when it is the
 * default agent or listed in `agents.list` (an unknown id must not quietly become a new
 * agent with its own folders).
 */
export function unknownAgentProblem(config: KernelConfig, agentId: string): string | undefined {
  const known = [...new Set(agentIds(config).map((id) => normalizeAgentId(id)))];
  if (known.includes(normalizeAgentId(agentId))) return undefined;
  return `unknown agent "${agentId}": the configured agent${known.length === 1 ? ' is' : 's are'} ${known.join(', ')} (agents.list in the config)`;
}

/** Like unknownAgentProblem, as an error a gateway method answers with INVALID_REQUEST. */
export function assertKnownAgent(config: KernelConfig, agentId: string): void {
  const problem = unknownAgentProblem(config, agentId);
  if (problem) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, problem, { code: 'UNKNOWN_AGENT', agentId });
}

export function defaultAgentId(config: KernelConfig): string {
  const list = ((config.agents as AnyRecord | undefined)?.list ?? []) as Array<{ id?: string; default?: boolean }>;
  return normalizeAgentId(list.find((agent) => agent.default)?.id ?? list[0]?.id ?? 'main');
}

/** The `agents.list[]` entry of `agentId` (ids compare as session keys spell them), or undefined. */
export function agentEntry(config: KernelConfig, agentId: string): AnyRecord | undefined {
  const wanted = normalizeAgentId(agentId);
  return (((config.agents as AnyRecord | undefined)?.list ?? []) as AnyRecord[]).find(
    (agent) => agent && normalizeAgentId(agent.id) === wanted,
  );
}

export function agentSettings(
  config: KernelConfig,
  agentId: string,
  stateDir: string,
  defaultWorkspace: string,
): AgentSettings {
  const agents = (config.agents ?? {}) as AnyRecord;
  const defaults = (agents.defaults ?? {}) as AnyRecord;
  const entry = agentEntry(config, agentId) ?? {};
  const pick = <T>(key: string): T | undefined => (entry[key] ?? defaults[key]) as T | undefined;
  const compaction = (defaults.compaction ?? {}) as AnyRecord;
  const flush = (compaction.memoryFlush ?? {}) as AnyRecord;
  const pruning = (defaults.contextPruning ?? {}) as AnyRecord;
  const chunk = (defaults.blockStreamingChunk ?? {}) as AnyRecord;
  const workspace =
    entry.workspace ??
    (normalizeAgentId(agentId) === defaultAgentId(config)
      ? undefined
      : join(stateDir, `workspace-${normalizeAgentId(agentId)}`));
  return {
    agentId,
    workspaceDir: workspace ? expandHome(String(workspace)) : defaultWorkspace,
    agentDir: entry.agentDir
      ? expandHome(String(entry.agentDir))
      : join(stateDir, 'agents', normalizeAgentId(agentId), 'agent'),
    model: pick<ModelSetting>('model'),
    models: { ...(defaults.models ?? {}), ...(entry.models ?? {}) },
    timeoutSeconds: Number(pick('timeoutSeconds') ?? 600),
    bootstrapMaxChars: Number(pick('bootstrapMaxChars') ?? 20_000),
    userTimezone: pick<string>('userTimezone'),
    thinkingDefault: (pick<ThinkingLevel>('thinkingDefault') ?? 'off') as ThinkingLevel,
    contextTokens: pick<number>('contextTokens'),
    compaction: {
      reserveTokensFloor: Number(compaction.reserveTokensFloor ?? 20_000),
      keepRecentTokens: Number(compaction.keepRecentTokens ?? 20_000),
      memoryFlush: {
        enabled: flush.enabled !== false,
        softThresholdTokens: Number(flush.softThresholdTokens ?? 4000),
        systemPrompt: String(flush.systemPrompt ?? MEMORY_FLUSH_SYSTEM),
        prompt: String(flush.prompt ?? MEMORY_FLUSH_PROMPT),
      },
    },
    pruning: {
      mode: pruning.mode === 'cache-ttl' ? 'cache-ttl' : 'off',
      ttlMs: durationMs(pruning.ttl, 5 * 60_000),
      keepLastAssistants: Number(pruning.keepLastAssistants ?? 3),
      softTrimRatio: Number(pruning.softTrimRatio ?? 0.3),
      hardClearRatio: Number(pruning.hardClearRatio ?? 0.5),
      minPrunableToolChars: Number(pruning.minPrunableToolChars ?? 50_000),
      softTrim: { maxChars: 4000, headChars: 1500, tailChars: 1500, ...(pruning.softTrim ?? {}) },
      hardClear: { enabled: true, placeholder: '[Old tool result content cleared]', ...(pruning.hardClear ?? {}) },
      tools: pruning.tools,
    },
    blockStreaming: {
      enabled: defaults.blockStreamingDefault === 'on',
      minChars: Number(chunk.minChars ?? 800),
      maxChars: Number(chunk.maxChars ?? 1200),
    },
    tools: entry.tools as ToolsConfig | undefined,
    maxResultChars: Number(pick('toolResultMaxChars') ?? 100_000),
  };
}

export function providerSettings(config: KernelConfig, provider: string): ProviderSettings {
  return (
    (((config.models as AnyRecord | undefined)?.providers ?? {}) as Record<string, ProviderSettings>)[provider] ?? {}
  );
}

/** Provider ids configured under `models.providers` (registered or not). */
export function configuredProviderIds(config: KernelConfig): string[] {
  const providers = (config.models as { providers?: Record<string, unknown> } | undefined)?.providers ?? {};
  return Object.keys(providers);
}

/** The configured chain as written: the primary, then its fallbacks (aliases unresolved). */
export function modelChain(setting: ModelSetting | undefined): string[] {
  if (!setting) return [];
  if (typeof setting === 'string') return [setting];
  return [setting.primary, ...(setting.fallbacks ?? [])].filter(
    (ref): ref is string => typeof ref === 'string' && ref.length > 0,
  );
}

export function queueDefaults(messages: MessagesSection | undefined, channel?: string): QueueSettings {
  const queue = messages?.queue ?? {};
  const byChannel = channel ? queue.byChannel?.[channel] : undefined;
  const mode = normalizeQueueMode(byChannel ?? queue.mode) ?? DEFAULT_QUEUE.mode;
  return {
    mode,
    debounceMs: durationMs(queue.debounceMs, DEFAULT_QUEUE.debounceMs),
    cap: Number(queue.cap ?? DEFAULT_QUEUE.cap),
    drop: (queue.drop ?? DEFAULT_QUEUE.drop) as DropPolicy,
  };
}

/** "queue" is OpenClaw's legacy name for steer; "steer+backlog" an alternative spelling. */
export function normalizeQueueMode(mode: string | undefined): QueueMode | undefined {
  if (!mode) return undefined;
  const m = mode.trim().toLowerCase();
  if (m === 'queue') return 'steer';
  if (m === 'steer+backlog') return 'steer-backlog';
  return (['steer', 'followup', 'collect', 'steer-backlog', 'interrupt'] as const).find((known) => known === m);
}

export { durationMs };

/**
 * Whether `sessionKey` runs its tools in a sandbox, for the system prompt and /context: the
 * same answer the tool choke point routes with (`router`: the host's "sandbox-route" service).
 */
export function sessionSandbox(
  router: SandboxRouter,
  config: KernelConfig,
  settings: AgentSettings,
  sessionKey: string,
  stateDir: string,
): { mode: string; sandboxed: boolean; workdir?: string } {
  const route = router.route(config, {
    agentId: settings.agentId,
    sessionKey,
    workspaceDir: settings.workspaceDir,
    stateDir,
  });
  return {
    mode: route.settings.mode,
    sandboxed: route.sandboxed,
    ...(route.spec ? { workdir: route.spec.workdir } : {}),
  };
}
