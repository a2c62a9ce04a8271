/**
 * Outbound Slack: one piece → Web API calls through @slack/web-api's WebClient, and its
 * failures → what the kernel should do about them. The kernel has already cut the text to
 * 4,000 characters (code fences kept whole); the WebClient waits out a 429 (`Retry-After`)
 * itself and sends again, within the retry budget set here.
 *
 *   network, 5xx, ratelimited   retryable (the kernel backs off)
 *   other Slack errors          final (channel_not_found, not_in_channel, invalid_auth, …)
 *
 * Targets: `user:<id>` / a `U…`/`W…` id is a DM (opened once with conversations.open and
 * remembered), `channel:<id>` / `<#id>` / anything else a conversation id.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChannelSendError, type OutboundMessage, type SendResult } from '../../sdk/channels/index.js';
import { markdownToMrkdwn } from './format.js';
import { parseSlashAddress, SlashReplies, type SlashAddress } from './slash.js';

type Json = any;

/** The WebClient calls this module makes (the real one comes from Bolt). */
export interface WebClientLike {
  apiCall(method: string, options?: Record<string, unknown>): Promise<Json>;
  filesUploadV2(options: Record<string, unknown>): Promise<Json>;
}

/** Short waits: a 429's Retry-After is honoured, and the kernel owns longer backoff. */
export const RETRY_CONFIG = { retries: 3, factor: 2, minTimeout: 200, maxTimeout: 5_000 };

export function describeError(error: unknown): string {
  const failure = error as { code?: string; data?: { error?: string }; statusCode?: number; message?: string };
  if (failure?.data?.error) return `Slack answered "${failure.data.error}"`;
  if (failure?.statusCode) return `HTTP ${failure.statusCode}`;
  return failure?.message ?? String(error);
}

export function isAuthRejected(error: unknown): boolean {
  const code = (error as { data?: { error?: string } })?.data?.error;
  return ['invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'token_expired'].includes(code ?? '');
}

export function toSendError(error: unknown, what: string): ChannelSendError {
  if (error instanceof ChannelSendError) return error;
  const failure = error as { code?: string; statusCode?: number; retryAfter?: number };
  const message = `slack ${what} failed: ${describeError(error)}`;
  if (failure?.code === 'slack_webapi_platform_error')
    return new ChannelSendError(message, { retryable: false, cause: error });
  if (failure?.code === 'slack_webapi_rate_limited_error')
    return new ChannelSendError(message, {
      retryable: true,
      ...(failure.retryAfter ? { retryAfterMs: failure.retryAfter * 1000 } : {}),
      cause: error,
    });
  if (failure?.code === 'slack_webapi_http_error')
    return new ChannelSendError(message, { retryable: (failure.statusCode ?? 500) >= 500, cause: error });
  return new ChannelSendError(message, { retryable: true, cause: error });
}

export function parseTarget(to: string): { kind: 'user' | 'channel'; id: string } {
  const value = to.trim().replace(/^slack:/, '');
  const user = /^user:(.+)$/.exec(value) ?? /^<@([UW][A-Z0-9]+)>$/.exec(value);
  if (user) return { kind: 'user', id: user[1]! };
  const channel = /^channel:(.+)$/.exec(value) ?? /^<#([A-Z0-9]+)(?:\|[^>]*)?>$/.exec(value);
  if (channel) return { kind: 'channel', id: channel[1]! };
  return { kind: /^[UW][A-Z0-9]+$/.test(value) ? 'user' : 'channel', id: value };
}

function localPath(url: string): string | undefined {
  if (url.startsWith('file:')) return fileURLToPath(url);
  return /^[a-z][a-z0-9+.-]*:/i.test(url) ? undefined : url;
}

export class SlackSender {
  /** User id → the bot's DM conversation with them. */
  readonly dmChannels = new Map<string, string>();
  /** Reply URLs of the slash commands this account is answering. */
  readonly slash = new SlashReplies();

  constructor(readonly client: WebClientLike) {}

  private async conversation(to: string): Promise<string> {
    const target = parseTarget(to);
    // A DM peer is the user; the conversation it arrived in is the one to answer in.
    const known = this.dmChannels.get(target.id);
    if (known) return known;
    if (target.kind === 'channel') return target.id;
    try {
      const opened = await this.client.apiCall('conversations.open', { users: target.id });
      const id = String(opened?.channel?.id ?? '');
      if (!id) throw new Error('conversations.open returned no channel');
      this.dmChannels.set(target.id, id);
      return id;
    } catch (error) {
      throw toSendError(error, `opening a DM with ${target.id}`);
    }
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const slash = parseSlashAddress(message.to);
    if (slash) return this.answerSlash(message, slash);
    const channel = await this.conversation(message.to);
    const threadTs = message.threadId ?? message.replyTo;
    const links: string[] = [];
    let lastTs: string | undefined;
    for (const item of message.media ?? []) {
      const path = localPath(item.url);
      // A web address is not fetched to be re-uploaded: Slack unfurls the link itself.
      if (!path) {
        links.push(item.caption ? `<${item.url}|${item.caption}>` : `<${item.url}>`);
        continue;
      }
      try {
        await this.client.filesUploadV2({
          channel_id: channel,
          file: await readFile(path),
          filename: basename(path),
          ...(item.caption ? { initial_comment: item.caption } : {}),
          ...(threadTs ? { thread_ts: threadTs } : {}),
        });
      } catch (error) {
        throw toSendError(error, `uploading ${basename(path)}`);
      }
    }
    const text = [message.text ? markdownToMrkdwn(message.text) : '', ...links].filter(Boolean).join('\n');
    if (text) {
      try {
        const posted = await this.client.apiCall('chat.postMessage', {
          channel,
          text,
          ...(threadTs ? { thread_ts: threadTs } : {}),
        });
        lastTs = posted?.ts ? String(posted.ts) : undefined;
      } catch (error) {
        throw toSendError(error, 'chat.postMessage');
      }
    }
    return { ...(lastTs ? { messageId: lastTs } : {}), channel };
  }

  /**
   * A slash command's answer: the text through its reply URL; attachments, and text the URL
   * no longer takes, the ordinary way — to the user's DM when the answer was to be ephemeral.
   */
  private async answerSlash(message: OutboundMessage, slash: SlashAddress): Promise<SendResult> {
    const { text, media, accountId } = message;
    const posted = text ? await this.slash.post(slash, markdownToMrkdwn(text)) : false;
    if (posted && !media?.length) return { channel: slash.channelId };
    return this.send({
      to: slash.ephemeral ? `user:${slash.userId}` : `channel:${slash.channelId}`,
      ...(accountId ? { accountId } : {}),
      ...(text && !posted ? { text } : {}),
      ...(media ? { media } : {}),
    });
  }

  async react(channel: string, ts: string, name: string): Promise<void> {
    await this.client.apiCall('reactions.add', { channel, timestamp: ts, name });
  }

  async unreact(channel: string, ts: string, name: string): Promise<void> {
    await this.client.apiCall('reactions.remove', { channel, timestamp: ts, name });
  }

  /** Slack's "is thinking…" line under an assistant thread; "" clears it. */
  async threadStatus(channel: string, threadTs: string, status: string): Promise<void> {
    await this.client.apiCall('assistant.threads.setStatus', { channel_id: channel, thread_ts: threadTs, status });
  }
}
