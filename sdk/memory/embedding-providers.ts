/**
 * Choosing and building the embedding provider for memory search.
 *
 * (First version: the OpenAI-compatible provider only. Gemini, Voyage, local GGUF, `auto`
 * order, batching limits and fallback are being added next to it.)
 */
import { sanitizeAndNormalizeEmbedding } from './scoring.js';
import type { EmbeddingContext, EmbeddingProvider, EmbeddingSelection } from './embeddings.js';
import type { MemorySettings } from './settings.js';

type AnyRecord = Record<string, any>;

function openaiProvider(settings: MemorySettings, context: EmbeddingContext): EmbeddingProvider | undefined {
  const configured = ((context.config.models as AnyRecord | undefined)?.providers?.openai ?? {}) as AnyRecord;
  const apiKey = settings.remote.apiKey ?? configured.apiKey ?? context.env.OPENAI_API_KEY;
  const baseUrl = String(settings.remote.baseUrl ?? configured.baseUrl ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
  if (!apiKey && !settings.remote.baseUrl) return undefined;
  const model = settings.model ?? 'text-embedding-3-small';
  return {
    id: 'openai',
    model,
    fingerprint: `openai:${model}:${baseUrl}`,
    async embed(texts, options = {}) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += settings.remote.batchSize) {
        const batch = texts.slice(i, i + settings.remote.batchSize);
        const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(settings.remote.timeoutMs)]) : AbortSignal.timeout(settings.remote.timeoutMs);
        const response = await fetch(`${baseUrl}/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...settings.remote.headers },
          body: JSON.stringify({ model, input: batch }),
          signal,
        });
        if (!response.ok) throw new Error(`openai embeddings failed: HTTP ${response.status} ${(await response.text()).slice(0, 300)}`);
        const body = (await response.json()) as { data: Array<{ index: number; embedding: number[] }> };
        const ordered = [...body.data].sort((a, b) => a.index - b.index);
        for (const item of ordered) out.push(sanitizeAndNormalizeEmbedding(item.embedding));
      }
      return out;
    },
  };
}

/** The provider memory search will use for this agent, and why. */
export function selectEmbeddingProvider(settings: MemorySettings, context: EmbeddingContext): EmbeddingSelection {
  if (settings.provider === 'none') return { reason: 'memorySearch.provider is "none": keyword search only' };
  const provider = openaiProvider(settings, context);
  if (provider) return { provider, reason: `openai (${provider.model})` };
  return { reason: 'no embedding provider is configured (no OPENAI_API_KEY, GEMINI_API_KEY, VOYAGE_API_KEY or local model): keyword search only' };
}
