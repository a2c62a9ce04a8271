/**
 * One IRC connection (irc-framework): registers the nick, identifies (server password, SASL,
 * NickServ), joins the configured channels, hands PRIVMSGs and actions to the pipeline in
 * order, and sends replies as lines that fit IRC's limit at a pace the server will not call a
 * flood. A dropped connection is retried with backoff for as long as the account runs, and
 * rejoins on every registration; a reply written meanwhile waits for it.
 *
 * IRC has no message ids and never delivers a message twice, so the ids here are local: a
 * random prefix per account start and a counter, never reused across restarts.
 */
import { randomUUID } from 'node:crypto';
import { runtimeDependencyLoader, type Redactor, type RuntimeDependency } from '../../sdk/index.js';
import {
  ChannelSendError,
  type ChannelAccountContext,
  type ChannelStatus,
  type InboundMessage,
  type OutboundMessage,
  type SendResult,
} from '../../sdk/channels/index.js';
import { ircLower } from './access.js';
import type { IrcAccountSettings } from './config.js';
import { FloodGate } from './flood.js';
import { ircLines, lineBudget } from './lines.js';

export const IRC_FRAMEWORK: RuntimeDependency = { name: 'irc-framework', version: '^4.14.0', approxSizeMb: 4 };

/** The part of irc-framework's Client used here (it ships no types). */
export interface IrcClient {
  connect(options?: Record<string, unknown>): void;
  on(event: string, listener: (event: any) => void): void;
  removeAllListeners(): void;
  quit(message?: string): void;
  join(channel: string): void;
  say(target: string, text: string): void;
  action(target: string, text: string): void;
  changeNick(nick: string): void;
  connection?: { end(): void };
}
export interface IrcFramework {
  Client: new (options?: Record<string, unknown>) => IrcClient;
}

/** irc-framework, imported (and installed when missing) on first use. */
export const loadIrc = runtimeDependencyLoader<IrcFramework>(
  IRC_FRAMEWORK,
  'Client',
  'claw plugins enable channel-irc',
);

