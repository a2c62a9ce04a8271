/**
 * A Telegram message → the kernel's InboundMessage. Pure: no grammY, no network. Files are
 * only described here (`attachments`); `bot.ts` fetches them.
 *
 * The fields are read defensively from the wire JSON rather than through grammY's types:
 * Bot API versions add and move fields, and a missing one must not lose the message.
 */
import type { InboundMessage } from '../../sdk/channels/index.js';

export interface TgUser {
  id: number | string;
  is_bot?: boolean;
  first_name?: string;
  last_name?: string;
  username?: string;
}

export interface TgChat {
  id: number | string;
  type: string;
  title?: string;
  username?: string;
  first_name?: string;
  last_name?: string;
  is_forum?: boolean;
}

export interface TgEntity {
  type: string;
  offset: number;
  length: number;
  user?: TgUser;
}

export interface TgFile {
  file_id: string;
  file_unique_id: string;
  file_size?: number;
  mime_type?: string;
  file_name?: string;
  is_animated?: boolean;
  is_video?: boolean;
}

export interface TgMessage {
  message_id: number | string;
  message_thread_id?: number | string;
  is_topic_message?: boolean;
  date?: number;
  chat: TgChat;
  from?: TgUser;
  sender_chat?: TgChat;
  text?: string;
  caption?: string;
  entities?: TgEntity[];
  caption_entities?: TgEntity[];
  reply_to_message?: TgMessage;
  forum_topic_created?: unknown;
  photo?: TgFile[];
  document?: TgFile;
  sticker?: TgFile;
  voice?: TgFile;
  audio?: TgFile;
  video?: TgFile;
  animation?: TgFile;
  video_note?: TgFile;
}

export interface BotIdentity {
  id: number | string;
  username?: string;
}

export type AttachmentKind =
  'photo' | 'document' | 'sticker' | 'voice' | 'audio' | 'video' | 'animation' | 'video_note';

/** A file to fetch with getFile. */
export interface Attachment {
  kind: AttachmentKind;
  fileId: string;
  uniqueId: string;
  size?: number;
  mimeType?: string;
  fileName?: string;
}

export interface ParsedMessage {
  inbound: Omit<InboundMessage, 'accountId'>;
  attachments: Attachment[];
}

const DEFAULT_MIME: Record<AttachmentKind, string> = {
  photo: 'image/jpeg',
  document: 'application/octet-stream',
  sticker: 'image/webp',
  voice: 'audio/ogg',
  audio: 'audio/mpeg',
  video: 'video/mp4',
  animation: 'video/mp4',
  video_note: 'video/mp4',
};

const fullName = (user: { first_name?: string; last_name?: string }) =>
  [user.first_name, user.last_name].filter(Boolean).join(' ') || undefined;

/** Thread id of a forum topic (or a private-chat topic); plain reply threads are not topics. */
export function topicOf(message: TgMessage): string | undefined {
  if (message.message_thread_id === undefined || message.message_thread_id === null) return undefined;
  return message.is_topic_message || message.chat.is_forum ? String(message.message_thread_id) : undefined;
}

/**
 * Inside a forum topic every message "replies" to the topic's first service message;
 * that is not the user replying to anyone.
 */
function realReply(message: TgMessage): TgMessage | undefined {
  const reply = message.reply_to_message;
  if (!reply) return undefined;
  if (reply.forum_topic_created !== undefined) return undefined;
  if (topicOf(message) !== undefined && String(reply.message_id) === String(message.message_thread_id))
    return undefined;
  return reply;
}

/** The leading /command and whom it names ("/help@some_bot" → some_bot). */
function leadingCommand(
  text: string,
  entities: readonly TgEntity[],
): { command: string; target?: string; length: number } | undefined {
  const entity = entities.find((candidate) => candidate.type === 'bot_command' && candidate.offset === 0);
  const raw = entity ? text.slice(0, entity.length) : /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text)?.[0];
  if (!raw) return undefined;
  const [command, target] = raw.split('@');
  return { command: command!, ...(target ? { target } : {}), length: raw.length };
}

