/**
 * Outbound Discord: one piece → REST calls through discord.js's REST client, and REST
 * failures → what the kernel should do about them. The kernel has already cut the text to
 * 2,000 characters (code fences kept whole) and owns retries; rate limits never reach it:
 * discord.js's REST waits out a 429 (`retry_after`, the global limit) and sends again.
 *
 *   5xx, network        retryable (the kernel backs off)
 *   other 4xx           final (missing access, unknown channel, …)
 *
 * Targets: `user:<id>` / `<@id>` is a DM (the DM channel is opened once and remembered),
 * `channel:<id>` / `<#id>` a channel; a bare id is a user the account has a DM with, else
 * a channel — and a user after all when Discord answers "Unknown Channel".
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChannelSendError, type OutboundMessage, type SendResult } from '../../sdk/channels/index.js';
import type { ReplyToMode } from './config.js';

type Json = any;

export interface RestFile {
  name: string;
  data: Buffer;
  contentType?: string;
}

export interface RestOptions {
  body?: unknown;
  files?: RestFile[];
  auth?: boolean;
  query?: URLSearchParams;
}

/** The slice of discord.js's REST client this channel uses. */
export interface RestLike {
  get(route: `/${string}`, options?: RestOptions): Promise<unknown>;
  post(route: `/${string}`, options?: RestOptions): Promise<unknown>;
  put(route: `/${string}`, options?: RestOptions): Promise<unknown>;
  patch(route: `/${string}`, options?: RestOptions): Promise<unknown>;
}

export interface SenderOptions {
  mediaMaxBytes: number;
  replyToMode: ReplyToMode;
  suppressEmbeds: boolean;
}

/** Message flags (Discord API). */
const SUPPRESS_EMBEDS = 1 << 2;
export const EPHEMERAL = 1 << 6;
const UNKNOWN_CHANNEL = 10003;

/** What a failed REST call looks like (DiscordAPIError / HTTPError), duck-typed. */
function restFailure(error: unknown): { status: number; code?: number; message: string } | undefined {
  const candidate = error as { status?: unknown; code?: unknown; message?: unknown } | undefined;
  return candidate && typeof candidate.status === 'number'
    ? {
        status: candidate.status,
        ...(typeof candidate.code === 'number' ? { code: candidate.code } : {}),
        message: String(candidate.message ?? ''),
      }
    : undefined;
}

export function describeError(error: unknown): string {
  const failure = restFailure(error);
  if (failure)
    return `${failure.status}${failure.code !== undefined ? ` (code ${failure.code})` : ''} ${failure.message}`;
  return (error as Error)?.message ?? String(error);
}

/** 401 on login or a call: Discord does not know this token. */
export function isTokenRejected(error: unknown): boolean {
  return (
    restFailure(error)?.status === 401 ||
    /TokenInvalid|invalid token/i.test(String((error as { code?: unknown })?.code ?? (error as Error)?.message ?? ''))
  );
}

export function toSendError(error: unknown, what: string): ChannelSendError {
  if (error instanceof ChannelSendError) return error;
  const failure = restFailure(error);
  const message = `discord ${what} failed: ${describeError(error)}`;
  if (failure) return new ChannelSendError(message, { retryable: failure.status >= 500, cause: error });
  // No answer at all: a timeout, a reset connection.
  return new ChannelSendError(message, { retryable: true, cause: error });
}

export type Target = { kind: 'user' | 'channel' | 'either'; id: string };

export function parseTarget(to: string): Target {
  const value = to.trim();
  const user = /^(?:user:|discord:)?<@!?(\d+)>$/.exec(value) ?? /^user:(.+)$/.exec(value);
  if (user) return { kind: 'user', id: user[1]! };
  const channel = /^<#(\d+)>$/.exec(value) ?? /^channel:(.+)$/.exec(value);
  if (channel) return { kind: 'channel', id: channel[1]! };
  return { kind: 'either', id: value.replace(/^discord:/, '') };
}

/** A local file (path or file: URL) or data: URL as an upload; http(s) URLs stay links. */
export function mediaFile(url: string, maxBytes: number): RestFile | undefined {
  if (/^https?:\/\//i.test(url)) return undefined;
  const data = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url);
  if (data) {
    const bytes = data[2] ? Buffer.from(data[3]!, 'base64') : Buffer.from(decodeURIComponent(data[3]!));
    if (bytes.length > maxBytes)
      throw new ChannelSendError(`discord: the attachment is larger than mediaMaxMb (${bytes.length} bytes)`, {
        retryable: false,
      });
    const ext = (data[1] || 'application/octet-stream').split('/')[1]?.replace(/[^\w]/g, '') || 'bin';
    return { name: `file.${ext}`, data: bytes, ...(data[1] ? { contentType: data[1] } : {}) };
  }
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  // Checked here: a missing file would otherwise look like a network error and be retried.
  if (!existsSync(path) || !statSync(path).isFile())
    throw new ChannelSendError(`discord: cannot send ${path}: no such file`, { retryable: false });
  const size = statSync(path).size;
  if (size > maxBytes)
    throw new ChannelSendError(`discord: cannot send ${path}: ${size} bytes is more than mediaMaxMb allows`, {
      retryable: false,
    });
  return { name: basename(path), data: readFileSync(path) };
}

