/**
 * Embedding providers from other plugins. A plugin registers one as the kernel service
 * `embedding-provider:<id>` whose `api` is an adapter in OpenClaw's shape (the contract is
 * sdk/memory/embeddings.ts). `memorySearch.provider: "<id>"` (or `fallback`) then selects
 * it. The provider is wrapped like the built-in ones: batches of `remote.batchSize`, a
 * `remote.timeoutMs` limit per batch, one vector of one length per text, normalised; the
 * index caches its vectors under the wrapper's fingerprint as it does any provider's.
 */
import type { CapabilityLookup, PluginRecord } from '../../sdk/index.js';
import { ModelError } from '../../sdk/index.js';
import {
  BUILTIN_EMBEDDING_PROVIDERS,
  EMBEDDING_SERVICE_PREFIX,
  type EmbeddingProvider,
  type EmbeddingSelection,
  embeddingServiceId,
  isBuiltinEmbeddingProvider,
  type MemorySettings,
  type PluginEmbeddingAdapter,
} from '../../sdk/memory/index.js';
import { sanitizeAndNormalizeEmbedding } from './normalize.js';
import { planBatches } from './http.js';
import { selectEmbeddingProvider, type EmbeddingContext } from './providers.js';

type Lookup = Pick<CapabilityLookup, 'find' | 'list' | 'routes'>;
type Records = () => readonly PluginRecord[];

/** Ids of the embedding providers enabled plugins registered so far. */
export function registeredEmbeddingProviders(capabilities: Lookup): string[] {
  return capabilities
    .list('service')
    .filter((info) => info.name.startsWith(EMBEDDING_SERVICE_PREFIX))
    .map((info) => info.name.slice(EMBEDDING_SERVICE_PREFIX.length))
    .sort();
}

const fail = (id: string, message: string, cause?: unknown) =>
  new ModelError('unknown', `embedding provider "${id}": ${message}`, { provider: id, cause });

/** The plugin's call, bounded by `ms` and the caller's signal (a plugin may ignore both). */
function bounded<T>(work: Promise<T>, ms: number, id: string, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const limits = new Promise<never>((_, reject) => {
    if (ms > 0)
      timer = setTimeout(
        () =>
          reject(
            new ModelError(
              'timeout',
              `embedding provider "${id}": no vectors within ${ms} ms (memorySearch.remote.timeoutMs)`,
              { provider: id },
            ),
          ),
        ms,
      );
    onAbort = () => reject(new ModelError('aborted', `embedding provider "${id}": aborted`, { provider: id }));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, limits]).finally(() => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort!);
  });
}

/** A plugin's adapter as a memory EmbeddingProvider: created now, called on each embed. */
export async function createPluginEmbeddingProvider(
  adapter: PluginEmbeddingAdapter,
  settings: MemorySettings,
  context: EmbeddingContext,
): Promise<EmbeddingProvider> {
  const id = adapter.id;
  const model = settings.model?.trim() || adapter.defaultModel || 'default';
  let created: Awaited<ReturnType<PluginEmbeddingAdapter['create']>>;
  try {
    created = await adapter.create({
      config: context.config,
      provider: id,
      model,
      remote: { baseUrl: settings.remote.baseUrl, apiKey: settings.remote.apiKey, headers: settings.remote.headers },
    });
  } catch (error) {
    const detail = adapter.formatSetupError?.(error) ?? (error instanceof Error ? error.message : String(error));
    throw fail(id, `setup failed: ${detail}`, error);
  }
  const instance = created?.provider;
  if (!instance || (typeof instance.embedBatch !== 'function' && typeof instance.embed !== 'function')) {
    throw fail(id, 'the plugin created no provider with embedBatch(texts) or embed(text)');
  }
  const batchSize =
    Number.isFinite(settings.remote.batchSize) && settings.remote.batchSize >= 1
      ? Math.floor(settings.remote.batchSize)
      : 64;
  const resolvedModel = instance.model ?? model;
  const cacheKey = created.runtime?.cacheKeyData ? `:${JSON.stringify(created.runtime.cacheKeyData)}` : '';
  const callBatch = (texts: string[], signal?: AbortSignal): Promise<unknown> =>
    typeof instance.embedBatch === 'function'
      ? instance.embedBatch(texts, { signal })
      : Promise.all(texts.map((text) => instance.embed!(text, { signal })));

  const provider: EmbeddingProvider = {
    id,
    model: resolvedModel,
    fingerprint: `plugin:${id}:${resolvedModel}${cacheKey}`,
    ...(typeof instance.dimensions === 'number' ? { dims: instance.dimensions } : {}),
    async embed(texts, options = {}) {
      const out: number[][] = [];
      for (const [start, end] of planBatches(texts, batchSize)) {
        if (options.signal?.aborted)
          throw new ModelError('aborted', `embedding provider "${id}": aborted`, { provider: id });
        const batch = texts.slice(start, end);
        const vectors = await bounded(callBatch(batch, options.signal), settings.remote.timeoutMs, id, options.signal);
        if (!Array.isArray(vectors) || vectors.length !== batch.length) {
          throw fail(
            id,
            `returned ${Array.isArray(vectors) ? `${vectors.length} vectors` : typeof vectors} for ${batch.length} texts (expected number[][], one vector per text)`,
          );
        }
        for (const [offset, vector] of vectors.entries()) {
          if (!Array.isArray(vector) || vector.length === 0 || vector.some((value) => typeof value !== 'number')) {
            throw fail(id, `vector ${start + offset} is not a non-empty list of numbers`);
          }
          if (provider.dims !== undefined && vector.length !== provider.dims) {
            throw fail(id, `vector ${start + offset} has ${vector.length} dimensions, expected ${provider.dims}`);
          }
          provider.dims = vector.length;
          out.push(sanitizeAndNormalizeEmbedding(vector as number[]));
        }
      }
      return out;
    },
    close: () => instance.close?.(),
  };
  return provider;
}

