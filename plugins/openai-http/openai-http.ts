/**
 * `POST /v1/chat/completions` on the gateway: any OpenAI client can talk to claw. Each
 * request is one agent turn (tools, memory, hooks, policy all apply), answered in the Chat
 * Completions shape, streamed as SSE when `stream: true`. The route sits behind gateway
 * auth (Authorization: Bearer <gateway token>).
 *
 * Which agent: `model: "openclaw/<agentId>"` (or "claw:<agentId>", "openclaw:<agentId>",
 * "agent:<agentId>") or the `x-openclaw-agent-id` header. Which backend model: the agent's
 * own, or a "provider/model" in `model` or the `x-openclaw-model` header. Which session: the `x-openclaw-session-key` header, else
 * one per `user` field, else a fresh session per request (earlier messages in the request
 * are then given to the agent as the conversation so far).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ImagePart, KernelConfig } from '../../sdk/index.js';
import { HttpBodyError, readRequestBody } from '../../sdk/net/index.js';
import {
  IntakeClosedError,
  normalizeAgentId,
  parseReply,
  unknownAgentProblem,
  type AgentService,
  type DispatchInput,
  type RunEvent,
  type RunResult,
} from '../../sdk/agent/index.js';

export const MAX_BODY_BYTES = 20 * 1024 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
    readonly param?: string,
  ) {
    super(message);
  }
}

interface ChatCompletionMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  content?: string | Array<{ type: string; text?: string; image_url?: { url: string } | string }> | null;
  name?: string;
}

interface ChatCompletionRequest {
  model?: string;
  messages: ChatCompletionMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  user?: string;
}

function parseRequest(body: Buffer): ChatCompletionRequest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new HttpError(400, `body is not valid JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new HttpError(400, 'body must be a JSON object');
  const request = parsed as Partial<ChatCompletionRequest>;
  if (!Array.isArray(request.messages) || request.messages.length === 0)
    throw new HttpError(400, 'messages must be a non-empty array', 'invalid_request_error', 'messages');
  request.messages.forEach((message, index) => {
    if (!message || typeof message !== 'object')
      throw new HttpError(400, `messages[${index}] must be an object`, 'invalid_request_error', `messages[${index}]`);
    if (!['system', 'developer', 'user', 'assistant', 'tool', 'function'].includes(message.role)) {
      throw new HttpError(
        400,
        `messages[${index}].role "${String(message.role)}" is not one of system, developer, user, assistant, tool`,
        'invalid_request_error',
        `messages[${index}].role`,
      );
    }
    const content = message.content;
    if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content)) {
      throw new HttpError(
        400,
        `messages[${index}].content must be a string or an array of parts`,
        'invalid_request_error',
        `messages[${index}].content`,
      );
    }
  });
  if (request.model !== undefined && typeof request.model !== 'string')
    throw new HttpError(400, 'model must be a string', 'invalid_request_error', 'model');
  if (request.user !== undefined && typeof request.user !== 'string')
    throw new HttpError(400, 'user must be a string', 'invalid_request_error', 'user');
  return request as ChatCompletionRequest;
}

function textOf(content: ChatCompletionMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (part.type === 'text' || part.type === 'input_text' ? (part.text ?? '') : '')).join('');
}

function imagesOf(content: ChatCompletionMessage['content']): ImagePart[] {
  if (!Array.isArray(content)) return [];
  const images: ImagePart[] = [];
  for (const part of content) {
    if (part.type !== 'image_url') continue;
    const url = typeof part.image_url === 'string' ? part.image_url : part.image_url?.url;
    const match = url ? /^data:(image\/[\w.+-]+);base64,(.+)$/s.exec(url) : null;
    // Remote image URLs are not fetched: the gateway does not reach out on a caller's behalf.
    if (!match)
      throw new HttpError(
        400,
        'image_url parts must be data: URLs (image/*;base64)',
        'invalid_request_error',
        'messages',
      );
    images.push({ type: 'image', data: match[2]!, mimeType: match[1]! });
  }
  return images;
}

/**
 * What the `model` field asks for: an agent (`openclaw`, `openclaw/default`,
 * `openclaw/<agent>`, `claw:<agent>`, `openclaw:<agent>`, `agent:<agent>`) or a backend
 * model "provider/model" (as GET /v1/models lists them) for the default agent. Anything
 * else (a bare "gpt-4o") means the default agent with its own model.
 */
