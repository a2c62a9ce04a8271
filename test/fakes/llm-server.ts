/**
 * A fake LLM provider on 127.0.0.1 for tests. It speaks three real wire protocols —
 * OpenAI Chat Completions, OpenAI Responses and Anthropic Messages — plus OpenAI-shaped
 * embeddings, closely enough that the official `openai` client and our own provider
 * plugins cannot tell it from the real thing. Each test scripts what the "model" says.
 *
 * Wire choices a provider author relies on:
 *  - Chat Completions streams reasoning as `delta.reasoning_content` (the DeepSeek / vLLM /
 *    OpenRouter convention); the non-stream message carries `message.reasoning_content`.
 *  - Tool-call ids: `call_…` (chat, and `call_id` on Responses items, whose item id is
 *    `fc_…`), `toolu_…` (Anthropic). A scripted `id` is used verbatim on every API.
 *  - Anthropic thinking blocks are signed (see `fakeThinkingSignature`); with validation on,
 *    a thinking block sent back with a missing or altered signature is rejected, as the real
 *    API does.
 *  - A Responses turn cut short by `stopReason: 'length'` ends with `response.incomplete`
 *    (status "incomplete"), not `response.completed`, exactly like the real API.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { hashEmbedding } from './hash-embedder.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ScriptedError {
  status: number;
  message?: string;
  type?: string;
  code?: string;
  retryAfterSeconds?: number;
}

/**
 * Token counts reported verbatim in each wire's own terms: `input` becomes `prompt_tokens`
 * (OpenAI, cached tokens included) or `input_tokens` (Anthropic, cached tokens excluded).
 * Anything left out is estimated at ~4 characters per token.
 */
export interface ScriptedUsage {
  input?: number;
  output?: number;
  /** Tokens served from the prompt cache (OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`). */
  cacheRead?: number;
  /** Anthropic `cache_creation_input_tokens`; OpenAI has no equivalent. */
  cacheWrite?: number;
}

export interface ScriptedTurn {
  text?: string;
  thinking?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: ScriptedUsage;
  stopReason?: 'stop' | 'length';
  /** Characters per delta (default 8). */
  chunkSize?: number;
  /** Pause before each streamed delta; a non-streaming answer waits this long once. */
  delayMs?: number;
  /**
   * After the content, fail the stream the way each provider does once HTTP 200 is already
   * out: chat `data: {"error":…}`, Responses `response.failed`, Anthropic `event: error`.
   */
  streamError?: { message?: string; type?: string };
  /** After the content, end the stream with no terminal event, as a dropped connection would. */
  cut?: boolean;
}

export type ScriptStep =
  | ScriptedTurn
  | { error: ScriptedError }
  | { contextOverflow: true } // the provider's real "context too long" 400 error shape
  | { hang: true }; // accept the request, send headers (for streams) and then never finish

/** What an embeddings request can be scripted to do instead of answering. */
export type EmbeddingStep = { error: ScriptedError } | { contextOverflow: true } | { hang: true };

export type ApiKind = 'openai-chat' | 'openai-responses' | 'anthropic' | 'embeddings';

export interface RecordedRequest {
  api: ApiKind;
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body, or the raw text when it was not valid JSON. */
  body: any;
  apiKey?: string;
  at: number;
}

export interface FakeLlmOptions {
  embeddingDims?: number;
  requireApiKey?: boolean;
  /** Only these keys are accepted; any other gets the provider's "invalid key" 401. Implies requireApiKey. */
  apiKeys?: string[];
  /**
   * Reject malformed requests the way the real APIs do: missing required fields, tool
   * calls without results (and vice versa), bad tool names, unsigned Anthropic thinking.
   * Default true; turn off only for tests that deliberately send odd histories.
   */
  validate?: boolean;
}

export interface FakeLlm {
  url: string; // http://127.0.0.1:<port>
  openaiBaseUrl: string; // `${url}/v1`
  anthropicBaseUrl: string; // `${url}` (clients append /v1/messages)
  requests: RecordedRequest[];
  /** "METHOD /path" of every request that matched no endpoint (answered 404). */
  unhandled: string[];
  script(...steps: ScriptStep[]): void; // FIFO: each model request (not embeddings) consumes one step
  scriptForKey(apiKey: string, ...steps: ScriptStep[]): void; // consumed first for requests carrying that key
  respond(handler: (request: RecordedRequest) => ScriptStep | Promise<ScriptStep>): void; // used when no scripted step is queued
  /** FIFO for embeddings requests only; when empty they are answered normally. */
  scriptEmbeddings(...steps: EmbeddingStep[]): void;
  /** Scripted steps not yet consumed (all queues). */
  pendingSteps(): number;
  reset(): void; // clear scripts, handler and recorded requests
  close(): Promise<void>; // also ends hung requests
}

const DEFAULT_CHUNK = 8;
const MAX_BODY_BYTES = 64 * 1024 * 1024;
// Fixed, so a history signed by one server instance is accepted by another.
const SIGNING_KEY = 'claw-fake-llm/thinking-signature';

/** The signature this server puts on an Anthropic thinking block, for hand-built histories. */
export function fakeThinkingSignature(thinking: string): string {
  return createHmac('sha256', SIGNING_KEY).update(thinking).digest('base64');
}

/**
 * The vector `/v1/embeddings` returns for `text`: the SDK's deterministic hash embedding
 * (each distinct word, CJK character and CJK bigram a fixed pseudo-random direction,
 * summed and L2-normalised). Texts sharing words point the same way; unrelated texts are
 * close to orthogonal.
 */
export function fakeEmbedding(text: string, dims = 64): number[] {
  return hashEmbedding(text, dims);
}

