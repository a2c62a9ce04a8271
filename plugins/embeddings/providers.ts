/**
 * Choosing and building the embedding provider for memory search.
 *
 * `provider: "auto"` tries, in order: `local` (when `local.modelPath` names a file that
 * exists), `openai`, `gemini`, `voyage` (each when its key resolves); with none usable,
 * search is keyword-only and the selection's `reason` says why (`memory status` shows it).
 *
 * The destination is `remote.baseUrl`, else where the model provider of the same id sends its
 * requests: `models.providers.<openai|google|voyage>.baseUrl`, else (OpenAI) `OPENAI_BASE_URL`,
 * else the API's own host. So pointing OpenAI at a local server points memory there too, and
 * memory text never goes to a host the user did not choose.
 *
 * Keys resolve in this order (the last two only for that provider destination, never for a
 * `remote.baseUrl` elsewhere): `memorySearch.remote.apiKey`, then
 * `models.providers.<openai|google|voyage>.apiKey`, then `OPENAI_API_KEY` / `GEMINI_API_KEY` /
 * `VOYAGE_API_KEY`. An OpenAI-compatible destination the user chose may take no key when
 * `openai` is asked for by name (as the chat provider runs keyless there); `auto` still wants
 * a key. Headers: the provider's defaults, then `models.providers.<…>.headers`, then
 * `remote.headers`, a later one winning on a clash.
 *
 * `model` and `remote.{baseUrl,apiKey,headers}` describe the primary provider. The fallback
 * uses its own defaults and keys, except behind a `local` primary, where nothing else uses
 * them (that is how `provider: "local", fallback: "openai", remote: {...}` points the
 * fallback at a custom endpoint).
 */
import { existsSync, statSync } from 'node:fs';
import { ModelError, isModelError, type KernelConfig, type RuntimeDeps } from '../../sdk/index.js';
import {
  type BuiltinEmbeddingProviderId,
  type EmbeddingLogger,
  type EmbeddingProvider,
  type EmbeddingProviderId,
  type EmbeddingSelection,
  isBuiltinEmbeddingProvider,
  type MemorySettings,
} from '../../sdk/memory/index.js';
import { createRemoteEmbeddingProvider, REMOTE_APIS, type RemoteProviderId, type RetryPolicy } from './http.js';
import { LocalEmbeddingProvider } from './local.js';

export {
  createRemoteEmbeddingProvider,
  DEFAULT_RETRY,
  planBatches,
  type RemoteEndpoint,
  type RetryPolicy,
} from './http.js';
export { LocalEmbeddingProvider, type LocalEmbeddingOptions } from './local.js';

/** What choosing and building providers reads besides the settings. */
export interface EmbeddingContext {
  config: KernelConfig;
  env: Readonly<Record<string, string | undefined>>;
  /** For providers that log why they fell back. */
  logger?: EmbeddingLogger;
  /** The host's "runtime-deps" service: `local` imports node-llama-cpp through it (installed on first use when needed). */
  runtimeDeps?: RuntimeDeps;
  /** Providers plugins registered (by id), built by selectMemoryEmbeddings for a non-built-in `provider`/`fallback`. */
  pluginProviders?: ReadonlyMap<string, { provider: EmbeddingProvider; description: string }>;
}

type AnyRecord = Record<string, any>;
export type ConcreteProviderId = Exclude<BuiltinEmbeddingProviderId, 'auto' | 'none'>;

/** What `auto` tries, in order. */
export const AUTO_ORDER: readonly ConcreteProviderId[] = ['local', 'openai', 'gemini', 'voyage'];

const KEYS: Readonly<Record<RemoteProviderId, { configId: string; envKey: string; baseUrlEnv?: string }>> = {
  openai: { configId: 'openai', envKey: 'OPENAI_API_KEY', baseUrlEnv: 'OPENAI_BASE_URL' },
  gemini: { configId: 'google', envKey: 'GEMINI_API_KEY' },
  voyage: { configId: 'voyage', envKey: 'VOYAGE_API_KEY' },
};

