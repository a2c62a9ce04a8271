/**
 * The part of a Baileys socket the plugin uses, typed here so nothing but `socket.ts`
 * imports Baileys: the real adapter wraps `makeWASocket`, the tests hand in a fake with
 * the same event surface (connection.update with QR codes and close reasons,
 * messages.upsert, creds.update) and methods (sendMessage, sendPresenceUpdate for typing,
 * readMessages for read receipts).
 */
import type { Logger } from '../../sdk/index.js';
import type { AuthStore } from './auth-store.js';

/** Baileys' DisconnectReason values (the status codes a close carries). */
export const DisconnectReason = {
  connectionClosed: 428,
  connectionLost: 408,
  connectionReplaced: 440,
  timedOut: 408,
  loggedOut: 401,
  badSession: 500,
  restartRequired: 515,
  multideviceMismatch: 411,
  forbidden: 403,
  unavailableService: 503,
} as const;

export interface WaKey {
  remoteJid?: string | null;
  /** Baileys 7: the phone-number JID when `remoteJid` is a LID (and the other way round). */
  remoteJidAlt?: string | null;
  fromMe?: boolean | null;
  id?: string | null;
  participant?: string | null;
  participantAlt?: string | null;
}

export interface WaContextInfo {
  mentionedJid?: string[] | null;
  stanzaId?: string | null;
  participant?: string | null;
  quotedMessage?: WaContent | null;
}

interface WaMediaContent {
  caption?: string | null;
  mimetype?: string | null;
  fileLength?: number | string | { toString(): string } | null;
  fileName?: string | null;
  ptt?: boolean | null;
  contextInfo?: WaContextInfo | null;
}

/** The message kinds the plugin reads (proto.IMessage, loosely). */
export interface WaContent {
  conversation?: string | null;
  extendedTextMessage?: { text?: string | null; contextInfo?: WaContextInfo | null } | null;
  imageMessage?: WaMediaContent | null;
  videoMessage?: WaMediaContent | null;
  audioMessage?: WaMediaContent | null;
  documentMessage?: WaMediaContent | null;
  stickerMessage?: WaMediaContent | null;
  documentWithCaptionMessage?: { message?: WaContent | null } | null;
  ephemeralMessage?: { message?: WaContent | null } | null;
  viewOnceMessage?: { message?: WaContent | null } | null;
  viewOnceMessageV2?: { message?: WaContent | null } | null;
}

export interface WaMessage {
  key: WaKey;
  message?: WaContent | null;
  pushName?: string | null;
  messageTimestamp?: number | { toNumber(): number } | null;
}

export interface WaCloseError extends Error {
  output?: { statusCode?: number; payload?: { message?: string } };
}

export interface ConnectionUpdate {
  connection?: 'connecting' | 'open' | 'close';
  /** A new linking QR (rotates about every 20 s until scanned). */
  qr?: string;
  lastDisconnect?: { error?: WaCloseError | Error; date?: Date };
  isNewLogin?: boolean;
}

export interface WaEvents {
  'connection.update': ConnectionUpdate;
  'creds.update': unknown;
  'messages.upsert': { messages: WaMessage[]; type: 'notify' | 'append' | string };
}

export type WaOutbound =
  | { text: string; mentions?: string[] }
  | { image: Buffer; caption?: string; mimetype?: string }
  | { video: Buffer; caption?: string; mimetype?: string }
  | { audio: Buffer; mimetype: string; ptt?: boolean }
  | { document: Buffer; mimetype: string; fileName: string; caption?: string }
  | { react: { text: string; key: WaKey } };

export interface WaSocket {
  ev: { on<E extends keyof WaEvents>(event: E, listener: (data: WaEvents[E]) => void): void };
  /** The linked identity, once known: `<number>:<device>@s.whatsapp.net`, and the LID. */
  readonly user?: { id: string; lid?: string; name?: string } | undefined;
  /** `messageId`: our own id for the message (so its echo is recognised before the send returns). */
  sendMessage(
    jid: string,
    content: WaOutbound,
    options?: { quoted?: WaMessage; messageId?: string },
  ): Promise<WaMessage | undefined>;
  sendPresenceUpdate(type: 'composing' | 'paused' | 'available' | 'unavailable', jid?: string): Promise<void>;
  readMessages(keys: WaKey[]): Promise<void>;
  /** Close the connection (fires connection.update close). */
  end(error?: Error): void;
  /** Unlink the device from the phone. */
  logout(): Promise<void>;
  /** The media of a message, as bytes (Baileys' downloadMediaMessage). */
  downloadMedia(message: WaMessage): Promise<Buffer>;
  /** Persist the current credentials (called on creds.update). */
  saveCreds(): Promise<void>;
  /** The host the socket connects to (web.whatsapp.com), for errors that name it. */
  readonly host?: string;
}

export interface SocketOptions {
  accountId: string;
  /** Credentials folder of the account (`<stateDir>/credentials/whatsapp/<accountId>`). */
  auth: AuthStore;
  logger: Logger;
}

/** Makes one socket; a new one per connection attempt (a closed Baileys socket is dead). */
export type SocketFactory = (options: SocketOptions) => Promise<WaSocket>;
