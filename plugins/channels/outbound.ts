/**
 * The one outbound path. Every reply the agent sends, every `message` tool call, every
 * `claw message send` and every pairing notice goes through `send`:
 *
 *   message_sending (may rewrite or cancel) → before_message_write → cut to the channel's
 *   limit → channel send, each piece retried on transient failures → message_sent
 *
 * so hooks and policy see all of it. Retries: 3 attempts, backoff from 400 ms doubling to
 * at most 30 s with ±10 % jitter, or the platform's own retry_after when it gives one.
 */
import { realpathSync } from 'node:fs';
import { basename, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  isInside,
  splitForChannel,
  type ChannelPlugin,
  type ChannelSendFailure,
  type HookBus,
  type OutboundMessage,
  type OutboundRequest,
  type OutboundResult,
  type TranscriptMessage,
} from '../../sdk/index.js';
import { DEFAULT_RETRY, retryDelay, sleepAtLeast, type RetrySettings } from '../../sdk/channels/index.js';

export interface OutboundDeps {
  hooks: Pick<HookBus, 'runModifying' | 'runSync' | 'runVoid' | 'ready'>;
  findChannel(id: string): Promise<ChannelPlugin | undefined>;
  retrySettings(channel: string, accountId?: string): RetrySettings;
  textLimit(channel: ChannelPlugin, accountId?: string): number;
  /** A real channel is meant (configured or declared): without its plugin the send fails. */
  isChannel(id: string): boolean;
  /** Folders local media may come from (see refusedMedia); undefined: no check. */
  mediaRoots?: readonly string[];
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/**
 * Attachments are URLs, or files inside the allowed folders (the workspaces, the media
 * folder): a model that names /etc/passwd or ~/.ssh/id_ed25519 must not get it uploaded.
 * Returns why one item is refused (without naming it), or undefined when it may go.
 */
export function mediaRefusal(item: string, allowedRoots: readonly string[]): string | undefined {
  if (/^(https?:|data:)/i.test(item)) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(item) && !/^file:/i.test(item))
    return 'uses a scheme that cannot be sent (use http(s), data: or a workspace file)';
  const path = /^file:/i.test(item) ? fileURLToPath(item) : item;
  if (!isAbsolute(path)) return 'is a relative path; give it as an absolute path inside the workspace';
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return 'does not exist';
  }
  const inside = allowedRoots.some((root) => {
    let base = root;
    try {
      base = realpathSync(root);
    } catch {
      // A root that does not exist holds nothing.
    }
    return real !== base && isInside(base, real);
  });
  return inside ? undefined : 'is outside the workspace; only files in the workspace or the media folder can be sent';
}

/** The reason the first refused item is refused, naming it; undefined when all are fine. */
export function refusedMedia(media: readonly string[], allowedRoots: readonly string[]): string | undefined {
  for (const item of media) {
    const reason = mediaRefusal(item, allowedRoots);
    if (reason) return `media "${item}" ${reason}`;
  }
  return undefined;
}

/**
 * What the recipient reads in place of a refused attachment: the file's name and the short
 * reason, never the folder it sits in on this machine.
 */
export function refusedMediaNote(item: string, reason: string): string {
  const name =
    /^[a-z][a-z0-9+.-]*:/i.test(item) && !/^file:/i.test(item)
      ? item.split(':')[0] + ': link'
      : basename(/^file:/i.test(item) ? fileURLToPath(item) : item);
  return `[attachment "${name}" not sent: it ${reason.split(/[;(]/)[0]!.trim()}]`;
}

function retryable(error: unknown): boolean {
  const failure = error as ChannelSendFailure | undefined;
  if (failure?.retryable !== undefined) return failure.retryable;
  return failure?.retryAfterMs !== undefined;
}

