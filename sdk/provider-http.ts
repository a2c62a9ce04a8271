/**
 * What every HTTP model provider needs: one streaming POST whose deadline and caller
 * signal bound both the connect and every body read, with every failure leaving as a
 * ModelError; the JSON of an SSE event; tool-call arguments parsed strictly; and errors
 * reported inside a 200 stream, classified like the HTTP status they stand for.
 */
import {
  classifyHttpFailure,
  errorFromFetch,
  errorFromResponse,
  isModelError,
  ModelError,
  readSse,
  type SseEvent,
} from './models.js';

export interface SsePost {
  provider: string;
  url: string;
  headers: Headers;
  body: unknown;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export async function* postSse(post: SsePost): AsyncGenerator<SseEvent> {
  const { provider } = post;
  if (post.signal?.aborted) throw new ModelError('aborted', `${provider} request aborted`, { provider });
  const controller = new AbortController();
  let timedOut = false;
  const forwardAbort = () => controller.abort(post.signal?.reason);
  post.signal?.addEventListener('abort', forwardAbort, { once: true });
  const timer =
    post.timeoutMs !== undefined && post.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException(`${provider} request timed out`, 'TimeoutError'));
        }, post.timeoutMs)
      : undefined;

  // An abort surfaces as whatever the fetch machinery threw (an AbortError, a reader
  // error, readSse's own "aborted"); the flags say which of our two causes it was.
  const failure = (error: unknown): ModelError => {
    if (isModelError(error) && error.kind !== 'aborted') return error;
    if (timedOut)
      return new ModelError('timeout', `${provider} request timed out after ${post.timeoutMs} ms`, {
        provider,
        cause: error,
      });
    if (post.signal?.aborted)
      return new ModelError('aborted', `${provider} request aborted`, { provider, cause: error });
    return errorFromFetch(error, provider, undefined, post.url);
  };

  try {
    let response: Response;
    try {
      response = await fetch(post.url, {
        method: 'POST',
        headers: post.headers,
        body: JSON.stringify(post.body),
        signal: controller.signal,
      });
    } catch (error) {
      throw failure(error);
    }
    if (!response.ok) throw await errorFromResponse(response, provider);
    if (!response.body)
      throw new ModelError('unknown', `${provider} response has no body`, { provider, status: response.status });
    try {
      for await (const event of readSse(response.body, controller.signal)) yield event;
    } catch (error) {
      throw failure(error);
    }
  } finally {
    clearTimeout(timer);
    post.signal?.removeEventListener('abort', forwardAbort);
    // Closes the connection when the consumer stops reading early; a no-op after a full read.
    controller.abort();
  }
}

/** The JSON payload of one SSE event; a garbled event means the stream cannot be trusted. */
export function eventJson(event: SseEvent, provider: string): Record<string, any> {
  try {
    const value: unknown = JSON.parse(event.data);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, any>;
  } catch {
    // Reported below with the offending text.
  }
  throw new ModelError('unknown', `${provider} sent an unreadable stream event: ${event.data.slice(0, 200)}`, {
    provider,
  });
}

/**
 * Tool-call arguments arrive as JSON text (streamed in pieces); the contract hands the
 * loop a parsed object. Text that does not parse to an object is a failed request rather
 * than a call with made-up arguments: the loop can retry or fall back, and no tool ever
 * runs on a guess.
 */
export function parseToolArguments(raw: string, tool: string, provider: string): Record<string, unknown> {
  // Zero-parameter tools are often called with no argument text at all.
  if (raw.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new ModelError(
      'invalid_request',
      `${provider} returned malformed JSON arguments for tool "${tool}": ${raw.slice(0, 200)}`,
      { provider, cause: error },
    );
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new ModelError(
      'invalid_request',
      `${provider} returned arguments for tool "${tool}" that are not a JSON object: ${raw.slice(0, 200)}`,
      { provider },
    );
  }
  return value as Record<string, unknown>;
}

/**
 * A failure reported inside an otherwise successful stream. `statusByCode` maps the
 * provider's error codes/types to the HTTP status the same failure would have had, so the
 * SDK's classifier decides the kind in one place. A numeric `code` is taken as the status
 * (OpenRouter puts the upstream HTTP status there).
 */
export function streamFailure(
  provider: string,
  error: { code?: unknown; type?: unknown; message?: unknown } | undefined,
  statusByCode: Readonly<Record<string, number>>,
): ModelError {
  const code = error?.code;
  const type = typeof error?.type === 'string' ? error.type : undefined;
  const message = typeof error?.message === 'string' ? error.message : '';
  const status =
    typeof code === 'number' ? code : (statusByCode[String(code)] ?? (type ? statusByCode[type] : undefined) ?? 0);
  const text = [typeof code === 'string' ? code : undefined, type, message].filter(Boolean).join(': ');
  return new ModelError(classifyHttpFailure(status, text), `${provider} stream error: ${text || 'unknown failure'}`, {
    provider,
    ...(status > 0 ? { status } : {}),
  });
}
