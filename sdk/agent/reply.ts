/**
 * What the assistant's text means for delivery: reply directives (`[[reply:…]]`,
 * `[[media:…]]`) and the silent NO_REPLY token.
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
