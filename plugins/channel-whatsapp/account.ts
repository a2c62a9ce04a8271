/**
 * One WhatsApp account at run time: its socket, the supervisor that keeps it connected,
 * the QR login, and the inbound and outbound paths.
 *
 * Connection: a Baileys socket is single-use; every close is followed by a new socket.
 *   - 515 restartRequired (normal right after a QR scan): reconnect at once.
 *   - 401 loggedOut / 403 forbidden: the phone unlinked this device. The creds are dead:
 *     they are removed, a marker keeps restarts from retrying, state `logged-out` shows in
 *     `claw channels status`, and it is reported once (log + system event + the owner on
 *     another channel). Nothing reconnects until `claw channels login`.
 *   - 440 connectionReplaced: another WhatsApp Web session took over; fighting it would
 *     loop, so the account waits (state `conflict`).
 *   - anything else (408 lost, 428 closed, 500, 503, network): reconnect with exponential
 *     backoff, jitter, capped; the counter resets once a connection opens.
 *
 * Delivery: each chat's messages reach the pipeline in order; a message is marked read
 * (blue ticks) only after the pipeline accepted it into the agent's intake journal, so a
 * read receipt never promises more than is on disk. WhatsApp redelivers what it did not see
 * acknowledged after a reconnect; the pipeline's message-id dedupe answers it once. Replies
 * produced while the socket reconnects wait for it (bounded) instead of failing.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, type Logger, writeFileAtomicAsync } from '../../sdk/index.js';
import {
  ChannelSendError,
  retryDelay,
  type ChannelStatus,
  type InboundMedia,
  type InboundMessage,
  type InboundOutcome,
  type OutboundMessage,
  type RetrySettings,
  type SendResult,
} from '../../sdk/channels/index.js';
import type { AuthStore } from './auth-store.js';
import type { WhatsAppSettings } from './config.js';
import { bareJid, jidFor, parseWaMessage, type ParsedWaMessage, type SelfIdentity } from './inbound.js';
import { outboundContents } from './outbound.js';
import {
  DisconnectReason,
  type ConnectionUpdate,
  type SocketFactory,
  type WaCloseError,
  type WaMessage,
  type WaSocket,
} from './types.js';

export type WaState =
  'stopped' | 'not-linked' | 'connecting' | 'qr' | 'open' | 'reconnecting' | 'logged-out' | 'conflict';

export const DEFAULT_RECONNECT: RetrySettings = {
  attempts: Number.POSITIVE_INFINITY,
  minDelayMs: 2_000,
  maxDelayMs: 60_000,
  jitter: 0.25,
};
/** How long a reply waits for a reconnecting socket before the kernel's retry takes over. */
const SEND_WAIT_MS = 30_000;
/** Offline messages WhatsApp hands over as "append" are answered only if this recent. */
const APPEND_MAX_AGE_MS = 15 * 60_000;
const SENT_IDS_MAX = 2_000;

export interface AccountDeps {
  settings: WhatsAppSettings;
  auth: AuthStore;
  factory: SocketFactory;
  logger: Logger;
  stateDir: string;
  /** The pipeline; absent when the account only logs in (the CLI). */
  receive?: (message: InboundMessage) => Promise<InboundOutcome>;
  reconnect: RetrySettings;
  sendWaitMs?: number;
  /** Called once each time the account becomes logged out. */
  onLoggedOut?: (accountId: string, reason: string) => void;
  random?: () => number;
}

