/**
 * The remote embedding APIs memory search speaks: OpenAI-compatible `/embeddings`, Gemini's
 * native `batchEmbedContents` and Voyage's `/v1/embeddings`. What differs between them is
 * described by a small `RemoteApi` record; batching, timeouts, retries, error messages and
 * normalisation are shared.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { errorFromFetch, errorFromResponse, ModelError, type FailureKind } from '../../sdk/index.js';
import { type EmbeddingProvider, estimateTokens } from '../../sdk/memory/index.js';
import { sanitizeAndNormalizeEmbedding } from './normalize.js';

export type RemoteProviderId = 'openai' | 'gemini' | 'voyage';

export interface RetryPolicy {
  /** Tries in all, the first included (1 = no retry). */
  attempts: number;
  /** First backoff; it doubles on every retry. */
  baseDelayMs: number;
  /** A server asking to wait longer than this (Retry-After) gets the error instead of a wait. */
  maxDelayMs: number;
}

/**
 * Indexing sends hundreds of batches, so a rate limit or a 5xx on one of them should not
 * abort the whole sync; two retries with backoff cover the usual blips.
 */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 1_000, maxDelayMs: 20_000 };

export interface RemoteEndpoint {
  /** Base URL as configured (a trailing slash is fine). */
  baseUrl: string;
  apiKey?: string;
  /** Where the key came from (a setting or variable name, never the key), for auth errors. */
  keySource?: string;
  /** Replace the provider's own headers on a clash (case-insensitive). */
  headers?: Record<string, string>;
  timeoutMs: number;
  /** Texts per request as configured; clamped to what the API accepts. */
  batchSize: number;
  retry?: Partial<RetryPolicy>;
}

interface RemoteApi {
  id: RemoteProviderId;
  defaultModel: string;
  defaultBaseUrl: string;
  /** Most inputs the API takes in one request. */
  maxInputs: number;
  /**
   * Token budget per request, by memory's rough estimate. Set well under the API's real cap
   * because the estimate (4 characters a token) undercounts code and unusual scripts.
   */
  maxTokens?: number;
  /** Where requests go; also the endpoint part of the fingerprint. */
  url(baseUrl: string, model: string): string;
  headers(apiKey: string | undefined): Record<string, string>;
  body(model: string, texts: string[]): unknown;
  /** The raw vectors of a 2xx body, in input order; a string says what is wrong with the body. */
  vectors(body: any, count: number): unknown[] | string;
}

const trimSlashes = (url: string): string => url.trim().replace(/\/+$/, '');

/** OpenAI-style `data: [{ index, embedding }]`, put back in input order. */
function indexedData(body: any, count: number): unknown[] | string {
  if (!Array.isArray(body?.data)) return 'no "data" array';
  const data = body.data as Array<{ index?: unknown; embedding?: unknown }>;
  if (data.length !== count) return `${data.length} embeddings for ${count} inputs`;
  if (!data.every((item) => typeof item?.index === 'number')) return data.map((item) => item?.embedding);
  const out: unknown[] = new Array(count);
  for (const item of data) {
    const index = item.index as number;
    if (!Number.isInteger(index) || index < 0 || index >= count || out[index] !== undefined)
      return `bad or repeated index ${index}`;
    out[index] = item.embedding;
  }
  return out;
}

/** OpenAI-compatible `POST {baseUrl}/embeddings`: OpenAI itself, OpenRouter, vLLM, Ollama, LM Studio. */
const OPENAI: RemoteApi = {
  id: 'openai',
  defaultModel: 'text-embedding-3-small',
  defaultBaseUrl: 'https://api.openai.com/v1',
  maxInputs: 2048,
  // OpenAI rejects requests over 300k tokens in total.
  maxTokens: 150_000,
  url: (baseUrl) => `${trimSlashes(baseUrl)}/embeddings`,
  headers: (apiKey) => ({
    'content-type': 'application/json',
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  }),
  body: (model, texts) => ({ model, input: texts }),
  vectors: indexedData,
};

