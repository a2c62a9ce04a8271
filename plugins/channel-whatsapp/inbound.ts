/**
 * A Baileys message → the kernel's InboundMessage, and chat ids ↔ JIDs. Pure: no socket.
 *
 * Ids as users write them: a phone-number JID `15551234567@s.whatsapp.net` (with or
 * without a `:device` suffix) is the sender "+15551234567", so `allowFrom` and bindings
 * take E.164 numbers as in OpenClaw; a group is its JID `…@g.us`; a LID-only sender keeps
 * its JID `…@lid`.
 */
import type { InboundMessage } from '../../sdk/channels/index.js';
import type { WaContent, WaContextInfo, WaMessage } from './types.js';

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

export interface SelfIdentity {
  /** The linked number's JID, without device (`15551234567@s.whatsapp.net`). */
  pn?: string;
  /** The linked account's LID (`1234@lid`). */
  lid?: string;
}

export interface ParsedWaMessage {
  inbound: Omit<InboundMessage, 'accountId'>;
  media?: { kind: MediaKind; mimeType: string; size?: number; fileName?: string };
  /** The account's own number wrote to itself. */
  selfChat: boolean;
}

const DEFAULT_MIME: Record<MediaKind, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/ogg',
  document: 'application/octet-stream',
  sticker: 'image/webp',
};

/** `15551234567:3@s.whatsapp.net` → `15551234567@s.whatsapp.net`. */
export function bareJid(jid: string): string {
  const [user = '', server = ''] = jid.split('@');
  return `${user.split(':')[0]}@${server}`;
}

const isPn = (jid: string | null | undefined): jid is string =>
  typeof jid === 'string' && /@s\.whatsapp\.net$/.test(jid);

/** The id users write for a JID: "+<number>" for phone numbers, the bare user otherwise, the JID for LIDs. */
export function idForJid(jid: string): string {
  const bare = bareJid(jid);
  const [user = ''] = bare.split('@');
  if (isPn(bare)) return /^\d+$/.test(user) ? `+${user}` : user;
  return bare;
}

/** What `claw message send --to` and replies accept: "+15551234567", a JID, or a bare user id. */
export function jidFor(to: string): string {
  const trimmed = to.trim().replace(/^whatsapp:/i, '');
  if (trimmed.includes('@')) return trimmed;
  const digits = trimmed.replace(/[\s().-]/g, '');
  if (/^\+?\d{5,20}$/.test(digits)) return `${digits.replace(/^\+/, '')}@s.whatsapp.net`;
  if (/^[A-Za-z0-9][\w.-]*$/.test(trimmed)) return `${trimmed}@s.whatsapp.net`;
  throw new Error(
    `"${to}" is not a WhatsApp recipient: give a phone number like +15551234567 or a JID (…@s.whatsapp.net, …@g.us)`,
  );
}

/** Baileys wraps some messages (disappearing, view-once, documents with captions). */
export function unwrap(content: WaContent | null | undefined): WaContent | undefined {
  let current = content ?? undefined;
  for (let depth = 0; current && depth < 4; depth++) {
    const inner =
      current.ephemeralMessage?.message ??
      current.viewOnceMessage?.message ??
      current.viewOnceMessageV2?.message ??
      current.documentWithCaptionMessage?.message;
    if (!inner) break;
    current = inner;
  }
  return current;
}

function mediaOf(
  content: WaContent,
): (ParsedWaMessage['media'] & { caption?: string; contextInfo?: WaContextInfo }) | undefined {
  for (const kind of ['image', 'video', 'audio', 'document', 'sticker'] as const) {
    const item = content[`${kind}Message`];
    if (!item) continue;
    const size =
      item.fileLength === undefined || item.fileLength === null ? undefined : Number(item.fileLength.toString());
    return {
      kind,
      mimeType: item.mimetype?.split(';')[0]?.trim() || DEFAULT_MIME[kind],
      ...(size !== undefined && Number.isFinite(size) ? { size } : {}),
      ...(item.fileName ? { fileName: item.fileName } : {}),
      ...(item.caption ? { caption: item.caption } : {}),
      ...(item.contextInfo ? { contextInfo: item.contextInfo } : {}),
    };
  }
  return undefined;
}

