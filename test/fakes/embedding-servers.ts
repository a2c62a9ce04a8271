/**
 * Fake Gemini and Voyage embedding APIs on 127.0.0.1 for tests (node:http only). Each speaks
 * its real wire format — paths, auth headers, request validation, batch limits, response
 * and error bodies — closely enough that a provider written against the real API works
 * against it unchanged. Vectors are the deterministic hash embedding of each text, so texts
 * sharing words point the same way.
 *
 * Wire facts a provider author relies on:
 *  - Gemini: `POST /v1beta/models/{model}:batchEmbedContents`, key in `x-goog-api-key` (or
 *    `?key=`); each request names `models/{model}` (the same model as the URL); at most 100
 *    requests a batch; answer `{ embeddings: [{ values }] }`. No key is 403
 *    PERMISSION_DENIED; a wrong key is 400 INVALID_ARGUMENT with reason API_KEY_INVALID.
 *    Errors are `{ error: { code, message, status } }`.
 *  - Voyage: `POST /v1/embeddings`, `Authorization: Bearer`; `input` is a string or 1–1000
 *    non-empty strings; answer `{ object: "list", data: [{ object, embedding, index }], model,
 *    usage }`. Errors are `{ detail }`; a missing or wrong key is 401.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hashEmbedding } from './hash-embedder.js';

export interface FakeEmbeddingRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  /** Lower-case names, as Node reports them. */
  headers: Record<string, string>;
  /** Parsed JSON, or the raw text when it was not JSON. */
  body: any;
  at: number;
}

/** What one request can be scripted to do instead of the normal answer. */
export type FakeEmbeddingStep =
  | { error: { status: number; message?: string; retryAfterSeconds?: number } }
  /** Accept the request and never answer. */
  | { hang: true }
  /** Answer 200 with exactly these raw vectors (the wrong count, nulls, …). */
  | { vectors: unknown[] }
  /** Wait, then answer normally. */
  | { delayMs: number }
  /** Voyage: answer normally but list `data` back to front (each item keeps its `index`), which the API allows. */
  | { reversed: true };

export interface FakeEmbeddingServer {
  /** http://127.0.0.1:<port> */
  url: string;
  requests: FakeEmbeddingRequest[];
  /** FIFO: each embeddings request consumes one step; when empty, requests are answered normally. */
  script(...steps: FakeEmbeddingStep[]): void;
  pendingSteps(): number;
  /** Clear scripts and recorded requests. */
  reset(): void;
  /** Also ends hung requests. */
  close(): Promise<void>;
}

export interface FakeEmbeddingOptions {
  /** Only these keys are accepted; default: any non-empty key. */
  apiKeys?: string[];
  /** Vector length when the request does not ask for one (Gemini 3072, Voyage 1024 by default). */
  dims?: number;
  /** Model ids the server serves. */
  models?: string[];
}

/** The vector the fakes return for `text`. */
export function fakeVector(text: string, dims: number): number[] {
  return hashEmbedding(text, dims);
}

type Handler = (
  request: FakeEmbeddingRequest,
  res: ServerResponse,
  step: FakeEmbeddingStep | undefined,
) => void | Promise<void>;

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function startServer(
  isEmbeddingsRequest: (method: string, path: string) => boolean,
  notFound: (res: ServerResponse, request: FakeEmbeddingRequest) => void,
  handle: Handler,
): Promise<FakeEmbeddingServer> {
  const requests: FakeEmbeddingRequest[] = [];
  const queue: FakeEmbeddingStep[] = [];
  const open = new Set<ServerResponse>();

  const server: Server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const raw = await readBody(req);
      let body: any = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // Kept as text; the handler rejects it the way the real API does.
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const request: FakeEmbeddingRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers,
        body,
        at: Date.now(),
      };
      requests.push(request);
      if (!isEmbeddingsRequest(request.method, request.path)) return notFound(res, request);
      const step = queue.shift();
      if (step && 'hang' in step) return;
      if (step && 'delayMs' in step) await new Promise((resolve) => setTimeout(resolve, step.delayMs));
      if (res.destroyed) return;
      await handle(request, res, step);
    })().catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, { error: { message: `fake failure: ${(error as Error)?.message ?? String(error)}` } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    script: (...steps) => void queue.push(...steps),
    pendingSteps: () => queue.length,
    reset() {
      queue.length = 0;
      // In place, so callers holding `fake.requests` keep seeing the live list.
      requests.length = 0;
    },
    close() {
      for (const res of open) res.destroy();
      open.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

// ---------------------------------------------------------------------------------------
// Gemini

const GEMINI_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function geminiError(
  res: ServerResponse,
  code: number,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): void {
  sendJson(res, code, { error: { code, message, status: GEMINI_STATUS[code] ?? 'UNKNOWN', ...extra } }, headers);
}

const GEMINI_PATH = /^\/v1beta\/models\/([^/:]+):batchEmbedContents$/;

export async function startFakeGemini(options: FakeEmbeddingOptions = {}): Promise<FakeEmbeddingServer> {
  const models = new Set(options.models ?? ['gemini-embedding-001', 'text-embedding-004']);
  const validKeys = options.apiKeys ? new Set(options.apiKeys) : undefined;
  const defaultDims = options.dims ?? 3072;

  return startServer(
    (method, path) => method === 'POST' && GEMINI_PATH.test(path),
    (res, request) => geminiError(res, 404, `Requested entity was not found. (${request.method} ${request.path})`),
    (request, res, step) => {
      const key = request.headers['x-goog-api-key'] ?? request.query.get('key') ?? undefined;
      if (!key) {
        return geminiError(
          res,
          403,
          "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
        );
      }
      if (validKeys && !validKeys.has(key)) {
        return geminiError(res, 400, 'API key not valid. Please pass a valid API key.', {
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'API_KEY_INVALID',
              domain: 'googleapis.com',
            },
          ],
        });
      }
      if (step && 'error' in step) {
        const retry: Record<string, string> =
          step.error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(step.error.retryAfterSeconds) };
        return geminiError(res, step.error.status, step.error.message ?? `scripted ${step.error.status}`, {}, retry);
      }
      const model = GEMINI_PATH.exec(request.path)![1]!;
      if (!models.has(model)) {
        return geminiError(
          res,
          404,
          `models/${model} is not found for API version v1beta, or is not supported for batchEmbedContents.`,
        );
      }
      const body = request.body;
      if (typeof body !== 'object' || body === null) return geminiError(res, 400, 'Invalid JSON payload received.');
      const list = body.requests;
      if (!Array.isArray(list) || list.length === 0)
        return geminiError(res, 400, '* BatchEmbedContentsRequest.requests: must not be empty');
      if (list.length > 100)
        return geminiError(res, 400, '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch');
      const texts: string[] = [];
      for (const [index, item] of (list as any[]).entries()) {
        if (item?.model !== `models/${model}`) {
          return geminiError(
            res,
            400,
            `* BatchEmbedContentsRequest.requests[${index}].model: model \`${String(item?.model)}\` does not match the model in the URL, \`models/${model}\`.`,
          );
        }
        const parts = item?.content?.parts;
        const text = Array.isArray(parts)
          ? parts.map((part: any) => (typeof part?.text === 'string' ? part.text : '')).join('')
          : '';
        if (text === '')
          return geminiError(
            res,
            400,
            `* BatchEmbedContentsRequest.requests[${index}].content.parts: contents must not be empty`,
          );
        texts.push(text);
      }
      if (step && 'vectors' in step)
        return sendJson(res, 200, { embeddings: step.vectors.map((values) => ({ values })) });
      const dims = Number.isInteger(list[0]?.outputDimensionality)
        ? (list[0].outputDimensionality as number)
        : defaultDims;
      sendJson(res, 200, { embeddings: texts.map((text) => ({ values: fakeVector(text, dims) })) });
    },
  );
}

