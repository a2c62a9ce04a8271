/**
 * The embedding contract memory backends build on. The embeddings plugin owns the providers
 * (a local GGUF, OpenAI-compatible, Gemini, Voyage), choosing among them and the fallback
 * between them, and offers that choice as the service `embeddings` (EmbeddingsService). A
 * backend asks for it with `embeddingsForIndex`; without the service it searches by keyword
 * and says why. Other plugins add providers as services `embedding-provider:<id>` whose api
 * is a PluginEmbeddingAdapter (OpenClaw's shape; OpenClaw plugins register one through
 * `api.registerEmbeddingProvider`, see host/openclaw/embedding.ts), which
 * `memorySearch.provider: "<id>"` (or `fallback`) then selects. Every vector a provider
 * returns is L2-normalised with non-finite values zeroed.
 */
import { useService } from '../services.js';
import type { KernelServices } from '../types/plugin.js';
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

/** Where providers say why they fell back or what they loaded (a plugin's or backend's logger fits). */
export interface EmbeddingLogger {
  warn(message: string): void;
  info?(message: string): void;
}

export interface EmbeddingSelection {
  /** Undefined: no provider is usable; search is keyword-only. */
  provider?: EmbeddingProvider;
  /** Used when the primary fails (settings.fallback). */
  fallback?: EmbeddingProvider;
  /** Why this provider (or none) was chosen, for `memory status`. */
  reason: string;
}

/** The service that chooses a memory backend's embedding providers. */
export const EMBEDDINGS_SERVICE_ID = 'embeddings';

export interface EmbeddingsService {
  /**
   * The provider memory search uses for this agent's settings, its fallback, and why; nothing
   * is loaded or called yet. The caller owns the providers and closes them. A `provider` or
   * `fallback` id that is neither built in nor registered by an enabled plugin is an error
   * naming the known ones.
   */
  select(settings: MemorySettings, options?: { logger?: EmbeddingLogger }): Promise<EmbeddingSelection>;
}

/** The embedding providers for a backend's index, from the `embeddings` service; keyword-only without it. */
export async function embeddingsForIndex(
  settings: MemorySettings,
  context: { api: { kernel: Pick<KernelServices, 'capabilities'> }; logger?: EmbeddingLogger },
): Promise<EmbeddingSelection> {
  const service = await useService<EmbeddingsService>(context.api.kernel, EMBEDDINGS_SERVICE_ID);
  if (!service)
    return {
      reason: `no enabled plugin provides the "${EMBEDDINGS_SERVICE_ID}" service (claw plugins enable embeddings): keyword search only`,
    };
  return service.select(settings, { logger: context.logger });
}

export const EMBEDDING_SERVICE_PREFIX = 'embedding-provider:';

export const embeddingServiceId = (providerId: string): string => `${EMBEDDING_SERVICE_PREFIX}${providerId}`;

/** What a plugin's embedding provider instance offers (OpenClaw's EmbeddingProvider). */
export interface PluginEmbeddingInstance {
  id?: string;
  model?: string;
  dimensions?: number;
  embed?(input: string, options?: { signal?: AbortSignal }): Promise<number[]>;
  embedBatch?(inputs: string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
  close?(): Promise<void> | void;
}

/** What a plugin registers (OpenClaw's EmbeddingProviderAdapter, the parts claw uses). */
export interface PluginEmbeddingAdapter {
  id: string;
  defaultModel?: string;
  create(options: {
    config: unknown;
    provider: string;
    model: string;
    remote?: { baseUrl?: string; apiKey?: string; headers?: Record<string, string> };
  }): Promise<{ provider: PluginEmbeddingInstance | null; runtime?: { cacheKeyData?: Record<string, unknown> } }>;
  formatSetupError?(error: unknown): string;
}
