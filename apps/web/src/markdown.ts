/**
 * Enough Markdown for chat replies — fenced code, headings, lists, quotes, paragraphs,
 * and inline code, bold, italics and links — built as DOM nodes, never as HTML strings.
 * Links open only for http(s) and mailto. A half-streamed reply (an open code fence) renders
 * as it will look once finished.
 */
import { append, h, type Child } from './dom.js';

const SAFE_URL = /^(https?:|mailto:)/i;

export function renderMarkdown(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let index = 0;
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) fragment.append(h('p', null, ...inlineLines(paragraph)));
    paragraph = [];
  };

  while (index < lines.length) {
    const line = lines[index]!;
    const fence = /^\s*(```|~~~)\s*([\w+-]*)/.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      index++;
      while (index < lines.length && !lines[index]!.trimStart().startsWith(fence[1]!)) body.push(lines[index++]!);
      index++;
      const code = h('code', fence[2] ? { 'data-lang': fence[2] } : null, body.join('\n'));
      fragment.append(h('pre', null, code));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const level = Math.min(heading[1]!.length + 2, 6) as 3 | 4 | 5 | 6;
      fragment.append(h(`h${level}`, null, ...inline(heading[2]!)));
      index++;
      continue;
    }
    const item = /^\s*([-*+]|\d+[.)])\s+/.exec(line);
    if (item) {
      flush();
      const ordered = /\d/.test(item[1]!);
      const list = h(ordered ? 'ol' : 'ul', null);
      while (index < lines.length) {
        const match = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[index]!);
        if (!match) {
          // An indented line continues the item above it.
          if (/^\s{2,}\S/.test(lines[index]!) && list.lastElementChild) {
            append(list.lastElementChild, [h('br'), ...inline(lines[index]!.trim())]);
            index++;
            continue;
          }
          break;
        }
        list.append(h('li', null, ...inline(match[2]!)));
        index++;
      }
      fragment.append(list);
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const quoted: string[] = [];
      while (index < lines.length && /^\s*>/.test(lines[index]!)) quoted.push(lines[index++]!.replace(/^\s*>\s?/, ''));
      fragment.append(h('blockquote', null, renderMarkdown(quoted.join('\n'))));
      continue;
    }
    if (!line.trim()) flush();
    else paragraph.push(line);
    index++;
  }
  flush();
  return fragment;
}

function inlineLines(lines: string[]): Child[] {
  return lines.flatMap((line, i) => (i === 0 ? inline(line) : [h('br'), ...inline(line)]));
}

/** `code`, **bold**, *italic* / _italic_, [text](url) and bare URLs. */
function inline(text: string): Child[] {
  const out: Child[] = [];
  const pattern =
    /`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\b_([^_]+)_\b|\[([^\]]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    out.push(text.slice(last, match.index));
    const [, code, bold, bold2, em, em2, label, href, bare] = match;
    if (code !== undefined) out.push(h('code', null, code));
    else if (bold !== undefined || bold2 !== undefined) out.push(h('strong', null, ...inline(bold ?? bold2!)));
    else if (em !== undefined || em2 !== undefined) out.push(h('em', null, ...inline(em ?? em2!)));
    else if (label !== undefined) out.push(SAFE_URL.test(href!) ? link(href!, inline(label)) : match[0]);
    else if (bare !== undefined) out.push(link(bare, [bare]));
    last = match.index + match[0].length;
  }
  out.push(text.slice(last));
  return out.filter((part) => part !== '');
}

function link(href: string, children: Child[]): HTMLElement {
  return h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, ...children);
}