// ---------------------------------------------------------------------------------------
// Voyage

export async function startFakeVoyage(options: FakeEmbeddingOptions = {}): Promise<FakeEmbeddingServer> {
  const models = new Set(
    options.models ?? [
      'voyage-3.5-lite',
      'voyage-3.5',
      'voyage-3-large',
      'voyage-3-lite',
      'voyage-4-large',
      'voyage-code-3',
    ],
  );
  const validKeys = options.apiKeys ? new Set(options.apiKeys) : undefined;
  const defaultDims = options.dims ?? 1024;
  const detail = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void =>
    sendJson(res, status, { detail: message }, headers);

  return startServer(
    (method, path) => method === 'POST' && path === '/v1/embeddings',
    (res) => detail(res, 404, 'Not Found'),
    (request, res, step) => {
      const auth = request.headers.authorization ?? '';
      const key = /^Bearer\s+(.+)$/i.exec(auth)?.[1];
      if (!key)
        return detail(res, 401, 'No API key provided. Please provide a valid API key in the Authorization header.');
      if (validKeys && !validKeys.has(key)) return detail(res, 401, 'Provided API key is invalid.');
      if (step && 'error' in step) {
        const retry: Record<string, string> =
          step.error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(step.error.retryAfterSeconds) };
        return detail(res, step.error.status, step.error.message ?? `scripted ${step.error.status}`, retry);
      }
      const body = request.body;
      if (typeof body !== 'object' || body === null) return detail(res, 400, 'Request body is not valid JSON.');
      if (typeof body.model !== 'string' || !models.has(body.model)) {
        return detail(
          res,
          400,
          `Model ${String(body.model)} is not supported. Supported models are ${[...models].join(', ')}.`,
        );
      }
      const input: unknown = body.input;
      const texts = typeof input === 'string' ? [input] : input;
      if (
        !Array.isArray(texts) ||
        texts.length === 0 ||
        !texts.every((text) => typeof text === 'string' && text !== '')
      ) {
        return detail(res, 400, "Value error, 'input' should be a non-empty string or a list of non-empty strings.");
      }
      if (texts.length > 1000)
        return detail(res, 400, `The batch size limit is 1000. Your batch size is ${texts.length}.`);
      if (
        body.input_type !== undefined &&
        body.input_type !== null &&
        body.input_type !== 'query' &&
        body.input_type !== 'document'
      ) {
        return detail(res, 400, "Value error, input_type should be None, 'query' or 'document'.");
      }
      const vectors: unknown[] =
        step && 'vectors' in step
          ? step.vectors
          : (texts as string[]).map((text) =>
              fakeVector(text, Number.isInteger(body.output_dimension) ? body.output_dimension : defaultDims),
            );
      const tokens = (texts as string[]).reduce((total, text) => total + Math.ceil(text.length / 4), 0);
      const data = vectors.map((embedding, index) => ({ object: 'embedding', embedding, index }));
      if (step && 'reversed' in step) data.reverse();
      sendJson(res, 200, {
        object: 'list',
        data,
        model: body.model,
        usage: { total_tokens: tokens },
      });
    },
  );
}