export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const embeddingDims = options.embeddingDims ?? 64;
  const validKeys = options.apiKeys ? new Set(options.apiKeys) : undefined;
  const requireKey = options.requireApiKey === true || validKeys !== undefined;
  const validate = options.validate !== false;

  const requests: RecordedRequest[] = [];
  const unhandled: string[] = [];
  const queue: ScriptStep[] = [];
  const keyed = new Map<string, ScriptStep[]>();
  const embeddingQueue: EmbeddingStep[] = [];
  let handler: ((request: RecordedRequest) => ScriptStep | Promise<ScriptStep>) | undefined;
  // Responses still open (streams, hangs), so close() can end them instead of waiting forever.
  const open = new Set<ServerResponse>();

  const nextStep = async (record: RecordedRequest): Promise<ScriptStep> => {
    const own = record.apiKey === undefined ? undefined : keyed.get(record.apiKey);
    if (own && own.length > 0) return own.shift()!;
    if (queue.length > 0) return queue.shift()!;
    if (handler) return handler(record);
    return { text: 'ok' };
  };

  const server: Server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    handle(req, res).catch((error: unknown) => {
      if (error instanceof ClientGone) return;
      if (!res.headersSent) {
        const api = apiFromPath(pathOf(req)) ?? 'openai-chat';
        sendError(res, api, 500, { message: `fake-llm failure: ${(error as Error)?.message ?? String(error)}` });
      } else {
        res.destroy();
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req);
    const api = req.method === 'POST' ? apiFromPath(path) : undefined;
    const raw = await readBody(req);
    if (!api) {
      unhandled.push(`${req.method} ${path}`);
      if (req.headers['anthropic-version'] !== undefined) {
        return sendJson(res, 404, anthropicErrorBody('not_found_error', 'Not Found'), anthropicHeaders());
      }
      return sendJson(
        res,
        404,
        openaiErrorBody(`Invalid URL (${req.method} ${path})`, 'invalid_request_error'),
        openaiHeaders(),
      );
    }

    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const apiKey = keyFromHeaders(headers);
    let body: any = raw.text;
    let parsed = false;
    if (!raw.tooLarge) {
      try {
        body = JSON.parse(raw.text);
        parsed = body !== null && typeof body === 'object' && !Array.isArray(body);
      } catch {
        // Recorded as text; answered below with the provider's parse error.
      }
    }
    const record: RecordedRequest = { api, path, headers, body, apiKey, at: Date.now() };
    requests.push(record);

    // Real gateways authenticate before they look at the body.
    if (requireKey && (apiKey === undefined || (validKeys !== undefined && !validKeys.has(apiKey)))) {
      return sendAuthError(res, api, apiKey);
    }
    if (raw.tooLarge) {
      return api === 'anthropic'
        ? sendJson(
            res,
            413,
            anthropicErrorBody('request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
            anthropicHeaders(),
          )
        : sendError(res, api, 413, { message: 'Request body too large.' });
    }
    if (api === 'anthropic' && headers['anthropic-version'] === undefined) {
      return sendError(res, api, 400, { message: 'anthropic-version: header is required' });
    }
    if (!parsed) {
      return api === 'anthropic'
        ? sendError(res, api, 400, {
            message: 'There was an error parsing the body of your request: expected a JSON object.',
          })
        : sendError(res, api, 400, {
            message:
              'We could not parse the JSON body of your request. (HINT: the API expects a JSON object as the request body; what was sent was not valid JSON.)',
          });
    }

    if (api === 'embeddings') return serveEmbeddings(res, body);
    if (path === '/v1/messages/count_tokens') {
      const problem = validate ? checkAnthropic(body, true) : undefined;
      if (problem) return sendProblem(res, api, problem);
      return sendJson(res, 200, { input_tokens: anthropicInputTokens(body) }, anthropicHeaders());
    }
    if (validate) {
      const problem =
        api === 'openai-chat'
          ? checkChat(body)
          : api === 'openai-responses'
            ? checkResponses(body)
            : checkAnthropic(body, false);
      if (problem) return sendProblem(res, api, problem);
    }

    let step: ScriptStep;
    try {
      step = await nextStep(record);
    } catch (error) {
      return sendError(res, api, 500, {
        message: `fake-llm respond() handler threw: ${(error as Error)?.message ?? String(error)}`,
      });
    }
    if (step === null || typeof step !== 'object') {
      return sendError(res, api, 500, { message: `fake-llm: a script step must be an object, got ${String(step)}` });
    }
    const stream = body.stream === true;
    if ('hang' in step) return hang(res, api, stream);
    if ('contextOverflow' in step) return sendOverflow(res, api);
    if ('error' in step) return sendScriptedError(res, api, step.error, body.model);

    const turn = planTurn(step, api);
    if (api === 'openai-chat') return stream ? streamChat(res, body, turn) : replyChat(res, body, turn);
    if (api === 'openai-responses') return stream ? streamResponses(res, body, turn) : replyResponses(res, body, turn);
    return stream ? streamAnthropic(res, body, turn) : replyAnthropic(res, body, turn);
  }

  function serveEmbeddings(res: ServerResponse, body: any): void | Promise<void> {
    if (validate) {
      const problem = checkEmbeddings(body);
      if (problem) return sendProblem(res, 'embeddings', problem);
    }
    const step = embeddingQueue.shift();
    if (step && 'hang' in step) return hang(res, 'embeddings', false);
    if (step && 'contextOverflow' in step) return sendOverflow(res, 'embeddings');
    if (step && 'error' in step) return sendScriptedError(res, 'embeddings', step.error, body.model);

    const dims = Number.isInteger(body.dimensions) && body.dimensions > 0 ? (body.dimensions as number) : embeddingDims;
    const inputs = embeddingInputs(body.input);
    const base64 = body.encoding_format === 'base64';
    const data = inputs.map((text, index) => {
      const vector = fakeEmbedding(text, dims);
      return {
        object: 'embedding',
        index,
        embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
      };
    });
    const tokens = inputs.reduce((total, text) => total + estimateTokens(text), 0);
    sendJson(
      res,
      200,
      { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } },
      openaiHeaders(),
    );
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    requests,
    unhandled,
    script: (...steps) => void queue.push(...steps),
    scriptForKey(apiKey, ...steps) {
      const list = keyed.get(apiKey) ?? [];
      list.push(...steps);
      keyed.set(apiKey, list);
    },
    respond(next) {
      handler = next;
    },
    scriptEmbeddings: (...steps) => void embeddingQueue.push(...steps),
    pendingSteps: () =>
      queue.length + embeddingQueue.length + [...keyed.values()].reduce((total, list) => total + list.length, 0),
    reset() {
      queue.length = 0;
      embeddingQueue.length = 0;
      keyed.clear();
      handler = undefined;
      // In place, so callers holding `fake.requests` keep seeing the live list.
      requests.length = 0;
      unhandled.length = 0;
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
// Routing, bodies, auth

function pathOf(req: IncomingMessage): string {
  return (req.url ?? '/').split('?')[0]!;
}

function apiFromPath(path: string): ApiKind | undefined {
  switch (path) {
    case '/v1/chat/completions':
      return 'openai-chat';
    case '/v1/responses':
      return 'openai-responses';
    case '/v1/messages':
    case '/v1/messages/count_tokens':
      return 'anthropic';
    case '/v1/embeddings':
      return 'embeddings';
    default:
      return undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Keep draining so the client sees our answer instead of a reset connection.
    if (size > MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(chunk);
  }
  return { text: tooLarge ? '' : Buffer.concat(chunks).toString('utf8'), tooLarge };
}

function keyFromHeaders(headers: Record<string, string>): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '');
  if (bearer) return bearer[1]!.trim();
  return headers['x-api-key'] || undefined;
}

// ---------------------------------------------------------------------------------------
// Ids and small helpers

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function base62(length: number): string {
  let out = '';
  for (const byte of randomBytes(length)) out += ALNUM[byte % 62];
  return out;
}

const hexId = (prefix: string): string => `${prefix}${randomBytes(25).toString('hex')}`;
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

function estimateTokens(value: unknown): number {
  if (value === undefined || value === null) return 0;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return Math.ceil(text.length / 4);
}

/**
 * Code-point safe pieces of at most `size` characters. Tool arguments ask for at least two
 * pieces, so even `{}` arrives split and clients are forced to reassemble, as they must in production.
 */
function pieces(text: string, size: number, atLeast = 1): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const step = Math.max(1, Math.min(size, Math.ceil(chars.length / atLeast)));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += step) out.push(chars.slice(i, i + step).join(''));
  return out;
}

function openaiHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-request-id': `req_${randomBytes(16).toString('hex')}`, 'openai-processing-ms': '12', ...extra };
}

function anthropicHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { 'request-id': `req_011${base62(21)}`, ...extra };
}

function headersFor(api: ApiKind, extra: Record<string, string> = {}): Record<string, string> {
  return api === 'anthropic' ? anthropicHeaders(extra) : openaiHeaders(extra);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

// ---------------------------------------------------------------------------------------
// Errors, in each provider's own shape

interface Problem {
  message: string;
  param?: string | null;
  code?: string | null;
  type?: string;
}

function openaiErrorBody(message: string, type: string, code: string | null = null, param: string | null = null) {
  return { error: { message, type, param, code } };
}

function anthropicErrorBody(type: string, message: string) {
  return { type: 'error', error: { type, message }, request_id: `req_011${base62(21)}` };
}

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

function anthropicDefaultMessage(status: number, model: unknown): string {
  switch (status) {
    case 401:
      return 'invalid x-api-key';
    case 402:
      return 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.';
    case 403:
      return 'Your API key does not have permission to use the specified resource.';
    case 404:
      return `model: ${String(model ?? '')}`;
    case 429:
      return 'This request would exceed the rate limit for your organization. Please reduce the prompt length or the maximum tokens requested, or try again later.';
    case 529:
      return 'Overloaded';
    default:
      return status >= 500 ? 'Internal server error' : 'Invalid request';
  }
}

function openaiDefaults(
  status: number,
  model: unknown,
  retryAfterSeconds?: number,
): { message: string; type: string; code: string | null } {
  switch (status) {
    case 401:
      return { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' };
    case 403:
      return { message: 'You are not allowed to access this resource.', type: 'invalid_request_error', code: null };
    case 404:
      return {
        message: `The model \`${String(model ?? '')}\` does not exist or you do not have access to it.`,
        type: 'invalid_request_error',
        code: 'model_not_found',
      };
    case 429:
      return {
        message: `Rate limit reached for ${String(model ?? 'the model')} on tokens per min (TPM). Please try again in ${retryAfterSeconds ?? 1}s.`,
        type: 'tokens',
        code: 'rate_limit_exceeded',
      };
    case 503:
      return { message: 'The server is overloaded or not ready yet.', type: 'server_error', code: null };
    default:
      return status >= 500
        ? {
            message: 'The server had an error while processing your request. Sorry about that!',
            type: 'server_error',
            code: null,
          }
        : { message: 'Invalid request.', type: 'invalid_request_error', code: null };
  }
}

function sendError(
  res: ServerResponse,
  api: ApiKind,
  status: number,
  problem: Problem,
  extraHeaders: Record<string, string> = {},
): void {
  if (api === 'anthropic') {
    const type = problem.type ?? ANTHROPIC_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    return sendJson(res, status, anthropicErrorBody(type, problem.message), anthropicHeaders(extraHeaders));
  }
  const fallback = openaiDefaults(status, undefined);
  const body = openaiErrorBody(
    problem.message,
    problem.type ?? fallback.type,
    problem.code === undefined ? null : problem.code,
    problem.param ?? null,
  );
  sendJson(res, status, body, openaiHeaders(extraHeaders));
}

function sendProblem(res: ServerResponse, api: ApiKind, problem: Problem): void {
  sendError(res, api, 400, problem);
}

function sendScriptedError(res: ServerResponse, api: ApiKind, error: ScriptedError, model: unknown): void {
  const extra: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) extra['retry-after'] = String(error.retryAfterSeconds);
  if (api === 'anthropic') {
    return sendError(
      res,
      api,
      error.status,
      {
        message: error.message ?? anthropicDefaultMessage(error.status, model),
        type: error.type,
      },
      extra,
    );
  }
  const defaults = openaiDefaults(error.status, model, error.retryAfterSeconds);
  sendJson(
    res,
    error.status,
    openaiErrorBody(error.message ?? defaults.message, error.type ?? defaults.type, error.code ?? defaults.code),
    openaiHeaders(extra),
  );
}

function sendAuthError(res: ServerResponse, api: ApiKind, apiKey: string | undefined): void {
  if (api === 'anthropic') {
    return sendError(res, api, 401, {
      message: apiKey === undefined ? 'x-api-key header is required' : 'invalid x-api-key',
    });
  }
  if (apiKey === undefined) {
    return sendError(res, api, 401, {
      message:
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    });
  }
  const masked = apiKey.length > 8 ? `${apiKey.slice(0, 3)}${'*'.repeat(apiKey.length - 7)}${apiKey.slice(-4)}` : '***';
  sendError(res, api, 401, {
    message: `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`,
    code: 'invalid_api_key',
  });
}

function sendOverflow(res: ServerResponse, api: ApiKind): void {
  switch (api) {
    case 'anthropic':
      return sendError(res, api, 400, { message: 'prompt is too long: 9000 tokens > 8192 maximum' });
    case 'openai-responses':
      return sendError(res, api, 400, {
        message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
        param: 'input',
        code: 'context_length_exceeded',
      });
    case 'embeddings':
      return sendError(res, api, 400, {
        message:
          "This model's maximum context length is 8192 tokens, however you requested 9000 tokens (9000 in your prompt; 0 for the completion). Please reduce your prompt; or completion length.",
      });
    case 'openai-chat':
      return sendError(res, api, 400, {
        message:
          "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
        param: 'messages',
        code: 'context_length_exceeded',
      });
  }
}

/** Never answers; a stream gets its 200 and headers first, so clients see a stalled stream rather than a slow server. */
function hang(res: ServerResponse, api: ApiKind, stream: boolean): void {
  if (!stream) return;
  res.writeHead(200, sseHeaders(api));
  res.flushHeaders();
}

// ---------------------------------------------------------------------------------------
// Request validation: the mistakes the real APIs reject and provider code tends to make

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const isObject = (value: unknown): value is Record<string, any> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function notAnObject(param: string, value: unknown): Problem {
  const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  return {
    message: `Invalid type for '${param}': expected an object, but got ${got} instead.`,
    param,
    code: 'invalid_type',
  };
}
const ANTHROPIC_TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

function checkChat(body: any): Problem | undefined {
  if (typeof body.model !== 'string' || body.model === '') return { message: 'you must provide a model parameter' };
  if (body.messages === undefined) {
    return {
      message: "Missing required parameter: 'messages'.",
      param: 'messages',
      code: 'missing_required_parameter',
    };
  }
  if (!Array.isArray(body.messages)) {
    return {
      message: "Invalid type for 'messages': expected an array of objects.",
      param: 'messages',
      code: 'invalid_type',
    };
  }
  if (body.messages.length === 0) {
    return {
      message:
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      param: 'messages',
      code: 'empty_array',
    };
  }
  if (body.stream_options != null && body.stream !== true) {
    return {
      message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      param: 'stream_options',
      code: 'invalid_value',
    };
  }
  if (Array.isArray(body.tools)) {
    for (const [i, tool] of body.tools.entries()) {
      if (!isObject(tool)) return notAnObject(`tools[${i}]`, tool);
      if (tool.type !== 'function') continue;
      if (tool.function === undefined) {
        return {
          message: `Missing required parameter: 'tools[${i}].function'.`,
          param: `tools[${i}].function`,
          code: 'missing_required_parameter',
        };
      }
      if (typeof tool.function.name !== 'string' || !TOOL_NAME.test(tool.function.name)) {
        return {
          message: `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
          param: `tools[${i}].function.name`,
          code: 'invalid_value',
        };
      }
    }
  }
  const roles = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
  let pending: Set<string> | undefined;
  let askedAt = -1;
  const unanswered = (): Problem => ({
    message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending!].join(', ')}`,
    param: `messages.[${askedAt}].role`,
  });
  for (const [i, message] of body.messages.entries()) {
    const role = message?.role;
    if (!roles.has(role)) {
      return {
        message: `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'function'.`,
        param: `messages[${i}].role`,
        code: 'invalid_value',
      };
    }
    if (message.content === undefined && role !== 'assistant') {
      return {
        message: `Missing required parameter: 'messages[${i}].content'.`,
        param: `messages.[${i}].content`,
        code: 'missing_required_parameter',
      };
    }
    if (role === 'tool') {
      if (!pending) {
        return {
          message:
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: `messages.[${i}].role`,
        };
      }
      if (!pending.delete(message.tool_call_id)) {
        return {
          message: `Invalid parameter: 'tool_call_id' of '${String(message.tool_call_id)}' not found in 'tool_calls' of previous message.`,
          param: `messages.[${i}].tool_call_id`,
        };
      }
      continue;
    }
    if (pending && pending.size > 0) return unanswered();
    pending = undefined;
    if (role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      pending = new Set(message.tool_calls.map((call: any) => call?.id));
      askedAt = i;
    }
  }
  if (pending && pending.size > 0) return unanswered();
  return undefined;
}

function checkResponses(body: any): Problem | undefined {
  if (typeof body.model !== 'string' || body.model === '') {
    return { message: "Missing required parameter: 'model'.", param: 'model', code: 'missing_required_parameter' };
  }
  if (Array.isArray(body.tools)) {
    for (const [i, tool] of body.tools.entries()) {
      if (!isObject(tool)) return notAnObject(`tools[${i}]`, tool);
      if (tool.type !== 'function') continue;
      // The chat-completions nesting ({function:{name}}) is the classic mistake here.
      if (tool.name === undefined) {
        return {
          message: `Missing required parameter: 'tools[${i}].name'.`,
          param: `tools[${i}].name`,
          code: 'missing_required_parameter',
        };
      }
      if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
        return {
          message: `Invalid 'tools[${i}].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
          param: `tools[${i}].name`,
          code: 'invalid_value',
        };
      }
    }
  }
  // With previous_response_id the server holds earlier items we cannot see.
  if (Array.isArray(body.input) && body.previous_response_id == null) {
    const calls = new Set<string>();
    const answered = new Set<string>();
    for (const [i, item] of body.input.entries()) {
      if (!isObject(item)) return notAnObject(`input[${i}]`, item);
      if (item.type === 'function_call') calls.add(item.call_id);
      if (item?.type === 'function_call_output') {
        if (!calls.has(item.call_id)) {
          return {
            message: `No tool call found for function call output with call_id ${String(item.call_id)}.`,
            param: 'input',
          };
        }
        answered.add(item.call_id);
      }
    }
    for (const id of calls) {
      if (!answered.has(id)) return { message: `No tool output found for function call ${id}.`, param: 'input' };
    }
  }
  return undefined;
}

function checkAnthropic(body: any, countOnly: boolean): Problem | undefined {
  if (typeof body.model !== 'string' || body.model === '') return { message: 'model: Field required' };
  if (!countOnly && typeof body.max_tokens !== 'number') return { message: 'max_tokens: Field required' };
  if (body.messages === undefined) return { message: 'messages: Field required' };
  if (!Array.isArray(body.messages)) return { message: 'messages: Input should be a valid list' };
  if (body.messages.length === 0 && !countOnly) return { message: 'messages: at least one message is required' };

  const thinkingOn = body.thinking?.type === 'enabled';
  if (thinkingOn) {
    const budget = body.thinking.budget_tokens;
    if (typeof budget !== 'number' || budget < 1024)
      return { message: 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024' };
    if (!countOnly && body.max_tokens <= budget)
      return { message: '`max_tokens` must be greater than `thinking.budget_tokens`.' };
  }
  if (Array.isArray(body.tools)) {
    for (const [i, tool] of body.tools.entries()) {
      // Typed tools (web_search_20250305, bash_…) are server tools with fixed names.
      if (tool?.type !== undefined && tool.type !== 'custom') continue;
      if (typeof tool?.name !== 'string' || !ANTHROPIC_TOOL_NAME.test(tool.name)) {
        return { message: `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'` };
      }
      if (tool.input_schema === undefined) return { message: `tools.${i}.custom.input_schema: Field required` };
    }
  }

  const blocks = (message: any): any[] => (Array.isArray(message?.content) ? message.content : []);
  for (const [i, message] of body.messages.entries()) {
    const role = message?.role;
    if (role === 'system') {
      return {
        message:
          'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
      };
    }
    if (role !== 'user' && role !== 'assistant')
      return { message: `messages.${i}.role: Input should be 'user' or 'assistant'` };
    if (message.content === undefined) return { message: `messages.${i}.content: Field required` };

    if (role === 'assistant') {
      for (const [j, block] of blocks(message).entries()) {
        if (block?.type !== 'thinking') continue;
        if (typeof block.signature !== 'string')
          return { message: `messages.${i}.content.${j}.thinking.signature: Field required` };
        if (block.signature !== fakeThinkingSignature(String(block.thinking ?? ''))) {
          return { message: `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block` };
        }
      }
      const uses = blocks(message)
        .filter((block) => block?.type === 'tool_use')
        .map((block) => String(block.id));
      const next = body.messages[i + 1];
      if (uses.length > 0 && next !== undefined) {
        const results = new Set(
          blocks(next)
            .filter((block) => block?.type === 'tool_result')
            .map((block) => String(block.tool_use_id)),
        );
        const missing = uses.filter((id) => !results.has(id));
        if (next?.role !== 'user' || missing.length > 0) {
          return {
            message: `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${(missing.length > 0 ? missing : uses).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
          };
        }
      }
    } else {
      const previous = i > 0 ? body.messages[i - 1] : undefined;
      const asked = new Set(
        previous?.role === 'assistant'
          ? blocks(previous)
              .filter((block) => block?.type === 'tool_use')
              .map((block) => String(block.id))
          : [],
      );
      for (const [j, block] of blocks(message).entries()) {
        if (block?.type === 'tool_result' && !asked.has(String(block.tool_use_id))) {
          return {
            message: `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          };
        }
      }
    }
  }

  // Mid tool loop with thinking on, the assistant turn being continued must open with its thinking.
  const last = body.messages[body.messages.length - 1];
  const previous = body.messages[body.messages.length - 2];
  if (
    thinkingOn &&
    last?.role === 'user' &&
    blocks(last).some((block) => block?.type === 'tool_result') &&
    previous?.role === 'assistant'
  ) {
    const first = blocks(previous)[0];
    if (first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
      return {
        message: `messages.${body.messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type ?? 'text')}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`,
      };
    }
  }
  return undefined;
}

function checkEmbeddings(body: any): Problem | undefined {
  if (typeof body.model !== 'string' || body.model === '') return { message: 'you must provide a model parameter' };
  if (body.input === undefined) return { message: "'input' is a required property" };
  const input = body.input;
  const ok =
    (typeof input === 'string' && input !== '') ||
    (Array.isArray(input) &&
      input.length > 0 &&
      input.every(
        (item: unknown) =>
          (typeof item === 'string' && item !== '') ||
          typeof item === 'number' ||
          (Array.isArray(item) && item.length > 0),
      ));
  if (!ok)
    return {
      message: "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
    };
  if (body.dimensions !== undefined && !(Number.isInteger(body.dimensions) && body.dimensions > 0)) {
    return {
      message: `Invalid 'dimensions': integer below minimum value. Expected a value >= 1, but got ${String(body.dimensions)} instead.`,
      param: 'dimensions',
      code: 'integer_below_min_value',
    };
  }
  return undefined;
}

/** Token-id inputs (number[] or number[][]) are embedded as their decimal text, which keeps them deterministic. */
function embeddingInputs(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input)) return [String(input)];
  if (input.every((item) => typeof item === 'number')) return [input.join(' ')];
  return input.map((item) => (Array.isArray(item) ? item.join(' ') : String(item)));
}

// ---------------------------------------------------------------------------------------
// Turns: one scripted answer, rendered by each API

interface Turn {
  thinking?: string;
  text?: string;
  calls: Array<{ id: string; name: string; args: string }>;
  truncated: boolean;
  chunk: number;
  delay: number;
  usage: ScriptedUsage;
  streamError?: { message?: string; type?: string };
  cut: boolean;
}

function planTurn(step: ScriptedTurn, api: ApiKind): Turn {
  const calls = (step.toolCalls ?? []).map((call) => ({
    id: call.id ?? (api === 'anthropic' ? `toolu_01${base62(22)}` : `call_${base62(24)}`),
    name: call.name,
    args: JSON.stringify(call.arguments ?? {}),
  }));
  // A turn with nothing scripted still answers, with empty text, as a real model can.
  const empty = step.text === undefined && step.thinking === undefined && calls.length === 0;
  return {
    thinking: step.thinking,
    text: empty ? '' : step.text,
    calls,
    truncated: step.stopReason === 'length',
    chunk: Math.max(1, Math.floor(step.chunkSize ?? DEFAULT_CHUNK)),
    delay: Math.max(0, step.delayMs ?? 0),
    usage: step.usage ?? {},
    streamError: step.streamError,
    cut: step.cut === true,
  };
}

function outputTokens(turn: Turn): number {
  if (turn.usage.output !== undefined) return turn.usage.output;
  const produced =
    estimateTokens(turn.thinking ?? '') +
    estimateTokens(turn.text ?? '') +
    turn.calls.reduce((t, c) => t + estimateTokens(c.name + c.args), 0);
  return Math.max(1, produced);
}

function reasoningTokens(turn: Turn): number {
  return Math.min(estimateTokens(turn.thinking ?? ''), outputTokens(turn));
}

function openaiInputTokens(body: any, api: ApiKind): number {
  const estimate =
    api === 'openai-chat'
      ? estimateTokens(body.messages) + estimateTokens(body.tools)
      : estimateTokens(body.input) + estimateTokens(body.instructions) + estimateTokens(body.tools);
  return Math.max(1, estimate);
}

function anthropicInputTokens(body: any): number {
  return Math.max(1, estimateTokens(body.system) + estimateTokens(body.messages) + estimateTokens(body.tools));
}

class ClientGone extends Error {}

function sseHeaders(api: ApiKind): Record<string, string> {
  return headersFor(api, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

/** Writes SSE frames; throws ClientGone once the client or close() has ended the response, which unwinds the producer. */
class SseWriter {
  private gone = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly delay: number,
    api: ApiKind,
  ) {
    res.on('close', () => {
      this.gone = true;
    });
    res.writeHead(200, sseHeaders(api));
    res.flushHeaders();
  }

  send(event: string | undefined, data: unknown): void {
    if (this.gone || this.res.destroyed) throw new ClientGone();
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    this.res.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${payload}\n\n`);
  }

  /** A content delta: paced by the turn's delayMs. */
  async delta(event: string | undefined, data: unknown): Promise<void> {
    if (this.delay > 0) await this.pause(this.delay);
    this.send(event, data);
  }

  end(): void {
    if (!this.gone && !this.res.destroyed) this.res.end();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      // Wake early when the response goes away, so close() is not held up by long delays.
      const done = (): void => {
        clearTimeout(timer);
        this.res.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.res.on('close', done);
    });
  }
}

async function delayReply(res: ServerResponse, ms: number): Promise<void> {
  if (ms <= 0) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.on('close', done);
  });
  if (res.destroyed) throw new ClientGone();
}

// ---------------------------------------------------------------------------------------
// OpenAI Chat Completions

function chatUsage(body: any, turn: Turn) {
  const prompt = turn.usage.input ?? openaiInputTokens(body, 'openai-chat');
  const completion = outputTokens(turn);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: turn.usage.cacheRead ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoningTokens(turn),
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function chatFinish(turn: Turn): string {
  return turn.truncated ? 'length' : turn.calls.length > 0 ? 'tool_calls' : 'stop';
}

async function replyChat(res: ServerResponse, body: any, turn: Turn): Promise<void> {
  await delayReply(res, turn.delay);
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: turn.text ?? null,
    refusal: null,
    annotations: [],
  };
  if (turn.thinking !== undefined) message.reasoning_content = turn.thinking;
  if (turn.calls.length > 0) {
    message.tool_calls = turn.calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.args },
    }));
  }
  sendJson(
    res,
    200,
    {
      id: `chatcmpl-${base62(29)}`,
      object: 'chat.completion',
      created: nowSeconds(),
      model: body.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: chatFinish(turn) }],
      usage: chatUsage(body, turn),
      service_tier: 'default',
      system_fingerprint: `fp_${randomBytes(5).toString('hex')}`,
    },
    openaiHeaders(),
  );
}

async function streamChat(res: ServerResponse, body: any, turn: Turn): Promise<void> {
  const w = new SseWriter(res, turn.delay, 'openai-chat');
  const includeUsage = body.stream_options?.include_usage === true;
  const head = {
    id: `chatcmpl-${base62(29)}`,
    object: 'chat.completion.chunk',
    created: nowSeconds(),
    model: body.model,
    service_tier: 'default',
    system_fingerprint: `fp_${randomBytes(5).toString('hex')}`,
  };
  // With include_usage every chunk carries `usage: null` until the final usage chunk.
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...head,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });

  let roleSent = false;
  if (turn.thinking !== undefined || turn.text !== undefined) {
    w.send(undefined, chunk({ role: 'assistant', content: '', refusal: null }));
    roleSent = true;
  }
  for (const piece of pieces(turn.thinking ?? '', turn.chunk))
    await w.delta(undefined, chunk({ reasoning_content: piece }));
  for (const piece of pieces(turn.text ?? '', turn.chunk)) await w.delta(undefined, chunk({ content: piece }));
  for (const [index, call] of turn.calls.entries()) {
    const opening = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
    // A tool-only answer opens with role and null content in the same chunk as the first call.
    await w.delta(
      undefined,
      chunk(roleSent ? { tool_calls: [opening] } : { role: 'assistant', content: null, tool_calls: [opening] }),
    );
    roleSent = true;
    for (const piece of pieces(call.args, turn.chunk, 2))
      await w.delta(undefined, chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }
  if (turn.cut) return w.end();
  if (turn.streamError) {
    w.send(undefined, {
      error: {
        message: turn.streamError.message ?? 'The server had an error while processing your request. Sorry about that!',
        type: turn.streamError.type ?? 'server_error',
        param: null,
        code: null,
      },
    });
    return w.end();
  }
  w.send(undefined, chunk({}, chatFinish(turn)));
  if (includeUsage) w.send(undefined, { ...head, choices: [], usage: chatUsage(body, turn) });
  w.send(undefined, '[DONE]');
  w.end();
}

// ---------------------------------------------------------------------------------------
// OpenAI Responses

function responsesUsage(body: any, turn: Turn) {
  const input = turn.usage.input ?? openaiInputTokens(body, 'openai-responses');
  const output = outputTokens(turn);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: turn.usage.cacheRead ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoningTokens(turn) },
    total_tokens: input + output,
  };
}

function responseObject(
  body: any,
  id: string,
  createdAt: number,
  status: string,
  output: unknown[],
  usage: unknown,
  error: unknown = null,
) {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    error,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

/** The finished output items, shared by the JSON answer and the stream's `.done` events. */
function responseItems(body: any, turn: Turn) {
  const finalStatus = turn.truncated ? 'incomplete' : 'completed';
  const reasoning =
    turn.thinking === undefined
      ? undefined
      : {
          id: hexId('rs_'),
          type: 'reasoning',
          summary: [{ type: 'summary_text', text: turn.thinking }],
          // Stateless callers (store:false) ask for this so they can send reasoning back next turn.
          ...(Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content')
            ? { encrypted_content: `gAAAAAB${Buffer.from(turn.thinking).toString('base64')}` }
            : {}),
        };
  const message =
    turn.text === undefined
      ? undefined
      : {
          id: hexId('msg_'),
          type: 'message',
          status: finalStatus,
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: turn.text }],
          role: 'assistant',
        };
  const calls = turn.calls.map((call) => ({
    id: hexId('fc_'),
    type: 'function_call',
    status: 'completed',
    arguments: call.args,
    call_id: call.id,
    name: call.name,
  }));
  return { reasoning, message, calls };
}

async function replyResponses(res: ServerResponse, body: any, turn: Turn): Promise<void> {
  await delayReply(res, turn.delay);
  const { reasoning, message, calls } = responseItems(body, turn);
  const output = [reasoning, message, ...calls].filter((item) => item !== undefined);
  const status = turn.truncated ? 'incomplete' : 'completed';
  sendJson(
    res,
    200,
    responseObject(body, hexId('resp_'), nowSeconds(), status, output, responsesUsage(body, turn)),
    openaiHeaders(),
  );
}

async function streamResponses(res: ServerResponse, body: any, turn: Turn): Promise<void> {
  const w = new SseWriter(res, turn.delay, 'openai-responses');
  let sequence = 0;
  const emit = (type: string, fields: Record<string, unknown>) =>
    w.send(type, { type, sequence_number: sequence++, ...fields });
  const emitDelta = (type: string, fields: Record<string, unknown>) =>
    w.delta(type, { type, sequence_number: sequence++, ...fields });

  const id = hexId('resp_');
  const createdAt = nowSeconds();
  emit('response.created', { response: responseObject(body, id, createdAt, 'in_progress', [], null) });
  emit('response.in_progress', { response: responseObject(body, id, createdAt, 'in_progress', [], null) });

  const { reasoning, message, calls } = responseItems(body, turn);
  const output: unknown[] = [];
  let outputIndex = 0;

  if (reasoning) {
    const at = outputIndex++;
    const text = turn.thinking!;
    const { summary: _summary, ...bare } = reasoning;
    emit('response.output_item.added', { output_index: at, item: { ...bare, summary: [] } });
    const where = { item_id: reasoning.id, output_index: at, summary_index: 0 };
    emit('response.reasoning_summary_part.added', { ...where, part: { type: 'summary_text', text: '' } });
    for (const piece of pieces(text, turn.chunk))
      await emitDelta('response.reasoning_summary_text.delta', { ...where, delta: piece });
    emit('response.reasoning_summary_text.done', { ...where, text });
    emit('response.reasoning_summary_part.done', { ...where, part: { type: 'summary_text', text } });
    emit('response.output_item.done', { output_index: at, item: reasoning });
    output.push(reasoning);
  }

  if (message) {
    const at = outputIndex++;
    const text = turn.text!;
    emit('response.output_item.added', { output_index: at, item: { ...message, status: 'in_progress', content: [] } });
    const where = { item_id: message.id, output_index: at, content_index: 0 };
    emit('response.content_part.added', {
      ...where,
      part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
    });
    for (const piece of pieces(text, turn.chunk))
      await emitDelta('response.output_text.delta', { ...where, delta: piece, logprobs: [] });
    emit('response.output_text.done', { ...where, text, logprobs: [] });
    emit('response.content_part.done', { ...where, part: message.content[0] });
    emit('response.output_item.done', { output_index: at, item: message });
    output.push(message);
  }

  for (const call of calls) {
    const at = outputIndex++;
    emit('response.output_item.added', { output_index: at, item: { ...call, status: 'in_progress', arguments: '' } });
    const where = { item_id: call.id, output_index: at };
    for (const piece of pieces(call.arguments, turn.chunk, 2))
      await emitDelta('response.function_call_arguments.delta', { ...where, delta: piece });
    emit('response.function_call_arguments.done', { ...where, name: call.name, arguments: call.arguments });
    emit('response.output_item.done', { output_index: at, item: call });
    output.push(call);
  }

  if (turn.cut) return w.end();
  if (turn.streamError) {
    const error = {
      code: turn.streamError.type ?? 'server_error',
      message: turn.streamError.message ?? 'The model failed to generate a response.',
    };
    emit('response.failed', { response: responseObject(body, id, createdAt, 'failed', output, null, error) });
    return w.end();
  }
  const status = turn.truncated ? 'incomplete' : 'completed';
  emit(`response.${status}`, {
    response: responseObject(body, id, createdAt, status, output, responsesUsage(body, turn)),
  });
  w.end();
}

// ---------------------------------------------------------------------------------------
// Anthropic Messages

function anthropicStop(turn: Turn): string {
  return turn.truncated ? 'max_tokens' : turn.calls.length > 0 ? 'tool_use' : 'end_turn';
}

function anthropicUsage(body: any, turn: Turn, output: number) {
  return {
    input_tokens: turn.usage.input ?? anthropicInputTokens(body),
    cache_creation_input_tokens: turn.usage.cacheWrite ?? 0,
    cache_read_input_tokens: turn.usage.cacheRead ?? 0,
    output_tokens: output,
  };
}

async function replyAnthropic(res: ServerResponse, body: any, turn: Turn): Promise<void> {
  await delayReply(res, turn.delay);
  const content: unknown[] = [];
  if (turn.thinking !== undefined)
    content.push({ type: 'thinking', thinking: turn.thinking, signature: fakeThinkingSignature(turn.thinking) });
  if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
  for (const call of turn.calls)
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.args) });
  sendJson(
    res,
    200,
    {
      id: `msg_01${base62(22)}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: anthropicStop(turn),
      stop_sequence: null,
      usage: anthropicUsage(body, turn, outputTokens(turn)),
    },
    anthropicHeaders(),
  );
}

async function streamAnthropic(res: ServerResponse, body: any, turn: Turn): Promise<void> {
  const w = new SseWriter(res, turn.delay, 'anthropic');
  const emit = (type: string, fields: Record<string, unknown>) => w.send(type, { type, ...fields });
  const emitDelta = (index: number, delta: Record<string, unknown>) =>
    w.delta('content_block_delta', { type: 'content_block_delta', index, delta });

  emit('message_start', {
    message: {
      id: `msg_01${base62(22)}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: anthropicUsage(body, turn, 1),
    },
  });
  emit('ping', {});

  let index = 0;
  if (turn.thinking !== undefined) {
    emit('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    for (const piece of pieces(turn.thinking, turn.chunk))
      await emitDelta(index, { type: 'thinking_delta', thinking: piece });
    // The signature arrives whole, just before the block closes.
    await emitDelta(index, { type: 'signature_delta', signature: fakeThinkingSignature(turn.thinking) });
    emit('content_block_stop', { index });
    index++;
  }
  if (turn.text !== undefined) {
    emit('content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (const piece of pieces(turn.text, turn.chunk)) await emitDelta(index, { type: 'text_delta', text: piece });
    emit('content_block_stop', { index });
    index++;
  }
  for (const call of turn.calls) {
    emit('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
    });
    // The real API opens with an empty fragment; parsers must cope with it.
    await emitDelta(index, { type: 'input_json_delta', partial_json: '' });
    for (const piece of pieces(call.args, turn.chunk, 2))
      await emitDelta(index, { type: 'input_json_delta', partial_json: piece });
    emit('content_block_stop', { index });
    index++;
  }
  if (turn.cut) return w.end();
  if (turn.streamError) {
    emit('error', {
      error: { type: turn.streamError.type ?? 'overloaded_error', message: turn.streamError.message ?? 'Overloaded' },
    });
    return w.end();
  }
  emit('message_delta', {
    delta: { stop_reason: anthropicStop(turn), stop_sequence: null },
    usage: { output_tokens: outputTokens(turn) },
  });
  emit('message_stop', {});
  w.end();
}
