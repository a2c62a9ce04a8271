/**
 * `GET /v1/models` and `GET /v1/models/{id}` in OpenAI's shape, which most OpenAI clients
 * (Open WebUI, LibreChat, …) read before their first chat request. Listed first are the
 * agent targets OpenClaw lists (`openclaw`, `openclaw/default`, `openclaw/<agentId>`), then
 * every configured backend model as "provider/model": each agent's primary and fallbacks,
 * the `agents.defaults.models` entries and each `models.providers.<id>.models[]`. A listed
 * backend model sent as `model` in /v1/chat/completions runs the default agent on it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KernelConfig } from '../../sdk/index.js';
import { agentIds, configuredProviderIds, providerSettings, type ModelService } from '../../sdk/agent/index.js';

export interface ListedModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/** Agent targets first, then backend refs, each once. */
export function listModels(service: ModelService, config: KernelConfig, created: number): ListedModel[] {
  const agents = agentIds(config);
  const targets = ['openclaw', 'openclaw/default', ...agents.map((id) => `openclaw/${id}`)];
  const refs = new Set<string>();
  for (const agentId of agents) {
    const settings = service.settings(agentId);
    for (const ref of service.models.chain(settings)) refs.add(ref);
    for (const ref of Object.keys(settings.models)) refs.add(ref);
  }
  for (const provider of configuredProviderIds(config)) {
    for (const model of providerSettings(config, provider).models ?? []) refs.add(`${provider}/${model.id}`);
  }
  return [
    ...targets.map((id): ListedModel => ({ id, object: 'model', created, owned_by: 'openclaw' })),
    ...[...refs]
      .filter((ref) => !targets.includes(ref))
      .map((ref): ListedModel => ({ id: ref, object: 'model', created, owned_by: ref.slice(0, ref.indexOf('/')) })),
  ];
}

export function createModelsHandler(models: () => Promise<ModelService>, config: () => KernelConfig, enabled: boolean) {
  const created = Math.floor(Date.now() / 1000);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    req.resume();
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    const error = (status: number, message: string, type: string, code: string | null = null) =>
      send(status, { error: { message, type, param: null, code } });
    if (!enabled) {
      error(
        404,
        'the OpenAI-compatible endpoint is off: set gateway.http.endpoints.chatCompletions.enabled to true and restart the gateway',
        'not_found_error',
      );
      return;
    }
    try {
      const listed = listModels(await models(), config(), created);
      const path = new URL(req.url ?? '/', 'http://gateway').pathname.replace(/\/+$/, '');
      if (path === '/v1/models') {
        send(200, { object: 'list', data: listed });
        return;
      }
      // Model ids contain "/" ("openclaw/default", "openai/gpt-4.1"); clients send it encoded or not.
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      const found = listed.find((model) => model.id === id);
      if (found) send(200, found);
      else
        error(
          404,
          `The model "${id}" does not exist; GET /v1/models lists the agent targets and configured models`,
          'invalid_request_error',
          'model_not_found',
        );
    } catch (failure) {
      error(500, (failure as Error)?.message ?? String(failure), 'server_error');
    }
  };
}
