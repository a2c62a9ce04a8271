/**
 * Discord gateway payloads (MESSAGE_CREATE, INTERACTION_CREATE) → the kernel's
 * InboundMessage. Pure: no discord.js, no network; fields are read defensively from the
 * wire JSON, so an API version that adds or moves a field does not lose the message.
 *
 * Conversations: a DM is the user (peer `direct:<userId>`, as allowFrom names senders); a
 * guild channel is `channel:<channelId>`; a thread is its parent channel with
 * `threadId` = the thread's channel id, so it gets its own session and replies go into it.
 */
import type { InboundMessage } from '../../sdk/channels/index.js';
import { chatCommandName } from './commands.js';

type Json = any;

export interface ChannelInfo {
  id: string;
  type: number;
  name?: string;
  guildId?: string;
  parentId?: string;
}

export interface Attachment {
  id: string;
  url: string;
  fileName: string;
  size?: number;
  mimeType?: string;
}

export interface ParsedMessage {
  inbound: Omit<InboundMessage, 'accountId'>;
  attachments: Attachment[];
  /** The Discord channel the message was posted in (the DM channel, the thread, the channel). */
  channelId: string;
}

/** Channel types (Discord API): DM, group DM, and the thread kinds. */
export const DM = 1;
export const GROUP_DM = 3;
const THREAD_TYPES = new Set([10, 11, 12]);

export function isThread(channel: ChannelInfo | undefined): boolean {
  return channel !== undefined && THREAD_TYPES.has(channel.type);
}

/** Message types a person writes: default, reply, chat-input command, context-menu command. */
const CONVERSATION_TYPES = new Set([0, 19, 20, 23]);

function displayName(user: Json, member: Json): string | undefined {
  return member?.nick ?? user?.global_name ?? user?.username ?? undefined;
}

/** Is the bot addressed: an @mention of it, or a reply to one of its messages? */
export function addressesBot(message: Json, botId: string): boolean {
  if (Array.isArray(message.mentions) && message.mentions.some((user: Json) => String(user?.id) === botId)) return true;
  if (new RegExp(`<@!?${botId}>`).test(String(message.content ?? ''))) return true;
  return String(message.referenced_message?.author?.id ?? '') === botId;
}

/**
 * Normalise one MESSAGE_CREATE. Undefined for what is not a person talking: the bot's own
 * messages, other bots (loops), system messages, group DMs, and messages with neither
 * text nor files.
 */
export function parseMessage(
  message: Json,
  botId: string,
  channel: ChannelInfo | undefined,
): ParsedMessage | undefined {
  if (!message?.id || !message.channel_id || !message.author?.id) return undefined;
  if (String(message.author.id) === botId || message.author.bot || message.webhook_id) return undefined;
  if (message.type !== undefined && !CONVERSATION_TYPES.has(Number(message.type))) return undefined;
  const channelId = String(message.channel_id);
  const isDirect = !message.guild_id;
  if (isDirect && channel?.type === GROUP_DM) return undefined;

  const attachments: Attachment[] = (Array.isArray(message.attachments) ? message.attachments : [])
    .filter((item: Json) => item?.url)
    .map((item: Json) => ({
      id: String(item.id),
      url: String(item.url),
      fileName: String(item.filename ?? 'file'),
      ...(typeof item.size === 'number' ? { size: item.size } : {}),
      ...(item.content_type ? { mimeType: String(item.content_type) } : {}),
    }));
  // The mention that addressed the bot is not part of what the user asked.
  const text = String(message.content ?? '')
    .replace(new RegExp(`<@!?${botId}>`, 'g'), ' ')
    .replace(/\s{2,}/g, ' ')
    .trim();
  if (!text && attachments.length === 0) return undefined;

  const thread = isThread(channel) && channel?.parentId ? channel : undefined;
  const peerId = isDirect ? String(message.author.id) : thread ? thread.parentId! : channelId;
  const reply = message.referenced_message;
  const roles = Array.isArray(message.member?.roles) ? message.member.roles.map(String) : undefined;
  const name = displayName(message.author, message.member);
  const inbound: Omit<InboundMessage, 'accountId'> = {
    peer: { kind: isDirect ? 'direct' : 'channel', id: peerId },
    sender: {
      id: String(message.author.id),
      ...(name ? { name } : {}),
      ...(message.author.username ? { username: String(message.author.username) } : {}),
    },
    text,
    messageId: String(message.id),
    mentioned: isDirect || addressesBot(message, botId),
    ...(thread ? { threadId: thread.id } : {}),
    ...(message.guild_id ? { guildId: String(message.guild_id) } : {}),
    ...(roles ? { memberRoleIds: roles } : {}),
    ...(!isDirect && channel?.name && !thread ? { peerName: channel.name } : {}),
    ...(reply?.id
      ? {
          replyTo: {
            messageId: String(reply.id),
            ...(reply.content ? { text: String(reply.content) } : {}),
            ...(reply.author?.id ? { senderId: String(reply.author.id) } : {}),
          },
        }
      : {}),
    ...(message.timestamp ? { timestamp: Date.parse(String(message.timestamp)) || undefined } : {}),
  };
  if (inbound.timestamp === undefined) delete inbound.timestamp;
  return { inbound, attachments, channelId };
}

export interface ParsedInteraction {
  id: string;
  token: string;
  applicationId: string;
  /** `/name args` as the kernel's command handler reads it. */
  text: string;
  channelId: string;
  guildId?: string;
  user: { id: string; name?: string; username?: string };
  roles?: string[];
}

/** An application (slash) command invocation; undefined for other interaction kinds. */
export function parseInteraction(interaction: Json): ParsedInteraction | undefined {
  if (interaction?.type !== 2 || !interaction.data?.name || !interaction.token) return undefined;
  const user = interaction.member?.user ?? interaction.user;
  if (!user?.id) return undefined;
  const args = (Array.isArray(interaction.data.options) ? interaction.data.options : [])
    .map((option: Json) => (option?.value === undefined ? '' : String(option.value)))
    .filter(Boolean)
    .join(' ');
  const name = displayName(user, interaction.member);
  return {
    id: String(interaction.id),
    token: String(interaction.token),
    applicationId: String(interaction.application_id),
    text: `/${chatCommandName(String(interaction.data.name))}${args ? ` ${args}` : ''}`,
    channelId: String(interaction.channel_id ?? interaction.channel?.id ?? ''),
    ...(interaction.guild_id ? { guildId: String(interaction.guild_id) } : {}),
    user: {
      id: String(user.id),
      ...(name ? { name } : {}),
      ...(user.username ? { username: String(user.username) } : {}),
    },
    ...(Array.isArray(interaction.member?.roles) ? { roles: interaction.member.roles.map(String) } : {}),
  };
}