/** Gemini's own API: `POST {base}/v1beta/models/{model}:batchEmbedContents`. */
const GEMINI: RemoteApi = {
  id: 'gemini',
  defaultModel: 'gemini-embedding-001',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  // "at most 100 requests can be in one batch".
  maxInputs: 100,
  // A base that already ends in /v1beta (how chat configs often spell Google's base) must not get it twice.
  url: (baseUrl, model) =>
    `${trimSlashes(baseUrl).replace(/\/v1(beta)?$/, '')}/v1beta/models/${encodeURIComponent(model)}:batchEmbedContents`,
  headers: (apiKey) => ({ 'content-type': 'application/json', ...(apiKey ? { 'x-goog-api-key': apiKey } : {}) }),
  // No taskType: the contract does not say whether a text is a query or a document, and
  // vectors made without one are comparable with each other.
  body: (model, texts) => ({
    requests: texts.map((text) => ({ model: `models/${model}`, content: { parts: [{ text }] } })),
  }),
  vectors(body, count) {
    if (!Array.isArray(body?.embeddings)) return 'no "embeddings" array';
    if (body.embeddings.length !== count) return `${body.embeddings.length} embeddings for ${count} inputs`;
    return (body.embeddings as Array<{ values?: unknown }>).map((item) => item?.values);
  },
};

/** Voyage AI: `POST {base}/v1/embeddings`. */
const VOYAGE: RemoteApi = {
  id: 'voyage',
  defaultModel: 'voyage-3.5-lite',
  defaultBaseUrl: 'https://api.voyageai.com',
  maxInputs: 1000,
  // Voyage caps a request at 120k tokens for its largest models (1M for the lite ones).
  maxTokens: 60_000,
  url: (baseUrl) => `${trimSlashes(baseUrl).replace(/\/v1$/, '')}/v1/embeddings`,
  headers: (apiKey) => ({
    'content-type': 'application/json',
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  }),
  // input_type stays unset for the same reason as Gemini's taskType; Voyage documents
  // vectors with and without it as compatible.
  body: (model, texts) => ({ model, input: texts }),
  vectors: indexedData,
};

export const REMOTE_APIS: Readonly<Record<RemoteProviderId, RemoteApi>> = {
  openai: OPENAI,
  gemini: GEMINI,
  voyage: VOYAGE,
};

/**
 * Splits `texts` into [start, end) ranges of at most `maxInputs` texts and, when given,
 * about `maxTokens` estimated tokens (a single longer text still gets a batch of its own).
 */
export function planBatches(texts: readonly string[], maxInputs: number, maxTokens?: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const size = Math.max(1, Math.floor(maxInputs));
  let start = 0;
  let tokens = 0;
  for (let i = 0; i < texts.length; i++) {
    const cost = maxTokens === undefined ? 0 : estimateTokens(texts[i]!);
    if (i > start && (i - start >= size || (maxTokens !== undefined && tokens + cost > maxTokens))) {
      out.push([start, i]);
      start = i;
      tokens = 0;
    }
    tokens += cost;
  }
  if (start < texts.length) out.push([start, texts.length]);
  return out;
}

/** The text of a JSON error body, in any of the shapes these APIs use. */
function apiMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string; detail?: unknown };
    const message =
      (typeof parsed.error === 'string' ? parsed.error : parsed.error?.message) ?? parsed.message ?? parsed.detail;
    if (typeof message === 'string' && message !== '') return message;
    if (message !== undefined) return JSON.stringify(message);
  } catch {
    // Not JSON: the text itself.
  }
  return text.trim();
}

const RETRIABLE: ReadonlySet<FailureKind> = new Set(['rate_limit', 'overloaded', 'timeout']);

function abortedError(id: RemoteProviderId, label: string, cause?: unknown): ModelError {
  return new ModelError('aborted', `${label}: aborted`, { provider: id, cause });
}

type Attempt = { ok: true; body: unknown } | { ok: false; error: ModelError };

