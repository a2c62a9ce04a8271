/**
 * Agents as the config names them: which agents exist, the default one, an agent's
 * `agents.list[]` entry, the value it inherits from `agents.defaults`, its folders, and the
 * shape of its resolved settings (AgentSettings, which the "models" service resolves with
 * OpenClaw's defaults: ModelService.settings).
 */
import { join } from 'node:path';
import { expandHome, type KernelConfig } from '../../kernel/index.js';
import type { SandboxRouter } from '../sandbox/index.js';
import type { ToolsConfig } from '../tool-policy.js';
import type { ModelInfo, ThinkingLevel } from '../types/models.js';
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
  models?: ModelInfo[];
}

type AnyRecord = Record<string, any>;

/** `500`, `"500ms"`, `"30s"`, `"5m"`, `"1h"` in milliseconds; `fallback` when unreadable. */
export function durationMs(value: unknown, fallback: number): number {
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

/** An agent's own value for `key`, else the one in `agents.defaults`. */
export function agentValue<T = unknown>(config: KernelConfig, agentId: string, key: string): T | undefined {
  const defaults = ((config.agents as AnyRecord | undefined)?.defaults ?? {}) as AnyRecord;
  return ((agentEntry(config, agentId) ?? {})[key] ?? defaults[key]) as T | undefined;
}

/**
 * An agent's folders: its workspace (`agents.list[].workspace`; the default agent uses
 * `paths.workspaceDir`, any other `<stateDir>/workspace-<id>`) and its state folder
 * (auth-profiles.json: `agents.list[].agentDir`, else `<stateDir>/agents/<id>/agent`).
 */
export function agentPaths(
  config: KernelConfig,
  agentId: string,
  paths: { stateDir: string; workspaceDir: string },
): { workspaceDir: string; agentDir: string } {
  const entry = agentEntry(config, agentId) ?? {};
  const id = normalizeAgentId(agentId);
  const workspace =
    entry.workspace ?? (id === defaultAgentId(config) ? undefined : join(paths.stateDir, `workspace-${id}`));
  return {
    workspaceDir: workspace ? expandHome(String(workspace)) : paths.workspaceDir,
    agentDir: entry.agentDir ? expandHome(String(entry.agentDir)) : join(paths.stateDir, 'agents', id, 'agent'),
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

/**
 * Whether `sessionKey` runs its tools in a sandbox, for the system prompt and /context: the
 * same answer the tool choke point routes with (`router`: the host's "sandbox-route" service).
 */
export function sessionSandbox(
  router: SandboxRouter,
  config: KernelConfig,
  settings: Pick<AgentSettings, 'agentId' | 'workspaceDir'>,
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