export function closeCode(update: ConnectionUpdate): number | undefined {
  const code = (update.lastDisconnect?.error as WaCloseError | undefined)?.output?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** Per-key FIFO: one chat's messages in order, chats side by side. */
class ChatQueues {
  private readonly tails = new Map<string, Promise<void>>();
  constructor(private readonly onError: (error: unknown) => void) {}
  push(key: string, task: () => Promise<void>): void {
    const tail = (this.tails.get(key) ?? Promise.resolve()).then(task).catch(this.onError);
    this.tails.set(key, tail);
    void tail.then(() => this.tails.get(key) === tail && this.tails.delete(key));
  }
  idle(): Promise<void> {
    return Promise.all([...this.tails.values()]).then(() => undefined);
  }
}

export class WhatsAppAccount {
  readonly accountId: string;
  readonly authDir: string;
  state: WaState = 'stopped';
  qr?: string;
  lastError?: string;
  /** Closes since the last open connection (the backoff exponent). */
  attempts = 0;
  reconnects = 0;
  connectedAt?: number;
  private socket?: WaSocket;
  private generation = 0;
  private loginMode = false;
  /** Whether this login got as far as a QR code: without one, WhatsApp was never reached. */
  private qrShown = false;
  /** The host the socket dials (for "cannot reach …"). */
  private server?: string;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  private readonly listeners = new Set<() => void>();
  private readonly sentIds = new Set<string>();
  /** Message ids already sent for an outbound piece, by piece. */
  private readonly delivered = new WeakMap<OutboundMessage, string[]>();
  private readonly queues: ChatQueues;

  constructor(private readonly deps: AccountDeps) {
    this.accountId = deps.settings.accountId;
    this.authDir = deps.settings.authDir;
    this.queues = new ChatQueues((error) =>
      deps.logger.error(`whatsapp: an incoming message failed: ${(error as Error)?.message ?? String(error)}`),
    );
  }

  private get where(): string {
    return this.accountId === 'default' ? 'WhatsApp' : `WhatsApp account "${this.accountId}"`;
  }

  private get loginHint(): string {
    return `claw channels login --channel whatsapp${this.accountId === 'default' ? '' : ` --account ${this.accountId}`}`;
  }

  private setState(state: WaState): void {
    this.state = state;
    for (const listener of [...this.listeners]) listener();
  }

  /** Resolves when `done()` holds (checked on every change), or rejects after `timeoutMs`. */
  waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
    if (done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => {
        if (!done()) return;
        cleanup();
        resolve(true);
      };
      const timer = setTimeout(() => (cleanup(), resolve(false)), timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
    });
  }

  /** Gateway start: connect when linked; otherwise say what to do. Never throws for WhatsApp being away. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.deps.auth.open();
    const marker = await this.deps.auth.loggedOut();
    if (marker) {
      this.lastError = `logged out (${marker.reason}): run \`${this.loginHint}\` to link again`;
      return this.setState('logged-out');
    }
    if (!(await this.deps.auth.linked())) {
      this.lastError = `not linked: run \`${this.loginHint}\` and scan the QR code with WhatsApp (Settings → Linked devices)`;
      return this.setState('not-linked');
    }
    await this.connect();
  }

  /**
   * Begin a QR login. A linked, connected account is left alone unless `force`; otherwise
   * the old creds go and a fresh socket asks WhatsApp for QR codes.
   */
  async login(force = false): Promise<void> {
    this.stopped = false;
    if (!force && this.state === 'open') return;
    if (this.loginMode && (this.state === 'qr' || this.state === 'connecting') && !force) return;
    this.closeSocket();
    await this.deps.auth.clear();
    await this.deps.auth.open();
    this.lastError = undefined;
    this.qr = undefined;
    this.attempts = 0;
    this.loginMode = true;
    this.qrShown = false;
    await this.connect();
  }

  private closeSocket(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.generation++;
    const socket = this.socket;
    this.socket = undefined;
    try {
      socket?.end(undefined);
    } catch {
      // Already closed.
    }
  }

  private async connect(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const generation = ++this.generation;
    this.setState(this.attempts > 0 ? 'reconnecting' : 'connecting');
    let socket: WaSocket;
    try {
      socket = await this.deps.factory({ accountId: this.accountId, auth: this.deps.auth, logger: this.deps.logger });
    } catch (error) {
      if (generation !== this.generation || this.stopped) return;
      // Baileys missing and not installable is not transient; everything else is retried.
      if ((error as Error).name === 'RuntimeDepMissingError' || (error as Error).name === 'RuntimeDepInstallError') {
        this.lastError = (error as Error).message;
        this.loginMode = false;
        return this.setState('stopped');
      }
      return this.scheduleReconnect(`could not open a socket: ${(error as Error).message}`);
    }
    if (generation !== this.generation || this.stopped) {
      socket.end(undefined);
      return;
    }
    this.socket = socket;
    this.server = socket.host;
    socket.ev.on('creds.update', () => {
      socket
        .saveCreds()
        .catch((error: unknown) =>
          this.deps.logger.error(`${this.where}: could not save the credentials: ${(error as Error).message}`),
        );
    });
    socket.ev.on('connection.update', (update) => {
      if (generation === this.generation) this.onConnection(update);
    });
    socket.ev.on('messages.upsert', ({ messages, type }) => {
      if (generation === this.generation) this.onMessages(messages, type);
    });
  }

  private onConnection(update: ConnectionUpdate): void {
    if (update.qr) {
      if (!this.loginMode) {
        // Creds WhatsApp no longer knows: asking for a QR in the background would loop unseen.
        this.closeSocket();
        this.lastError = `WhatsApp asked for a new QR login: run \`${this.loginHint}\``;
        this.setState('not-linked');
        return;
      }
      this.qr = update.qr;
      this.qrShown = true;
      this.setState('qr');
    }
    if (update.connection === 'open') {
      if (this.attempts > 0) this.reconnects++;
      this.attempts = 0;
      this.qr = undefined;
      this.loginMode = false;
      this.lastError = undefined;
      this.connectedAt = Date.now();
      this.deps.logger.info(
        `${this.where}: connected as ${this.socket?.user?.id ? bareJid(this.socket.user.id).split('@')[0] : 'unknown'}`,
      );
      this.setState('open');
    }
    if (update.connection === 'close') this.onClose(update);
  }

  private onClose(update: ConnectionUpdate): void {
    this.socket = undefined;
    this.connectedAt = undefined;
    if (this.stopped) return this.setState('stopped');
    const code = closeCode(update);
    const reason = update.lastDisconnect?.error?.message ?? 'connection closed';
    if (code === DisconnectReason.loggedOut || code === DisconnectReason.forbidden) {
      void this.loggedOut(`${code} ${reason}`);
      return;
    }
    if (code === DisconnectReason.connectionReplaced) {
      this.lastError = `another WhatsApp Web session replaced this one (440): stop the other session, then restart the gateway or run \`${this.loginHint}\``;
      this.deps.logger.error(`${this.where}: ${this.lastError}`);
      return this.setState('conflict');
    }
    if (this.loginMode && !this.qrScanned(code)) {
      // The QR codes ran out (408) or the link failed before it completed: no loop, tell the user.
      this.loginMode = false;
      this.qr = undefined;
      // Baileys reports a socket that never opened (no network, DNS, a firewall) as 408 too.
      this.lastError = !this.qrShown
        ? `cannot reach the WhatsApp server ${this.server ?? 'web.whatsapp.com'} (${reason}); check the network connection, then run the login again`
        : code === DisconnectReason.timedOut
          ? 'the QR code expired before it was scanned; run the login again'
          : `the login failed (${code ?? 'no status'} ${reason})`;
      return this.setState('not-linked');
    }
    if (code === DisconnectReason.restartRequired) {
      this.deps.logger.info(`${this.where}: WhatsApp asked for a restart (515); reconnecting`);
      void this.connect();
      return;
    }
    this.scheduleReconnect(`${code ?? 'closed'} ${reason}`);
  }

  /** During a login, a 515 after the scan means "linked, reconnect"; anything else ends it. */
  private qrScanned(code: number | undefined): boolean {
    return code === DisconnectReason.restartRequired;
  }

  private scheduleReconnect(why: string): void {
    this.attempts++;
    const delay = retryDelay(this.attempts, this.deps.reconnect, undefined, this.deps.random);
    this.lastError = `disconnected (${why}); reconnecting in ${Math.round(delay / 100) / 10} s (attempt ${this.attempts})`;
    this.deps.logger.warn(`${this.where}: ${this.lastError}`);
    this.setState('reconnecting');
    this.timer = setTimeout(() => void this.connect(), delay);
    this.timer.unref?.();
  }

  private async loggedOut(reason: string): Promise<void> {
    this.loginMode = false;
    this.qr = undefined;
    this.lastError = `logged out by WhatsApp (${reason}): run \`${this.loginHint}\` to link again`;
    this.deps.logger.error(`${this.where}: ${this.lastError}`);
    try {
      await this.deps.auth.markLoggedOut(reason);
    } catch (error) {
      this.deps.logger.error(`${this.where}: could not clear the dead credentials: ${(error as Error).message}`);
    }
    this.setState('logged-out');
    this.deps.onLoggedOut?.(this.accountId, reason);
  }

  /** Unlink from the phone (best effort) and remove the credentials. */
  async logout(): Promise<boolean> {
    const socket = this.state === 'open' ? this.socket : undefined;
    this.stopped = true;
    if (socket)
      await socket
        .logout()
        .catch((error: unknown) =>
          this.deps.logger.warn(
            `${this.where}: unlinking from the phone failed (${(error as Error).message}); removing the local credentials anyway`,
          ),
        );
    this.closeSocket();
    const had = (await this.deps.auth.files()).length > 0;
    await this.deps.auth.clear();
    this.lastError = undefined;
    this.setState('not-linked');
    return had;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.loginMode = false;
    this.closeSocket();
    await this.queues.idle();
    // Creds Baileys just handed over (a login that linked) are on disk before anyone exits.
    await this.deps.auth.flush();
    this.setState('stopped');
  }

  status(): ChannelStatus {
    const number = this.socket?.user?.id ? `+${bareJid(this.socket.user.id).split('@')[0]}` : undefined;
    const detail: Record<WaState, string> = {
      open: `linked${number ? ` as ${number}` : ''}`,
      connecting: 'connecting',
      reconnecting: `reconnecting (attempt ${this.attempts})`,
      qr: 'waiting for the QR code to be scanned',
      'not-linked': 'not linked',
      'logged-out': 'logged out',
      conflict: 'replaced by another session',
      stopped: 'stopped',
    };
    return {
      accountId: this.accountId,
      connected: this.state === 'open',
      running: !this.stopped,
      state: this.state,
      detail: detail[this.state],
      reconnects: this.reconnects,
      ...(number ? { number } : {}),
      ...(this.lastError && this.state !== 'open' ? { lastError: this.lastError } : {}),
    };
  }

  // ── Inbound ──────────────────────────────────────────────────────────────────────

  private self(): SelfIdentity {
    const user = this.socket?.user;
    return { ...(user?.id ? { pn: bareJid(user.id) } : {}), ...(user?.lid ? { lid: bareJid(user.lid) } : {}) };
  }

  private onMessages(messages: WaMessage[], type: string): void {
    const receive = this.deps.receive;
    if (!receive || (type !== 'notify' && type !== 'append')) return;
    const self = this.self();
    for (const message of messages) {
      // Our own sends come back as upserts; in self-chat they would answer themselves.
      if (message.key.id && this.sentIds.has(message.key.id)) continue;
      const parsed = parseWaMessage(message, self);
      if (!parsed) continue;
      if (
        type === 'append' &&
        parsed.inbound.timestamp !== undefined &&
        parsed.inbound.timestamp < Date.now() - APPEND_MAX_AGE_MS
      )
        continue;
      if (parsed.selfChat && this.deps.settings.selfChatMode === false) continue;
      this.queues.push(message.key.remoteJid!, () => this.process(message, parsed, receive));
    }
  }

  private async process(
    message: WaMessage,
    parsed: ParsedWaMessage,
    receive: (message: InboundMessage) => Promise<InboundOutcome>,
  ): Promise<void> {
    const { media, note } = await this.fetchMedia(message, parsed);
    const text = [parsed.inbound.text, note].filter(Boolean).join('\n');
    const inbound: InboundMessage = {
      accountId: this.accountId,
      ...parsed.inbound,
      text: text || (parsed.media ? `<media:${parsed.media.kind}>` : ''),
      ...(media ? { media: [media] } : {}),
    };
    const outcome = await receive(inbound);
    if (outcome.status === 'unavailable') {
      this.deps.logger.warn(
        `${this.where}: a message from ${inbound.sender.id} arrived while the gateway was stopping and was not taken (${outcome.reason})`,
      );
      return;
    }
    // Blue ticks only for what reached the agent's journal; self-chat never gets them.
    if (outcome.status === 'dispatched' && this.deps.settings.sendReadReceipts && !parsed.selfChat && this.socket) {
      await this.socket
        .readMessages([message.key])
        .catch((error: unknown) =>
          this.deps.logger.debug(`${this.where}: read receipt failed: ${(error as Error).message}`),
        );
    }
  }

  private async fetchMedia(
    message: WaMessage,
    parsed: ParsedWaMessage,
  ): Promise<{ media?: InboundMedia; note?: string }> {
    const info = parsed.media;
    if (!info) return {};
    const max = this.deps.settings.mediaMaxBytes;
    const label = info.fileName ? `${info.kind} "${info.fileName}"` : info.kind;
    if (info.size !== undefined && info.size > max)
      return { note: `[${label} not downloaded: larger than mediaMaxMb (${Math.round(max / 1024 / 1024)} MB)]` };
    try {
      const data = await this.socket!.downloadMedia(message);
      if (data.length > max)
        return { note: `[${label} not downloaded: larger than mediaMaxMb (${Math.round(max / 1024 / 1024)} MB)]` };
      if (info.kind === 'image')
        return {
          media: {
            data: data.toString('base64'),
            mimeType: info.mimeType,
            ...(info.fileName ? { fileName: info.fileName } : {}),
          },
        };
      const dir = join(this.deps.stateDir, 'media', 'whatsapp', this.accountId);
      await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      const safeName = (info.fileName ?? info.kind).replace(/[^\w.-]+/g, '_').slice(0, 100);
      const path = join(dir, `${message.key.id!.replace(/[^\w-]+/g, '_')}-${safeName}`);
      await writeFileAtomicAsync(path, data, { mode: PRIVATE_FILE_MODE });
      return {
        media: { url: path, mimeType: info.mimeType, ...(info.fileName ? { fileName: info.fileName } : {}) },
        note: `[${label} (${info.mimeType}, ${data.length} bytes) saved at ${path}]`,
      };
    } catch (error) {
      this.deps.logger.warn(`${this.where}: could not download a ${info.kind}: ${(error as Error).message}`);
      return { note: `[${label} could not be downloaded]` };
    }
  }

  // ── Outbound ─────────────────────────────────────────────────────────────────────

  /** The open socket, waiting for a reconnect in progress; a clear error when none will come. */
  private async openSocket(): Promise<WaSocket> {
    const settled = () =>
      this.state === 'open' ||
      this.state === 'logged-out' ||
      this.state === 'not-linked' ||
      this.state === 'conflict' ||
      this.state === 'stopped';
    if (!settled()) await this.waitFor(settled, this.deps.sendWaitMs ?? SEND_WAIT_MS);
    if (this.state === 'open' && this.socket) return this.socket;
    if (this.state === 'reconnecting' || this.state === 'connecting')
      throw new ChannelSendError(`${this.where} is reconnecting`, { retryable: true });
    throw new ChannelSendError(
      `${this.where} is ${this.status().detail}${this.lastError ? `: ${this.lastError}` : ''}`,
      { retryable: false },
    );
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    let jid: string;
    try {
      jid = jidFor(message.to);
    } catch (error) {
      throw new ChannelSendError((error as Error).message, { retryable: false });
    }
    const contents = await outboundContents(message, this.deps.settings.mediaMaxBytes);
    // The kernel retries a failed piece with the same object: what already went out is not sent twice.
    const ids = this.delivered.get(message) ?? [];
    this.delivered.set(message, ids);
    for (const content of contents.slice(ids.length)) {
      const socket = await this.openSocket();
      // Baileys hands our own message back as an upsert, possibly before sendMessage
      // returns: the id is ours and known beforehand, so self-chat never answers itself.
      const messageId = `3EB0${randomBytes(18).toString('hex').toUpperCase()}`;
      this.sentIds.add(messageId);
      if (this.sentIds.size > SENT_IDS_MAX) this.sentIds.delete(this.sentIds.values().next().value!);
      let sent: WaMessage | undefined;
      try {
        sent = await socket.sendMessage(jid, content, { messageId });
      } catch (error) {
        // The socket died mid-send: the kernel retries once it is back.
        throw new ChannelSendError(`whatsapp send failed: ${(error as Error).message}`, {
          retryable: true,
          cause: error,
        });
      }
      ids.push(sent?.key.id ?? messageId);
    }
    if (this.state === 'open') void this.socket?.sendPresenceUpdate('paused', jid).catch(() => {});
    return ids.length > 0 ? { messageId: ids[0]!, ...(ids.length > 1 ? { messageIds: ids } : {}) } : {};
  }

  async typing(to: string): Promise<void> {
    if (this.state !== 'open' || !this.socket) return;
    await this.socket.sendPresenceUpdate('composing', jidFor(to));
  }
}
