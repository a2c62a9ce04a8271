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

/**
 * Files a tool made for the user go out with the turn's reply: a tool result whose `details`
 * has `media` (absolute paths) names them. Only files inside `mediaDir` (the state dir's
 * media folder, where claw itself writes) are taken, so no tool result can make the reply
 * carry a file from elsewhere; the reply's own [[media:…]] come first, without repeats.
 */
export function withToolMedia(reply: ReplyPayload, messages: readonly unknown[], mediaDir: string): ReplyPayload {
  const prefix = mediaDir.endsWith('/') ? mediaDir : `${mediaDir}/`;
  const media = [...reply.media];
  for (const message of messages as Array<{ role?: string; isError?: boolean; details?: { media?: unknown } }>) {
    if (message.role !== 'toolResult' || message.isError || !Array.isArray(message.details?.media)) continue;
    for (const path of message.details.media)
      if (typeof path === 'string' && path.startsWith(prefix) && !path.includes('/../') && !media.includes(path))
        media.push(path);
  }
  return { ...reply, media, silent: reply.silent && media.length === 0 };
}