export async function sendOutbound(deps: OutboundDeps, request: OutboundRequest): Promise<OutboundResult> {
  const context = { ...request.context, channel: request.channel };
  const sending = await deps.hooks.runModifying(
    'message_sending',
    {
      channel: request.channel,
      to: request.to,
      content: request.text,
      metadata: {
        replyTo: request.replyTo,
        media: request.media,
        threadId: request.threadId,
        accountId: request.accountId,
      },
    },
    context,
  );
  if (sending.cancel)
    return { delivered: false, cancelled: true, text: request.text, pieces: 0, attempts: 0, messageIds: [] };
  // A refused attachment is left out and the text still goes, with a note saying so: a
  // reply must not vanish because the model named a file it may not send.
  const mediaRefused: string[] = [];
  const notes: string[] = [];
  // A message_sending handler may add attachments (a voice note of the reply); they are checked alike.
  const added = Array.isArray(sending.media) ? (sending.media as NonNullable<OutboundMessage['media']>) : [];
  const media = [...(request.media ?? []).map((url) => ({ url })), ...added].filter(({ url }) => {
    const reason = deps.mediaRoots ? mediaRefusal(url, deps.mediaRoots) : undefined;
    if (!reason) return true;
    mediaRefused.push(`media "${url}" ${reason}`);
    notes.push(refusedMediaNote(url, reason));
    return false;
  });
  const text = [sending.content ?? request.text, ...notes].filter((part) => part.trim()).join('\n\n');
  const refusal = mediaRefused.length > 0 ? { mediaRefused } : {};
  deps.hooks.runSync(
    'before_message_write',
    {
      message: {
        role: 'assistant',
        content: text,
        delivery: { channel: request.channel, to: request.to },
      } as TranscriptMessage,
    },
    context,
  );

  const channel = request.transport ? undefined : await deps.findChannel(request.channel).catch(() => undefined);
  if (!request.transport && !channel && deps.isChannel(request.channel)) {
    const error = `channel "${request.channel}" is not available (is its plugin enabled?)`;
    await deps.hooks.ready('message_sent');
    void deps.hooks.runVoid(
      'message_sent',
      { channel: request.channel, to: request.to, content: text, success: false, error },
      context,
    );
    return { delivered: false, cancelled: false, text, pieces: 0, attempts: 0, messageIds: [], error };
  }
  const transport = request.transport ?? (channel ? (message: OutboundMessage) => channel.send(message) : undefined);
  const base = {
    to: request.to,
    ...(request.accountId ? { accountId: request.accountId } : {}),
    ...(request.threadId ? { threadId: request.threadId } : {}),
  };
  const pieces: OutboundMessage[] = [];
  if (request.transport || !channel) {
    // The caller's own transport takes the reply whole; it knows its limits.
    if (text.trim() || media.length)
      pieces.push({
        ...base,
        text,
        media,
        ...(request.replyTo ? { replyTo: request.replyTo } : {}),
      });
  } else {
    // A channel gets pieces within its limit, text first, then each attachment; where the
    // platform has captions, short text rides on the first attachment and long text follows the media.
    const replyTo = (index: number) =>
      request.replyTo && (index === 0 || request.replyToMode === 'all') ? { replyTo: request.replyTo } : {};
    const captioned = channel.captionLimit !== undefined && media.length > 0 && text.trim() !== '';
    const textPieces =
      captioned && text.length <= channel.captionLimit!
        ? []
        : splitForChannel(text, deps.textLimit(channel, request.accountId));
    const mediaPieces: OutboundMessage[] = media.map((item, index) => ({
      ...base,
      media: [item],
      ...(index === 0 && textPieces.length === 0 && captioned ? { text } : {}),
    }));
    const ordered = captioned
      ? [...mediaPieces, ...textPieces.map((piece) => ({ ...base, text: piece }))]
      : [...textPieces.map((piece) => ({ ...base, text: piece })), ...mediaPieces];
    ordered.forEach((piece, index) => pieces.push({ ...piece, ...replyTo(index) }));
  }

  const settings = channel ? deps.retrySettings(request.channel, request.accountId) : DEFAULT_RETRY;
  const sleep = deps.sleep ?? sleepAtLeast;
  const messageIds: string[] = [];
  let attempts = 0;
  let error: string | undefined;
  let retryAfterMs: number | undefined;
  if (transport) {
    // Pieces go strictly in order; a failed piece stops the rest (a gap would be worse).
    for (const piece of pieces) {
      for (let attempt = 1; ; attempt++) {
        attempts++;
        try {
          const result = await transport(piece);
          if (result && typeof result.messageId === 'string') messageIds.push(result.messageId);
          break;
        } catch (failure) {
          if (attempt >= settings.attempts || !retryable(failure)) {
            error = (failure as Error)?.message ?? String(failure);
            retryAfterMs = (failure as ChannelSendFailure | undefined)?.retryAfterMs;
            break;
          }
          await sleep(retryDelay(attempt, settings, failure as ChannelSendFailure, deps.random));
        }
      }
      if (error) break;
    }
  }
  if (error === undefined) request.onDelivered?.();
  await deps.hooks.ready('message_sent');
  void deps.hooks.runVoid(
    'message_sent',
    {
      channel: request.channel,
      to: request.to,
      content: text,
      success: error === undefined,
      ...(error ? { error } : {}),
    },
    context,
  );
  return {
    delivered: error === undefined,
    cancelled: false,
    text,
    pieces: pieces.length,
    attempts,
    messageIds,
    ...refusal,
    ...(error ? { error } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
}
