/**
 * An OpenClaw plugin's `registerEmbeddingProvider(adapter)`: checked here, then offered as the
 * service `embedding-provider:<id>` the embeddings plugin selects by id (sdk/memory/embeddings.ts).
 */
import type { PluginEmbeddingAdapter } from '../../sdk/memory/embeddings.js';
import { BUILTIN_EMBEDDING_PROVIDERS, isBuiltinEmbeddingProvider } from '../../sdk/memory/settings.js';

/** Why `value` cannot be registered as an embedding provider, or undefined when it can. */
export function invalidEmbeddingAdapter(value: unknown): string | undefined {
  const adapter = value as Partial<PluginEmbeddingAdapter> | null;
  if (typeof adapter?.id !== 'string' || adapter.id.trim() === '')
    return 'an embedding provider needs a non-empty string id';
  if (isBuiltinEmbeddingProvider(adapter.id))
    return `embedding provider id "${adapter.id}" is one of memory's own (${BUILTIN_EMBEDDING_PROVIDERS.join(', ')})`;
  if (typeof adapter.create !== 'function') return `embedding provider "${adapter.id}" has no create(options) function`;
  return undefined;
}
