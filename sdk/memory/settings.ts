/**
 * Memory settings every backend shares: `agents.defaults.memorySearch`, overridden per
 * agent by `agents.list[].memorySearch`, as the memory-core plugin resolves them (with
 * OpenClaw's documented defaults) and hands them to a backend's `createIndex`.
 */
import type { MemoryGetLimits } from './files.js';

/** The embedding providers memory knows itself; any other id names one a plugin registered. */
export const BUILTIN_EMBEDDING_PROVIDERS = ['auto', 'local', 'openai', 'gemini', 'voyage', 'none'] as const;
export type BuiltinEmbeddingProviderId = (typeof BUILTIN_EMBEDDING_PROVIDERS)[number];
// `string & {}` keeps the built-in ids visible to editors while admitting plugin ids.
export type EmbeddingProviderId = BuiltinEmbeddingProviderId | (string & {});

export function isBuiltinEmbeddingProvider(id: string): id is BuiltinEmbeddingProviderId {
  return (BUILTIN_EMBEDDING_PROVIDERS as readonly string[]).includes(id);
}

export interface MemorySettings {
  agentId: string;
  enabled: boolean;
  workspaceDir: string;
  /** Extra Markdown files or folders (absolute, or relative to the workspace). */
  extraPaths: string[];
  provider: EmbeddingProviderId;
  model?: string;
  /** Used only when the primary embedding provider fails. */
  fallback: EmbeddingProviderId;
  remote: { baseUrl?: string; apiKey?: string; headers?: Record<string, string>; timeoutMs: number; batchSize: number };
  local: { modelPath?: string; timeoutMs: number };
  store: { path: string; vector: { enabled: boolean; extensionPath?: string } };
  chunking: { tokens: number; overlap: number };
  query: {
    maxResults: number;
    minScore: number;
    hybrid: { enabled: boolean; vectorWeight: number; textWeight: number; candidateMultiplier: number };
    mmr: { enabled: boolean; lambda: number };
    temporalDecay: { enabled: boolean; halfLifeDays: number };
  };
  cache: { enabled: boolean; maxEntries: number };
  sync: { watch: boolean; watchDebounceMs: number; intervalMinutes: number; onSearch: boolean };
  citations: 'auto' | 'on' | 'off';
  /** `agents.defaults.contextLimits` (per agent `agents.list[].contextLimits`): how much memory_get returns. */
  get: MemoryGetLimits;
  /** Files larger than this are indexed only up to it (`memorySearch.maxFileBytes`); 0 skips nothing and cuts nothing. */
  maxFileBytes: number;
  /** What is indexed: memory files, and (opt-in, with `experimental.sessionMemory`) this agent's session transcripts. */
  sources: MemorySource[];
  /** This agent's transcripts (`<stateDir>/agents/<agentId>/sessions`); indexed only when `sources` has "sessions". */
  sessionsDir: string;
}

export type MemorySource = 'memory' | 'sessions';

export const SNIPPET_MAX_CHARS = 700;
