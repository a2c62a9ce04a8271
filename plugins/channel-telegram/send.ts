/**
 * One outbound piece → Bot API calls, and Bot API failures → what the kernel should do
 * about them. The kernel has already cut the text to 4096 characters and owns retries:
 * this module only says whether (and when) a retry makes sense.
 *
 *   429                 retryable after `parameters.retry_after`
 *   5xx, network        retryable (the kernel backs off)
 *   400 bad entities    resent once here without formatting, never retried
 *   other 4xx           final (blocked by the user, chat not found, …)
 */
import { existsSync, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Api, InputFile } from 'grammy';
import { ChannelSendError, type OutboundMessage, type SendResult } from '../../sdk/channels/index.js';
import { markdownToTelegramHtml } from './format.js';

/** grammY types its signals with the abort-controller polyfill; Node's native ones work the same at run time. */
export type GrammySignal = NonNullable<Parameters<Api['getMe']>[0]>;
export const grammySignal = (signal: AbortSignal) => signal as unknown as GrammySignal;

export type InputFileConstructor = new (file: string | Uint8Array | URL, filename?: string) => InputFile;

export interface SendOptions {
  linkPreview: boolean;
  /** Abort a single Bot API call after this long (the kernel then retries it). */
  timeoutMs?: number;
}

/** What a failed Bot API call looks like, duck-typed so this module never loads grammY. */
interface ApiFailure {
  error_code: number;
  description: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

const CAPTION_LIMIT = 1024;
const DEFAULT_TIMEOUT_MS = 60_000;

export function apiFailure(error: unknown): ApiFailure | undefined {
  const candidate = error as Partial<ApiFailure> | undefined;
  return candidate && typeof candidate.error_code === 'number' && typeof candidate.description === 'string'
    ? (candidate as ApiFailure)
    : undefined;
}

export function isParseError(error: unknown): boolean {
  const failure = apiFailure(error);
  return (
    failure?.error_code === 400 &&
    /can't parse entities|can't find end of the entity|unsupported start tag|unclosed|can't parse/i.test(
      failure.description,
    )
  );
}

/** 401 / 404 on getMe: Telegram does not know this token. */
export function isTokenRejected(error: unknown): boolean {
  const code = apiFailure(error)?.error_code;
  return code === 401 || code === 404;
}

export function describeError(error: unknown): string {
  const failure = apiFailure(error);
  if (failure) return `${failure.error_code} ${failure.description}`;
  const cause = (error as { error?: unknown })?.error;
  const message = (error as Error)?.message ?? String(error);
  return cause instanceof Error && !message.includes(cause.message) ? `${message}: ${cause.message}` : message;
}

/** The kernel's view of a failed call. */
export function toSendError(error: unknown, method: string): ChannelSendError {
  if (error instanceof ChannelSendError) return error;
  const failure = apiFailure(error);
  const what = `telegram ${method} failed: ${describeError(error)}`;
  if (failure) {
    if (failure.error_code === 429) {
      const seconds = failure.parameters?.retry_after;
      return new ChannelSendError(what, {
        retryable: true,
        retryAfterMs: typeof seconds === 'number' ? seconds * 1000 : undefined,
        cause: error,
      });
    }
    return new ChannelSendError(what, { retryable: failure.error_code >= 500, cause: error });
  }
  // No Bot API answer at all: a timeout, a reset, a proxy's HTML error page.
  return new ChannelSendError(what, { retryable: true, cause: error });
}

/** `message_thread_id` for a thread id; the General topic (1) is addressed without one. */
export function threadParams(threadId: string | undefined): { message_thread_id?: number } {
  if (!threadId || !/^\d+$/.test(threadId) || threadId === '1') return {};
  return { message_thread_id: Number(threadId) };
}

function replyParams(replyTo: string | undefined): {
  reply_parameters?: { message_id: number; allow_sending_without_reply: boolean };
} {
  // A deleted original must not cost the reply itself.
  return replyTo && /^\d+$/.test(replyTo)
    ? { reply_parameters: { message_id: Number(replyTo), allow_sending_without_reply: true } }
    : {};
}

