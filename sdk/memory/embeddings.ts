/**
 * Embedding providers for memory search: `local` (a GGUF through node-llama-cpp), `openai`
 * (any OpenAI-compatible /v1/embeddings), `gemini`, `voyage`. `auto` picks the first that
 * is usable in that order; none means keyword-only search. Any other id names a provider a
 * plugin registered (./embedding-plugins.ts). Every vector that leaves here
 * is L2-normalised with non-finite values zeroed.
 */
import type { KernelConfig } from '../../kernel/index.js';
import type { MemorySettings } from './settings.js';

export interface EmbeddingProvider {
  id: string;
  model: string;
  /**
   * What makes vectors comparable: provider, model and endpoint. An index built under
   * another fingerprint is rebuilt.
   */
  fingerprint: string;
  /** Known once the first vector is made (local models, unknown remote models). */
  dims?: number;
  /** One vector per text, in order; normalised. Batches and retries are the provider's job. */
  embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
  close?(): Promise<void> | void;
}

export interface EmbeddingSelection {
  /** Undefined: no provider is usable; search is keyword-only. */
  provider?: EmbeddingProvider;
  /** Used when the primary fails (settings.fallback). */
  fallback?: EmbeddingProvider;
  /** Why this provider (or none) was chosen, for `memory status`. */
  reason: string;
}

export interface EmbeddingContext {
  config: KernelConfig;
  env: Readonly<Record<string, string | undefined>>;
  /** For providers that log why they fell back. */
  logger?: { warn(message: string): void; info?(message: string): void };
  /** claw's state dir: `local` installs node-llama-cpp under it on first use when needed. */
  stateDir?: string;
  /** Providers plugins registered (by id), built by selectMemoryEmbeddings for a non-built-in `provider`/`fallback`. */
  pluginProviders?: ReadonlyMap<string, { provider: EmbeddingProvider; description: string }>;
}

export type EmbeddingFactory = (settings: MemorySettings, context: EmbeddingContext) => EmbeddingSelection;
