/**
 * Memory settings every backend shares: `agents.defaults.memorySearch`, overridden per
 * agent by `agents.list[].memorySearch`. Defaults follow OpenClaw's documented values.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { expandHome, type KernelConfig } from '../../sdk/index.js';
import type { EmbeddingProviderId, MemoryGetLimits, MemorySettings, MemorySource } from '../../sdk/memory/index.js';

/** OpenClaw's defaults for `contextLimits.memoryGetDefaultLines` / `memoryGetMaxChars`. */
export const MEMORY_GET_DEFAULT_LINES = 120;
export const MEMORY_GET_MAX_CHARS = 12_000;
/** 2 MiB of Markdown is about 1,600 chunks; beyond that a file is a dump, not a note. */
export const MEMORY_MAX_FILE_BYTES = 2 * 1024 * 1024;

/** The one line `memory status` shows when no embedding provider is configured (search is keyword-only). */
export const SEMANTIC_SEARCH_HINT =
  'keyword search only; for semantic search configure an embedding provider: agents.defaults.memorySearch.provider "openai", "gemini" or "voyage" with its API key (OPENAI_API_KEY, GEMINI_API_KEY, VOYAGE_API_KEY), or a local GGUF model file at agents.defaults.memorySearch.local.modelPath';

type AnyRecord = Record<string, any>;

function merged(config: KernelConfig, agentId: string): AnyRecord {
  const agents = (config.agents ?? {}) as AnyRecord;
  const defaults = (agents.defaults?.memorySearch ?? {}) as AnyRecord;
  const entry = ((agents.list ?? []) as AnyRecord[]).find((agent) => agent.id === agentId)?.memorySearch ?? {};
  const deep = (a: AnyRecord, b: AnyRecord): AnyRecord => {
    const out: AnyRecord = { ...a };
    for (const [key, value] of Object.entries(b)) {
      out[key] =
        value && typeof value === 'object' && !Array.isArray(value) && a[key] && typeof a[key] === 'object'
          ? deep(a[key], value)
          : value;
    }
    return out;
  };
  return deep(defaults, entry);
}

/** A plugin's id is checked when memory starts (selectMemoryEmbeddings), once plugins have registered. */
function providerId(value: unknown, fallback: EmbeddingProviderId): EmbeddingProviderId {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : fallback;
}

function wholeOr(value: unknown, fallback: number, min: number): number {
  const number = typeof value === 'number' ? Math.floor(value) : NaN;
  return Number.isFinite(number) && number >= min ? number : fallback;
}

/** OpenClaw gates transcript indexing twice (the source and the experimental flag); one without the other is a mistake worth naming. */
function sourcesOf(raw: AnyRecord, agentId: string): MemorySource[] {
  const value = raw.sources ?? ['memory'];
  const where = `memorySearch.sources (agent ${agentId})`;
  if (!Array.isArray(value)) throw new Error(`${where} must be a list such as ["memory", "sessions"]`);
  for (const item of value) {
    if (item !== 'memory' && item !== 'sessions')
      throw new Error(`${where}: unknown source ${JSON.stringify(item)} (known: "memory", "sessions")`);
  }
  const sources = [...new Set(value as MemorySource[])];
  if (sources.includes('sessions') && raw.experimental?.sessionMemory !== true) {
    throw new Error(
      `${where} includes "sessions", but session transcripts are indexed only with memorySearch.experimental.sessionMemory: true`,
    );
  }
  if (raw.sync?.sessions !== undefined) {
    throw new Error(
      `memorySearch.sync.sessions (agent ${agentId}): the deltaBytes/deltaMessages thresholds are not supported; a grown transcript is indexed after sync.watchDebounceMs`,
    );
  }
  return sources;
}

function contextLimits(config: KernelConfig, agentId: string): MemoryGetLimits {
  const agents = (config.agents ?? {}) as AnyRecord;
  const entry = ((agents.list ?? []) as AnyRecord[]).find((agent) => agent.id === agentId)?.contextLimits ?? {};
  const limits = { ...(agents.defaults?.contextLimits ?? {}), ...entry } as AnyRecord;
  return {
    defaultLines: wholeOr(limits.memoryGetDefaultLines, MEMORY_GET_DEFAULT_LINES, 1),
    maxChars: wholeOr(limits.memoryGetMaxChars, MEMORY_GET_MAX_CHARS, 1),
  };
}

