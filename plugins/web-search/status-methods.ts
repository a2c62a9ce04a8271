/**
 * OpenClaw's webSearch.status and webSearch.test for the Control UI's search settings: which
 * provider web_search would use for an agent (claw's route is always "managed": the gateway's
 * tool calls a provider plugin, never the model's own search), every installed provider with
 * whether it is ready, and one live test search that bypasses the result cache.
 */
import {
  agentValue,
  defaultAgentId,
  modelChain,
  unknownAgentProblem,
  type ModelSetting,
} from '../../sdk/agent/index.js';
import { ErrorCodes, ProtocolError, type KernelConfig, type PluginApi } from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import { WEB_SEARCH_SERVICE_PREFIX, type WebSearchProvider } from '../../sdk/web-search.js';
import { chooseProviders, providerIds } from './choose.js';
import type { WebSearchConfig } from './generated/types.js';

const TEST_COUNT = 5;

interface Selection {
  agentId?: unknown;
  modelProvider?: unknown;
  modelId?: unknown;
}

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

export function registerWebSearchMethods(api: PluginApi, settings: () => WebSearchConfig): void {
  const kernel = api.kernel;
  const load = (id: string) =>
    useService<WebSearchProvider>(kernel, `${WEB_SEARCH_SERVICE_PREFIX}${id}`).catch(() => undefined);

  async function status(params: Selection) {
    if (Boolean(params.modelProvider) !== Boolean(params.modelId))
      throw invalid('modelProvider and modelId must be supplied together.');
    const config = kernel.config() as KernelConfig;
    const agentId = params.agentId === undefined ? defaultAgentId(config) : String(params.agentId);
    const problem = unknownAgentProblem(config, agentId);
    if (problem) throw invalid(problem);
    const [primary] = modelChain(agentValue<ModelSetting>(config, agentId, 'model'));
    const [modelProvider, ...rest] = params.modelProvider
      ? [String(params.modelProvider), String(params.modelId)]
      : (primary ?? 'none/none').split('/');
    const search = settings();
    const enabled = search.enabled !== false;
    const choice = await chooseProviders(kernel, search.provider);
    const chosen = 'error' in choice ? undefined : choice.providers[0];
    const owners = new Map(kernel.capabilities.list('service').map((info) => [info.name, info.pluginId]));
    const providers = [];
    for (const id of providerIds(kernel)) {
      const provider = await load(id);
      const readiness = provider?.readiness() ?? { ready: false as const, reason: 'the provider could not be loaded' };
      const pluginId = owners.get(`${WEB_SEARCH_SERVICE_PREFIX}${id}`) ?? id;
      // Providers that auto-detect are the ones that need a key or an instance; key-free ones are only chosen by name.
      const requiresCredential = provider?.autoDetectOrder !== undefined;
      providers.push({
        id,
        pluginId,
        label: provider?.label ?? id,
        hint: readiness.ready ? '' : readiness.reason,
        configured: search.provider?.trim().toLowerCase() === id || (readiness.ready && requiresCredential),
        installed: true,
        available: readiness.ready,
        requiresCredential,
        credentialSource: !requiresCredential ? 'none' : readiness.ready ? 'config' : 'missing',
        configPath: [`plugins.entries.${pluginId}.config.webSearch`],
      });
    }
    const route = !enabled
      ? { kind: 'disabled', label: 'Web search is off', reason: 'tools.web.search.enabled is false', testable: false }
      : 'error' in choice
        ? { kind: 'unavailable', label: 'No search provider', reason: choice.error, testable: false }
        : { kind: 'managed', provider: chosen!.id, label: chosen!.label, testable: true };
    return {
      enabled,
      provider: enabled && chosen ? chosen.id : null,
      agentId,
      model: { provider: modelProvider!, id: rest.join('/') || 'none', runtime: 'claw' },
      route,
      ...(enabled && chosen ? { testProvider: { id: chosen.id, label: chosen.label } } : {}),
      providers,
    };
  }

  api.registerGatewayMethod('webSearch.status', {
    params: { type: 'object' },
    scope: 'operator.read',
    description:
      'Which provider web_search uses for an agent and every installed provider: {enabled, provider, agentId, model, route, testProvider?, providers}.',
    handler: (params: Selection) => status(params),
  });

  api.registerGatewayMethod('webSearch.test', {
    params: { type: 'object', required: ['query'] },
    scope: 'operator.admin',
    description:
      'One live search (5 results, no cache) with the chosen or named provider: {provider, latencyMs, status: ok|error, results?, error?, cached}.',
    handler: async (params: Selection & { query?: unknown; providerId?: unknown }, ctx) => {
      const query = typeof params.query === 'string' ? params.query.trim() : '';
      if (!query || query.length > 500)
        throw invalid('Provide a search query and both model selection fields, or neither.');
      const current = await status(params);
      const named = typeof params.providerId === 'string' ? params.providerId.trim().toLowerCase() : undefined;
      const id = named ?? (current.route.testable ? current.route.provider : undefined);
      const provider = id ? await load(id) : undefined;
      if (!id || !provider || !current.enabled)
        throw invalid(current.route.reason ?? 'Choose an available search provider before testing.');
      const readiness = provider.readiness();
      if (!readiness.ready) throw invalid(`${provider.label} is not set up: ${readiness.reason}`);
      const timeoutMs = (settings().timeoutSeconds ?? 30) * 1000;
      const started = Date.now();
      try {
        const found = await provider.search({
          query,
          count: TEST_COUNT,
          extra: {},
          timeoutMs,
          signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(ctx.signal ? [ctx.signal] : [])]),
        });
        return {
          provider: id,
          latencyMs: Date.now() - started,
          status: 'ok',
          results: found.slice(0, TEST_COUNT).map((row) => ({
            title: row.title,
            url: row.url,
            ...(row.snippet ? { snippet: row.snippet } : {}),
          })),
          cached: false,
        };
      } catch (error) {
        // Providers phrase their errors without the key or the response body (WebSearchError).
        return { provider: id, latencyMs: Date.now() - started, status: 'error', error: (error as Error).message };
      }
    },
  });
}