export class DiscordSender {
  /** user id → DM channel id, learned from inbound DMs and opened DMs. */
  readonly dmChannels = new Map<string, string>();

  constructor(
    readonly rest: RestLike,
    private readonly options: SenderOptions,
  ) {}

  /** The message body and files of one piece. */
  payload(message: OutboundMessage, flags = 0): { body: Json; files: RestFile[] } {
    const links: string[] = [];
    const files: RestFile[] = [];
    for (const item of message.media ?? []) {
      const file = mediaFile(item.url, this.options.mediaMaxBytes);
      if (file) files.push(file);
      else links.push(item.url);
      if (item.caption) links.push(item.caption);
    }
    const content = [message.text?.trim() ? message.text : '', ...links].filter(Boolean).join('\n');
    return {
      body: {
        content,
        // A model's "@everyone" must not ping a whole server.
        allowed_mentions: { parse: ['users'] },
        flags: flags | (this.options.suppressEmbeds ? SUPPRESS_EMBEDS : 0),
      },
      files,
    };
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const { body, files } = this.payload(message);
    if (message.replyTo && this.options.replyToMode === 'first' && /^\d+$/.test(message.replyTo)) {
      // A deleted original must not cost the reply itself.
      body.message_reference = { message_id: message.replyTo, fail_if_not_exists: false };
    }
    const channelId = await this.channelFor(message.to, message.threadId);
    try {
      return {
        messageId: String(((await this.rest.post(`/channels/${channelId}/messages`, { body, files })) as Json).id),
      };
    } catch (error) {
      const target = parseTarget(message.to);
      // A bare id that is no channel is a user we have not talked to yet.
      if (!message.threadId && target.kind === 'either' && restFailure(error)?.code === UNKNOWN_CHANNEL) {
        const dm = await this.openDm(target.id);
        try {
          return {
            messageId: String(((await this.rest.post(`/channels/${dm}/messages`, { body, files })) as Json).id),
          };
        } catch (again) {
          throw toSendError(again, 'send');
        }
      }
      throw toSendError(error, 'send');
    }
  }

  /** The Discord channel a target means (a thread wins over its parent). */
  async channelFor(to: string, threadId?: string): Promise<string> {
    if (threadId) return threadId;
    const target = parseTarget(to);
    if (target.kind === 'channel') return target.id;
    if (target.kind === 'user' || this.dmChannels.has(target.id)) return this.openDm(target.id);
    return target.id;
  }

  async openDm(userId: string): Promise<string> {
    const known = this.dmChannels.get(userId);
    if (known) return known;
    try {
      const channel = (await this.rest.post('/users/@me/channels', { body: { recipient_id: userId } })) as Json;
      this.dmChannels.set(userId, String(channel.id));
      return String(channel.id);
    } catch (error) {
      throw toSendError(error, 'opening a DM');
    }
  }

  async typing(to: string, threadId?: string): Promise<void> {
    await this.rest.post(`/channels/${await this.channelFor(to, threadId)}/typing`);
  }

  async react(channelId: string, messageId: string, emoji: string): Promise<void> {
    await this.rest.put(`/channels/${channelId}/messages/${messageId}/reactions/${encodeURIComponent(emoji)}/@me`);
  }

  // ── Interactions (slash commands) ────────────────────────────────────────────────

  /** "Thinking…": the answer may take longer than the 3 s Discord allows for a reply. */
  async defer(interactionId: string, token: string, ephemeral: boolean): Promise<void> {
    await this.rest.post(`/interactions/${interactionId}/${token}/callback`, {
      body: { type: 5, data: ephemeral ? { flags: EPHEMERAL } : {} },
      auth: false,
    });
  }

  async editOriginal(applicationId: string, token: string, message: OutboundMessage): Promise<SendResult> {
    const { body, files } = this.payload(message);
    try {
      return {
        messageId: String(
          (
            (await this.rest.patch(`/webhooks/${applicationId}/${token}/messages/@original`, {
              body,
              files,
              auth: false,
            })) as Json
          ).id,
        ),
      };
    } catch (error) {
      throw toSendError(error, 'answering a slash command');
    }
  }

  async followUp(
    applicationId: string,
    token: string,
    message: OutboundMessage,
    ephemeral: boolean,
  ): Promise<SendResult> {
    const { body, files } = this.payload(message, ephemeral ? EPHEMERAL : 0);
    try {
      return {
        messageId: String(
          (
            (await this.rest.post(`/webhooks/${applicationId}/${token}`, {
              body,
              files,
              auth: false,
              query: new URLSearchParams({ wait: 'true' }),
            })) as Json
          ).id,
        ),
      };
    } catch (error) {
      throw toSendError(error, 'a slash command follow-up');
    }
  }

  async registerCommands(applicationId: string, commands: unknown[]): Promise<void> {
    await this.rest.put(`/applications/${applicationId}/commands`, { body: commands });
  }
}
