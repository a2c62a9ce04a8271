/**
 * A fake of WhatsApp Web as the channel sees it through Baileys: a socket factory whose
 * sockets behave like `makeWASocket`'s — `connection.update` with rotating QR codes, open,
 * and close carrying Baileys' status codes (401 loggedOut, 408 lost / QR timeout, 428
 * closed, 440 replaced, 515 restartRequired); `creds.update` while linking;
 * `messages.upsert` for incoming messages (and an "append" echo of each own send); and it
 * records presence updates (typing) and read receipts — and the server behind them: messages
 * sent while no socket is open wait and arrive on the next connection, and what was not
 * acknowledged before a drop can be delivered again, as WhatsApp does.
 */
import { randomBytes } from 'node:crypto';
import type { AuthStore } from '../../plugins/channel-whatsapp/auth-store.js';
import {
  DisconnectReason,
  type SocketOptions,
  type WaContent,
  type WaEvents,
  type WaKey,
  type WaMessage,
  type WaOutbound,
  type WaSocket,
} from '../../plugins/channel-whatsapp/types.js';

type Listener = (data: any) => void;

export interface SentMessage {
  jid: string;
  content: WaOutbound;
  id: string;
  /** performance.now() when the fake server got it. */
  at: number;
  /** Which socket (connection number) carried it. */
  connection: number;
}

function closeError(code: number, message: string): Error {
  return Object.assign(new Error(message), { output: { statusCode: code, payload: { message } } });
}

export class FakeWhatsAppSocket implements WaSocket {
  private readonly listeners = new Map<string, Listener[]>();
  closed = false;
  user?: { id: string; lid?: string; name?: string };

  constructor(
    private readonly server: FakeWhatsApp,
    readonly number: number,
    private readonly auth: AuthStore,
  ) {}