/** An edit that changes nothing: Telegram refuses it, and there is nothing to do. */
export function isNotModified(error: unknown): boolean {
  const failure = apiFailure(error);
  return failure?.error_code === 400 && /message is not modified/i.test(failure.description);
}

/** Telegram accepts numeric chat ids and @channel usernames; numbers go as numbers. */
export function chatId(to: string): number | string {
  return /^-?\d+$/.test(to) && Number.isSafeInteger(Number(to)) ? Number(to) : to;
}

type MediaMethod = 'sendPhoto' | 'sendDocument' | 'sendVideo' | 'sendAudio' | 'sendVoice' | 'sendAnimation';

function mediaMethod(url: string, mimeType: string | undefined): MediaMethod {
  const type = mimeType?.toLowerCase() ?? '';
  const ext = extname(new URL(url, 'file:///').pathname).toLowerCase();
  if (type === 'image/gif' || ext === '.gif') return 'sendAnimation';
  if (type.startsWith('image/') || ['.jpg', '.jpeg', '.png', '.webp'].includes(ext)) return 'sendPhoto';
  if (type.startsWith('video/') || ['.mp4', '.mov', '.m4v'].includes(ext)) return 'sendVideo';
  if (type === 'audio/ogg' || ext === '.ogg' || ext === '.oga' || ext === '.opus') return 'sendVoice';
  if (type.startsWith('audio/') || ['.mp3', '.m4a', '.wav', '.flac'].includes(ext)) return 'sendAudio';
  return 'sendDocument';
}

/** A URL Telegram fetches itself, or a local file (path or file: URL) uploaded from here. */
function mediaInput(url: string, InputFileClass: InputFileConstructor): string | InputFile {
  if (/^https?:\/\//i.test(url)) return url;
  const data = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url);
  if (data)
    return new InputFileClass(
      data[2] ? Buffer.from(data[3]!, 'base64') : Buffer.from(decodeURIComponent(data[3]!)),
      'file',
    );
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  // Checked here: a missing file would otherwise surface as a network error and be retried.
  if (!existsSync(path) || !statSync(path).isFile())
    throw new ChannelSendError(`telegram: cannot send ${path}: no such file`, { retryable: false });
  return new InputFileClass(path, basename(path));
}

export class TelegramSender {
  constructor(
    private readonly api: Api,
    private readonly InputFileClass: InputFileConstructor,
    private readonly options: SendOptions,
  ) {}

  private signal(): GrammySignal {
    return grammySignal(AbortSignal.timeout(this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS));
  }

  /** Send one outbound piece: text, then each attachment (the first may carry short text as its caption). */
  async send(message: OutboundMessage): Promise<SendResult> {
    const to = chatId(message.to);
    const base = { ...threadParams(message.threadId) };
    const text = message.text?.trim() ? message.text : '';
    const media = message.media ?? [];
    const captionFromText = media.length > 0 && text.length > 0 && text.length <= CAPTION_LIMIT;
    const ids: string[] = [];
    let reply = replyParams(message.replyTo);
    if (text && !captionFromText) {
      ids.push(await this.sendText(to, text, { ...base, ...reply }));
      reply = {};
    }
    for (const [index, item] of media.entries()) {
      const caption = item.caption ?? (index === 0 && captionFromText ? text : undefined);
      ids.push(await this.sendMedia(to, item, caption, { ...base, ...reply }));
      reply = {};
    }
    return ids.length > 0 ? { messageId: ids[0]!, ...(ids.length > 1 ? { messageIds: ids } : {}) } : {};
  }

  /** Formatted first; if Telegram cannot parse the result, once more as the plain original. */
  private async sendText(to: number | string, text: string, extra: Record<string, unknown>): Promise<string> {
    const preview = this.options.linkPreview ? {} : { link_preview_options: { is_disabled: true } };
    const html = markdownToTelegramHtml(text);
    try {
      const sent = await this.api.sendMessage(
        to,
        html,
        { parse_mode: 'HTML', ...preview, ...extra } as never,
        this.signal(),
      );
      return String(sent.message_id);
    } catch (error) {
      if (!isParseError(error)) throw toSendError(error, 'sendMessage');
    }
    try {
      const sent = await this.api.sendMessage(to, text, { ...preview, ...extra } as never, this.signal());
      return String(sent.message_id);
    } catch (error) {
      throw toSendError(error, 'sendMessage');
    }
  }

