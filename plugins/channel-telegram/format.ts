/**
 * Markdown (as models write it) → Telegram's HTML parse mode.
 *
 * HTML rather than MarkdownV2: MarkdownV2 needs nearly every punctuation mark escaped and
 * rejects the whole message over one stray `.` or `!`, while HTML only needs `<`, `>` and
 * `&` escaped, so almost any model output converts safely. Whatever cannot be expressed is
 * left as literal text, never as a half-open tag. Telegram rejects a message whose tags do
 * not parse; `send.ts` then resends the original text without formatting.
 *
 * The rendered message never shows more characters than the Markdown it came from (markers
 * disappear, `- ` becomes `• `), and Telegram counts its 4096-character limit after parsing,
 * so a piece the kernel cut to the limit still fits.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (char) => ESCAPES[char]!);
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"]/g, (char) => ESCAPES[char]!);
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
const LINK_SCHEMES = /^(https?:\/\/|tg:\/\/|mailto:)/i;

/** Render a whole message. */
export function markdownToTelegramHtml(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  for (let index = 0; index < lines.length;) {
    const line = lines[index]!;

    const fence = FENCE.exec(line);
    // A backtick fence's info string cannot hold backticks: "```x```" is inline code.
    if (fence && !(fence[1]![0] === '`' && fence[2]!.includes('`'))) {
      const marker = fence[1]!;
      const closes = (candidate: string) => {
        const trimmed = candidate.trim();
        return trimmed.length >= marker.length && [...trimmed].every((char) => char === marker[0]);
      };
      const close = lines.findIndex((candidate, at) => at > index && closes(candidate));
      // An unclosed fence runs to the end, as Markdown renderers treat it.
      const end = close === -1 ? lines.length : close;
      const code = escapeHtml(lines.slice(index + 1, end).join('\n'));
      const language = /^\s*([\w+#.-]+)/.exec(fence[2]!)?.[1];
      // Telegram refuses an empty entity, and an empty block shows nothing anyway.
      if (code.trim())
        out.push(`<pre><code${language ? ` class="language-${escapeAttribute(language)}"` : ''}>${code}</code></pre>`);
      index = end + 1;
      continue;
    }

    // Tables keep their columns only in a monospace block.
    if (TABLE_ROW.test(line) && index + 1 < lines.length && TABLE_RULE.test(lines[index + 1]!)) {
      let end = index + 2;
      while (end < lines.length && TABLE_ROW.test(lines[end]!)) end++;
      out.push(`<pre>${escapeHtml(lines.slice(index, end).join('\n'))}</pre>`);
      index = end;
      continue;
    }

    if (/^ {0,3}>/.test(line)) {
      const quoted: string[] = [];
      while (index < lines.length && /^ {0,3}>/.test(lines[index]!))
        quoted.push(lines[index++]!.replace(/^ {0,3}> ?/, ''));
      out.push(`<blockquote>${quoted.map(renderLine).join('\n')}</blockquote>`);
      continue;
    }

    out.push(renderLine(line));
    index++;
  }
  return out.join('\n');
}

/** One line outside code blocks: headings, list bullets, rules, then inline formatting. */
function renderLine(line: string): string {
  const heading = /^ {0,3}#{1,6}\s+(.*?)(\s+#+)?\s*$/.exec(line);
  if (heading) return heading[1] ? `<b>${renderInline(heading[1], false)}</b>` : '';
  if (/^ {0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) return '———';
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${renderInline(bullet[2]!, false)}`;
  return renderInline(line, false);
}

interface Delimiter {
  marker: string;
  open: string;
  close: string;
  /** `_` only counts at word edges, so snake_case stays as it is. */
  wordEdge: boolean;
}

// Longest first: `**` must win over `*`.
const DELIMITERS: Delimiter[] = [
  { marker: '***', open: '<b><i>', close: '</i></b>', wordEdge: false },
  { marker: '**', open: '<b>', close: '</b>', wordEdge: false },
  { marker: '__', open: '<b>', close: '</b>', wordEdge: true },
  { marker: '~~', open: '<s>', close: '</s>', wordEdge: false },
  { marker: '||', open: '<tg-spoiler>', close: '</tg-spoiler>', wordEdge: false },
  { marker: '*', open: '<i>', close: '</i>', wordEdge: false },
  { marker: '_', open: '<i>', close: '</i>', wordEdge: true },
];

const WORD = /[\p{L}\p{N}]/u;
const SPACE = /\s/;
const ESCAPABLE = /[\\`*_{}[\]()#+\-.!|~>]/;

/** Length of the run of `char` starting at `at`. */
function runLength(text: string, at: number, char: string): number {
  let end = at;
  while (text[end] === char) end++;
  return end - at;
}

/** Where the code span opened by the backtick run at `at` closes, or -1. */
function codeSpanEnd(text: string, at: number): number {
  const length = runLength(text, at, '`');
  for (let search = at + length; search < text.length;) {
    const found = text.indexOf('`', search);
    if (found === -1) return -1;
    const run = runLength(text, found, '`');
    if (run === length) return found;
    search = found + run;
  }
  return -1;
}

function canOpen(text: string, at: number, delimiter: Delimiter): boolean {
  const after = text[at + delimiter.marker.length];
  if (after === undefined || SPACE.test(after)) return false;
  if (runLength(text, at, delimiter.marker[0]!) !== delimiter.marker.length) return false;
  return !delimiter.wordEdge || at === 0 || !WORD.test(text[at - 1]!);
}

function canClose(text: string, at: number, delimiter: Delimiter): boolean {
  const before = text[at - 1];
  if (before === undefined || SPACE.test(before)) return false;
  const after = text[at + delimiter.marker.length];
  return !delimiter.wordEdge || after === undefined || !WORD.test(after);
}

/** The closing delimiter for one opened at `from`, skipping code spans and longer runs. */
function findClose(text: string, from: number, delimiter: Delimiter): number {
  const char = delimiter.marker[0]!;
  for (let at = from; at < text.length;) {
    if (text[at] === '\\') {
      at += 2;
      continue;
    }
    if (text[at] === '`' && char !== '`') {
      const end = codeSpanEnd(text, at);
      at = end === -1 ? at + 1 : end + runLength(text, end, '`');
      continue;
    }
    if (text[at] === char) {
      const run = runLength(text, at, char);
      if (run === delimiter.marker.length && canClose(text, at, delimiter)) return at;
      at += run;
      continue;
    }
    at++;
  }
  return -1;
}

/** `[text](url)` starting at `at`: the parts and where it ends, if it is a usable link. */
function parseLink(text: string, at: number): { label: string; url: string; end: number } | undefined {
  let depth = 0;
  let close = -1;
  for (let i = at; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '[') depth++;
    else if (text[i] === ']' && --depth === 0) {
      close = i;
      break;
    }
  }
  if (close === -1 || text[close + 1] !== '(') return undefined;
  let parens = 0;
  for (let i = close + 1; i < text.length; i++) {
    if (text[i] === '(') parens++;
    else if (text[i] === ')' && --parens === 0) {
      const target = text.slice(close + 2, i).trim();
      // A title after the URL ("…" or '…') is dropped.
      const url = target.replace(/\s+(["']).*\1$/, '').replace(/^<(.*)>$/, '$1');
      if (!LINK_SCHEMES.test(url) || /\s/.test(url)) return undefined;
      return { label: text.slice(at + 1, close), url, end: i + 1 };
    }
  }
  return undefined;
}

/** Inline Markdown → HTML. `inLink` stops links nesting, which Telegram rejects. */
export function renderInline(text: string, inLink: boolean): string {
  let out = '';
  for (let at = 0; at < text.length;) {
    const char = text[at]!;

    if (char === '\\' && at + 1 < text.length && ESCAPABLE.test(text[at + 1]!)) {
      out += escapeHtml(text[at + 1]!);
      at += 2;
      continue;
    }

    if (char === '`') {
      const end = codeSpanEnd(text, at);
      const length = runLength(text, at, '`');
      if (end !== -1) {
        const code = text.slice(at + length, end);
        // CommonMark trims one space each side so ``` `` `x` `` ``` can show backticks.
        const trimmed = code.length > 2 && code.startsWith(' ') && code.endsWith(' ') ? code.slice(1, -1) : code;
        // A link cannot contain a code entity: inside one the code shows as plain text.
        out += inLink ? escapeHtml(trimmed) : `<code>${escapeHtml(trimmed)}</code>`;
        at = end + length;
        continue;
      }
      out += '`'.repeat(length);
      at += length;
      continue;
    }

    if (char === '[' && !inLink) {
      const link = parseLink(text, at);
      if (link) {
        out += `<a href="${escapeAttribute(link.url)}">${renderInline(link.label, true)}</a>`;
        at = link.end;
        continue;
      }
    }

    if (char === '<' && !inLink) {
      const autolink = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(at));
      if (autolink) {
        out += `<a href="${escapeAttribute(autolink[1]!)}">${escapeHtml(autolink[1]!)}</a>`;
        at += autolink[0].length;
        continue;
      }
    }

    const delimiter = DELIMITERS.find(
      (candidate) => text.startsWith(candidate.marker, at) && canOpen(text, at, candidate),
    );
    if (delimiter) {
      const close = findClose(text, at + delimiter.marker.length, delimiter);
      if (close !== -1) {
        out += `${delimiter.open}${renderInline(text.slice(at + delimiter.marker.length, close), inLink)}${delimiter.close}`;
        at = close + delimiter.marker.length;
        continue;
      }
    }

    // A run of marker characters that opened nothing is literal as a whole; splitting it
    // would let its tail open something the writer never meant.
    if ('*_~|'.includes(char)) {
      const length = runLength(text, at, char);
      out += char.repeat(length);
      at += length;
      continue;
    }

    out += ESCAPES[char] && char !== '"' ? ESCAPES[char] : char;
    at++;
  }
  return out;
}
