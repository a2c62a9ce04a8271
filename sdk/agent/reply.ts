/**
 * Shaping what the assistant said into what gets delivered: reply directives, the silent
 * NO_REPLY token, and the block chunker that cuts a long streamed answer into messages.
 */

export const NO_REPLY = 'NO_REPLY';

/** The whole reply is the silent token (any case, surrounding whitespace allowed). */
export function isSilentReplyText(text: string): boolean {
  return text.trim().toUpperCase() === NO_REPLY;
}

export interface ReplyPayload {
  text: string;
  /** Message id to reply to, from [[reply:<id>]]. */
  replyTo?: string;
  /** Attachments from [[media:<url or path>]]. */
  media: string[];
  /** The model chose not to answer (NO_REPLY); nothing is delivered. */
  silent: boolean;
}

const DIRECTIVE = /\[\[\s*(reply|reply_to|media)\s*:\s*([^\]\s][^\]]*?)\s*\]\]/gi;

export function parseReply(raw: string): ReplyPayload {
  let replyTo: string | undefined;
  const media: string[] = [];
  let text = raw.replace(DIRECTIVE, (_match, kind: string, value: string) => {
    if (kind.toLowerCase() === 'media') media.push(value.trim());
    else replyTo ??= value.trim();
    return '';
  });
  text = text.replace(/[ \t]+\n/g, '\n').trim();
  const silent = isSilentReplyText(text);
  return { text: silent ? '' : text, replyTo, media, silent: silent && media.length === 0 };
}

/**
 * Streamed assistant text (`{ delta }`, `{ messageEnd }`, `{ reset }` on the agent stream)
 * with the silent token kept out: while one model message could still turn out to be
 * NO_REPLY ("N", "NO_", "no_rep", "NO_REPLY\n"), its text is held back; once it cannot,
 * what was held goes out. A message that ends as NO_REPLY never reaches anyone.
 */
export class SilentReplyFilter {
  private held = '';
  private decided = false;

  /** The events to pass on in place of `data` (none while a possible token is held). */
  filter(data: Record<string, unknown>): Array<Record<string, unknown>> {
    if (data.reset) {
      this.held = '';
      this.decided = false;
      return [data];
    }
    const out: Array<Record<string, unknown>> = [];
    if (typeof data.delta === 'string') {
      const text = this.push(data.delta);
      if (text) out.push({ ...data, delta: text });
    } else if (!data.messageEnd) out.push(data);
    if (data.messageEnd) {
      const rest = this.end();
      if (rest) out.push({ delta: rest });
      out.push(data);
    }
    return out;
  }

  private push(delta: string): string {
    if (this.decided) return delta;
    this.held += delta;
    if (couldBecomeSilent(this.held)) return '';
    this.decided = true;
    const text = this.held;
    this.held = '';
    return text;
  }

  private end(): string {
    const held = this.held;
    this.held = '';
    this.decided = false;
    return isSilentReplyText(held) ? '' : held;
  }
}

function couldBecomeSilent(text: string): boolean {
  const start = text.trimStart().toUpperCase();
  const core = start.trimEnd();
  // Whitespace may follow the whole token, never a part of it ("NO thanks").
  return core === start ? NO_REPLY.startsWith(core) : core === NO_REPLY;
}

// Block chunking (paragraph → newline → sentence, never inside a code fence) is shared with
// channel delivery, so it lives in the kernel.
export { BlockChunker, findBreak, findFences } from '../../sdk/index.js';
