/**
 * One web_fetch call: the cache, the guarded GET, extraction, and OpenClaw's result shape
 * (url, finalUrl, status, contentType, title, extractMode, extractor, truncated, length,
 * rawLength, fetchedAt, tookMs, text, warning, cached). The page text is fenced as external,
 * untrusted content before the model sees it.
 */
import { errorResult, jsonResult, type ToolResult, wrapExternalContent, TtlCache } from '../../sdk/index.js';
import { SsrfBlockedError, type GuardedNet, type SsrfPolicy } from '../../sdk/net/index.js';
import { contentKind, extractContent, type ExtractMode } from './extract.js';
import type { FetchSettings } from './settings.js';

export interface FetchRequest {
  url: string;
  extractMode: ExtractMode;
  maxChars?: number;
  policy: SsrfPolicy;
  signal?: AbortSignal;
}

interface Page {
  finalUrl: string;
  status: number;
  contentType: string;
  title?: string;
  extractor: string;
  text: string;
  /** The response was cut at maxResponseBytes. */
  bodyCut: boolean;
  fetchedAt: string;
}

export class WebFetcher {
  readonly cache = new TtlCache<Page>(200);

  constructor(private readonly net: GuardedNet) {}

  async run(request: FetchRequest, settings: FetchSettings): Promise<ToolResult> {
    const started = performance.now();
    const maxChars = Math.min(request.maxChars ?? settings.maxChars, settings.maxCharsCap);
    // The policy is part of the key: a page fetched under a looser policy is not served to a stricter one.
    const key = JSON.stringify([request.url, request.extractMode, settings.readability, request.policy]);
    let page = this.cache.get(key, settings.cacheTtlMs);
    const cached = page !== undefined;
    if (!page) {
      const fetched = await this.fetchPage(request, settings);
      if ('error' in fetched) return fetched.error;
      page = fetched.page;
      if (page.status >= 200 && page.status < 300) this.cache.set(key, page, settings.cacheTtlMs);
    }
    if (page.status < 200 || page.status >= 300) {
      const excerpt = page.text.replace(/\s+/g, ' ').trim().slice(0, 300);
      return errorResult(`web_fetch: ${page.finalUrl} answered HTTP ${page.status}${excerpt ? `: ${excerpt}` : ''}`, {
        url: request.url,
        finalUrl: page.finalUrl,
        status: page.status,
      });
    }
    const cut = page.text.length > maxChars;
    const body = cut ? page.text.slice(0, maxChars) : page.text;
    const warning = page.bodyCut
      ? `The response was larger than ${settings.maxResponseBytes} bytes; only the start was read.`
      : undefined;
    const text = wrapExternalContent(body, { kind: 'web page', name: page.finalUrl });
    return jsonResult({
      url: request.url,
      finalUrl: page.finalUrl,
      status: page.status,
      contentType: page.contentType,
      ...(page.title ? { title: page.title.slice(0, 256) } : {}),
      extractMode: request.extractMode,
      extractor: page.extractor,
      externalContent: { untrusted: true, source: 'web_fetch', wrapped: true },
      truncated: cut || page.bodyCut,
      length: text.length,
      rawLength: page.text.length,
      fetchedAt: page.fetchedAt,
      tookMs: Math.round(performance.now() - started),
      ...(warning ? { warning } : {}),
      ...(cached ? { cached: true } : {}),
      text,
    });
  }

  private async fetchPage(
    request: FetchRequest,
    settings: FetchSettings,
  ): Promise<{ page: Page } | { error: ToolResult }> {
    const fail = (message: string) => ({
      error: errorResult(`web_fetch: ${message}`, { url: request.url, error: message }),
    });
    let response;
    try {
      response = await this.net.fetch(request.url, {
        policy: request.policy,
        dnsServers: settings.dnsServers,
        maxRedirects: settings.maxRedirects,
        timeoutMs: settings.timeoutMs,
        maxBytes: settings.maxResponseBytes,
        headers: {
          'user-agent': settings.userAgent,
          accept:
            'text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5',
          'accept-language': 'en-US,en;q=0.9',
        },
        signal: request.signal,
      });
    } catch (error) {
      if (error instanceof SsrfBlockedError) return fail(`refused ${request.url}: ${error.message}`);
      return fail(`could not fetch ${request.url}: ${(error as Error).message}`);
    }
    const contentType = String(response.headers['content-type'] ?? '');
    const kind = contentKind(contentType, response.body);
    if (!kind)
      return fail(
        `${response.finalUrl} is ${contentType || 'binary data'}, not text or HTML; web_fetch reads pages, not files (the browser tool can open it)`,
      );
    const extracted = await extractContent(
      response.body,
      contentType,
      kind,
      request.extractMode,
      response.finalUrl,
      settings.readability,
    );
    return {
      page: {
        finalUrl: response.finalUrl,
        status: response.status,
        contentType: contentType.slice(0, 256),
        ...(extracted.title ? { title: extracted.title } : {}),
        extractor: extracted.extractor,
        text: extracted.text,
        bodyCut: response.truncated,
        fetchedAt: new Date().toISOString(),
      },
    };
  }
}
