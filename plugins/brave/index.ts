/**
 * Brave Search (web mode): GET <baseUrl>/res/v1/web/search with the key in
 * X-Subscription-Token; results are web.results[] (title, url, description, page_age).
 */
import { definePlugin } from '../../sdk/index.js';
import {
  httpFailure,
  providerGet,
  registerWebSearchProvider,
  stripTags,
  WebSearchError,
  type WebSearchRequest,
} from '../../sdk/web-search.js';

interface BraveConfig {
  webSearch?: { apiKey?: string; baseUrl?: string };
}

interface BraveAnswer {
  web?: {
    results?: Array<{
      title?: string;
      url?: string;
      description?: string;
      page_age?: string;
      profile?: { name?: string };
    }>;
  };
}

const DEFAULT_BASE = 'https://api.search.brave.com';
const FRESHNESS = { day: 'pd', week: 'pw', month: 'pm', year: 'py' } as const;

export default definePlugin<BraveConfig>({
  id: 'brave',
  register(api) {
    const apiKey = (): string | undefined => {
      const legacy = (api.kernel.config().tools as { web?: { search?: { apiKey?: string } } } | undefined)?.web?.search
        ?.apiKey;
      return api.config.webSearch?.apiKey ?? legacy ?? (api.kernel.env.BRAVE_API_KEY || undefined);
    };
    const baseUrl = api.config.webSearch?.baseUrl ?? DEFAULT_BASE;
    registerWebSearchProvider(api, {
      id: 'brave',
      label: 'Brave Search',
      autoDetectOrder: 10,
      readiness: () =>
        apiKey()
          ? { ready: true }
          : { ready: false, reason: 'no API key (set BRAVE_API_KEY or plugins.entries.brave.config.webSearch.apiKey)' },
      cacheIdentity: () => baseUrl,
      async search(request: WebSearchRequest) {
        const key = apiKey();
        if (!key) throw new WebSearchError('brave', 'no API key');
        const url = new URL('res/v1/web/search', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
        url.searchParams.set('q', request.query);
        url.searchParams.set('count', String(request.count));
        if (request.country) url.searchParams.set('country', request.country.toUpperCase());
        const searchLang = (request.extra.search_lang as string | undefined) ?? request.language;
        if (searchLang) url.searchParams.set('search_lang', searchLang);
        if (typeof request.extra.ui_lang === 'string') url.searchParams.set('ui_lang', request.extra.ui_lang);
        if (request.freshness) url.searchParams.set('freshness', FRESHNESS[request.freshness]);
        const response = await providerGet(api.kernel, 'brave', url, {
          baseUrl,
          userConfigured: api.config.webSearch?.baseUrl !== undefined,
          headers: { accept: 'application/json', 'x-subscription-token': key },
          timeoutMs: request.timeoutMs,
          signal: request.signal,
        });
        if (response.status !== 200) throw httpFailure('brave', response, 'BRAVE_API_KEY');
        let answer: BraveAnswer;
        try {
          answer = JSON.parse(response.body.toString('utf8')) as BraveAnswer;
        } catch {
          throw new WebSearchError('brave', 'the search API answered with something that is not JSON');
        }
        return (answer.web?.results ?? []).map((result) => ({
          title: stripTags(result.title ?? ''),
          url: result.url ?? '',
          snippet: stripTags(result.description ?? ''),
          ...(result.page_age ? { published: result.page_age } : {}),
          ...(result.profile?.name ? { siteName: result.profile.name } : {}),
        }));
      },
    });
  },
});
