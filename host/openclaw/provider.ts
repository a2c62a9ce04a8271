/**
 * OpenClaw text providers as claw model providers. An OpenClaw provider plugin describes
 * where its models live through `catalog.run(ctx)`, which returns a `models.providers`
 * entry (baseUrl, apiKey, api, models); the requests themselves go out over one of the
 * wire APIs claw's own provider plugins speak (openai-completions, openai-responses,
 * anthropic-messages). So the claw provider runs the catalog, then hands the request to
 * the plugin that speaks the entry's `api`, with the entry's endpoint and key.
 */
import { ModelError, normalizeApi, PROVIDER_APIS } from '../../sdk/models.js';
import type { KernelServices } from '../../sdk/types/plugin.js';
import type { ModelInfo, ModelProvider, ModelRequest } from '../../sdk/types/models.js';

interface CatalogEntry {
  baseUrl?: string;
  apiKey?: string;
  api?: string;
  headers?: Record<string, string>;
  models?: Array<{ id: string; name?: string; contextWindow?: number; maxTokens?: number; reasoning?: boolean }>;
}

export interface OpenclawProvider {
  id: string;
  label?: string;
  envVars?: string[];
  catalog?: { run(ctx: unknown): unknown };
}

/** Why a provider cannot be mapped, or undefined when it can. */
export function unmappableProvider(provider: OpenclawProvider): string | undefined {
  if (typeof provider?.id !== 'string' || provider.id === '') return 'a provider without an id';
  if (typeof provider.catalog?.run !== 'function')
    return `provider "${provider.id}" has no catalog.run (stream-function-only providers are not supported)`;
  return undefined;
}

export function fromOpenclawProvider(provider: OpenclawProvider, kernel: KernelServices): ModelProvider {
  const envKeys = Array.isArray(provider.envVars) ? provider.envVars : [];
  const entry = async (apiKey: string | undefined): Promise<CatalogEntry> => {
    const ctx = {
      config: kernel.config(),
      env: kernel.env,
      // The key claw resolved for this provider (auth profile, config or envVars), else the environment.
      resolveProviderApiKey: () => ({ apiKey: apiKey ?? envKeys.map((name) => kernel.env[name]).find(Boolean) }),
    };
    const result = (await provider.catalog!.run(ctx)) as
      { provider?: CatalogEntry; providers?: Record<string, CatalogEntry> } | null | undefined;
    const found = result?.provider ?? result?.providers?.[provider.id];
    if (!found)
      throw new ModelError(
        'auth',
        `${provider.id}: the plugin's catalog returned no provider (is its key set? ${envKeys.join(', ') || 'no env vars declared'})`,
        { provider: provider.id },
      );
    return found;
  };
  const serving = async (api: string): Promise<ModelProvider> => {
    for (const info of kernel.capabilities.list('provider')) {
      const candidate = await kernel.capabilities.find('provider', info.name).catch(() => undefined);
      if (candidate?.apis?.includes(api)) return candidate;
    }
    throw new ModelError(
      'invalid_request',
      `${provider.id}: no enabled provider plugin speaks api "${api}" (${PROVIDER_APIS.join(' | ')})`,
      { provider: provider.id },
    );
  };
  return {
    id: provider.id,
    ...(provider.label ? { label: provider.label } : {}),
    envKeys,
    requiresKey: envKeys.length > 0,
    async models(): Promise<ModelInfo[]> {
      const found = await entry(undefined).catch(() => undefined);
      return (found?.models ?? []).map(({ id, name, contextWindow, maxTokens, reasoning }) => ({
        id,
        name,
        contextWindow,
        maxTokens,
        reasoning,
      }));
    },
    async *stream(request: ModelRequest, options) {
      const found = await entry(request.endpoint?.apiKey);
      const api = normalizeApi(found.api) ?? 'openai-completions';
      if (!found.baseUrl)
        throw new ModelError('invalid_request', `${provider.id}: the plugin's catalog gave no baseUrl`, {
          provider: provider.id,
        });
      const target = await serving(api);
      const endpoint = {
        ...request.endpoint,
        baseUrl: found.baseUrl,
        apiKey: found.apiKey ?? request.endpoint?.apiKey,
        api,
        provider: provider.id,
        ...(found.headers ? { headers: found.headers } : {}),
      };
      yield* target.stream({ ...request, endpoint }, options);
    },
  };
}
