/**
 * What a heartbeat reply means: HEARTBEAT_OK at its start or end (also in bold or <b>) with
 * at most ackMaxChars of other text is an acknowledgment and is not delivered; the token in
 * the middle is not special. And whether HEARTBEAT.md holds anything to act on.
 */
import { HEARTBEAT_TOKEN } from './settings.js';

export type ReplyVerdict = { kind: 'ack'; rest: string } | { kind: 'empty' } | { kind: 'alert'; text: string };

const EDGE_TOKEN = new RegExp(`^(?:\\*\\*|<b>|__)?${HEARTBEAT_TOKEN}(?:\\*\\*|</b>|__)?[\\s.!:,-]*`, 'i');
const TRAILING_TOKEN = new RegExp(`\\s*(?:\\*\\*|<b>|__)?${HEARTBEAT_TOKEN}(?:\\*\\*|</b>|__)?[\\s.!]*$`, 'i');

export function judgeReply(text: string, ackMaxChars: number): ReplyVerdict {
  const trimmed = text.trim();
  if (!trimmed) return { kind: 'empty' };
  let rest = trimmed;
  let found = false;
  for (;;) {
    const lead = EDGE_TOKEN.exec(rest);
    if (lead && lead[0].length > 0) {
      rest = rest.slice(lead[0].length).trim();
      found = true;
      continue;
    }
    const trail = TRAILING_TOKEN.exec(rest);
    if (trail && trail[0].length > 0) {
      rest = rest.slice(0, trail.index).trim();
      found = true;
      continue;
    }
    break;
  }
  if (!found) return { kind: 'alert', text: trimmed };
  if (rest.length <= ackMaxChars) return { kind: 'ack', rest };
  return { kind: 'alert', text: rest };
}

/**
 * HEARTBEAT.md with nothing to act on: only blank lines, headings, HTML comments, code fence
 * markers and empty list or checklist items.
 */
export function effectivelyEmpty(markdown: string): boolean {
  const withoutComments = markdown.replace(/<!--[\s\S]*?-->/g, '');
  return withoutComments.split('\n').every((raw) => {
    const line = raw.trim();
    return line === '' || /^#{1,6}(\s|$)/.test(line) || /^(```|~~~)/.test(line) || /^([-*+]|\d+[.)])(\s+\[[ xX]?\])?\s*$/.test(line);
  });
}
