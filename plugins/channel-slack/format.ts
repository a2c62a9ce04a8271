/**
 * Markdown (what models write) → Slack mrkdwn. Slack reads `*bold*`, `_italic_`,
 * `~strike~`, `` `code` ``, fenced blocks and `<url|label>` links, and treats `&`, `<`, `>`
 * as control characters everywhere, so those are escaped in all text (code included, as
 * Slack asks). Code is never restyled.
 */

export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Slack's escapes back to characters (inbound text). */
export function unescapeMrkdwn(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

const FENCE = /^\s*(```+|~~~+)(.*)$/;

function inline(text: string): string {
  // Code spans first: their content is escaped only.
  const parts = text.split(/(`[^`\n]+`)/);
  return parts
    .map((part, index) => {
      if (index % 2 === 1) return escapeMrkdwn(part);
      const links: string[] = [];
      // Links are set aside before escaping so their `<…|…>` survives; a `|` or `>` would end the label early.
      let out = part.replace(
        /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+|mailto:[^\s)]+)\)/g,
        (_, label: string, url: string) => {
          links.push(`<${escapeMrkdwn(url)}|${escapeMrkdwn(label).replace(/\|/g, '¦')}>`);
          return `\u0000${links.length - 1}\u0000`;
        },
      );
      out = escapeMrkdwn(out)
        .replace(/\*\*([^*\n]+)\*\*|__([^_\n]+)__/g, (_, a?: string, b?: string) => `\u0001${a ?? b}\u0001`)
        .replace(/(^|[^\w*])\*([^*\n]+)\*(?=[^\w*]|$)/g, '$1_$2_')
        .replace(/~~([^~\n]+)~~/g, '~$1~')
        .replace(/\u0001/g, '*');
      return out.replace(/\u0000(\d+)\u0000/g, (_, n: string) => links[Number(n)]!);
    })
    .join('');
}

export function markdownToMrkdwn(markdown: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const match = FENCE.exec(line);
    if (fence) {
      if (match && match[1]!.startsWith(fence[0]!) && match[1]!.length >= fence.length && !match[2]!.trim()) {
        out.push('```');
        fence = undefined;
      } else out.push(escapeMrkdwn(line));
      continue;
    }
    if (match) {
      // Slack shows no language on a code block: the info string is dropped.
      fence = match[1]!;
      out.push('```');
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      out.push(`*${inline(heading[1]!)}*`);
      continue;
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    out.push(bullet ? `${bullet[1]}• ${inline(bullet[2]!)}` : inline(line));
  }
  // An unclosed fence runs to the end, as Markdown renderers treat it.
  if (fence) out.push('```');
  return out.join('\n');
}