const CHANNEL_PREFIX = /^[#&+!]/;
/** The characters of a nick, for a character class. */
const NICK_CHARS = 'A-Za-z0-9\\[\\]\\\\`_^{|}\\-';
const NICK_TARGET = /^[A-Za-z[\]\\`_^{|}][A-Za-z0-9[\]\\`_^{|}-]*$/;
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 60_000;
const FIRST_CONNECT_MS = 20_000;
const NICK_REGAIN_MS = 3000;
/** How long a reply waits for a lost connection to come back before the pipeline retries it. */
const SEND_WAIT_MS = 30_000;

/** Is the bot's nick addressed in this text (`nick:`, `nick,`, or the nick as a word)? */
export function mentions(text: string, nick: string): boolean {
  const escaped = nick.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^${NICK_CHARS}])${escaped}($|[^${NICK_CHARS}])`, 'i').test(text);
}

export class IrcAccount {
  readonly sender = this;
  private client?: IrcClient;
  private connected = false;
  private stopping = false;
  private nick: string;
  private lastError?: string;
  private readonly joined = new Set<string>();
  private attempts = 0;
  private reconnectTimer?: NodeJS.Timeout;
  private regainTimer?: NodeJS.Timeout;
  private readonly waiting = new Set<() => void>();
  private readonly flood = new FloodGate();
  private readonly idPrefix = randomUUID().slice(0, 8);
  private sequence = 0;
  /** Channels asked for and not yet joined on this connection. */
  private pendingJoins = new Set<string>();
  private stopped?: Promise<void>;
  private serverSaid?: string;
  /** Resolves the account's start once registered and in its channels. */
  private started?: () => void;
  /** Messages reach the pipeline one at a time, in the order the server sent them. */
  private intake: Promise<unknown> = Promise.resolve();

  constructor(
    readonly settings: IrcAccountSettings,
    private readonly ctx: ChannelAccountContext,
    private readonly irc: IrcFramework,
    private readonly redact: Redactor,
  ) {
    this.nick = settings.nick;
  }

  get accountId(): string {
    return this.ctx.accountId;
  }

  /**
   * Connects; resolves once registered and in the configured channels, or when the first
   * attempt fails (the account keeps retrying); rejects if the server does not answer at all.
   */
  start(): Promise<void> {
    this.stopping = false;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.started = undefined;
        const what = this.connected ? `no answer to JOIN ${[...this.pendingJoins].join(', ')}` : 'no registration';
        reject(new Error(this.failure(`${what} from ${this.where()} within ${FIRST_CONNECT_MS / 1000} s`)));
      }, FIRST_CONNECT_MS);
      this.started = () => {
        clearTimeout(timer);
        this.waiting.delete(stopped);
        resolve();
      };
      // Stopped before it ever connected: nothing to wait for.
      const stopped = () => {
        if (this.stopping) this.started?.();
      };
      this.waiting.add(stopped);
      this.connect();
    });
  }

  /** Every configured channel joined (or refused): the first time, the account's start is done. */
  private joinSettled(): void {
    if (!this.connected || this.pendingJoins.size > 0 || !this.started) return;
    const started = this.started;
    this.started = undefined;
    started();
  }

  /** Stopping twice (the account's abort signal, then the channel's stop) waits for the same QUIT. */
  stop(): Promise<void> {
    this.stopped ??= this.quit();
    return this.stopped;
  }

  private async quit(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.regainTimer);
    this.flood.close();
    // Replies waiting for the connection fail now (and are retried by the pipeline elsewhere).
    for (const wake of [...this.waiting]) wake();
    this.waiting.clear();
    const client = this.client;
    this.client = undefined;
    this.connected = false;
    if (!client) return;
    // Wait for the connection to close after QUIT (irc-framework closes it about a second
    // later; at most three), so the nick is free again for an account started right after.
    const closed = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 3000);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      client.on('close', done);
      client.on('socket close', done);
    });
    client.quit('claw stopping');
    await closed;
    client.connection?.end();
    client.removeAllListeners();
  }

  status(): ChannelStatus {
    return {
      accountId: this.accountId,
      running: !this.stopping,
      connected: this.connected,
      nick: this.nick,
      server: this.where(),
      channels: [...this.joined],
      detail: this.connected
        ? `${this.nick} on ${this.where()}${this.joined.size ? `, in ${[...this.joined].join(', ')}` : ''}`
        : `not connected to ${this.where()}`,
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const to = message.to.trim();
    if (!CHANNEL_PREFIX.test(to) && !NICK_TARGET.test(to))
      throw new ChannelSendError(`"${to}" is not an IRC channel or nick`, { retryable: false });
    let text = [message.text ?? '', ...(message.media ?? []).map((item) => `${item.caption ?? ''} ${item.url}`.trim())]
      .filter(Boolean)
      .join('\n');
    const action = /^\/me\s+/i.test(text);
    if (action) text = text.replace(/^\/me\s+/i, '');
    const lines = ircLines(text, lineBudget(this.nick, this.settings.username, to, action));
    if (lines.length === 0)
      throw new ChannelSendError('nothing left to send on IRC once formatted', { retryable: false });
    for (const line of lines) {
      await this.whenConnected();
      await this.flood.take().catch(() => {
        throw new ChannelSendError(`the IRC account ${this.accountId} stopped`, { retryable: true });
      });
      const client = this.client;
      if (!client || !this.connected)
        throw new ChannelSendError(`not connected to ${this.where()}`, { retryable: true });
      if (action) client.action(to, line);
      else client.say(to, line);
    }
    return { messageId: `${this.idPrefix}-out-${++this.sequence}`, lines: lines.length };
  }

  private where(): string {
    return `${this.settings.host}:${this.settings.port}${this.settings.tls ? ' (TLS)' : ''}`;
  }

  private failure(message: string): string {
    this.lastError = this.redact.text(message);
    this.ctx.logger.warn(`irc: ${this.lastError}`);
    return this.lastError;
  }

  private whenConnected(): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(done);
        reject(
          new ChannelSendError(`not connected to ${this.where()} (waited ${SEND_WAIT_MS / 1000} s)`, {
            retryable: true,
          }),
        );
      }, SEND_WAIT_MS);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiting.add(done);
    });
  }

  private connect(): void {
    if (this.stopping) return;
    const { settings } = this;
    this.nick = settings.nick;
    const client = new this.irc.Client({ auto_reconnect: false, message_max_length: 510, ping_interval: 30 });
    this.client = client;
    client.on('registered', (event: { nick: string }) => {
      this.nick = event.nick;
      this.regainNick(client);
      this.connected = true;
      this.attempts = 0;
      this.lastError = undefined;
      this.joined.clear();
      if (ircLower(this.nick) === ircLower(settings.nick)) this.identify(client);
      this.pendingJoins = new Set(settings.channels.map(ircLower));
      for (const channel of settings.channels) client.join(channel);
      this.ctx.logger.info(`irc: connected to ${this.where()} as ${this.nick}`);
      // A sender waits for registration; the account's start also waits for the channels.
      for (const wake of [...this.waiting]) wake();
      this.waiting.clear();
      this.joinSettled();
    });
    client.on('nick in use', () => {
      if (!this.connected) client.changeNick(`${this.nick}_`.slice(0, 30));
    });
    client.on('nick', (event: { nick: string; new_nick: string }) => {
      if (ircLower(event.nick) !== ircLower(this.nick)) return;
      this.nick = event.new_nick;
      // NickServ knows the configured nick: identify once it is ours again.
      if (ircLower(this.nick) === ircLower(settings.nick)) this.identify(client);
    });
    client.on('join', (event: { nick: string; channel: string }) => {
      if (ircLower(event.nick) !== ircLower(this.nick)) return;
      this.joined.add(event.channel);
      this.pendingJoins.delete(ircLower(event.channel));
      this.joinSettled();
    });
    client.on('part', (event: { nick: string; channel: string }) => {
      if (ircLower(event.nick) === ircLower(this.nick)) this.joined.delete(event.channel);
    });
    client.on('kick', (event: { kicked: string; channel: string; message?: string }) => {
      if (ircLower(event.kicked) !== ircLower(this.nick)) return;
      this.joined.delete(event.channel);
      this.failure(`kicked from ${event.channel}${event.message ? `: ${event.message}` : ''}`);
    });
    client.on('irc error', (event: { error: string; channel?: string; reason?: string }) => {
      // The server's last word before it closes the connection (ERROR, a refused password).
      if (!event.channel) this.serverSaid = event.reason ?? event.error;
      this.failure(`server error ${event.error}${event.channel ? ` in ${event.channel}` : ''}: ${event.reason ?? ''}`);
      if (event.channel && this.pendingJoins.delete(ircLower(event.channel))) this.joinSettled();
    });
    client.on('sasl failed', (event: { reason: string }) => {
      this.failure(`SASL login as ${settings.sasl?.account} failed (${event.reason})`);
    });
    client.on('privmsg', (event) => this.received(event, false));
    client.on('action', (event) => this.received(event, true));
    client.on('socket close', (error?: Error) => this.dropped(client, error));
    client.on('close', () => this.dropped(client));
    client.connect({
      host: settings.host,
      port: settings.port,
      tls: settings.tls,
      nick: settings.nick,
      username: settings.username,
      gecos: settings.realname,
      ...(settings.password ? { password: settings.password } : {}),
      ...(settings.sasl
        ? {
            account: { account: settings.sasl.account, password: settings.sasl.password },
            sasl_disconnect_on_fail: true,
          }
        : {}),
    });
  }

  /**
   * Registered under a fallback nick (the configured one was still taken, e.g. by this
   * account's previous connection on its way out): ask for it back until the server agrees.
   */
  private regainNick(client: IrcClient): void {
    clearInterval(this.regainTimer);
    const wanted = this.settings.nick;
    if (ircLower(this.nick) === ircLower(wanted)) return;
    this.regainTimer = setInterval(() => {
      if (client !== this.client || ircLower(this.nick) === ircLower(wanted)) clearInterval(this.regainTimer);
      else client.changeNick(wanted);
    }, NICK_REGAIN_MS);
    this.regainTimer.unref();
  }

  private identify(client: IrcClient): void {
    const nickserv = this.settings.nickserv;
    if (!nickserv?.password) return;
    if (nickserv.register) client.say(nickserv.service, `REGISTER ${nickserv.password} ${nickserv.register.email}`);
    else client.say(nickserv.service, `IDENTIFY ${nickserv.password}`);
  }

  private dropped(client: IrcClient, error?: Error): void {
    if (client !== this.client) return;
    this.connected = false;
    this.joined.clear();
    this.client = undefined;
    client.removeAllListeners();
    if (this.stopping) return;
    const said = this.serverSaid ? ` (the server said: ${this.serverSaid})` : '';
    this.serverSaid = undefined;
    this.failure(`connection to ${this.where()} lost${error?.message ? `: ${error.message}` : ''}${said}`);
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** this.attempts++);
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
    // A server that is down when the gateway starts is not a dead account: the start ends
    // here, status tells why it is not connected, and the retries go on.
    if (this.started) {
      const started = this.started;
      this.started = undefined;
      started();
    }
  }

  private received(
    event: { nick: string; ident: string; hostname: string; target: string; message: string; time?: number },
    action: boolean,
  ): void {
    if (!event.nick || ircLower(event.nick) === ircLower(this.nick)) return;
    const inChannel = CHANNEL_PREFIX.test(event.target);
    const mask = `${event.nick}!${event.ident}@${event.hostname}`;
    const inbound: InboundMessage = {
      accountId: this.accountId,
      peer: inChannel ? { kind: 'group', id: event.target } : { kind: 'direct', id: event.nick },
      sender: this.settings.allowNameMatching
        ? { id: event.nick, name: event.nick, username: mask }
        : { id: mask, name: event.nick },
      text: action ? `/me ${event.message}` : event.message,
      messageId: `${this.idPrefix}-${++this.sequence}`,
      timestamp: event.time ?? Date.now(),
      ...(inChannel ? { peerName: event.target, mentioned: mentions(event.message, this.nick) } : {}),
    };
    this.intake = this.intake.then(async () => {
      try {
        const outcome = await this.ctx.receive(inbound);
        if (outcome.status === 'unavailable')
          this.ctx.logger.warn(
            `irc: a message from ${event.nick} was refused (${outcome.reason}); IRC cannot resend it`,
          );
      } catch (error) {
        this.ctx.logger.error(`irc: a message from ${event.nick} was not taken: ${(error as Error).message}`);
      }
    });
  }
}
