/**
 * Shaping what the assistant said into what gets delivered: reply directives, the silent
 * NO_REPLY token, and the block chunker that cuts a long streamed answer into messages.
 */

export const NO_REPLY = 'NO_REPLY';

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
  // NO_REPLY alone (or trailing a thought the model should not have shown) silences the reply.
  const silent = text === NO_REPLY || (text.endsWith(NO_REPLY) && text.slice(0, -NO_REPLY.length).trim() === '');
  if (text.startsWith(NO_REPLY) && text.slice(NO_REPLY.length).trim() === '') text = '';
  return { text: silent ? '' : text, replyTo, media, silent: silent && media.length === 0 };
}

// Block chunking (paragraph → newline → sentence, never inside a code fence) is shared with
// channel delivery, so it lives in the kernel.
export { BlockChunker, findBreak, findFences } from '../../sdk/index.js';