export function targetFromModel(model: string | undefined): { agentId?: string; model?: string } {
  const value = model?.trim() ?? '';
  const agent = /^(?:claw|openclaw|agent):(.+)$/i.exec(value) ?? /^openclaw\/(.+)$/i.exec(value);
  if (agent) return agent[1]!.toLowerCase() === 'default' ? {} : { agentId: agent[1] };
  if (/^[a-z0-9][a-z0-9._-]*\/\S+$/i.test(value)) return { model: value };
  return {};
}

/** `agent()` finds the agent plugin's service when a request comes in (it loads on first use). */
export function createChatCompletionsHandler(
  agent: () => Promise<AgentService>,
  enabled: boolean,
  config: () => KernelConfig,
) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!enabled) {
      req.resume();
      sendError(
        res,
        new HttpError(
          404,
          'the OpenAI-compatible endpoint is off: set gateway.http.endpoints.chatCompletions.enabled to true and restart the gateway',
          'not_found_error',
        ),
      );
      return;
    }
    let request: ChatCompletionRequest;
    try {
      request = parseRequest(await readRequestBody(req, { limit: MAX_BODY_BYTES, timeoutMs: 60_000 }));
    } catch (error) {
      sendError(res, error);
      return;
    }
    try {
      const runtime = await agent();
      const header = (name: string) => {
        const value = req.headers[name];
        return (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
      };
      const target = targetFromModel(request.model);
      const named = header('x-openclaw-agent-id') ?? target.agentId;
      const agentProblem = named === undefined ? undefined : unknownAgentProblem(config(), named);
      if (agentProblem)
        throw new HttpError(
          400,
          agentProblem,
          'invalid_request_error',
          header('x-openclaw-agent-id') ? undefined : 'model',
        );
      const agentId = normalizeAgentId(named ?? runtime.defaultAgent());
      // OpenClaw's header for a backend model; a "provider/model" in `model` does the same.
      const backendModel = header('x-openclaw-model') ?? target.model;
      const last = request.messages[request.messages.length - 1]!;
      if (last.role !== 'user')
        throw new HttpError(400, 'the last message must have role "user"', 'invalid_request_error', 'messages');
      const system = request.messages
        .filter((message) => message.role === 'system' || message.role === 'developer')
        .map((message) => textOf(message.content));
      const explicitKey = header('x-openclaw-session-key');
      const sessionKey =
        explicitKey ??
        (request.user
          ? `agent:${agentId}:openai-user:${request.user
              .toLowerCase()
              .replace(/[^a-z0-9_.@-]/g, '-')
              .slice(0, 64)}`
          : `agent:${agentId}:openai:${randomUUID()}`);
      const fresh = !explicitKey && !request.user;
      const earlier = request.messages
        .slice(0, -1)
        .filter((message) => message.role === 'user' || message.role === 'assistant');
      const extra = [...system];
      if (fresh && earlier.length > 0) {
        extra.push(
          `Conversation so far (from the client):\n${earlier.map((message) => `${message.role === 'user' ? 'User' : 'Assistant'}: ${textOf(message.content)}`).join('\n')}`,
        );
      }
      const images = imagesOf(last.content);
      const created = Math.floor(Date.now() / 1000);
      const model = request.model ?? `claw:${agentId}`;

      const input: DispatchInput = {
        agentId,
        sessionKey,
        message: textOf(last.content),
        images: images.length ? images : undefined,
        extraSystemPrompt: extra.length ? extra.join('\n\n') : undefined,
        channel: 'openai-http',
        authorized: true,
        ...(backendModel ? { model: backendModel } : {}),
      };

      if (!request.stream) {
        const handle = await admit(runtime, input);
        const result = await handle.done;
        if (result.status !== 'ok') throw runFailure(result);
        sendJson(res, 200, {
          id: `chatcmpl-${result.runId}`,
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: result.text }, finish_reason: 'stop' }],
          usage: usageOf(result),
        });
        return;
      }

      // Streaming: each assistant delta becomes a chunk as it arrives. The 200 goes out once
      // the message is accepted (on disk); deltas before that wait for it.
      const id = `chatcmpl-${randomUUID()}`;
      const chunk = (
        delta: Record<string, unknown>,
        finish: string | null,
        extraFields: Record<string, unknown> = {},
      ) =>
        res.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extraFields })}\n\n`,
        );
      // The final answer is the last model message; text written before a tool call stays
      // above it, a paragraph apart.
      let message = '';
      let messageEnded = false;
      let early: string[] | undefined = [];
      const send = (text: string) => {
        if (early) early.push(text);
        else chunk({ content: text }, null);
      };
      let runId: string | undefined;
      res.on('close', () => {
        if (!res.writableFinished && runId) runtime.abortRun(runId, 'client disconnected');
      });
      const handle = await admit(runtime, {
        ...input,
        onEvent: (event: RunEvent) => {
          if (event.kind !== 'agent' || event.stream !== 'assistant') return;
          if (event.data.messageEnd) messageEnded = true;
          if (typeof event.data.delta !== 'string' || !event.data.delta) return;
          if (messageEnded) {
            if (message) send('\n\n');
            message = '';
            messageEnded = false;
          }
          message += event.data.delta;
          send(event.data.delta);
        },
      });
      runId = handle.runId;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      chunk({ role: 'assistant', content: '' }, null);
      for (const delta of early) chunk({ content: delta }, null);
      early = undefined;
      const result = await handle.done;
      if (result.status !== 'ok') {
        const failure = runFailure(result);
        res.write(`data: ${JSON.stringify({ error: { message: failure.message, type: failure.type } })}\n\n`);
      } else {
        // Replies that were not streamed (a command, a message_sending rewrite) still arrive.
        if (result.text && result.text !== parseReply(message).text) {
          const rest = result.text.startsWith(message)
            ? result.text.slice(message.length)
            : message
              ? `\n\n${result.text}`
              : result.text;
          if (rest) chunk({ content: rest }, null);
        }
        chunk({}, 'stop');
        if (request.stream_options?.include_usage) {
          res.write(
            `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageOf(result) })}\n\n`,
          );
        }
      }
      res.end('data: [DONE]\n\n');
    } catch (error) {
      sendError(res, error);
    }
  };
}

/** Dispatch; the response is only started once the message is accepted (on disk). */
async function admit(runtime: Pick<AgentService, 'dispatch'>, input: DispatchInput) {
  try {
    return await runtime.dispatch(input);
  } catch (error) {
    if (error instanceof IntakeClosedError) throw new HttpError(503, error.message, 'unavailable');
    throw error;
  }
}

function usageOf(result: RunResult) {
  const prompt = result.usage.input + (result.usage.cacheRead ?? 0);
  return { prompt_tokens: prompt, completion_tokens: result.usage.output, total_tokens: prompt + result.usage.output };
}

function runFailure(result: RunResult): HttpError {
  if (result.status === 'timeout') return new HttpError(504, result.error ?? 'the agent run timed out', 'timeout');
  if (result.status === 'aborted') return new HttpError(499, 'the agent run was aborted', 'aborted');
  return new HttpError(502, result.error ?? 'the agent run failed', 'agent_error');
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, error: unknown): void {
  const known =
    error instanceof HttpError
      ? error
      : error instanceof HttpBodyError
        ? new HttpError(error.status, error.message)
        : new HttpError(500, (error as Error)?.message ?? String(error), 'server_error');
  if (res.headersSent) {
    if (!res.writableEnded)
      res.end(`data: ${JSON.stringify({ error: { message: known.message, type: known.type } })}\n\ndata: [DONE]\n\n`);
    return;
  }
  sendJson(res, known.status, {
    error: { message: known.message, type: known.type, param: known.param ?? null, code: null },
  });
}
