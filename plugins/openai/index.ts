/**
 * The `openai` model provider: Chat Completions (the default, and what OpenAI-compatible
 * servers speak) or the Responses API, picked per request by `endpoint.api`. Endpoint and
 * key come with each request; without a key no Authorization header is sent, which is
 * what local servers expect.
 */
import {
  ModelError,
  definePlugin,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
} from '../../sdk/index.js';
import { chatBody } from './chat-request.js';
import { parseChatStream } from './chat-stream.js';
import { postSse } from './http.js';
import { OPENAI_MODELS } from './models.js';
import { responsesBody } from './responses-request.js';
import { parseResponsesStream } from './responses-stream.js';

const PROVIDER = 'openai';
export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export const openaiProvider: ModelProvider = {
  id: PROVIDER,
  label: 'OpenAI',
  envKeys: ['OPENAI_API_KEY'],
  baseUrlEnvKeys: ['OPENAI_BASE_URL'],
  requiresKey: true,
  keylessWithBaseUrl: true,
  apis: ['openai-completions', 'openai-responses'],
  models: () => OPENAI_MODELS.map((model) => ({ ...model })),
  stream: (request, options) => streamOpenAi(request, options.signal),
};

async function* streamOpenAi(request: ModelRequest, signal: AbortSignal | undefined): AsyncGenerator<ModelStreamEvent> {
  const endpoint = request.endpoint ?? {};
  // A custom provider id served by this plugin (models.providers.ollama) names itself in errors.
  const label = endpoint.provider ?? PROVIDER;
  // OpenClaw's config spells these "openai-completions" and "openai-responses".
  const api =
    ({ 'openai-completions': 'chat', 'openai-responses': 'responses' } as Record<string, string>)[endpoint.api ?? ''] ??
    endpoint.api ??
    'chat';
  if (api !== 'chat' && api !== 'responses') {
    throw new ModelError(
      'invalid_request',
      `${label}: unknown endpoint.api "${api}" (expected "chat" / "openai-completions" or "responses" / "openai-responses")`,
      { provider: label },
    );
  }
  const baseUrl = (endpoint.baseUrl || DEFAULT_BASE_URL).replace(/\/+$/, '');
  const headers = new Headers({ 'content-type': 'application/json', accept: 'text/event-stream' });
  if (endpoint.apiKey) headers.set('authorization', `Bearer ${endpoint.apiKey}`);
  // Last, so configured headers can replace ours (an Azure `api-key`, a proxy's auth).
  for (const [name, value] of Object.entries(endpoint.headers ?? {})) headers.set(name, value);

  const post = { provider: label, headers, timeoutMs: endpoint.timeoutMs, signal };
  if (api === 'responses') {
    yield* parseResponsesStream(postSse({ ...post, url: `${baseUrl}/responses`, body: responsesBody(request) }), label);
  } else {
    const body = chatBody(request, { useMaxCompletionTokens: isOpenAiItself(baseUrl) });
    yield* parseChatStream(postSse({ ...post, url: `${baseUrl}/chat/completions`, body }), label);
  }
}

function isOpenAiItself(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

export default definePlugin({
  id: PROVIDER,
  register(api) {
    api.registerProvider(openaiProvider);
  },
});