function timestampOf(message: WaMessage): number | undefined {
  const raw = message.messageTimestamp;
  if (raw === undefined || raw === null) return undefined;
  const seconds = typeof raw === 'number' ? raw : raw.toNumber();
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

/**
 * Normalise one message. Undefined for what is not a conversation message: status and
 * broadcast posts, newsletters, our own messages (other than self-chat), reactions and
 * protocol messages without text or media.
 */
export function parseWaMessage(message: WaMessage, self: SelfIdentity): ParsedWaMessage | undefined {
  const remote = message.key.remoteJid;
  const id = message.key.id;
  if (!remote || !id) return undefined;
  if (remote.endsWith('@broadcast') || remote.endsWith('@newsletter')) return undefined;
  const content = unwrap(message.message);
  if (!content) return undefined;
  const media = mediaOf(content);
  const text = content.conversation ?? content.extendedTextMessage?.text ?? media?.caption ?? '';
  if (!text && !media) return undefined;

  const isGroup = remote.endsWith('@g.us');
  const ownJids = new Set([self.pn, self.lid].filter((jid): jid is string => Boolean(jid)).map(bareJid));
  let selfChat = false;
  if (message.key.fromMe) {
    // What the owner sends to others from the phone is not for the assistant; to themselves it is.
    if (isGroup) return undefined;
    const chat = [remote, message.key.remoteJidAlt].filter((jid): jid is string => Boolean(jid)).map(bareJid);
    if (!chat.some((jid) => ownJids.has(jid))) return undefined;
    selfChat = true;
  }

  const senderJid = isGroup
    ? isPn(message.key.participantAlt)
      ? message.key.participantAlt
      : (message.key.participant ?? message.key.participantAlt)
    : selfChat && self.pn
      ? self.pn
      : isPn(message.key.remoteJidAlt)
        ? message.key.remoteJidAlt
        : remote;
  if (!senderJid) return undefined;
  const senderId = idForJid(senderJid);
  const context = content.extendedTextMessage?.contextInfo ?? media?.contextInfo ?? undefined;
  const selfDigits = [...ownJids].map((jid) => jid.split('@')[0]!);
  const mentioned =
    !isGroup ||
    (context?.mentionedJid ?? []).some((jid) => ownJids.has(bareJid(jid))) ||
    (context?.participant ? ownJids.has(bareJid(context.participant)) : false) ||
    selfDigits.some((digits) => new RegExp(`(^|[^\\w])@${digits}(?!\\d)`).test(text));
  const quoted = unwrap(context?.quotedMessage);
  const quotedText = quoted?.conversation ?? quoted?.extendedTextMessage?.text ?? undefined;
  const timestamp = timestampOf(message);

  const { caption: _caption, contextInfo: _context, ...mediaInfo } = media ?? ({} as NonNullable<typeof media>);
  return {
    inbound: {
      peer: { kind: isGroup ? 'group' : 'direct', id: isGroup ? bareJid(remote) : senderId },
      sender: { id: senderId, ...(message.pushName ? { name: message.pushName } : {}) },
      text,
      messageId: id,
      mentioned,
      ...(selfChat ? { fromSelf: true } : {}),
      ...(context?.stanzaId
        ? {
            replyTo: {
              messageId: context.stanzaId,
              ...(quotedText ? { text: quotedText } : {}),
              ...(context.participant ? { senderId: idForJid(context.participant) } : {}),
            },
          }
        : {}),
      ...(timestamp ? { timestamp } : {}),
    },
    ...(media ? { media: mediaInfo as NonNullable<ParsedWaMessage['media']> } : {}),
    selfChat,
  };
}
