/**
 * A DOM (linkedom's, or any with nodeType/tagName/childNodes) as Markdown, or as plain text
 * with the same paragraph structure. Only what articles use: headings, paragraphs, emphasis,
 * links (made absolute against the page URL), images, lists, quotes, code, rules and simple
 * tables. Scripts, styles, forms and navigation never reach the text.
 */

export interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
  getAttribute?(name: string): string | null;
}

export interface MarkdownOptions {
  /** Plain text: no Markdown markup, link targets dropped. */
  plain: boolean;
  /** Relative links and images resolve against it. */
  baseUrl: string;
}

const SKIP = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'iframe',
  'object',
  'embed',
  'nav',
  'form',
  'button',
  'select',
  'textarea',
  'input',
  'canvas',
  'head',
  'title',
  'meta',
  'link',
]);
const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'aside',
  'figure',
  'figcaption',
  'address',
  'details',
  'summary',
  'dl',
  'dd',
  'dt',
  'body',
  'html',
  'center',
]);

/** Blank-line-separated blocks; the markers keep block breaks apart from inline text. */
const BREAK = '\u0000';

function absolute(href: string, base: string): string | undefined {
  try {
    const url = new URL(href, base);
    return url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'mailto:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** linkedom builds childNodes afresh on each access, so it is read once per node. */
const kids = (node: DomNode): DomNode[] => Array.from(node.childNodes);

function children(node: DomNode, options: MarkdownOptions, depth: number): string {
  let out = '';
  for (const child of kids(node)) out += convert(child, options, depth);
  return out;
}

const tag = (node: DomNode) => node.nodeName.toLowerCase();
const block = (text: string) => (text.trim() ? `${BREAK}${text.trim()}${BREAK}` : '');
const BREAKS = new RegExp(BREAK, 'g');
const inline = (text: string) => text.replace(BREAKS, ' ').replace(/\s+/g, ' ').trim();

function list(node: DomNode, options: MarkdownOptions, depth: number): string {
  const ordered = tag(node) === 'ol';
  const lines: string[] = [];
  let n = 1;
  for (const item of kids(node)) {
    if (item.nodeType !== 1 || tag(item) !== 'li') continue;
    // Only trailing space is trimmed: a nested list's parts keep their indentation.
    const body = children(item, options, depth + 1)
      .split(BREAK)
      .map((part) => part.replace(/^\n+|\s+$/g, ''))
      .filter((part) => part.trim() !== '');
    const marker = ordered ? `${n++}. ` : '- ';
    const pad = '  '.repeat(depth);
    const [first = '', ...rest] = body;
    lines.push(`${pad}${marker}${first.trim().replace(/\n/g, `\n${pad}  `)}`);
    // Nested lists already carry their own indentation.
    for (const part of rest) lines.push(/^\s*(?:-|\d+\.) /.test(part) ? part : `${pad}  ${part}`);
  }
  return `${BREAK}${lines.join('\n')}${BREAK}`;
}

function table(node: DomNode, options: MarkdownOptions): string {
  const rows: string[][] = [];
  const walk = (current: DomNode) => {
    for (const child of kids(current)) {
      if (child.nodeType !== 1) continue;
      if (tag(child) === 'tr') {
        const cells: string[] = [];
        for (const cell of kids(child)) {
          if (cell.nodeType === 1 && (tag(cell) === 'td' || tag(cell) === 'th'))
            cells.push(inline(children(cell, options, 0)).replace(/\|/g, '\\|'));
        }
        rows.push(cells);
      } else if (tag(child) !== 'table') walk(child);
    }
  };
  walk(node);
  if (rows.length === 0) return '';
  if (options.plain) return block(rows.map((cells) => cells.join('\t')).join('\n'));
  const width = Math.max(...rows.map((cells) => cells.length));
  const line = (cells: string[]) => `| ${[...cells, ...Array<string>(width - cells.length).fill('')].join(' | ')} |`;
  return block([line(rows[0]!), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)].join('\n'));
}

function convert(node: DomNode, options: MarkdownOptions, depth: number): string {
  if (node.nodeType === 3) return (node.textContent ?? '').replace(/\s+/g, ' ');
  if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return '';
  const name = tag(node);
  if (SKIP.has(name)) return '';
  const attr = (key: string) => node.getAttribute?.(key) ?? '';
  const { plain } = options;
  switch (name) {
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6': {
      const text = inline(children(node, options, depth));
      return block(plain ? text : `${'#'.repeat(Number(name[1]))} ${text}`);
    }
    case 'br':
      return '\n';
    case 'hr':
      return block(plain ? '' : '---');
    case 'strong':
    case 'b': {
      const text = inline(children(node, options, depth));
      return plain || !text ? text : `**${text}**`;
    }
    case 'em':
    case 'i': {
      const text = inline(children(node, options, depth));
      return plain || !text ? text : `*${text}*`;
    }
    case 'code':
      return plain ? (node.textContent ?? '') : `\`${(node.textContent ?? '').replace(/`/g, 'ˋ')}\``;
    case 'pre': {
      const text = (node.textContent ?? '').replace(/\n+$/, '');
      return `${BREAK}${plain ? text : `\`\`\`\n${text}\n\`\`\``}${BREAK}`;
    }
    case 'a': {
      const text = inline(children(node, options, depth));
      const href = absolute(attr('href'), options.baseUrl);
      return plain || !href || !text ? text : `[${text}](${href})`;
    }
    case 'img': {
      const src = absolute(attr('src'), options.baseUrl);
      return plain || !src ? attr('alt') : `![${attr('alt').replace(/[[\]]/g, '')}](${src})`;
    }
    case 'ul':
    case 'ol':
      return list(node, options, depth);
    case 'li':
      return block(children(node, options, depth));
    case 'blockquote': {
      const text = children(node, options, depth)
        .split(BREAK)
        .map((part) => part.trim())
        .filter(Boolean)
        .join('\n\n');
      return block(
        plain
          ? text
          : text
              .split('\n')
              .map((line) => `> ${line}`.trimEnd())
              .join('\n'),
      );
    }
    case 'table':
      return table(node, options);
    default:
      return BLOCK.has(name) ? block(children(node, options, depth)) : children(node, options, depth);
  }
}

export function domToMarkdown(root: DomNode, options: MarkdownOptions): string {
  return children(root, options, 0)
    .split(BREAK)
    .map((part) =>
      part
        .split('\n')
        .map((line) => line.replace(/[ \t]+$/g, '').replace(/^ (?=\S)/, ''))
        .join('\n')
        .trim(),
    )
    .filter(Boolean)
    .join('\n\n')
    .replace(/\n{3,}/g, '\n\n');
}
