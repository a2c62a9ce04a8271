/**
 * Slack slash commands (OpenClaw's `channels.slack.slashCommand`): `/openclaw <text>` is an
 * inbound message from the user who typed it, in a session of its own
 * (`agent:<agentId>:<sessionPrefix>:<userId>`), answered through the command's `response_url`.
 *
 * The same payload arrives as a Socket Mode `slash_commands` envelope or as a signed,
 * form-encoded POST to the webhook path. The answer's address (`InboundMessage.replyAddress`)
 * names the trigger, the channel, the user and the visibility, so a reply written after the
 * reply URL is gone (a restart, Slack's five uses or thirty minutes) still reaches the user:
 * an ephemeral answer in their DM, an in_channel one in the channel. The reply URL itself is
 * kept only in memory and never logged.
 */
import type { InboundMessage } from '../../sdk/channels/index.js';
import type { SlashCommandSettings } from './config.js';

type Json = any;

export interface SlashPayload {
  /** With the "/", as typed ("/openclaw"). */
  command: string;
  text: string;
  userId: string;
  userName?: string;
  channelId: string;
  channelName?: string;
  teamId?: string;
  responseUrl: string;
  /** Unique per invocation: the dedupe key. */
  triggerId: string;
}

/** A slash command's fields (the form fields, or the Socket Mode envelope's payload). */
export function parseSlash(body: Json): SlashPayload | undefined {
  const field = (key: string) => (typeof body?.[key] === 'string' && body[key] ? String(body[key]) : undefined);
  const command = field('command');
  const userId = field('user_id');
  const channelId = field('channel_id');
  const responseUrl = field('response_url');
  const triggerId = field('trigger_id');
  if (!command || !userId || !channelId || !responseUrl || !triggerId) return undefined;
  const userName = field('user_name');
  const channelName = field('channel_name');
  const teamId = field('team_id');
  return {
    command,
    text: field('text') ?? '',
    userId,
    channelId,
    responseUrl,
    triggerId,
    ...(userName ? { userName } : {}),
    ...(channelName ? { channelName } : {}),
    ...(teamId ? { teamId } : {}),
  };
}

/** What the acknowledgement carries: nothing, or an ephemeral text only the user sees. */
export type SlashAck = { response_type: 'ephemeral'; text: string } | undefined;

export const ephemeral = (text: string): SlashAck => ({ response_type: 'ephemeral', text });

export interface SlashAddress {
  ephemeral: boolean;
  channelId: string;
  userId: string;
  triggerId: string;
}

export function slashAddress(address: SlashAddress): string {
  return `slash:${address.ephemeral ? 'e' : 'c'}:${address.channelId}:${address.userId}:${address.triggerId}`;
}

export function parseSlashAddress(to: string): SlashAddress | undefined {
  const match = /^slash:([ec]):([^:]+):([^:]+):(.+)$/.exec(to);
  if (!match) return undefined;
  return { ephemeral: match[1] === 'e', channelId: match[2]!, userId: match[3]!, triggerId: match[4]! };
}

/**
 * The command text as the pipeline should see it: "/status" stays, and a first word that
 * names a chat command becomes one ("status" → "/status"); anything else is a message.
 */
export function commandText(text: string, chatCommands: ReadonlySet<string>): string {
  const trimmed = text.trim();
  const first = /^(\S+)/.exec(trimmed)?.[1]?.toLowerCase();
  if (!first || trimmed.startsWith('/') || !chatCommands.has(first)) return trimmed;
  return `/${trimmed}`;
}

/**
 * The inbound message for a slash command: the conversation it was typed in decides access.
 * A native command (`/new`) acts on that conversation's own session; `/openclaw` runs in the
 * user's slash session.
 */
export function slashInbound(
  payload: SlashPayload,
  settings: SlashCommandSettings,
  text: string,
  native = false,
): Omit<InboundMessage, 'accountId'> {
  const direct = payload.channelId.startsWith('D');
  const group = !direct && payload.channelName?.startsWith('mpdm-') === true;
  return {
    peer: direct
      ? { kind: 'direct', id: payload.userId }
      : { kind: group ? 'group' : 'channel', id: payload.channelId },
    sender: { id: payload.userId, ...(payload.userName ? { name: payload.userName } : {}) },
    text,
    messageId: payload.triggerId,
    mentioned: true,
    ...(!direct && payload.channelName ? { peerName: payload.channelName } : {}),
    ...(payload.teamId ? { teamId: payload.teamId } : {}),
    ...(native ? {} : { sessionScope: `${settings.sessionPrefix}:${payload.userId}` }),
    replyAddress: slashAddress({
      ephemeral: settings.ephemeral,
      channelId: payload.channelId,
      userId: payload.userId,
      triggerId: payload.triggerId,
    }),
  };
}

/** Slack takes up to five answers on one reply URL within thirty minutes. */
const MAX_USES = 5;
const URL_TTL_MS = 30 * 60_000;
const POST_TIMEOUT_MS = 15_000;

interface ReplyUrl {
  url: string;
  uses: number;
  expiresAt: number;
}

/** Reply URLs of the slash commands being answered, by trigger id. */
export class SlashReplies {
  private readonly urls = new Map<string, ReplyUrl>();

  remember(triggerId: string, url: string): void {
    const now = Date.now();
    for (const [id, entry] of this.urls) if (entry.expiresAt < now) this.urls.delete(id);
    this.urls.set(triggerId, { url, uses: 0, expiresAt: now + URL_TTL_MS });
  }

  forget(triggerId: string): void {
    this.urls.delete(triggerId);
  }

  /**
   * Post one answer; false when the reply URL is unknown, used up, expired or refused it
   * (the caller then sends it the ordinary way).
   */
  async post(address: SlashAddress, text: string): Promise<boolean> {
    const entry = this.urls.get(address.triggerId);
    if (!entry || entry.uses >= MAX_USES || entry.expiresAt < Date.now()) {
      this.urls.delete(address.triggerId);
      return false;
    }
    entry.uses++;
    try {
      const response = await fetch(entry.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ response_type: address.ephemeral ? 'ephemeral' : 'in_channel', text }),
        signal: AbortSignal.timeout(POST_TIMEOUT_MS),
      });
      await response.arrayBuffer().catch(() => undefined);
      return response.ok;
    } catch {
      return false;
    }
  }
}
