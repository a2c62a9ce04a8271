/**
 * web_search: one tool in front of the provider plugins. Settings (tools.web.search) are read
 * on every call; results are cached per provider, its endpoint, the query and the options, and
 * come back as OpenClaw's normalized shape with every provider-written string sanitized and
 * the whole answer fenced as external content.
 */
import {
  definePlugin,
  errorResult,
  type ToolContext,
  type ToolResult,
  sanitizeExternal,
  wrapExternalContent,
  TtlCache,
} from '../../sdk/index.js';
import type { WebSearchRequest, WebSearchResult } from '../../sdk/web-search.js';
import { chooseProviders } from './choose.js';
import { registerWebSearchMethods } from './status-methods.js';
import type { WebSearchConfig, WebSearchTools } from './generated/types.js';

type Params = {
  query: string;
  count?: number;
  country?: string;
  language?: string;
  freshness?: WebSearchRequest['freshness'];
} & Record<string, unknown>;

const COMMON = new Set(['query', 'count', 'country', 'language', 'freshness']);

function clean(results: WebSearchResult[], count: number): WebSearchResult[] {
  const out: WebSearchResult[] = [];
  for (const result of results) {
    let url: URL;
    try {
      url = new URL(result.url);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    out.push({
      title: sanitizeExternal(result.title).slice(0, 300),
      url: url.href,
      ...(result.snippet ? { snippet: sanitizeExternal(result.snippet).slice(0, 1000) } : {}),
      ...(result.published && /^\d{4}-\d{2}-\d{2}/.test(result.published) ? { published: result.published } : {}),
      ...(result.siteName ? { siteName: sanitizeExternal(result.siteName).slice(0, 100) } : {}),
    });
    if (out.length >= count) break;
  }
  return out;
}

export default definePlugin({
  id: 'web-search',
  register(api) {
    const cache = new TtlCache<WebSearchResult[]>(200);
    const settings = (): WebSearchConfig =>
      (api.kernel.config().tools as { web?: WebSearchTools } | undefined)?.web?.search ?? {};

    registerWebSearchMethods(api, settings);

    async function search(params: Params, ctx: ToolContext): Promise<ToolResult> {
      const config = settings();
      if (config.enabled === false) return errorResult('web_search is turned off (tools.web.search.enabled is false).');
      const choice = await chooseProviders(api.kernel, config.provider);
      if ('error' in choice)
        return errorResult(`web_search: ${choice.error}`, {
          kind: 'error',
          error: 'provider_error',
          message: choice.error,
        });
      const started = performance.now();
      const count = Math.min(10, Math.max(1, params.count ?? config.maxResults ?? 5));
      const extra = Object.fromEntries(Object.entries(params).filter(([key]) => !COMMON.has(key)));
      const request: WebSearchRequest = {
        query: params.query.trim(),
        count,
        ...(params.country ? { country: params.country } : {}),
        ...(params.language ? { language: params.language } : {}),
        ...(params.freshness ? { freshness: params.freshness } : {}),
        extra,
        timeoutMs: (config.timeoutSeconds ?? 30) * 1000,
        signal: ctx.signal,
      };
      const ttlMs = (config.cacheTtlMinutes ?? 15) * 60_000;
      let firstError: Error | undefined;
      // Auto-detected providers fall through to the next on failure; a chosen one does not.
      for (const provider of choice.providers) {
        const key = JSON.stringify([
          provider.id,
          provider.cacheIdentity(),
          request.query,
          count,
          request.country,
          request.language,
          request.freshness,
          extra,
        ]);
        let results = cache.get(key, ttlMs);
        const cached = results !== undefined;
        if (!results) {
          try {
            results = clean(await provider.search(request), count);
          } catch (error) {
            firstError ??= error as Error;
            continue;
          }
          cache.set(key, results, ttlMs);
        }
        const output = {
          kind: 'results',
          provider: provider.id,
          query: request.query,
          count: results.length,
          tookMs: Math.round(performance.now() - started),
          results,
          externalContent: { untrusted: true, source: 'web_search', wrapped: true, provider: provider.id },
          ...(cached ? { cached: true } : {}),
        };
        const text = wrapExternalContent(JSON.stringify({ ...output, externalContent: undefined }, null, 2), {
          kind: 'web search',
          name: provider.label,
        });
        return { content: [{ type: 'text', text }], details: output };
      }
      const message = firstError?.message ?? 'the search failed';
      return errorResult(`web_search failed: ${message}`, {
        kind: 'error',
        provider: choice.providers[0]!.id,
        error: 'provider_error',
        message,
      });
    }

    api.registerTool({
      name: 'web_search',
      label: 'Web search',
      description:
        'Search the web. Returns a list of results (title, url, snippet). Use web_fetch to read a result in full.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        required: ['query'],
        properties: {
          query: { type: 'string', minLength: 1, description: 'Search query' },
          count: {
            type: 'integer',
            minimum: 1,
            maximum: 10,
            description: 'Results to return (1-10, default tools.web.search.maxResults or 5)',
          },
          country: {
            type: 'string',
            minLength: 2,
            maxLength: 2,
            description: '2-letter country code, e.g. "US", "DE"',
          },
          language: { type: 'string', minLength: 2, description: 'ISO 639-1 language code, e.g. "en", "de"' },
          freshness: {
            type: 'string',
            enum: ['day', 'week', 'month', 'year'],
            description: 'Only results from the last day, week, month or year',
          },
          search_lang: { type: 'string', description: 'Brave only: search-language code' },
          ui_lang: { type: 'string', description: 'Brave only: UI language with region, e.g. "en-US"' },
          categories: { type: 'string', description: 'SearXNG only: comma-separated categories, e.g. "general,news"' },
          region: { type: 'string', description: 'DuckDuckGo only: region code, e.g. "us-en", "de-de"' },
          safeSearch: {
            type: 'string',
            enum: ['strict', 'moderate', 'off'],
            description: 'DuckDuckGo only: SafeSearch level',
          },
        },
      },
      execute: (params: Params, ctx: ToolContext) => search(params, ctx),
    });
  },
});
