/**
 * From response bytes to the text web_fetch returns, by content type: HTML through
 * Readability (the article, without navigation, ads and scripts) on a linkedom DOM and then
 * to Markdown or text; JSON pretty-printed; other text as it is. Both libraries load on the
 * first HTML page, so starting the plugin costs nothing.
 */
import { domToMarkdown, type DomNode as DomElement } from './markdown.js';

export type ExtractMode = 'markdown' | 'text';

export interface Extracted {
  text: string;
  title?: string;
  extractor: 'readability' | 'dom' | 'json' | 'raw';
}

type Kind = 'html' | 'json' | 'text';

/** What the response is, or undefined when web_fetch does not read it (images, PDFs, archives). */
export function contentKind(contentType: string, body: Buffer): Kind | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (
    type.startsWith('text/') ||
    type === 'application/xml' ||
    type.endsWith('+xml') ||
    type === 'application/javascript'
  )
    return 'text';
  if (type === '' || type === 'application/octet-stream') {
    const head = body.subarray(0, 512).toString('utf8').trimStart().toLowerCase();
    if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'html';
    if (!head.includes('\u0000') && type === '') return 'text';
  }
  return undefined;
}

/** The body as a string, in the charset the header (or an HTML meta tag) names; UTF-8 otherwise. */
export function decodeBody(body: Buffer, contentType: string): string {
  const declared =
    /charset=["']?([\w.:-]+)/i.exec(contentType)?.[1] ??
    /<meta[^>]+charset=["']?([\w.:-]+)/i.exec(body.subarray(0, 2048).toString('latin1'))?.[1];
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

async function extractHtml(html: string, mode: ExtractMode, baseUrl: string, readability: boolean): Promise<Extracted> {
  const { parseHTML } = await import('linkedom');
  const options = { plain: mode === 'text', baseUrl };
  const { document } = parseHTML(html);
  const pageTitle = document.title?.trim() || undefined;
  if (readability) {
    const { Readability } = await import('@mozilla/readability');
    // The article comes back as the element itself, not re-serialized HTML to parse again.
    const article = new Readability<DomElement>(document as never, {
      charThreshold: 100,
      serializer: (element) => element as DomElement,
    }).parse();
    if (article?.content) {
      const text = domToMarkdown(article.content, options);
      if (text.trim()) return { text, title: article.title?.trim() || pageTitle, extractor: 'readability' };
    }
    // Readability found no article and has rewritten the document while looking: start again.
    const fresh = parseHTML(html).document;
    return { text: domToMarkdown((fresh.body ?? fresh) as never, options), title: pageTitle, extractor: 'dom' };
  }
  return { text: domToMarkdown((document.body ?? document) as never, options), title: pageTitle, extractor: 'dom' };
}

export async function extractContent(
  body: Buffer,
  contentType: string,
  kind: Kind,
  mode: ExtractMode,
  baseUrl: string,
  readability: boolean,
): Promise<Extracted> {
  const source = decodeBody(body, contentType);
  if (kind === 'html') return extractHtml(source, mode, baseUrl, readability);
  if (kind === 'json') {
    try {
      return { text: JSON.stringify(JSON.parse(source), null, 2), extractor: 'json' };
    } catch {
      // Cut mid-document (size cap) or not JSON after all: give it as it came.
      return { text: source, extractor: 'raw' };
    }
  }
  return { text: source, extractor: 'raw' };
}
