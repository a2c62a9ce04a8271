/**
 * Documents as text: a PDF through unpdf (pdf.js), page by page up to a page cap; plain text
 * read as it is. Text over the character cap ends with a clear "[… truncated]" line.
 */
import type { RuntimeDeps } from '../../sdk/index.js';
import { loadUnpdf } from './deps.js';
import { isPdf, looksLikeText } from './kinds.js';

export interface ExtractedText {
  text: string;
  /** Pages of the PDF, when it is one. */
  pages?: number;
  /** Pages read (after the page range and cap). */
  pagesRead?: number[];
  truncated: boolean;
}

export class UnreadableDocument extends Error {}

/** "1-3,5" → [1,2,3,5] within 1..total; undefined or empty: every page. */
export function parsePages(spec: string | undefined, total: number): number[] {
  if (!spec?.trim()) return Array.from({ length: total }, (_, i) => i + 1);
  const pages = new Set<number>();
  for (const part of spec.split(',')) {
    const match = /^\s*(\d+)\s*(?:-\s*(\d+)?\s*)?$/.exec(part);
    if (!match) throw new UnreadableDocument(`pages "${spec}" is not a page list such as "1-3,5"`);
    const from = Number(match[1]);
    const to = match[2] ? Number(match[2]) : part.includes('-') ? total : from;
    for (let page = Math.max(1, from); page <= Math.min(total, to); page++) pages.add(page);
  }
  if (pages.size === 0) throw new UnreadableDocument(`pages "${spec}" names no page of this ${total}-page PDF`);
  return [...pages].sort((a, b) => a - b);
}

export function capText(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  return {
    text: `${text.slice(0, maxChars)}\n[… truncated: ${text.length - maxChars} more characters not shown (limit ${maxChars})]`,
    truncated: true,
  };
}

export async function extractPdf(
  data: Buffer,
  deps: RuntimeDeps,
  options: { maxChars: number; maxPages: number; pages?: string },
): Promise<ExtractedText> {
  if (!isPdf(data)) throw new UnreadableDocument('it is not a PDF (no %PDF- header)');
  const unpdf = await loadUnpdf(deps);
  let pdf;
  try {
    pdf = await unpdf.getDocumentProxy(new Uint8Array(data), { isEvalSupported: false, verbosity: 0 });
  } catch (error) {
    throw new UnreadableDocument(`the PDF could not be parsed (${(error as Error).message})`);
  }
  try {
    const wanted = parsePages(options.pages, pdf.numPages);
    const read = wanted.slice(0, options.maxPages);
    const parts: string[] = [];
    for (const number of read) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      const text = content.items
        .map((item: { str?: string; hasEOL?: boolean }) =>
          item.str !== undefined ? item.str + (item.hasEOL ? '\n' : '') : '',
        )
        .join('')
        .replace(/[ \t]+\n/g, '\n')
        .trim();
      parts.push(pdf.numPages > 1 ? `--- page ${number} ---\n${text}` : text);
    }
    let text = parts.join('\n\n').trim();
    if (wanted.length > read.length)
      text += `\n[… ${wanted.length - read.length} more pages not read (limit ${options.maxPages} pages)]`;
    const capped = capText(text, options.maxChars);
    return {
      text: capped.text,
      pages: pdf.numPages,
      pagesRead: read,
      truncated: capped.truncated || wanted.length > read.length,
    };
  } finally {
    await pdf.destroy().catch(() => {});
  }
}

export function extractPlainText(data: Buffer, maxChars: number): ExtractedText {
  if (!looksLikeText(data)) throw new UnreadableDocument('it is not text (binary content)');
  const capped = capText(data.toString('utf8').replace(/^\uFEFF/, ''), maxChars);
  return { text: capped.text, truncated: capped.truncated };
}
