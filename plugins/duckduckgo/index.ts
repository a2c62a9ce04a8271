/**
 * DuckDuckGo: GET <baseUrl>/html/?q=…&kl=<region>&kp=<safe search>, then read the result
 * blocks (.result: a.result__a, .result__snippet) out of the page. Result links may come
 * wrapped in DuckDuckGo's redirector (/l/?uddg=<target>); the target is unwrapped.
 */
import { definePlugin } from '../../sdk/index.js';
import {
  httpFailure,
  providerGet,
  registerWebSearchProvider,
  WebSearchError,
  type WebSearchResult,
} from '../../sdk/web-search.js';

interface DdgConfig {
  webSearch?: { region?: string; safeSearch?: 'strict' | 'moderate' | 'off'; baseUrl?: string };
}

const DEFAULT_BASE = 'https://html.duckduckgo.com';
const SAFE_SEARCH = { strict: '1', moderate: '-1', off: '-2' } as const;

function unwrap(href: string, base: string): string {
  try {
    const url = new URL(href, base);
    const target = url.pathname.startsWith('/l/') ? url.searchParams.get('uddg') : null;
    return target ?? url.href;
  } catch {
    return '';
  }
}

interface HtmlElement {
  textContent: string | null;
  classList: { contains(name: string): boolean };
  getAttribute(name: string): string | null;
  querySelector(selector: string): HtmlElement | null;
}

export async function parseResults(html: string, base: string): Promise<WebSearchResult[]> {
  const { parseHTML } = await import('linkedom');
  const { document } = parseHTML(html);
  const results: WebSearchResult[] = [];
  for (const block of Array.from(document.querySelectorAll('.result')) as HtmlElement[]) {
    if (block.classList.contains('result--ad')) continue;
    const link = block.querySelector('a.result__a');
    if (!link) continue;
    results.push({
      title: (link.textContent ?? '').replace(/\s+/g, ' ').trim(),
      url: unwrap(link.getAttribute('href') ?? '', base),
      snippet: (block.querySelector('.result__snippet')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
    });
  }
  return results;
}

export default definePlugin<DdgConfig>({
  id: 'duckduckgo',
  register(api) {
    const baseUrl = api.config.webSearch?.baseUrl ?? DEFAULT_BASE;
    registerWebSearchProvider(api, {
      id: 'duckduckgo',
      label: 'DuckDuckGo',
      readiness: () => ({ ready: true }),
      cacheIdentity: () => baseUrl,
      async search(request) {
        const url = new URL('html/', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
        url.searchParams.set('q', request.query);
        const region = (request.extra.region as string | undefined) ?? api.config.webSearch?.region;
        if (region) url.searchParams.set('kl', region);
        const safe =
          (request.extra.safeSearch as keyof typeof SAFE_SEARCH | undefined) ??
          api.config.webSearch?.safeSearch ??
          'moderate';
        url.searchParams.set('kp', SAFE_SEARCH[safe] ?? SAFE_SEARCH.moderate);
        const freshness = request.freshness
          ? { day: 'd', week: 'w', month: 'm', year: 'y' }[request.freshness]
          : undefined;
        if (freshness) url.searchParams.set('df', freshness);
        const response = await providerGet(api.kernel, 'duckduckgo', url, {
          baseUrl,
          userConfigured: api.config.webSearch?.baseUrl !== undefined,
          headers: {
            accept: 'text/html',
            'user-agent':
              'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
          },
          timeoutMs: request.timeoutMs,
          signal: request.signal,
        });
        const html = response.body.toString('utf8');
        if (response.status === 202 || /anomaly-modal|challenge-form|bots use DuckDuckGo/i.test(html)) {
          throw new WebSearchError(
            'duckduckgo',
            'DuckDuckGo answered with a bot-challenge page instead of results; try again later or use another provider',
          );
        }
        if (response.status !== 200) throw httpFailure('duckduckgo', response);
        return parseResults(html, url.href);
      },
    });
  },
});
