/**
 * Which plugin serves a provider id. A provider plugin serves its own id (`openai`,
 * `anthropic`, `llama-cpp`); any other id — `models.providers.ollama`, `.vllm`,
 * `.openrouter`, several side by side — is served by the plugin that speaks the entry's
 * `api` (OpenClaw's names: openai-completions, openai-responses, anthropic-messages), with
 * the entry's own endpoint, key and models. A custom entry with a `baseUrl` and no `api`
 * speaks openai-completions, as in OpenClaw.
 *
 * A provider plugin's own id takes its endpoint from `models.providers.<id>.baseUrl`, else from
 * the environment variable the plugin names (OPENAI_BASE_URL, ANTHROPIC_BASE_URL), else its default.
 */
import { normalizeApi, PROVIDER_APIS, type KernelServices, type ModelProvider } from '../../sdk/index.js';
import { providerSettings, type ProviderSettings } from '../../sdk/agent/index.js';

/**
 * Well-known OpenAI-compatible servers, so `ollama/llama3.2` works with no config at all.
 * A `models.providers.<id>` entry overrides any of these fields.
 */
const KNOWN_ENDPOINTS: Record<string, { baseUrl: string; envKeys?: string[] }> = {
  ollama: { baseUrl: 'http://127.0.0.1:11434/v1' },
  vllm: { baseUrl: 'http://127.0.0.1:8000/v1' },
  lmstudio: { baseUrl: 'http://127.0.0.1:1234/v1' },
  openrouter: { baseUrl: 'https://openrouter.ai/api/v1', envKeys: ['OPENROUTER_API_KEY'] },
};

export interface ProviderRoute {
  /** The provider id of the model ref. */
  id: string;
  provider: ModelProvider;
  /** Endpoint, key, api and models for requests to this id. */
  config: ProviderSettings;
  /** Environment variables holding a key for this id. */
  envKeys: readonly string[];
  /** Served by a plugin registered under another id (a custom `models.providers` entry). */
  custom: boolean;
}

/**
 * The route for a provider id, or a sentence saying why there is none. `candidate` stands in
 * for the configured `models.providers.<id>` entry (a setup not saved yet).
 */
export async function routeProvider(
  kernel: KernelServices,
  id: string,
  candidate?: ProviderSettings,
): Promise<ProviderRoute | string> {
  const configured = candidate ?? providerSettings(kernel.config(), id);
  const registered = await kernel.capabilities.find('provider', id).catch(() => undefined);
  if (registered) {
    const fromEnv = configured.baseUrl ? undefined : envBaseUrl(registered.baseUrlEnvKeys ?? [], kernel.env);
    if (fromEnv && !fromEnv.ok) return fromEnv.problem;
    const config = fromEnv ? { ...configured, baseUrl: fromEnv.url } : configured;
    return { id, provider: registered, config, envKeys: registered.envKeys ?? [], custom: false };
  }

  const known = KNOWN_ENDPOINTS[id];
  const config: ProviderSettings = { ...(known ? { baseUrl: known.baseUrl } : {}), ...configured };
  const api = normalizeApi(config.api) ?? (config.baseUrl ? 'openai-completions' : undefined);
  if (!api) {
    return `no provider plugin "${id}" is enabled; for a custom provider set models.providers.${id}.baseUrl and api (${PROVIDER_APIS.join(' | ')})`;
  }
  // The plugin's own default endpoint belongs to its own id, never to another one.
  if (!config.baseUrl)
    return `models.providers.${id} needs a baseUrl (the server's address, for example http://127.0.0.1:11434/v1)`;
  for (const info of kernel.capabilities.list('provider')) {
    const provider = await kernel.capabilities.find('provider', info.name).catch(() => undefined);
    if (provider?.apis?.includes(api))
      return { id, provider, config: { ...config, api }, envKeys: known?.envKeys ?? [], custom: true };
  }
  return `no enabled provider plugin speaks api "${api}" (models.providers.${id}.api); enable the openai or anthropic plugin`;
}

/**
 * The endpoint the environment names for a provider's own id (OPENAI_BASE_URL, as OpenAI's and
 * Anthropic's own SDKs read it): used when config names none, so config > environment > default.
 */
function envBaseUrl(
  names: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; url: string } | { ok: false; problem: string } | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (!value) continue;
    if (/^https?:\/\/[^/\s]/i.test(value) && URL.canParse(value)) return { ok: true, url: value };
    return { ok: false, problem: `${name} is not an http(s) URL: "${value}" (for example http://127.0.0.1:8080/v1)` };
  }
  return undefined;
}
