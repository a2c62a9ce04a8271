/**
 * Markdown (as models write it) → the HTML subset Matrix clients render in
 * `formatted_body` (`org.matrix.custom.html`). The plain `body` keeps the Markdown, which
 * reads well in clients that show no HTML. Only safe tags are produced, every piece of
 * text is escaped, and links keep to http(s) and mailto, so a model cannot inject markup.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (char) => ESCAPES[char]!);
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^ {0,3}> ?(.*)$/;

/** Inline Markdown in one escaped run of text; code spans are cut out first so nothing inside them changes. */
export function renderInline(source: string): string {
  const spans: string[] = [];
  const withoutCode = source.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, __, code: string) => {
    spans.push(`<code>${escapeHtml(code.trim() ? code.replace(/^ (.*) $/, '$1') : code)}</code>`);
    return `\u0000${spans.length - 1}\u0000`;
  });
  let html = escapeHtml(withoutCode);
  html = html.replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+|mailto:[^\s)]+)\)/g, (_, label: string, url: string) => {
    return `<a href="${url}">${label}</a>`;
  });
  html = html
    .replace(/\*\*\*(\S(?:[\s\S]*?\S)?)\*\*\*/g, '<strong><em>$1</em></strong>')
    .replace(/\*\*(\S(?:[\s\S]*?\S)?)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\p{L}\p{N}_])__(\S(?:[\s\S]*?\S)?)__(?![\p{L}\p{N}_])/gu, '$1<strong>$2</strong>')
    .replace(/~~(\S(?:[\s\S]*?\S)?)~~/g, '<del>$1</del>')
    .replace(/(^|[^*])\*(?!\s|\*)([^*\n]*?[^\s*])\*(?!\*)/g, '$1<em>$2</em>')
    .replace(/(^|[^\p{L}\p{N}_])_(?!\s|_)([^_\n]*?[^\s_])_(?![\p{L}\p{N}_])/gu, '$1<em>$2</em>');
  return html.replace(/\u0000(\d+)\u0000/g, (_, index: string) => spans[Number(index)]!);
}

/** A whole message: fenced code, headings, lists, quotes and paragraphs (lines inside one joined by <br>). */
export function markdownToMatrixHtml(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) blocks.push(`<p>${paragraph.map(renderInline).join('<br>')}</p>`);
    paragraph = [];
  };
  for (let index = 0; index < lines.length;) {
    const line = lines[index]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1]!;
      let end = index + 1;
      while (end < lines.length && !lines[end]!.trim().startsWith(marker)) end++;
      const code = escapeHtml(lines.slice(index + 1, end).join('\n'));
      blocks.push(`<pre><code${fence[2] ? ` class="language-${escapeHtml(fence[2])}"` : ''}>${code}</code></pre>`);
      index = end + 1;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      blocks.push(`<h${heading[1]!.length}>${renderInline(heading[2]!)}</h${heading[1]!.length}>`);
      index++;
      continue;
    }
    const list = BULLET.test(line) ? BULLET : NUMBERED.test(line) ? NUMBERED : undefined;
    if (list) {
      flush();
      const items: string[] = [];
      const first = list === NUMBERED ? Number(NUMBERED.exec(line)![1]) : 1;
      while (index < lines.length && list.exec(lines[index]!)) {
        const match = list.exec(lines[index]!)!;
        items.push(`<li>${renderInline(match[match.length - 1]!)}</li>`);
        index++;
      }
      blocks.push(
        list === BULLET
          ? `<ul>${items.join('')}</ul>`
          : `<ol${first !== 1 ? ` start="${first}"` : ''}>${items.join('')}</ol>`,
      );
      continue;
    }
    if (QUOTE.test(line)) {
      flush();
      const quoted: string[] = [];
      while (index < lines.length && QUOTE.test(lines[index]!)) quoted.push(QUOTE.exec(lines[index++]!)![1]!);
      blocks.push(`<blockquote>${quoted.map(renderInline).join('<br>')}</blockquote>`);
      continue;
    }
    if (line.trim()) paragraph.push(line.trim());
    else flush();
    index++;
  }
  flush();
  return blocks.join('');
}

/**
 * The event content for one piece of text: `formatted_body` only when the Markdown carried
 * formatting (a plain sentence stays plain, as clients show it best).
 */
export function textContent(markdown: string, msgtype = 'm.text'): Record<string, unknown> {
  const html = markdownToMatrixHtml(markdown);
  const plain = `<p>${escapeHtml(markdown.trim()).replace(/\n/g, '<br>')}</p>`;
  return html === plain || !html
    ? { msgtype, body: markdown }
    : { msgtype, body: markdown, format: 'org.matrix.custom.html', formatted_body: html };
}
