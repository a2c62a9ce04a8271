/**
 * The web_search provider contract. The web-search plugin owns the tool (settings, provider
 * choice, cache, result shape); each provider is a small plugin that registers a service
 * named `web-search:<id>` (declared under `services` in its manifest) whose api is a
 * WebSearchProvider. Providers load only when a search needs them. A provider reaches its API
 * with providerGet, through the host's "net" service (declare `requires: { services: ["net"] }`).
 */
import type { KernelServices, PluginApi } from './types/plugin.js';
import { guardedNet, type GuardedResponse, type SsrfPolicy } from './net/guard.js';

export const WEB_SEARCH_SERVICE_PREFIX = 'web-search:';

export interface WebSearchRequest {
  query: string;
  /** Results wanted, 1-10. */
  count: number;
  country?: string;
  language?: string;
  freshness?: 'day' | 'week' | 'month' | 'year';
  /** Provider-specific parameters the call carried (region, safeSearch, categories, …). */
  extra: Record<string, unknown>;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface WebSearchResult {
  title: string;
  url: string;
  snippet?: string;
  published?: string;
  siteName?: string;
}

export type ProviderReadiness = { ready: true } | { ready: false; reason: string };

export interface WebSearchProvider {
  id: string;
  label: string;
  /**
   * Auto-detection order when tools.web.search.provider is unset (lower first); undefined:
   * only used when chosen explicitly (key-free providers).
   */
  autoDetectOrder?: number;
  /** Whether the provider has what it needs (a key, an instance URL), read on every call. */
  readiness(): ProviderReadiness;
  /** Distinguishes cache entries of the same query (a custom base URL, a mode). */
  cacheIdentity(): string;
  search(request: WebSearchRequest): Promise<WebSearchResult[]>;
}

export function registerWebSearchProvider(api: Pick<PluginApi, 'registerService'>, provider: WebSearchProvider): void {
  api.registerService({ id: `${WEB_SEARCH_SERVICE_PREFIX}${provider.id}`, api: provider });
}

/** A provider's failure, phrased for the model and the user (never the response body or the key). */
export class WebSearchError extends Error {
  constructor(provider: string, message: string) {
    super(`${provider}: ${message}`);
    this.name = 'WebSearchError';
  }
}

export interface EndpointOptions {
  /** The provider's base URL as configured (or its default). */
  baseUrl: string;
  /** The user set baseUrl themselves: its host is trusted even on a private address. */
  userConfigured: boolean;
  headers?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Most bytes of answer read (default 2 MB). */
  maxBytes?: number;
}

/**
 * A GET to a provider's API through the SSRF guard. The default public endpoints get the
 * strict policy; a base URL the user configured is theirs to trust (a self-hosted SearXNG on
 * the LAN, a local proxy), so its host — and only it — may be private. Plain http is accepted
 * only for such private hosts: a public endpoint must use https, since the query and any key
 * would otherwise cross the internet in clear text.
 */
export async function providerGet(
  kernel: Pick<KernelServices, 'capabilities'> & Partial<Pick<KernelServices, 'plugins'>>,
  provider: string,
  url: URL,
  options: EndpointOptions,
): Promise<GuardedResponse> {
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch {
    throw new WebSearchError(provider, `baseUrl "${options.baseUrl}" is not a valid URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new WebSearchError(provider, `baseUrl must be http(s), not ${base.protocol}`);
  const net = guardedNet(kernel, `the ${provider} search provider`);
  // The guard matches host patterns without case, brackets or a trailing dot.
  const policy: SsrfPolicy = options.userConfigured ? { allowedHostnames: [base.hostname] } : {};
  if (base.protocol === 'http:') {
    const strict = await net.checkUrl(base, {});
    if (strict.allowed)
      throw new WebSearchError(provider, `baseUrl ${base.origin} is a public host over plain http; use https`);
  }
  try {
    return await net.fetch(url.href, {
      policy,
      maxRedirects: 2,
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes ?? 2_000_000,
      headers: { accept: 'application/json, text/html;q=0.9', ...(options.headers ?? {}) },
      signal: options.signal,
    });
  } catch (error) {
    throw new WebSearchError(provider, (error as Error).message);
  }
}

/** An HTTP failure as a short diagnostic: the status, and what to check on 401/403/429. */
export function httpFailure(provider: string, response: GuardedResponse, keyHint?: string): WebSearchError {
  const status = response.status;
  const hint =
    status === 401 || status === 403
      ? `; check the credentials${keyHint ? ` (${keyHint})` : ''}`
      : status === 429
        ? '; rate limited, try again later'
        : '';
  return new WebSearchError(provider, `the search API answered HTTP ${status} ${response.statusText}${hint}`.trim());
}

/** Text of an HTML fragment (snippets arrive with <strong> around matches and entities). */
export function stripTags(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos|nbsp|#39);/gi, (_match, entity: string) => {
      const lower = entity.toLowerCase();
      if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
      if (lower.startsWith('#')) return String.fromCodePoint(Number(lower.slice(1)));
      return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' } as Record<string, string>)[lower] ?? '';
    })
    .replace(/\s+/g, ' ')
    .trim();
}