/**
 * The service of provider `id`. OpenClaw plugins register when the gateway starts; in a
 * process that did not start it (`claw memory search`), the plugin whose manifest lists the
 * id in `contracts.embeddingProviders` is loaded first (routes() is the lookup's way to
 * load a plugin by id).
 */
async function findAdapterService(id: string, capabilities: Lookup, plugins?: Records) {
  const name = embeddingServiceId(id);
  const found = await capabilities.find('service', name);
  if (found) return found;
  const owner = plugins?.().find((record) => {
    const contracts = (record.manifest as { contracts?: { embeddingProviders?: unknown } } | undefined)?.contracts;
    return (
      record.status === 'ready' &&
      Array.isArray(contracts?.embeddingProviders) &&
      contracts.embeddingProviders.includes(id)
    );
  });
  if (!owner) return undefined;
  await capabilities.routes(owner.id).catch(() => undefined);
  return capabilities.find('service', name);
}

/**
 * Like selectEmbeddingProvider, for memory backends at start: a `provider` or `fallback`
 * that is not one of memory's own is looked up among the plugins' providers and created
 * first. An id no plugin registered is an error naming the providers there are.
 */
export async function selectMemoryEmbeddings(
  settings: MemorySettings,
  context: EmbeddingContext & { capabilities: Lookup; plugins?: Records },
): Promise<EmbeddingSelection> {
  const pluginProviders = new Map<string, { provider: EmbeddingProvider; description: string }>();
  for (const [key, id] of [
    ['provider', settings.provider],
    ['fallback', settings.fallback],
  ] as const) {
    if (isBuiltinEmbeddingProvider(id) || pluginProviders.has(id)) continue;
    const service = await findAdapterService(id, context.capabilities, context.plugins);
    const adapter = service?.api as PluginEmbeddingAdapter | undefined;
    if (!adapter || typeof adapter.create !== 'function') {
      const known = [...BUILTIN_EMBEDDING_PROVIDERS, ...registeredEmbeddingProviders(context.capabilities)]
        .map((name) => `"${name}"`)
        .join(', ');
      throw new Error(
        `memorySearch.${key} (agent ${settings.agentId}) is "${id}", which is neither built in nor registered by an enabled plugin; known: ${known}`,
      );
    }
    const provider = await createPluginEmbeddingProvider(adapter, settings, context);
    const owner = context.capabilities.list('service').find((info) => info.name === embeddingServiceId(id))?.pluginId;
    pluginProviders.set(id, { provider, description: `${id} ${provider.model} (plugin ${owner ?? id})` });
  }
  return selectEmbeddingProvider(settings, { ...context, pluginProviders });
}