/** Is the bot addressed: @mention, text mention, reply to one of its messages, or a command for it? */
export function addressesBot(message: TgMessage, bot: BotIdentity): boolean {
  const text = message.text ?? message.caption ?? '';
  const entities = message.entities ?? message.caption_entities ?? [];
  const username = bot.username?.toLowerCase();
  for (const entity of entities) {
    if (
      entity.type === 'mention' &&
      username &&
      text.slice(entity.offset, entity.offset + entity.length).toLowerCase() === `@${username}`
    )
      return true;
    if (entity.type === 'text_mention' && entity.user && String(entity.user.id) === String(bot.id)) return true;
  }
  // Clients always send mention entities; the text check covers hand-built updates.
  if (username && new RegExp(`(^|[^\\w@])@${username}(?![\\w])`, 'i').test(text)) return true;
  const reply = realReply(message);
  if (reply?.from && String(reply.from.id) === String(bot.id)) return true;
  const command = leadingCommand(text, entities);
  // "/cmd" goes to every bot in the group; "/cmd@other_bot" to that one only.
  if (command) return command.target === undefined || command.target.toLowerCase() === username;
  return false;
}

function attachmentsOf(message: TgMessage, maxBytes: number): Attachment[] {
  const out: Attachment[] = [];
  const add = (kind: AttachmentKind, file: TgFile | undefined) => {
    if (!file?.file_id) return;
    out.push({
      kind,
      fileId: file.file_id,
      uniqueId: file.file_unique_id ?? file.file_id,
      ...(file.file_size !== undefined ? { size: file.file_size } : {}),
      mimeType: file.mime_type ?? DEFAULT_MIME[kind],
      ...(file.file_name ? { fileName: file.file_name } : {}),
    });
  };
  if (message.photo?.length) {
    // Sizes come smallest first; take the largest one that may be downloaded.
    const fitting = message.photo.filter((size) => size.file_size === undefined || size.file_size <= maxBytes);
    add('photo', fitting[fitting.length - 1] ?? message.photo[0]);
  }
  add('document', message.document);
  // Animated and video stickers are not images a model can read.
  if (message.sticker && !message.sticker.is_animated && !message.sticker.is_video) add('sticker', message.sticker);
  add('voice', message.voice);
  add('audio', message.audio);
  add('video', message.video);
  // A GIF arrives as both `animation` and `document`; one copy is enough.
  if (!message.document) add('animation', message.animation);
  add('video_note', message.video_note);
  return out;
}

/**
 * Normalise one message. Undefined for what is not a conversation message: channel posts,
 * service messages (members joining, pins, topic edits) and anything without text or files.
 */
export function parseMessage(
  message: TgMessage,
  bot: BotIdentity,
  options: { mediaMaxBytes: number },
): ParsedMessage | undefined {
  const chat = message.chat;
  if (!chat || (chat.type !== 'private' && chat.type !== 'group' && chat.type !== 'supergroup')) return undefined;
  const attachments = attachmentsOf(message, options.mediaMaxBytes);
  let text = message.text ?? message.caption ?? '';
  if (!text && attachments.length === 0) return undefined;

  const entities = message.entities ?? message.caption_entities ?? [];
  const command = leadingCommand(text, entities);
  // The kernel matches "/status", not "/status@claw_bot".
  if (command?.target && command.target.toLowerCase() === bot.username?.toLowerCase())
    text = command.command + text.slice(command.length);

  const isDirect = chat.type === 'private';
  const sender = message.sender_chat
    ? // Anonymous admins and channels speak as a chat.
      {
        id: String(message.sender_chat.id),
        name: message.sender_chat.title ?? fullName(message.sender_chat),
        ...(message.sender_chat.username ? { username: message.sender_chat.username } : {}),
      }
    : message.from
      ? {
          id: String(message.from.id),
          name: fullName(message.from),
          ...(message.from.username ? { username: message.from.username } : {}),
        }
      : undefined;
  if (!sender) return undefined;
  if (sender.name === undefined) delete (sender as { name?: string }).name;

  const reply = realReply(message);
  const threadId = topicOf(message);
  const inbound: Omit<InboundMessage, 'accountId'> = {
    peer: { kind: isDirect ? 'direct' : 'group', id: String(chat.id) },
    sender,
    text,
    messageId: String(message.message_id),
    mentioned: isDirect || addressesBot(message, bot),
    ...(threadId !== undefined ? { threadId } : {}),
    ...(reply
      ? {
          replyTo: {
            messageId: String(reply.message_id),
            ...((reply.text ?? reply.caption) ? { text: reply.text ?? reply.caption } : {}),
            ...(reply.from ? { senderId: String(reply.from.id) } : {}),
          },
        }
      : {}),
    ...(!isDirect && chat.title ? { peerName: chat.title } : {}),
    ...(message.date ? { timestamp: message.date * 1000 } : {}),
  };
  return { inbound, attachments };
}