/** An embeddings provider for one of the remote APIs. */
export function createRemoteEmbeddingProvider(
  id: RemoteProviderId,
  model: string | undefined,
  endpoint: RemoteEndpoint,
): EmbeddingProvider {
  const api = REMOTE_APIS[id];
  let resolvedModel = model?.trim() || api.defaultModel;
  // Gemini's own docs spell models both ways; the URL wants the bare id.
  if (id === 'gemini') resolvedModel = resolvedModel.replace(/^models\//, '');
  const url = api.url(endpoint.baseUrl || api.defaultBaseUrl, resolvedModel);
  const retry = { ...DEFAULT_RETRY, ...endpoint.retry };
  const configured =
    Number.isFinite(endpoint.batchSize) && endpoint.batchSize >= 1 ? Math.floor(endpoint.batchSize) : api.maxInputs;
  const batchSize = Math.min(api.maxInputs, configured);
  const label = `${id} embeddings (model ${resolvedModel})`;

  const headers = new Headers(api.headers(endpoint.apiKey));
  // Set one by one: Headers is case-insensitive, so `Authorization` replaces `authorization`.
  for (const [name, value] of Object.entries(endpoint.headers ?? {})) {
    if (typeof value === 'string') headers.set(name, value);
  }

  const fail = (
    kind: FailureKind,
    message: string,
    extra: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ): ModelError => new ModelError(kind, `${label}: ${message}`, { provider: id, ...extra });

  const authHint = (): string =>
    endpoint.apiKey
      ? ` (check the key from ${endpoint.keySource ?? 'the configuration'})`
      : ' (no API key was sent: set memorySearch.remote.apiKey or the provider key)';

  /** One HTTP exchange. Throws only for an abort or our own timeout, which are never retried. */
  async function attempt(body: string, signal: AbortSignal | undefined): Promise<Attempt> {
    const timeout = AbortSignal.timeout(endpoint.timeoutMs);
    const requestSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let status = 0;
    let text: string;
    try {
      const response = await fetch(url, { method: 'POST', headers, body, signal: requestSignal });
      status = response.status;
      if (!response.ok) {
        text = await response
          .clone()
          .text()
          .catch(() => '');
        const base = await errorFromResponse(response, id);
        // Gemini answers a wrong key with 400 INVALID_ARGUMENT, not 401.
        const kind = /API_KEY_INVALID|API key not valid/i.test(text) ? 'auth' : base.kind;
        const detail = apiMessage(text).slice(0, 500) || response.statusText;
        return {
          ok: false,
          error: fail(kind, `HTTP ${status} from ${url}: ${detail}${kind === 'auth' ? authHint() : ''}`, {
            status,
            retryAfterMs: base.retryAfterMs,
          }),
        };
      }
      // Read inside the try: the timeout also covers a body that stalls half-way.
      text = await response.text();
    } catch (thrown) {
      if (signal?.aborted) throw abortedError(id, label, thrown);
      if (timeout.aborted)
        throw fail('timeout', `no answer from ${url} within ${endpoint.timeoutMs} ms`, { cause: thrown });
      const cause = (thrown as Error)?.cause as Error | undefined;
      const reason = `${(thrown as Error)?.message ?? String(thrown)}${cause?.message ? ` (${cause.message})` : ''}`;
      return {
        ok: false,
        error: fail(errorFromFetch(thrown, id).kind, `request to ${url} failed: ${reason}`, { cause: thrown }),
      };
    }
    try {
      return { ok: true, body: JSON.parse(text) };
    } catch {
      throw fail('unknown', `HTTP ${status} from ${url} with a body that is not JSON: ${text.slice(0, 200)}`);
    }
  }

  /** POSTs with retries on rate limits, 5xx and network failures; resolves with the parsed body. */
  async function post(body: string, signal: AbortSignal | undefined): Promise<unknown> {
    for (let tries = 1; ; tries++) {
      if (signal?.aborted) throw abortedError(id, label, signal.reason);
      const result = await attempt(body, signal);
      if (result.ok) return result.body;
      const { error } = result;
      const wait = error.retryAfterMs ?? retry.baseDelayMs * 2 ** (tries - 1);
      if (tries >= retry.attempts || !RETRIABLE.has(error.kind) || wait > retry.maxDelayMs) throw error;
      try {
        await delay(wait, undefined, { signal });
      } catch (cause) {
        throw abortedError(id, label, cause);
      }
    }
  }

  const provider: EmbeddingProvider = {
    id,
    model: resolvedModel,
    fingerprint: `${id}:${resolvedModel}:${url}`,
    async embed(texts, options = {}) {
      const { signal } = options;
      if (signal?.aborted) throw abortedError(id, label, signal.reason);
      const out: number[][] = [];
      for (const [start, end] of planBatches(texts, batchSize, api.maxTokens)) {
        // The APIs reject empty input, and one blank chunk should not fail its whole batch.
        const batch = texts.slice(start, end).map((text) => (text.trim() === '' ? ' ' : text));
        const body = await post(JSON.stringify(api.body(resolvedModel, batch)), signal);
        const raw = api.vectors(body, batch.length);
        if (typeof raw === 'string') throw fail('unknown', `unexpected response from ${url}: ${raw}`);
        for (const [offset, vector] of raw.entries()) {
          if (!Array.isArray(vector) || vector.length === 0)
            throw fail(
              'unknown',
              `unexpected response from ${url}: embedding ${start + offset} is not a list of numbers`,
            );
          // Vectors of another length cannot share an index with the ones already made.
          if (provider.dims !== undefined && vector.length !== provider.dims) {
            throw fail(
              'unknown',
              `got a ${vector.length}-dimensional vector after ${provider.dims}-dimensional ones; did the model behind ${url} change?`,
            );
          }
          provider.dims = vector.length;
          out.push(sanitizeAndNormalizeEmbedding(vector as number[]));
        }
      }
      return out;
    },
  };
  return provider;
}