  private async sendMedia(
    to: number | string,
    item: { url: string; mimeType?: string; caption?: string; voice?: boolean },
    caption: string | undefined,
    extra: Record<string, unknown>,
  ): Promise<string> {
    const method = item.voice ? 'sendVoice' : mediaMethod(item.url, item.mimeType);
    const input = mediaInput(item.url, this.InputFileClass);
    const call = async (which: MediaMethod, formatted: boolean) => {
      const options = caption
        ? {
            caption: formatted ? markdownToTelegramHtml(caption) : caption,
            ...(formatted ? { parse_mode: 'HTML' } : {}),
            ...extra,
          }
        : extra;
      const send = this.api[which] as unknown as (
        chat: number | string,
        media: unknown,
        other: unknown,
        signal: GrammySignal,
      ) => Promise<{ message_id: number }>;
      return String((await send.call(this.api, to, input, options, this.signal())).message_id);
    };
    try {
      return await call(method, true);
    } catch (error) {
      if (isParseError(error)) {
        try {
          return await call(method, false);
        } catch (again) {
          throw toSendError(again, method);
        }
      }
      // Photos have size and dimension limits documents do not: try once as a file.
      if (method === 'sendPhoto' && apiFailure(error)?.error_code === 400) {
        try {
          return await call('sendDocument', true);
        } catch (again) {
          throw toSendError(again, 'sendDocument');
        }
      }
      throw toSendError(error, method);
    }
  }

  /** A reply preview page: plain text (a half-written reply may not parse as formatting). */
  async sendPreview(
    to: string,
    text: string,
    threadId: string | undefined,
    replyTo: string | undefined,
  ): Promise<number> {
    const sent = await this.api.sendMessage(
      chatId(to),
      text,
      { ...threadParams(threadId), ...replyParams(replyTo), link_preview_options: { is_disabled: true } } as never,
      this.signal(),
    );
    return sent.message_id;
  }

  async editPreview(to: string, messageId: number, text: string): Promise<void> {
    await this.api.editMessageText(
      chatId(to),
      messageId,
      text,
      { link_preview_options: { is_disabled: true } } as never,
      this.signal(),
    );
  }

  /** A preview page becomes the final text: formatted, else plain; "not modified" is success. */
  async finishPreview(to: string, messageId: number, text: string): Promise<void> {
    const preview = this.options.linkPreview ? {} : { link_preview_options: { is_disabled: true } };
    try {
      await this.api.editMessageText(
        chatId(to),
        messageId,
        markdownToTelegramHtml(text),
        { parse_mode: 'HTML', ...preview } as never,
        this.signal(),
      );
      return;
    } catch (error) {
      if (isNotModified(error)) return;
      if (!isParseError(error)) throw error;
    }
    try {
      await this.api.editMessageText(chatId(to), messageId, text, preview as never, this.signal());
    } catch (error) {
      if (!isNotModified(error)) throw error;
    }
  }

  async deleteMessage(to: string, messageId: number): Promise<void> {
    await this.api.deleteMessage(chatId(to), messageId, this.signal());
  }

  /** Set (or, with no emoji, clear) the bot's reaction on a message. */
  async react(to: string, messageId: string, emoji: string | undefined): Promise<void> {
    await this.api.setMessageReaction(
      chatId(to),
      Number(messageId),
      emoji ? [{ type: 'emoji', emoji } as never] : [],
      {},
      this.signal(),
    );
  }

  async setCommands(commands: Array<{ command: string; description: string }>): Promise<void> {
    if (commands.length === 0) await this.api.deleteMyCommands({}, this.signal());
    else await this.api.setMyCommands(commands, {}, this.signal());
  }

  async typing(to: string, threadId?: string): Promise<void> {
    await this.api.sendChatAction(chatId(to), 'typing', threadParams(threadId) as never, this.signal());
  }
}
