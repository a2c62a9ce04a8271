/**
 * Which provider answers: the one tools.web.search.provider names, or, when it is unset, the
 * ready providers that take part in auto-detection, in their order (Brave with a key, then
 * SearXNG with an instance URL). Key-free DuckDuckGo is only used when named.
 */
import type { KernelServices } from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import { WEB_SEARCH_SERVICE_PREFIX, type WebSearchProvider } from '../../sdk/web-search.js';

export type Choice = { providers: WebSearchProvider[]; explicit: boolean } | { error: string };

export function providerIds(kernel: Pick<KernelServices, 'capabilities'>): string[] {
  return kernel.capabilities
    .list('service')
    .map((info) => info.name)
    .filter((name) => name.startsWith(WEB_SEARCH_SERVICE_PREFIX))
    .map((name) => name.slice(WEB_SEARCH_SERVICE_PREFIX.length))
    .sort();
}

export async function chooseProviders(
  kernel: Pick<KernelServices, 'capabilities'>,
  configured: string | undefined,
): Promise<Choice> {
  const ids = providerIds(kernel);
  const load = (id: string) =>
    useService<WebSearchProvider>(kernel, `${WEB_SEARCH_SERVICE_PREFIX}${id}`).catch(() => undefined);
  if (configured) {
    const id = configured.trim().toLowerCase();
    if (!ids.includes(id)) {
      return {
        error: `tools.web.search.provider is "${configured}", which no enabled plugin provides (available: ${ids.join(', ') || 'none'})`,
      };
    }
    const provider = await load(id);
    if (!provider) return { error: `the ${id} search provider could not be loaded` };
    const readiness = provider.readiness();
    if (!readiness.ready) return { error: `${provider.label} is not set up: ${readiness.reason}` };
    return { providers: [provider], explicit: true };
  }
  const candidates = (await Promise.all(ids.map(load))).filter(
    (provider): provider is WebSearchProvider => provider?.autoDetectOrder !== undefined,
  );
  const ready = candidates
    .filter((provider) => provider.readiness().ready)
    .sort((a, b) => a.autoDetectOrder! - b.autoDetectOrder!);
  if (ready.length > 0) return { providers: ready, explicit: false };
  return {
    error:
      'no web search provider is configured. Set BRAVE_API_KEY (or plugins.entries.brave.config.webSearch.apiKey) for Brave, ' +
      'plugins.entries.searxng.config.webSearch.baseUrl (or SEARXNG_BASE_URL) for a SearXNG instance, ' +
      `or tools.web.search.provider to ${ids.includes('duckduckgo') ? '"duckduckgo" (no key needed)' : 'one of the installed providers'}.`,
  };
}
