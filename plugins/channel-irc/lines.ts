/**
 * Reply text → IRC lines. An IRC line is at most 512 bytes with its CRLF, and the server
 * relays ours with our full prefix (`:nick!user@host PRIVMSG #target :`) in front, so the
 * text of each line must leave room for that. Markdown's soft breaks (a single newline in a
 * paragraph) render as spaces; paragraphs and code-block lines become lines of their own;
 * empty lines are dropped (an empty PRIVMSG is an error).
 */

/** IRC's limit for one line, CRLF included. */
export const IRC_LINE_BYTES = 512;
/** Longest hostname the server may show for us (RFC 1123 labels; servers cap it at 63). */
const HOST_BYTES = 63;
/** `\x01ACTION ` … `\x01` around a `/me` line. */
const ACTION_BYTES = 9;

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text).length;

/** The bytes one PRIVMSG line's text may take, from us to `target`. */
export function lineBudget(nick: string, username: string, target: string, action = false): number {
  const prefix = bytes(`:${nick}!${username}@`) + HOST_BYTES + bytes(` PRIVMSG ${target} :`);
  return IRC_LINE_BYTES - 2 - prefix - (action ? ACTION_BYTES : 0);
}

/** Paragraphs and code lines of Markdown text, each on one line, empty ones dropped. */
export function logicalLines(text: string): string[] {
  const out: string[] = [];
  let paragraph: string[] = [];
  let inFence = false;
  const flush = () => {
    if (paragraph.length > 0) out.push(paragraph.join(' '));
    paragraph = [];
  };
  for (const raw of text.replace(/\r\n?/g, '\n').split('\n')) {
    const line = raw.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
    if (/^\s*(```|~~~)/.test(line)) {
      flush();
      inFence = !inFence;
      continue;
    }
    if (inFence) {
      if (line.trim()) out.push(line);
      continue;
    }
    if (!line.trim()) flush();
    else paragraph.push(line.trim());
  }
  flush();
  return out;
}

/** One line cut into pieces of at most `budget` UTF-8 bytes, at spaces where it can, never inside a character. */
export function splitLine(line: string, budget: number): string[] {
  if (budget < 4) throw new Error(`an IRC line has no room for text (budget ${budget} bytes)`);
  const out: string[] = [];
  let current = '';
  let currentBytes = 0;
  const push = () => {
    if (current.trim()) out.push(current.trimEnd());
    current = '';
    currentBytes = 0;
  };
  for (const word of line.split(/(?<= )/)) {
    const size = bytes(word);
    if (currentBytes + size <= budget) {
      current += word;
      currentBytes += size;
      continue;
    }
    // A trailing space may overflow: it is trimmed at the cut anyway.
    if (word.endsWith(' ') && currentBytes + size - 1 <= budget) {
      current += word.slice(0, -1);
      push();
      continue;
    }
    push();
    if (size <= budget) {
      current = word;
      currentBytes = size;
      continue;
    }
    // A word longer than a line: cut between characters (code points).
    for (const char of word) {
      const charBytes = bytes(char);
      if (currentBytes + charBytes > budget) push();
      current += char;
      currentBytes += charBytes;
    }
  }
  push();
  return out;
}

/** Text → the PRIVMSG texts that carry it to `target`, each within the line limit. */
export function ircLines(text: string, budget: number): string[] {
  return logicalLines(text).flatMap((line) => splitLine(line, budget));
}