/** Knobs tests (and careful callers) may set that are not part of memory settings. */
export interface BuildOptions {
  /** Retry policy for remote providers (default DEFAULT_RETRY). */
  retry?: Partial<RetryPolicy>;
  /** Evaluation threads for the local provider. */
  threads?: number;
  /**
   * Whether `model` and `remote.{baseUrl,apiKey,headers}` apply to this provider. True for
   * the primary; for a fallback only behind a `local` primary.
   */
  ownsRemote?: boolean;
  /** Asked for by name (`provider` or `fallback`), not tried by `auto`. */
  named?: boolean;
}

export type BuildResult =
  { provider: EmbeddingProvider; description: string } | { provider?: undefined; unavailable: string };

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

function stringHeaders(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value as AnyRecord).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function keyHint(id: RemoteProviderId): string {
  return `memorySearch.remote.apiKey, models.providers.${KEYS[id].configId}.apiKey or ${KEYS[id].envKey}`;
}

function buildRemote(
  id: RemoteProviderId,
  settings: MemorySettings,
  context: EmbeddingContext,
  options: BuildOptions,
): BuildResult {
  const own = options.ownsRemote !== false;
  const configured = ((context.config.models as AnyRecord | undefined)?.providers?.[KEYS[id].configId] ??
    {}) as AnyRecord;
  const remote: Partial<MemorySettings['remote']> = own ? settings.remote : {};
  const customBase = text(remote.baseUrl);
  const envBase = KEYS[id].baseUrlEnv;
  const [providerBase, baseSource] = [
    [text(configured.baseUrl), `models.providers.${KEYS[id].configId}.baseUrl`],
    [envBase ? text(context.env[envBase]) : undefined, envBase],
  ].find(([url]) => url !== undefined) ?? [undefined, undefined];
  // The provider's own key (config or environment) goes only to the provider's own host: a
  // `remote.baseUrl` pointing elsewhere (a proxy, OpenRouter) needs its own `remote.apiKey`.
  const sameHost = (a: string | undefined, b: string) => {
    try {
      return new URL(a ?? b).host === new URL(b).host;
    } catch {
      return false;
    }
  };
  const inherits = !customBase || sameHost(customBase, providerBase ?? REMOTE_APIS[id].defaultBaseUrl);
  const candidates: Array<[string | undefined, string]> = [
    [text(remote.apiKey), 'memorySearch.remote.apiKey'],
    [inherits ? text(configured.apiKey) : undefined, `models.providers.${KEYS[id].configId}.apiKey`],
    [inherits ? text(context.env[KEYS[id].envKey]) : undefined, KEYS[id].envKey],
  ];
  const [apiKey, keySource] = candidates.find(([key]) => key !== undefined) ?? [undefined, undefined];
  // A self-hosted OpenAI-compatible server (Ollama, vLLM) may need no key at all; everything
  // else does, and a request without one could only fail.
  if (!apiKey && !(id === 'openai' && (customBase || (providerBase && options.named)))) {
    return { unavailable: `${id}: no API key (set ${keyHint(id)})` };
  }
  if (!customBase && providerBase && !/^https?:\/\//i.test(providerBase))
    return { unavailable: `${id}: ${baseSource} is not an http(s) URL: "${providerBase}"` };
  const baseUrl = customBase ?? providerBase ?? REMOTE_APIS[id].defaultBaseUrl;
  const provider = createRemoteEmbeddingProvider(id, own ? settings.model : undefined, {
    baseUrl,
    apiKey,
    keySource,
    headers: { ...stringHeaders(configured.headers), ...stringHeaders(remote.headers) },
    timeoutMs: settings.remote.timeoutMs,
    batchSize: settings.remote.batchSize,
    retry: options.retry,
  });
  const auth = keySource ? `key from ${keySource}` : 'no key';
  const from = customBase ? '' : baseSource ? `from ${baseSource}, ` : '';
  return { provider, description: `${id} ${provider.model} at ${baseUrl.replace(/\/+$/, '')} (${from}${auth})` };
}

function buildLocal(settings: MemorySettings, context: EmbeddingContext, options: BuildOptions): BuildResult {
  const modelPath = settings.local.modelPath;
  if (!modelPath) return { unavailable: 'local: memorySearch.local.modelPath is not set' };
  if (/(^|[\\/])hf:/.test(modelPath)) {
    return {
      unavailable: `local: "hf:" model URIs are not downloaded here; download the GGUF and set memorySearch.local.modelPath to the file (${modelPath})`,
    };
  }
  if (!existsSync(modelPath) || !statSync(modelPath).isFile())
    return { unavailable: `local: model file not found: ${modelPath}` };
  const provider = new LocalEmbeddingProvider({
    modelPath,
    timeoutMs: settings.local.timeoutMs,
    threads: options.threads,
    logger: context.logger,
    runtimeDeps: context.runtimeDeps,
  });
  return { provider, description: `local ${modelPath}` };
}

/** Builds one provider by id, or says why it cannot be used. Nothing is loaded or called yet. */
export function createEmbeddingProvider(
  id: ConcreteProviderId,
  settings: MemorySettings,
  context: EmbeddingContext,
  options: BuildOptions = {},
): BuildResult {
  return id === 'local' ? buildLocal(settings, context, options) : buildRemote(id, settings, context, options);
}

function pick(
  choice: EmbeddingProviderId,
  settings: MemorySettings,
  context: EmbeddingContext,
  options: BuildOptions,
  exclude?: string,
): BuildResult {
  if (!isBuiltinEmbeddingProvider(choice)) {
    const built = context.pluginProviders?.get(choice);
    return built ?? { unavailable: `${choice}: no enabled plugin registered this embedding provider` };
  }
  if (choice !== 'auto')
    return choice === 'none'
      ? { unavailable: 'none' }
      : createEmbeddingProvider(choice, settings, context, { ...options, named: true });
  const skipped: string[] = [];
  for (const id of AUTO_ORDER) {
    if (id === exclude) continue;
    const built = createEmbeddingProvider(id, settings, context, options);
    if (built.provider) {
      // A configured local model that was passed over is worth a mention in `memory status`.
      const local = settings.local.modelPath ? skipped.find((note) => note.startsWith('local:')) : undefined;
      return local ? { provider: built.provider, description: `${built.description}; skipped ${local}` } : built;
    }
    skipped.push(built.unavailable);
  }
  return { unavailable: skipped.join('; ') };
}

/**
 * The provider memory search will use for this agent, its fallback, and why. Nothing is
 * loaded or called: a local model loads on its first embed.
 */
export function selectEmbeddingProvider(
  settings: MemorySettings,
  context: EmbeddingContext,
  options: BuildOptions = {},
): EmbeddingSelection {
  if (settings.provider === 'none') return { reason: 'memorySearch.provider is "none": keyword search only' };
  const primary = pick(settings.provider, settings, context, { ...options, ownsRemote: true });
  const auto = settings.provider === 'auto' ? 'auto → ' : '';

  let fallback: { provider: EmbeddingProvider; description: string } | undefined;
  let fallbackNote = '';
  const fallbackId = settings.fallback;
  if (fallbackId !== 'none' && fallbackId !== primary.provider?.id) {
    const primaryId = primary.provider?.id ?? (settings.provider === 'auto' ? undefined : settings.provider);
    const built = pick(fallbackId, settings, context, { ...options, ownsRemote: primaryId === 'local' }, primaryId);
    if (built.provider && built.provider.id !== primaryId) {
      fallback = built;
      fallbackNote = `; fallback ${built.description}`;
    } else if (!built.provider) {
      fallbackNote = `; fallback ${fallbackId} unavailable (${built.unavailable})`;
    }
  }

  if (primary.provider)
    return {
      provider: primary.provider,
      fallback: fallback?.provider,
      reason: `${auto}${primary.description}${fallbackNote}`,
    };
  // The primary cannot even be built (no key, no model file): that is its failure, so the
  // fallback takes over from the start.
  if (fallback) {
    return {
      provider: fallback.provider,
      reason: `${settings.provider} unavailable (${primary.unavailable}); using fallback ${fallback.description}`,
    };
  }
  const why =
    settings.provider === 'auto' ? `no embedding provider is usable (${primary.unavailable})` : primary.unavailable;
  return { reason: `${why}${fallbackNote}: keyword search only` };
}

export interface SourcedVectors {
  vectors: number[][];
  /** Fingerprint of the provider that made these vectors. */
  fingerprint: string;
  fromFallback: boolean;
}

export interface FallbackEmbeddingProvider extends EmbeddingProvider {
  readonly primary: EmbeddingProvider;
  readonly fallback: EmbeddingProvider;
  /** True while calls are being answered by the fallback. */
  readonly usingFallback: boolean;
  /** Like embed(), and says which provider answered. */
  embedWithSource(texts: string[], options?: { signal?: AbortSignal }): Promise<SourcedVectors>;
  /** Closes both providers. */
  close(): Promise<void>;
}

export interface FallbackOptions {
  /** After the primary fails, how long calls go straight to the fallback before the primary is tried again (default 5 min). */
  retryPrimaryAfterMs?: number;
  now?: () => number;
}

/**
 * A provider that embeds with `primary` and, when that fails, with `fallback`; the first
 * failure of an outage is logged once, with its reason.
 *
 * Vectors are comparable only with vectors of the same fingerprint, whatever their
 * length: two models place texts in unrelated spaces. The wrapper keeps the primary's
 * identity (id, model, fingerprint, dims), so an outage does not make the index rebuild;
 * the price is that a vector it returns may come from the other model. The rule:
 *  - Storing vectors: use `embedWithSource()` and store only vectors whose `fingerprint` is
 *    the index's; leave the rest unembedded (keyword search still finds those chunks) and
 *    embed them on a later sync. Or rebuild the index under the fallback's fingerprint if
 *    the primary stays down (`usingFallback`).
 *  - Embedding a query: a fallback vector may only be scored against vectors stored under
 *    the fallback's fingerprint; with none, rank that query by keywords alone.
 *  - Plain `embed()` suits callers that compare the returned vectors only with each other.
 * An abort by the caller is never a failure: it is passed on, and the fallback not tried.
 */
export function withFallback(
  primary: EmbeddingProvider,
  fallback: EmbeddingProvider,
  logger?: EmbeddingLogger,
  options: FallbackOptions = {},
): FallbackEmbeddingProvider {
  const retryAfter = options.retryPrimaryAfterMs ?? 5 * 60_000;
  const now = options.now ?? Date.now;
  let failedAt: number | undefined;
  let lastFailure = '';
  let logged = false;

  const describeError = (error: unknown): string => (error instanceof Error ? error.message : String(error));

  async function embedWithSource(
    texts: string[],
    embedOptions: { signal?: AbortSignal } = {},
  ): Promise<SourcedVectors> {
    const { signal } = embedOptions;
    let primaryError: unknown;
    if (failedAt === undefined || now() - failedAt >= retryAfter) {
      try {
        const vectors = await primary.embed(texts, embedOptions);
        if (failedAt !== undefined)
          logger?.info?.(
            `memory embeddings: ${primary.id} (${primary.model}) works again; fallback ${fallback.id} no longer used`,
          );
        failedAt = undefined;
        logged = false;
        return { vectors, fingerprint: primary.fingerprint, fromFallback: false };
      } catch (error) {
        if (signal?.aborted || (isModelError(error) && error.kind === 'aborted')) throw error;
        primaryError = error;
        failedAt = now();
        lastFailure = describeError(error);
        if (!logged) {
          logged = true;
          logger?.warn(
            `memory embeddings: ${primary.id} (${primary.model}) failed, using fallback ${fallback.id} (${fallback.model}) until it recovers: ${describeError(error)}`,
          );
        }
      }
    }
    try {
      const vectors = await fallback.embed(texts, embedOptions);
      return { vectors, fingerprint: fallback.fingerprint, fromFallback: true };
    } catch (error) {
      if (signal?.aborted || (isModelError(error) && error.kind === 'aborted')) throw error;
      const kind = isModelError(error) ? error.kind : 'unknown';
      const first =
        primaryError === undefined
          ? `${primary.id} is skipped after failing (${lastFailure})`
          : describeError(primaryError);
      throw new ModelError(kind, `${first}; fallback ${fallback.id} also failed: ${describeError(error)}`, {
        provider: fallback.id,
        cause: error,
      });
    }
  }

  return {
    id: primary.id,
    model: primary.model,
    fingerprint: primary.fingerprint,
    get dims() {
      return primary.dims;
    },
    primary,
    fallback,
    get usingFallback() {
      return failedAt !== undefined;
    },
    embedWithSource,
    async embed(texts, embedOptions) {
      return (await embedWithSource(texts, embedOptions)).vectors;
    },
    async close() {
      await Promise.all([primary.close?.(), fallback.close?.()]);
    },
  };
}
