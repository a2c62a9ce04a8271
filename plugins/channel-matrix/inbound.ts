/**
 * One Matrix timeline event → what the pipeline needs to know about it. Pure: no SDK, no
 * network; the account fetches media and hands the result to the pipeline.
 */
import type { InboundMessage } from '../../sdk/channels/index.js';
import type { MatrixAccountSettings, ThreadReplies } from './config.js';

type Json = any;

/** What the account knows of one joined room, from its state events. */
export interface RoomInfo {
  id: string;
  name?: string;
  canonicalAlias?: string;
  encrypted: boolean;
  /** Listed in the bot's `m.direct`, or the bot's own membership says `is_direct`. */
  direct: boolean;
  /** Joined members → display name (or undefined). */
  members: Map<string, string | undefined>;
}

export function newRoom(id: string): RoomInfo {
  return { id, encrypted: false, direct: false, members: new Map() };
}

/** Apply one state event (from `state` or the timeline) to the room. */
export function applyState(room: RoomInfo, event: Json, botUserId: string): void {
  if (typeof event?.type !== 'string' || typeof event.state_key !== 'string') return;
  const content = event.content ?? {};
  switch (event.type) {
    case 'm.room.name':
      room.name = typeof content.name === 'string' && content.name ? content.name : undefined;
      break;
    case 'm.room.canonical_alias':
      room.canonicalAlias = typeof content.alias === 'string' ? content.alias : undefined;
      break;
    case 'm.room.encryption':
      room.encrypted = typeof content.algorithm === 'string';
      break;
    case 'm.room.member':
      if (content.membership === 'join')
        room.members.set(event.state_key, typeof content.displayname === 'string' ? content.displayname : undefined);
      else room.members.delete(event.state_key);
      if (event.state_key === botUserId && content.is_direct === true) room.direct = true;
      break;
  }
}

/** A room is a DM when marked so, or when it is an unnamed room of the bot and one other person. */
export function isDirect(room: RoomInfo): boolean {
  return room.direct || (!room.name && !room.canonicalAlias && room.members.size === 2);
}

export interface MatrixMedia {
  kind: 'image' | 'audio' | 'video' | 'file';
  mxc: string;
  fileName: string;
  mimeType?: string;
  size?: number;
}

export interface ParsedEvent {
  inbound: Omit<InboundMessage, 'accountId'>;
  roomId: string;
  media?: MatrixMedia;
}

const MEDIA_TYPES: Record<string, MatrixMedia['kind']> = {
  'm.image': 'image',
  'm.audio': 'audio',
  'm.video': 'video',
  'm.file': 'file',
};

/** The reply fallback (`> <@user> quoted` lines and a blank line) that older clients put before the text. */
export function stripReplyFallback(body: string): string {
  const lines = body.split('\n');
  let index = 0;
  while (index < lines.length && lines[index]!.startsWith('> ')) index++;
  if (index === 0) return body;
  if (lines[index] === '') index++;
  return lines.slice(index).join('\n');
}

function mentionsBot(content: Json, text: string, botUserId: string, botName: string | undefined): boolean {
  const intentional = content['m.mentions'];
  // Intentional mentions (spec 1.7) are authoritative when present.
  if (intentional && typeof intentional === 'object')
    return Array.isArray(intentional.user_ids) && intentional.user_ids.includes(botUserId);
  if (text.includes(botUserId)) return true;
  const html = typeof content.formatted_body === 'string' ? content.formatted_body : '';
  if (html.includes(`matrix.to/#/${botUserId}`) || html.includes(`matrix.to/#/${encodeURIComponent(botUserId)}`))
    return true;
  if (!botName) return false;
  const escaped = botName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, 'iu').test(text);
}

/**
 * A message event worth handing to the pipeline, or undefined (the bot's own, edits,
 * notices from bots, state, redacted or unknown events).
 */
export function parseMessage(
  event: Json,
  room: RoomInfo,
  bot: { userId: string; sentEventIds: { has(id: string): boolean } },
  settings: Pick<MatrixAccountSettings, 'dmSessionScope' | 'threadReplies' | 'dmThreadReplies'>,
): ParsedEvent | undefined {
  if (event?.type !== 'm.room.message' || typeof event.event_id !== 'string') return undefined;
  if (event.sender === bot.userId || typeof event.sender !== 'string') return undefined;
  const content = event.content ?? {};
  if (typeof content.msgtype !== 'string' || typeof content.body !== 'string') return undefined;
  // Notices are what bots send: answering them makes two bots talk forever.
  if (content.msgtype === 'm.notice') return undefined;
  const relation = content['m.relates_to'] ?? {};
  // An edit repeats the message; the first version was handled already.
  if (relation.rel_type === 'm.replace') return undefined;
  const direct = isDirect(room);
  const mediaKind = MEDIA_TYPES[content.msgtype];
  const replyToId =
    typeof relation['m.in_reply_to']?.event_id === 'string' ? relation['m.in_reply_to'].event_id : undefined;
  let text = replyToId ? stripReplyFallback(content.body) : content.body;
  if (content.msgtype === 'm.emote') text = `* ${room.members.get(event.sender) ?? event.sender} ${text}`;
  let media: MatrixMedia | undefined;
  if (mediaKind) {
    if (typeof content.url !== 'string' || !content.url.startsWith('mxc://')) return undefined;
    const info = content.info ?? {};
    const fileName = typeof content.filename === 'string' && content.filename ? content.filename : content.body;
    media = {
      kind: mediaKind,
      mxc: content.url,
      fileName: String(fileName || 'file').slice(0, 200),
      ...(typeof info.mimetype === 'string' ? { mimeType: info.mimetype } : {}),
      ...(Number.isFinite(info.size) ? { size: info.size } : {}),
    };
    // The body of a media event is its file name unless a caption was given (spec 1.10).
    text = typeof content.filename === 'string' && content.filename !== content.body ? content.body : '';
  }
  const botName = room.members.get(bot.userId);
  const repliesToBot = replyToId !== undefined && bot.sentEventIds.has(replyToId);
  const mentioned = repliesToBot || mentionsBot(content, text, bot.userId, botName);
  const mode: ThreadReplies = direct ? settings.dmThreadReplies : settings.threadReplies;
  const inThread = relation.rel_type === 'm.thread' && typeof relation.event_id === 'string';
  const threadId =
    mode === 'off'
      ? undefined
      : inThread
        ? (relation.event_id as string)
        : mode === 'always'
          ? event.event_id
          : undefined;
  const senderName = room.members.get(event.sender);
  const perRoom = !direct || settings.dmSessionScope === 'per-room';
  return {
    roomId: room.id,
    ...(media ? { media } : {}),
    inbound: {
      peer: { kind: direct ? 'direct' : 'group', id: perRoom ? room.id : event.sender },
      sender: { id: event.sender, ...(senderName ? { name: senderName } : {}) },
      text,
      messageId: event.event_id,
      ...(threadId ? { threadId } : {}),
      ...(replyToId ? { replyTo: { messageId: replyToId } } : {}),
      ...(direct ? {} : { mentioned }),
      ...(room.name || room.canonicalAlias ? { peerName: room.name ?? room.canonicalAlias } : {}),
      ...(Number.isFinite(event.origin_server_ts) ? { timestamp: event.origin_server_ts } : {}),
    },
  };
}