/**
 * Settings for one agent. `stateDir` and `workspaceDir` come from the kernel; the store
 * path template takes `{agentId}` and `~`.
 */
export function resolveMemorySettings(
  config: KernelConfig,
  options: { agentId: string; workspaceDir: string; stateDir: string },
): MemorySettings {
  const raw = merged(config, options.agentId);
  const hybrid = (raw.query?.hybrid ?? {}) as AnyRecord;
  // Weights are normalised so they sum to 1 (7:3 and 14:6 mean the same).
  const vectorWeight = Math.max(0, Number(hybrid.vectorWeight ?? 0.7));
  const textWeight = Math.max(0, Number(hybrid.textWeight ?? 0.3));
  const total = vectorWeight + textWeight || 1;
  const storeTemplate = typeof raw.store?.path === 'string' ? raw.store.path : undefined;
  const storePath = storeTemplate
    ? resolve(expandHome(storeTemplate.replaceAll('{agentId}', options.agentId)))
    : join(options.stateDir, 'memory', `${options.agentId}.sqlite`);
  const localPath = typeof raw.local?.modelPath === 'string' ? raw.local.modelPath : undefined;
  return {
    agentId: options.agentId,
    enabled: raw.enabled !== false,
    workspaceDir: options.workspaceDir,
    extraPaths: ((raw.extraPaths ?? []) as Array<string | { path: string }>)
      .map((item) => (typeof item === 'string' ? item : item?.path))
      .filter((item): item is string => typeof item === 'string' && item.trim() !== '')
      .map((item) => {
        const expanded = expandHome(item);
        return isAbsolute(expanded) ? expanded : resolve(options.workspaceDir, expanded);
      }),
    provider: providerId(raw.provider, 'auto'),
    model: typeof raw.model === 'string' ? raw.model : undefined,
    fallback: providerId(raw.fallback, 'none'),
    remote: {
      baseUrl: raw.remote?.baseUrl,
      apiKey: raw.remote?.apiKey,
      headers: raw.remote?.headers,
      timeoutMs: Number(raw.remote?.timeoutMs ?? 60_000),
      batchSize: Number(raw.remote?.batchSize ?? 64),
    },
    local: {
      modelPath: localPath ? resolve(options.workspaceDir, expandHome(localPath)) : undefined,
      timeoutMs: Number(raw.local?.timeoutMs ?? 300_000),
    },
    store: {
      path: storePath,
      vector: { enabled: raw.store?.vector?.enabled !== false, extensionPath: raw.store?.vector?.extensionPath },
    },
    chunking: { tokens: Number(raw.chunking?.tokens ?? 400), overlap: Number(raw.chunking?.overlap ?? 80) },
    query: {
      maxResults: Number(raw.query?.maxResults ?? 6),
      minScore: Number(raw.query?.minScore ?? 0.35),
      hybrid: {
        enabled: hybrid.enabled !== false,
        vectorWeight: vectorWeight / total,
        textWeight: textWeight / total,
        candidateMultiplier: Number(hybrid.candidateMultiplier ?? 4),
      },
      mmr: { enabled: raw.query?.mmr?.enabled === true, lambda: Number(raw.query?.mmr?.lambda ?? 0.7) },
      temporalDecay: {
        enabled: raw.query?.temporalDecay?.enabled === true,
        halfLifeDays: Number(raw.query?.temporalDecay?.halfLifeDays ?? 30),
      },
    },
    cache: { enabled: raw.cache?.enabled !== false, maxEntries: Number(raw.cache?.maxEntries ?? 50_000) },
    sync: {
      watch: raw.sync?.watch !== false,
      watchDebounceMs: Number(raw.sync?.watchDebounceMs ?? 1500),
      intervalMinutes: Number(raw.sync?.intervalMinutes ?? 0),
      onSearch: raw.sync?.onSearch !== false,
    },
    citations: raw.citations === 'on' || raw.citations === 'off' ? raw.citations : 'auto',
    get: contextLimits(config, options.agentId),
    maxFileBytes: wholeOr(raw.maxFileBytes, MEMORY_MAX_FILE_BYTES, 0),
    sources: sourcesOf(raw, options.agentId),
    sessionsDir: join(options.stateDir, 'agents', options.agentId, 'sessions'),
  };
}