  ev = {
    on: <E extends keyof WaEvents>(event: E, listener: (data: WaEvents[E]) => void) => {
      this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener as Listener]);
    },
  };

  emit<E extends keyof WaEvents>(event: E, data: WaEvents[E]): void {
    for (const listener of this.listeners.get(event) ?? []) listener(data);
  }

  async sendMessage(
    jid: string,
    content: WaOutbound,
    options: { messageId?: string } = {},
  ): Promise<WaMessage | undefined> {
    if (this.closed) throw closeError(DisconnectReason.connectionClosed, 'Connection Closed');
    await this.server.sendDelay();
    if (this.closed) throw closeError(DisconnectReason.connectionClosed, 'Connection Closed');
    if (this.server.failOnce?.(content)) {
      this.server.failOnce = undefined;
      throw closeError(DisconnectReason.connectionLost, 'Connection Lost');
    }
    const id = options.messageId ?? `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
    const item = { jid, content, id, at: performance.now(), connection: this.number };
    this.server.sent.push(item);
    this.server.onSent?.(item);
    const echo: WaMessage = {
      key: { remoteJid: jid, fromMe: true, id },
      message: 'text' in content ? { conversation: content.text } : {},
      messageTimestamp: Math.floor(Date.now() / 1000),
    };
    // Baileys hands own sends back as an upsert before sendMessage returns; in self-chat that is the same chat.
    this.emit('messages.upsert', { messages: [echo], type: 'append' });
    return echo;
  }

  async sendPresenceUpdate(type: 'composing' | 'paused' | 'available' | 'unavailable', jid?: string): Promise<void> {
    if (this.closed) throw closeError(DisconnectReason.connectionClosed, 'Connection Closed');
    this.server.presence.push({ type, jid, at: Date.now() });
  }

  async readMessages(keys: WaKey[]): Promise<void> {
    if (this.closed) throw closeError(DisconnectReason.connectionClosed, 'Connection Closed');
    this.server.reads.push(...keys);
    for (const key of keys) this.server.ack(key.id!);
  }

  end(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('connection.update', {
      connection: 'close',
      lastDisconnect: {
        error: error ?? closeError(DisconnectReason.connectionClosed, 'Connection Closed'),
        date: new Date(),
      },
    });
  }

  async logout(): Promise<void> {
    this.server.linked = undefined;
    this.close(DisconnectReason.loggedOut, 'Intentional Logout');
  }

  async downloadMedia(message: WaMessage): Promise<Buffer> {
    const data = this.server.media.get(message.key.id!);
    if (!data) throw new Error('media not found');
    return data;
  }

  async saveCreds(): Promise<void> {
    await this.auth.write('creds.json', JSON.stringify(this.server.credsFor(this)));
  }

  /** Server side: drop this connection with a status code. */
  close(code: number, message: string): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('connection.update', {
      connection: 'close',
      lastDisconnect: { error: closeError(code, message), date: new Date() },
    });
  }
}

export interface FakeWhatsAppOptions {
  /** The linked number (digits). */
  number?: string;
  lid?: string;
  /** Each socket's sends take this long (for the benchmark's latency). */
  sendDelayMs?: number;
}

export class FakeWhatsApp {
  readonly number: string;
  readonly lid: string;
  readonly sockets: FakeWhatsAppSocket[] = [];
  readonly sent: SentMessage[] = [];
  readonly presence: Array<{ type: string; jid?: string; at: number }> = [];
  readonly reads: WaKey[] = [];
  readonly media = new Map<string, Buffer>();
  /** When each socket was opened (for the backoff checks). */
  readonly connectTimes: number[] = [];
  /** The device this server knows as linked (set by a scan). */
  linked?: string;
  /** Closes every new connection with this code instead of opening it (e.g. 401 after an unlink). */
  refuseWith?: number;
  /** The next send whose content matches fails once (as when the link drops mid-send). */
  failOnce?: (content: WaOutbound) => boolean;
  /** Called for every message a socket sends (the benchmark's clock). */
  onSent?: (item: SentMessage) => void;
  /** QR payloads shown so far. */
  readonly qrs: string[] = [];
  private readonly pending: WaMessage[] = [];
  private readonly unacked = new Map<string, WaMessage>();
  /** Every message delivered, acknowledged or not: an ack can be lost with the connection that carried it. */
  private readonly delivered = new Map<string, WaMessage>();
  private counter = 0;

  constructor(private readonly options: FakeWhatsAppOptions = {}) {
    this.number = options.number ?? '15550000001';
    this.lid = options.lid ?? '99887766554433';
  }

  get jid(): string {
    return `${this.number}@s.whatsapp.net`;
  }

  get current(): FakeWhatsAppSocket | undefined {
    const last = this.sockets[this.sockets.length - 1];
    return last && !last.closed ? last : undefined;
  }

  async sendDelay(): Promise<void> {
    if (this.options.sendDelayMs) await new Promise((resolve) => setTimeout(resolve, this.options.sendDelayMs));
  }

  credsFor(socket: FakeWhatsAppSocket): Record<string, unknown> {
    return {
      noiseKey: 'fake',
      ...(socket.user ? { me: { id: socket.user.id, lid: socket.user.lid }, registered: true } : {}),
    };
  }

  /** Creds that look linked, for seeding an auth folder. */
  linkedCreds(): string {
    return JSON.stringify({
      noiseKey: 'fake',
      me: { id: `${this.number}:7@s.whatsapp.net`, lid: `${this.lid}:7@lid` },
      registered: true,
    });
  }

  /** The socket factory the plugin gets. */
  readonly factory = async (options: SocketOptions): Promise<WaSocket> => {
    const socket = new FakeWhatsAppSocket(this, this.sockets.length + 1, options.auth);
    this.sockets.push(socket);
    this.connectTimes.push(Date.now());
    let creds: { me?: { id: string; lid?: string } } | undefined;
    try {
      creds = JSON.parse((await options.auth.read('creds.json')) ?? 'null') ?? undefined;
    } catch {
      creds = undefined;
    }
    setTimeout(() => {
      if (socket.closed) return;
      socket.emit('connection.update', { connection: 'connecting' });
      if (this.refuseWith !== undefined)
        return socket.close(
          this.refuseWith,
          this.refuseWith === DisconnectReason.loggedOut ? 'Stream Errored (conflict)' : 'refused',
        );
      if (creds?.me) {
        socket.user = { id: creds.me.id, ...(creds.me.lid ? { lid: creds.me.lid } : {}) };
        this.open(socket);
      } else this.showQr(socket);
    }, 1);
    return socket;
  };

  private open(socket: FakeWhatsAppSocket): void {
    socket.emit('connection.update', { connection: 'open' });
    // What arrived while nobody was connected (and what was never acknowledged) comes now.
    const waiting = [...this.pending.splice(0)];
    if (waiting.length > 0)
      setTimeout(() => !socket.closed && socket.emit('messages.upsert', { messages: waiting, type: 'notify' }), 1);
  }

  private showQr(socket: FakeWhatsAppSocket): void {
    const qr = `2@${randomBytes(24).toString('base64')},${randomBytes(32).toString('base64')},${randomBytes(32).toString('base64')},${randomBytes(32).toString('base64')}`;
    this.qrs.push(qr);
    socket.emit('connection.update', { qr });
  }

  /** A new QR for the waiting socket (Baileys rotates them). */
  rotateQr(): void {
    if (this.current) this.showQr(this.current);
  }

  /** The QR codes ran out before anyone scanned (Baileys: 408 "QR refs attempts ended"). */
  expireQr(): void {
    this.current?.close(DisconnectReason.timedOut, 'QR refs attempts ended');
  }

  /** The phone scanned the QR: creds arrive, then WhatsApp asks for a restart (515), then the new socket opens. */
  scan(): void {
    const socket = this.current;
    if (!socket) throw new Error('no socket is waiting for a scan');
    socket.user = { id: `${this.number}:7@s.whatsapp.net`, lid: `${this.lid}:7@lid` };
    this.linked = socket.user.id;
    socket.emit('creds.update', { me: socket.user });
    setTimeout(() => socket.close(DisconnectReason.restartRequired, 'Stream Errored (restart required)'), 5);
  }

  /** Drop the connection (408 lost by default); `redeliver`: messages WhatsApp will send again, read or not. */
  drop(code: number = DisconnectReason.connectionLost, redeliver: string[] = []): void {
    for (const id of redeliver) {
      const message = this.delivered.get(id);
      if (!message) throw new Error(`redeliver: no message ${id} was delivered`);
      this.pending.push(message);
    }
    this.current?.close(code, code === DisconnectReason.loggedOut ? 'Stream Errored (conflict)' : 'Connection Lost');
  }

  ack(id: string): void {
    this.unacked.delete(id);
  }

  /** A user's message reaches the account: now if connected, else on the next connection. */
  deliver(message: WaMessage): void {
    this.unacked.set(message.key.id!, message);
    this.delivered.set(message.key.id!, message);
    const socket = this.current;
    if (socket && socket.user) socket.emit('messages.upsert', { messages: [message], type: 'notify' });
    else this.pending.push(message);
  }

  nextId(): string {
    return `WAMSG${++this.counter}${randomBytes(3).toString('hex').toUpperCase()}`;
  }

  dm(
    from: string,
    content: string | WaContent,
    options: { id?: string; pushName?: string; fromMe?: boolean; remoteJid?: string } = {},
  ): WaMessage {
    const jid = options.remoteJid ?? (from.includes('@') ? from : `${from.replace(/^\+/, '')}@s.whatsapp.net`);
    return {
      key: { remoteJid: jid, fromMe: options.fromMe ?? false, id: options.id ?? this.nextId() },
      message: typeof content === 'string' ? { conversation: content } : content,
      ...(options.pushName ? { pushName: options.pushName } : {}),
      messageTimestamp: Math.floor(Date.now() / 1000),
    };
  }

  group(
    groupJid: string,
    from: string,
    text: string,
    options: { id?: string; mention?: boolean; pushName?: string } = {},
  ): WaMessage {
    const participant = from.includes('@') ? from : `${from.replace(/^\+/, '')}@s.whatsapp.net`;
    return {
      key: { remoteJid: groupJid, fromMe: false, id: options.id ?? this.nextId(), participant },
      message: options.mention
        ? { extendedTextMessage: { text: `@${this.number} ${text}`, contextInfo: { mentionedJid: [this.jid] } } }
        : { conversation: text },
      ...(options.pushName ? { pushName: options.pushName } : {}),
      messageTimestamp: Math.floor(Date.now() / 1000),
    };
  }

  /** Sent text messages (captions excluded), oldest first. */
  sentTexts(jid?: string): string[] {
    return this.sent
      .filter((item) => (!jid || item.jid === jid) && 'text' in item.content)
      .map((item) => (item.content as { text: string }).text);
  }

  reset(): void {
    this.sent.length = 0;
    this.presence.length = 0;
    this.reads.length = 0;
    this.pending.length = 0;
    this.unacked.clear();
    this.delivered.clear();
  }
}
