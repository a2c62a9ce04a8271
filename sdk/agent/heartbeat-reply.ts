/**
 * What a heartbeat reply means, shared by the heartbeat plugin (deliver or suppress) and
 * chat.history (hide acknowledgments): HEARTBEAT_OK at its start or end (also in bold or
 * <b>) with at most ackMaxChars of other text is an acknowledgment; the token in the middle
 * is not special.
 */
export const HEARTBEAT_TOKEN = 'HEARTBEAT_OK';
/** `agents.defaults.heartbeat.ackMaxChars` when unset. */
export const DEFAULT_ACK_MAX_CHARS = 300;
/** The `origin` of a heartbeat run's user message (DispatchInput.origin). */
export const HEARTBEAT_ORIGIN = 'heartbeat';

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
