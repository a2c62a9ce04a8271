/**
 * The `anthropic` model provider: the Messages API with streaming, tool use and extended
 * thinking. Endpoint and key come with each request.
 */
import { definePlugin, type ModelProvider, type ModelRequest, type ModelStreamEvent } from '../../sdk/index.js';
import { postSse } from './http.js';
import { messagesBody } from './messages.js';
import { ANTHROPIC_MODELS } from './models.js';
import { parseMessagesStream } from './stream.js';

const PROVIDER = 'anthropic';
export const DEFAULT_BASE_URL = 'https://api.anthropic.com';
const API_VERSION = '2023-06-01';

export const anthropicProvider: ModelProvider = {
  id: PROVIDER,
  label: 'Anthropic',
  envKeys: ['ANTHROPIC_API_KEY'],
  baseUrlEnvKeys: ['ANTHROPIC_BASE_URL'],
  requiresKey: true,
  apis: ['anthropic-messages'],
  models: () => ANTHROPIC_MODELS.map((model) => ({ ...model })),
  stream: (request, options) => streamAnthropic(request, options.signal),
};

async function* streamAnthropic(
  request: ModelRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<ModelStreamEvent> {
  const endpoint = request.endpoint ?? {};
  const headers = new Headers({
    'content-type': 'application/json',
    accept: 'text/event-stream',
    'anthropic-version': API_VERSION,
  });
  if (endpoint.apiKey) headers.set('x-api-key', endpoint.apiKey);
  // Last, so configured headers can add betas or replace auth (a proxy's bearer token).
  for (const [name, value] of Object.entries(endpoint.headers ?? {})) headers.set(name, value);
  const body = messagesBody(request);
  // A custom provider id served by this plugin (an Anthropic-compatible proxy) names itself in errors.
  const label = endpoint.provider ?? PROVIDER;
  yield* parseMessagesStream(
    postSse({
      provider: label,
      url: messagesUrl(endpoint.baseUrl),
      headers,
      body,
      timeoutMs: endpoint.timeoutMs,
      signal,
    }),
    label,
  );
}

/** `${baseUrl}/v1/messages`; a base URL already ending in /v1 is not given a second one. */
export function messagesUrl(baseUrl: string | undefined): string {
  const base = (baseUrl || DEFAULT_BASE_URL).replace(/\/+$/, '');
  return base.endsWith('/v1') ? `${base}/messages` : `${base}/v1/messages`;
}

export default definePlugin({
  id: PROVIDER,
  register(api) {
    api.registerProvider(anthropicProvider);
  },
});
