/**
 * SearXNG: GET <baseUrl>/search?format=json; results[] carry title, url, content and
 * publishedDate. A category search that finds nothing is asked once more as "general".
 */
import { definePlugin } from '../../sdk/index.js';
import {
  httpFailure,
  providerGet,
  registerWebSearchProvider,
  stripTags,
  WebSearchError,
  type WebSearchRequest,
  type WebSearchResult,
} from '../../sdk/web-search.js';

interface SearxngConfig {
  webSearch?: { baseUrl?: string; categories?: string; language?: string };
}

interface SearxngAnswer {
  results?: Array<{ title?: string; url?: string; content?: string; publishedDate?: string | null; engine?: string }>;
}

export default definePlugin<SearxngConfig>({
  id: 'searxng',
  register(api) {
    const baseUrl = (): string | undefined =>
      api.config.webSearch?.baseUrl ?? (api.kernel.env.SEARXNG_BASE_URL || undefined);

    async function query(base: string, request: WebSearchRequest, categories: string): Promise<WebSearchResult[]> {
      const url = new URL('search', base.endsWith('/') ? base : `${base}/`);
      url.searchParams.set('q', request.query);
      url.searchParams.set('format', 'json');
      url.searchParams.set('categories', categories);
      url.searchParams.set('pageno', '1');
      const language = request.language ?? api.config.webSearch?.language;
      if (language) url.searchParams.set('language', language);
      if (request.freshness) url.searchParams.set('time_range', request.freshness);
      const response = await providerGet(api.kernel, 'searxng', url, {
        baseUrl: base,
        userConfigured: true,
        timeoutMs: request.timeoutMs,
        signal: request.signal,
      });
      if (response.status === 403)
        throw new WebSearchError(
          'searxng',
          'the instance refused format=json (HTTP 403); add json to search.formats in its settings.yml',
        );
      if (response.status !== 200) throw httpFailure('searxng', response);
      let answer: SearxngAnswer;
      try {
        answer = JSON.parse(response.body.toString('utf8')) as SearxngAnswer;
      } catch {
        throw new WebSearchError(
          'searxng',
          'the instance answered with something that is not JSON (is format=json enabled?)',
        );
      }
      return (answer.results ?? []).map((result) => ({
        title: stripTags(result.title ?? ''),
        url: result.url ?? '',
        snippet: stripTags(result.content ?? ''),
        ...(result.publishedDate ? { published: result.publishedDate } : {}),
      }));
    }

    registerWebSearchProvider(api, {
      id: 'searxng',
      label: 'SearXNG',
      autoDetectOrder: 200,
      readiness: () =>
        baseUrl()
          ? { ready: true }
          : {
              ready: false,
              reason: 'no instance URL (set plugins.entries.searxng.config.webSearch.baseUrl or SEARXNG_BASE_URL)',
            },
      cacheIdentity: () => baseUrl() ?? '',
      async search(request) {
        const base = baseUrl();
        if (!base) throw new WebSearchError('searxng', 'no instance URL');
        const categories =
          (request.extra.categories as string | undefined) ?? api.config.webSearch?.categories ?? 'general';
        const results = await query(base, request, categories);
        if (results.length === 0 && categories !== 'general') return query(base, request, 'general');
        return results;
      },
    });
  },
});
