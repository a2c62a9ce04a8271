/**
 * What provider plugins share: the error they throw (its `kind` decides whether the loop
 * rotates to another auth profile, falls back to another model, or compacts and retries),
 * classification of HTTP failures, model refs, the wire API names a provider speaks, and an SSE reader.
 */

/** Why a model call failed, in the terms failover cares about. */
export type FailureKind =
  | 'auth'
  | 'billing'
  | 'rate_limit'
  | 'timeout'
  | 'context_overflow'
  | 'overloaded'
  | 'aborted'
  | 'invalid_request'
  | 'unknown';

export class ModelError extends Error {
  readonly kind: FailureKind;
  readonly status?: number;
  /** Server-suggested wait before retrying (Retry-After, retry-after-ms). */
  readonly retryAfterMs?: number;
  readonly provider?: string;

  constructor(
    kind: FailureKind,
    message: string,
    options: { status?: number; retryAfterMs?: number; provider?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModelError';
    this.kind = kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.provider = options.provider;
  }
}

/** Duck-typed check, so errors from any copy of the SDK are recognised. */
export function isModelError(error: unknown): error is ModelError {
  return error instanceof Error && error.name === 'ModelError' && typeof (error as ModelError).kind === 'string';
}

const CONTEXT_OVERFLOW =
  /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|input is too long|exceeds? the (model'?s? )?(maximum|context)|context_length_exceeded|reduce the length/i;
const BILLING = /billing|insufficient[_ ]quota|credit balance|payment required|quota exceeded|out of credits/i;

/** Classify an HTTP failure from its status and body text. */
export function classifyHttpFailure(status: number, body: string): FailureKind {
  if (CONTEXT_OVERFLOW.test(body)) return 'context_overflow';
  if (status === 402 || BILLING.test(body)) return 'billing';
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limit';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 529 || status === 503 || /overloaded/i.test(body)) return 'overloaded';
  if (status >= 500) return 'overloaded';
  if (status === 400 || status === 404 || status === 422) return 'invalid_request';
  return 'unknown';
}

/** Milliseconds from `retry-after-ms` / `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers.get('retry-after');
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A ModelError from a non-2xx fetch response (reads the body). */
export async function errorFromResponse(response: Response, provider: string): Promise<ModelError> {
  const body = await response.text().catch(() => '');
  let message = body;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } | string; message?: string };
    message = (typeof parsed.error === 'string' ? parsed.error : parsed.error?.message) ?? parsed.message ?? body;
  } catch {
    // Not JSON: keep the text.
  }
  const kind = classifyHttpFailure(response.status, body);
  return new ModelError(kind, `${provider} ${response.status}: ${message.slice(0, 500) || response.statusText}`, {
    status: response.status,
    retryAfterMs: retryAfterMs(response.headers),
    provider,
  });
}

/** A fetch that threw, as a ModelError; a server that is not there is no timeout (retrying only makes the user wait). */
export function errorFromFetch(error: unknown, provider: string, signal?: AbortSignal, url?: string): ModelError {
  if (isModelError(error)) return error;
  const about = { provider, cause: error };
  if (signal?.aborted) return new ModelError('aborted', `${provider} request aborted`, about);
  const name = (error as Error)?.name;
  if (name === 'TimeoutError' || name === 'AbortError')
    return new ModelError('timeout', `${provider} request timed out`, about);
  const code = String((error as { cause?: { code?: unknown } })?.cause?.code ?? '');
  if (/^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT)$/.test(code))
    return new ModelError('unknown', `${provider} cannot connect to ${url ?? 'its endpoint'} (${code})`, about);
  return new ModelError('timeout', `${provider} request failed: ${(error as Error)?.message ?? String(error)}`, about);
}

export interface ModelRef {
  provider: string;
  model: string;
}

/**
 * The wire APIs a `models.providers.<id>.api` may name (OpenClaw's names), which a provider
 * plugin declares it speaks in `ModelProvider.apis`.
 */
export const PROVIDER_APIS = ['openai-completions', 'openai-responses', 'anthropic-messages'] as const;

/** claw's earlier spellings of the OpenAI APIs. */
const API_ALIASES: Record<string, string> = { chat: 'openai-completions', responses: 'openai-responses' };

export function normalizeApi(api: string | undefined): string | undefined {
  return api === undefined ? undefined : (API_ALIASES[api] ?? api);
}

/** "provider/model" split at the first "/" (model ids may contain more slashes). */
export function parseModelRef(ref: string): ModelRef | undefined {
  const index = ref.indexOf('/');
  if (index <= 0 || index === ref.length - 1) return undefined;
  return { provider: ref.slice(0, index).trim().toLowerCase(), model: ref.slice(index + 1).trim() };
}

export interface SseEvent {
  event?: string;
  data: string;
}

/** Server-sent events from a fetch body: yields each event once its blank line arrives. */
export async function* readSse(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  try {
    for (;;) {
      if (signal?.aborted) throw new ModelError('aborted', 'stream aborted');
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r?\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer[newline] === '\r' ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event, data: data.join('\n') };
          event = undefined;
          data = [];
        } else if (line.startsWith(':')) {
          continue;
        } else {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = value;
          else if (field === 'data') data.push(value);
        }
      }
    }
    if (data.length > 0) yield { event, data: data.join('\n') };
  } finally {
    reader.releaseLock();
  }
}
