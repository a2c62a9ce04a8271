/**
 * The OpenAI-compatible HTTP API (`POST /v1/chat/completions`, `GET /v1/models`), behind gateway auth and
 * off until `gateway.http.endpoints.chatCompletions.enabled` is true (OpenClaw's key): an
 * HTTP endpoint that runs the agent is one more way in, so it must be asked for. Every
 * request goes through the agent plugin's dispatcher, like any other message.
 */
import { requireService } from '../../sdk/services.js';
import type { AgentService, ModelService } from '../../sdk/agent/index.js';
import { definePlugin } from '../../sdk/index.js';
import { createChatCompletionsHandler } from './openai-http.js';
import { createModelsHandler } from './models-route.js';

export default definePlugin({
  id: 'openai-http',
  register(api) {
    const endpoints = (
      api.kernel.config().gateway as { http?: { endpoints?: { chatCompletions?: { enabled?: boolean } } } } | undefined
    )?.http?.endpoints;
    const agent = () => requireService<AgentService>(api.kernel, 'agent', 'the OpenAI-compatible endpoint');
    const enabled = endpoints?.chatCompletions?.enabled === true;
    api.registerHttpRoute({
      method: 'POST',
      path: '/v1/chat/completions',
      handler: createChatCompletionsHandler(agent, enabled, () => api.kernel.config()),
    });
    const models = createModelsHandler(
      () => requireService<ModelService>(api.kernel, 'models', 'GET /v1/models'),
      () => api.kernel.config(),
      enabled,
    );
    api.registerHttpRoute({ method: 'GET', path: '/v1/models', handler: models });
    api.registerHttpRoute({ method: 'GET', path: '/v1/models/*', handler: models });
  },
});
