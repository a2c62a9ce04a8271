/**
 * One Slack app account at run time: a Bolt App on a Socket Mode connection (app token),
 * turning `message` / `app_mention` events and slash commands (slash.ts) into InboundMessages
 * for the pipeline, and showing that a run works: the "is thinking…" status in a thread, the
 * typing reaction elsewhere.
 *
 * Acknowledgement: Bolt acknowledges an Events API envelope before its listeners run, which
 * would tell Slack a message is delivered before claw has journaled it. So the app gets a
 * receiver of our own around Bolt's SocketModeReceiver: Bolt's `ack` is a no-op, and the
 * envelope is acknowledged on the socket only after `processEvent` — and with it the
 * pipeline's `receive` — has resolved. A crash before that leaves the envelope unacked and
 * Slack delivers it again; the pipeline's persistent dedupe (conversation + `ts`) keeps a
 * redelivery from being answered twice, across restarts too: a retried `event_id` carries the
 * same `ts`, and so do the `message` and `app_mention` events of one mention. A slash command
 * is acknowledged the same way, once the pipeline has it (its trigger id is the dedupe key).
 *
 * Ordering: a conversation's messages reach the pipeline in order; different conversations
 * run side by side. Reconnects (a `disconnect` request, a dropped socket) are the Socket Mode
 * client's; status follows its events.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  runtimeDependencyLoader,
  type Redactor,
  type RuntimeDependency,
  writeFileAtomicAsync,
} from '../../sdk/index.js';
import type {
  ChannelAccountContext,
  ChannelStatus,
  InboundMedia,
  InboundMessage,
  ReplyObserver,
} from '../../sdk/channels/index.js';
import { configPath, type SlackAccountSettings } from './config.js';
import { parseEvent, type SlackFile } from './inbound.js';
import { describeError, isAuthRejected, RETRY_CONFIG, SlackSender, type WebClientLike } from './send.js';
import { commandText, ephemeral, parseSlash, slashInbound, type SlashAck, type SlashPayload } from './slash.js';

export type Bolt = typeof import('@slack/bolt');

export const SLACK_BOLT: RuntimeDependency = { name: '@slack/bolt', version: '^5.1.0', approxSizeMb: 13 };

/** @slack/bolt, imported (and installed when missing) on first use. */
export const loadBolt = runtimeDependencyLoader<Bolt>(
  SLACK_BOLT,
  'SocketModeReceiver',
  'claw plugins enable channel-slack',
);

/** A Web API client for the bot token (send-only use needs no socket). */
export function createWebClient(bolt: Bolt, settings: SlackAccountSettings): WebClientLike {
  return new bolt.webApi.WebClient(settings.botToken, {
    slackApiUrl: settings.apiUrl,
    retryConfig: RETRY_CONFIG,
    logLevel: bolt.LogLevel.ERROR,
  }) as unknown as WebClientLike;
}

const DOWNLOAD_TIMEOUT_MS = 60_000;
const MEDIA_MAX_BYTES = 20 * 1024 * 1024;

type Json = any;

export type AckScope = 'all' | 'direct' | 'group-all' | 'group-mentions' | 'off' | 'none';

export interface AckSettings {
  /** A Slack emoji name ("eyes"), or "" for none. */
  name: string;
  scope: AckScope;
}

/** What an account reads from the rest of claw while it runs (live config, the agent's commands). */
export interface AccountHooks {
  ack(agentId: string): AckSettings;
  /** `typingReaction` as a Slack emoji name, or "" for none. */
  typingReaction(): string;
  /** The chat commands' names and aliases ("status", "new", …), without "/". */
  chatCommands(): Promise<ReadonlySet<string>>;
}

/** The status line while a run works in a thread; Slack keeps it about two minutes, so it is renewed. */
const THREAD_STATUS = 'is thinking…';
const STATUS_RENEW_MS = 60_000;
/** Slack errors that mean the app may not set statuses (or react) at all, rather than not in one conversation. */
const APP_WIDE_ERRORS = new Set([
  'missing_scope',
  'not_allowed_token_type',
  'no_permission',
  'invalid_auth',
  'not_authed',
]);
/** Harmless: the reaction was already there, or already gone. */
const REACTION_NOOPS = new Set(['already_reacted', 'no_reaction']);

interface ThreadStatus {
  runs: number;
  setAt?: number;
  pending?: Promise<void>;
}

interface Envelope {
  ack: (response?: Record<string, unknown>) => Promise<void>;
  body: Json;
  type?: string;
  retry_num?: number;
  retry_reason?: string;
}

export class SlackAccount {
  readonly accountId: string;
  sender: SlackSender;
  private app?: InstanceType<Bolt['App']>;
  private readonly chains = new Map<string, Promise<unknown>>();
  private connected = false;
  private lastError?: string;
  private botUserId = '';
  private botName?: string;
  private teamName?: string;
  private teamId?: string;
  private reconnects = 0;
  private stopping?: Promise<void>;
  /** Threads with a status line up, and where Slack refused statuses ("*": everywhere) or reactions. */
  private readonly statuses = new Map<string, ThreadStatus>();
  private readonly statusOff = new Set<string>();
  private reactionsOff = false;
  private readonly noted = new Set<string>();

  constructor(
    readonly settings: SlackAccountSettings,
    private readonly ctx: ChannelAccountContext,
    private readonly bolt: Bolt,
    private readonly redact: Pick<Redactor, 'text'>,
    private readonly hooks: AccountHooks,
  ) {
    this.accountId = settings.accountId;
    this.sender = new SlackSender(createWebClient(bolt, settings));
  }

  private get where(): string {
    return this.accountId === 'default' ? 'Slack' : `Slack account "${this.accountId}"`;
  }

  private failed(error: string): void {
    this.lastError = this.redact.text(error);
  }

  /** Bolt's and the Socket Mode client's log lines, redacted, at debug (warnings and errors kept). */
  private boltLogger(): Json {
    const line =
      (level: 'debug' | 'info' | 'warn' | 'error') =>
      (...parts: unknown[]) =>
        this.ctx.logger[level](`${this.where}: ${this.redact.text(parts.map(String).join(' '))}`);
    let level = this.bolt.LogLevel.WARN;
    return {
      debug: () => undefined,
      info: () => undefined,
      warn: line('warn'),
      error: line('error'),
      setLevel: (next: typeof level) => void (level = next),
      getLevel: () => level,
      setName: () => undefined,
    };
  }

  async start(): Promise<void> {
    const { App, SocketModeReceiver } = this.bolt;
    const logger = this.boltLogger();
    const socket = this.settings.mode === 'socket' ? this.socketReceiver(SocketModeReceiver, logger) : undefined;
    const app = new App({
      token: this.settings.botToken,
      // HTTP mode: events come in through the gateway route (http.ts), so the receiver has nothing to run.
      receiver: {
        init: () => undefined,
        start: async () => socket?.start(),
        stop: async () => socket?.stop(),
      },
      logger,
      clientOptions: { slackApiUrl: this.settings.apiUrl, retryConfig: RETRY_CONFIG },
      deferInitialization: true,
    });
    this.app = app;
    this.sender = new SlackSender(app.client as unknown as WebClientLike);
    try {
      await app.init();
      const auth = await app.client.auth.test();
      this.botUserId = String(auth.user_id ?? '');
      this.botName = auth.user ? String(auth.user) : undefined;
      this.teamName = auth.team ? String(auth.team) : undefined;
      this.teamId = auth.team_id ? String(auth.team_id) : undefined;
    } catch (error) {
      if (isAuthRejected(error))
        throw new Error(
          `${this.where} rejected the bot token (${describeError(error)}): check ${configPath(this.accountId)}.botToken`,
        );
      throw new Error(`${this.where}: auth.test failed: ${this.redact.text(describeError(error))}`);
    }
    app.event('message', async ({ event, body }) => this.onEvent(event, body));
    app.event('app_mention', async ({ event, body }) => this.onEvent(event, body));
    // A listener failure must reach our receiver, so the envelope stays unacknowledged.
    app.error(async (error) => {
      throw error;
    });
    try {
      await app.start();
      if (!socket) this.connected = true;
    } catch (error) {
      const why = describeError(error);
      this.failed(`Socket Mode: ${why}`);
      if (/invalid_auth|not_authed|token_revoked/.test(why))
        throw new Error(`${this.where} rejected the app token (${why}): check ${configPath(this.accountId)}.appToken`);
      throw new Error(`${this.where}: cannot open the Socket Mode connection (${this.redact.text(why)})`);
    }
  }

  private socketReceiver(Receiver: Bolt['SocketModeReceiver'], logger: Json) {
    const socket = new Receiver({
      appToken: this.settings.appToken,
      logger,
      logLevel: this.bolt.LogLevel.WARN,
      installerOptions: { clientOptions: { slackApiUrl: this.settings.apiUrl, retryConfig: RETRY_CONFIG } },
    });
    const client = socket.client;
    // Bolt's handler acknowledges first; ours acknowledges once the pipeline has the message.
    client.removeAllListeners('slack_event');
    client.on('slack_event', (envelope: Envelope) => void this.onEnvelope(envelope));
    client.on('connected', () => {
      this.connected = true;
      this.lastError = undefined;
    });
    client.on('reconnecting', () => {
      this.connected = false;
      this.reconnects++;
    });
    client.on('disconnected', () => (this.connected = false));
    client.on('error', (error: Error) => this.failed(`socket: ${describeError(error)}`));
    return socket;
  }

  /** HTTP mode: one verified Events API request; resolves once the pipeline has taken it. */
  async handleEvent(body: unknown): Promise<void> {
    if (this.stopping || !this.app) throw new Error('the account is stopping');
    try {
      await this.app.processEvent({ body: body as Json, ack: async () => undefined });
    } catch (error) {
      throw new Error(this.redact.text(describeError(error)));
    }
  }

  /** HTTP mode: one verified slash command; resolves with the acknowledgement once the pipeline has it. */
  async handleCommand(fields: unknown): Promise<SlashAck> {
    if (this.stopping || !this.app) throw new Error('the account is stopping');
    return this.slashCommand(fields);
  }

  private async onEnvelope(envelope: Envelope): Promise<void> {
    if (this.stopping) return;
    if (envelope.type === 'slash_commands') {
      let answer: SlashAck;
      try {
        answer = await this.slashCommand(envelope.body);
      } catch (error) {
        // Unacknowledged: Slack tells the user the command failed.
        this.ctx.logger.warn(
          `${this.where}: a slash command was not taken (${this.redact.text(describeError(error))})`,
        );
        return;
      }
      // Acknowledged even while stopping: the pipeline has it, and will answer it.
      await envelope.ack(answer).catch((error: unknown) => this.failed(`ack: ${describeError(error)}`));
      return;
    }
    if (envelope.type !== 'events_api') {
      // Interactivity is not handled: acknowledged so Slack stops retrying.
      await envelope.ack().catch(() => undefined);
      return;
    }
    try {
      await this.app!.processEvent({
        body: envelope.body,
        ack: async () => undefined,
        ...(envelope.retry_num !== undefined ? { retryNum: envelope.retry_num } : {}),
        ...(envelope.retry_reason !== undefined ? { retryReason: envelope.retry_reason } : {}),
      });
    } catch (error) {
      this.ctx.logger.warn(
        `${this.where}: event ${envelope.body?.event_id ?? '?'} not taken (${this.redact.text(describeError(error))}); Slack will deliver it again`,
      );
      return;
    }
    if (this.stopping) return;
    await envelope.ack().catch((error: unknown) => this.failed(`ack: ${describeError(error)}`));
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.app?.stop().catch(() => undefined);
      await Promise.race([
        Promise.allSettled([...this.chains.values()]),
        new Promise((resolve) => setTimeout(resolve, 5000).unref()),
      ]);
      this.connected = false;
    })();
    return this.stopping;
  }

  status(): ChannelStatus {
    return {
      accountId: this.accountId,
      connected: this.connected,
      running: !this.stopping,
      mode: this.settings.mode,
      ...(this.botName
        ? {
            username: this.botName,
            detail: `@${this.botName}${this.teamName ? ` in ${this.teamName}` : ''} ${this.settings.mode === 'socket' ? ' via Socket Mode' : ` via HTTP events at ${this.settings.webhookPath}`}${this.reconnects ? ` (reconnected ${this.reconnects}×)` : ''}`,
          }
        : {}),
      ...(this.botUserId ? { botId: this.botUserId } : {}),
      ...(this.teamName ? { team: this.teamName } : {}),
      ...(this.teamId ? { teamId: this.teamId } : {}),
      reconnects: this.reconnects,
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  /**
   * A slash command → the pipeline. Resolves once the pipeline has taken (or refused) it,
   * with what the acknowledgement should say: nothing when the agent will answer through the
   * reply URL, an ephemeral line when the command is refused or not this app's.
   */
  private async slashCommand(body: unknown): Promise<SlashAck> {
    const payload = parseSlash(body);
    if (!payload) return undefined;
    const settings = this.settings.slashCommand;
    const name = payload.command.replace(/^\//, '').toLowerCase();
    const chat = await this.hooks.chatCommands().catch(() => new Set<string>());
    // A native command is a chat command of its own; Slack reserves /status, so it is /agentstatus.
    const native = this.settings.nativeCommands ? (name === 'agentstatus' ? 'status' : name) : undefined;
    if (native && chat.has(native) && !(settings.enabled && name === settings.name)) {
      if (!this.trustedUrl(payload.responseUrl)) return ephemeral('This command could not be answered.');
      const text = `/${native}${payload.text.trim() ? ` ${payload.text.trim()}` : ''}`;
      let answer: SlashAck;
      await this.enqueue(`slash:${payload.userId}`, async () => {
        answer = await this.takeSlash(payload, text, true);
      });
      return answer;
    }
    if (!settings.enabled && !this.settings.nativeCommands)
      return ephemeral(`Slash commands are turned off for this app; message me instead.`);
    if (!settings.enabled || name !== settings.name)
      return ephemeral(
        settings.enabled
          ? `I don't know ${payload.command}. Use /${settings.name} <message>, e.g. /${settings.name} help.`
          : `I don't know ${payload.command}: it is not one of my commands.`,
      );
    if (!payload.text.trim())
      return ephemeral(`Usage: /${settings.name} <message>, or a command such as /${settings.name} status.`);
    if (!this.trustedUrl(payload.responseUrl)) {
      this.ctx.logger.warn(`${this.where}: refused a slash command whose reply address is not on Slack`);
      return ephemeral('This command could not be answered: its reply address is not on Slack.');
    }
    const text = commandText(payload.text, chat);
    let answer: SlashAck;
    // One user's commands share a session: they run in the order typed.
    await this.enqueue(`slash:${payload.userId}`, async () => {
      answer = await this.takeSlash(payload, text);
    });
    return answer;
  }

  private async takeSlash(payload: SlashPayload, text: string, native = false): Promise<SlashAck> {
    const base = slashInbound(payload, this.settings.slashCommand, text, native);
    if (base.peer.kind === 'direct') this.sender.dmChannels.set(payload.userId, payload.channelId);
    // Remembered before the pipeline sees it: a quick answer may be written before `receive` resolves.
    this.sender.slash.remember(payload.triggerId, payload.responseUrl);
    const outcome = await this.ctx.receive({ accountId: this.accountId, ...base });
    if (outcome.status === 'dispatched' || outcome.status === 'duplicate') return undefined;
    this.sender.slash.forget(payload.triggerId);
    if (outcome.status === 'pairing')
      return ephemeral(
        `I don't know you yet, so I can't answer. Your pairing code is ${outcome.code}; ask my owner to approve it with: claw pairing approve slack ${outcome.code}`,
      );
    if (outcome.status === 'unavailable') return ephemeral('The assistant is restarting; try again in a moment.');
    return ephemeral(
      `You are not allowed to use ${native ? payload.command : `/${this.settings.slashCommand.name}`} here.`,
    );
  }

  /** The Slack conversation of a peer (a DM's peer is the user; its conversation is the D… id). */
  private conversationOf(peerId: string): string {
    return this.sender.dmChannels.get(peerId) ?? peerId;
  }

  /** Said once per reason, so a missing scope does not fill the log. */
  private noteOnce(what: string, error: unknown): void {
    const why = describeError(error);
    if (this.noted.has(`${what}\u0000${why}`)) return;
    this.noted.add(`${what}\u0000${why}`);
    this.ctx.logger.info(`${this.where}: no ${what} (${this.redact.text(why)}); replies go on without it`);
  }

  private statusFailed(channel: string, error: unknown): void {
    const code = (error as { data?: { error?: string } })?.data?.error;
    // A network failure is passing; Slack's own refusal is remembered.
    if (code) this.statusOff.add(APP_WIDE_ERRORS.has(code) ? '*' : channel);
    this.noteOnce('"is thinking" status', error);
  }

  private statusAllowed(channel: string): boolean {
    return !this.statusOff.has('*') && !this.statusOff.has(channel);
  }

  /**
   * The pipeline hands the message to the agent: in a thread the status line goes up (see
   * `typing`), elsewhere the typing reaction; the observer's `done` takes either down.
   */
  replyStarted(message: InboundMessage): ReplyObserver | undefined {
    // A slash command has no message of its own to mark.
    if (message.replyAddress) return undefined;
    const channel = this.conversationOf(message.peer.id);
    const thread = message.threadId;
    if (thread && this.statusAllowed(channel)) {
      const key = `${channel}\u0000${thread}`;
      const entry = this.statuses.get(key) ?? { runs: 0 };
      entry.runs++;
      this.statuses.set(key, entry);
      return { done: () => this.endStatus(key, channel, thread) };
    }
    const name = this.hooks.typingReaction();
    if (!name || this.reactionsOff) return undefined;
    const added = this.sender.react(channel, message.messageId, name).then(
      () => true,
      (error: unknown) => (this.reactionFailed(error), false),
    );
    return {
      done: async () => {
        if (await added)
          await this.sender.unreact(channel, message.messageId, name).catch((error) => this.reactionFailed(error));
      },
    };
  }

  private reactionFailed(error: unknown): void {
    const code = (error as { data?: { error?: string } })?.data?.error;
    if (code && REACTION_NOOPS.has(code)) return;
    if (code && APP_WIDE_ERRORS.has(code)) this.reactionsOff = true;
    this.noteOnce('typing reaction', error);
  }

  /** The pipeline's typing hook (renewed every few seconds): the thread's status line, while a run holds it. */
  async typing(target: { to: string; threadId?: string }): Promise<void> {
    // The pipeline calls replyStarted right after this: the run's entry exists one tick later.
    await Promise.resolve();
    if (!target.threadId) return;
    const channel = this.conversationOf(target.to);
    const entry = this.statuses.get(`${channel}\u0000${target.threadId}`);
    if (!entry || !this.statusAllowed(channel)) return;
    if (entry.setAt !== undefined && Date.now() - entry.setAt < STATUS_RENEW_MS) return;
    entry.setAt = Date.now();
    entry.pending = this.sender
      .threadStatus(channel, target.threadId, THREAD_STATUS)
      .catch((error: unknown) => this.statusFailed(channel, error));
    await entry.pending;
  }

  private async endStatus(key: string, channel: string, thread: string): Promise<void> {
    const entry = this.statuses.get(key);
    if (!entry || --entry.runs > 0) return;
    this.statuses.delete(key);
    await entry.pending;
    if (entry.setAt === undefined || !this.statusAllowed(channel)) return;
    await this.sender.threadStatus(channel, thread, '').catch((error: unknown) => this.statusFailed(channel, error));
  }

  /** Runs `task` after the conversation's earlier messages; the caller awaits its own task. */
  private enqueue(key: string, task: () => Promise<void>): Promise<void> {
    const tail = (this.chains.get(key) ?? Promise.resolve()).catch(() => undefined).then(task);
    this.chains.set(key, tail);
    void tail.then(
      () => this.chains.get(key) === tail && this.chains.delete(key),
      () => this.chains.get(key) === tail && this.chains.delete(key),
    );
    return tail;
  }

  private onEvent(event: Json, body: Json): Promise<void> {
    const parsed = parseEvent(event, this.botUserId, body?.team_id ?? this.teamId);
    if (!parsed) return Promise.resolve();
    return this.enqueue(parsed.channelId, async () => {
      const { inbound: base, files, channelId } = parsed;
      if (base.peer.kind === 'direct') this.sender.dmChannels.set(base.sender.id, channelId);
      const { media, notes } = await this.fetchFiles(files);
      const inbound: InboundMessage = {
        accountId: this.accountId,
        ...base,
        text: [base.text, ...notes].filter(Boolean).join('\n'),
        ...(media.length > 0 ? { media } : {}),
      };
      const outcome = await this.ctx.receive(inbound);
      // Not taken (shutting down): throwing leaves the envelope unacknowledged for redelivery.
      if (outcome.status === 'unavailable') throw new Error(outcome.reason);
      if (outcome.status === 'dispatched')
        await this.acknowledge(channelId, inbound, /^agent:([^:]+):/.exec(outcome.sessionKey)?.[1] ?? 'main');
    });
  }

  /** The acknowledgement reaction, where `messages.ackReactionScope` wants one. */
  private async acknowledge(channelId: string, inbound: InboundMessage, agentId: string): Promise<void> {
    const { name, scope } = this.hooks.ack(agentId);
    if (!name) return;
    const direct = inbound.peer.kind === 'direct';
    const wanted =
      scope === 'all' ||
      (scope === 'direct' && direct) ||
      (scope === 'group-all' && !direct) ||
      (scope === 'group-mentions' && !direct && inbound.mentioned === true);
    if (!wanted) return;
    try {
      await this.sender.react(channelId, inbound.messageId, name);
    } catch (error) {
      this.ctx.logger.warn(`${this.where}: could not add the :${name}: reaction: ${describeError(error)}`);
    }
  }

  /** The bot token (and a slash command's answer) goes only to Slack's own hosts (or the configured API host). */
  private trustedUrl(url: string): boolean {
    try {
      const host = new URL(url).host;
      return host === new URL(this.settings.apiUrl).host || /(^|\.)slack(-edge)?\.com$/.test(new URL(url).hostname);
    } catch {
      return false;
    }
  }

  /**
   * Files are saved under `<stateDir>/media/slack/<account>/` (owner-only) and named in the
   * text; images also go inline so the model sees them.
   */
  private async fetchFiles(files: SlackFile[]): Promise<{ media: InboundMedia[]; notes: string[] }> {
    const media: InboundMedia[] = [];
    const notes: string[] = [];
    for (const file of files) {
      const label = `"${file.fileName}"`;
      if (file.size !== undefined && file.size > MEDIA_MAX_BYTES) {
        notes.push(`[file ${label} not downloaded: larger than ${MEDIA_MAX_BYTES / 1024 / 1024} MB]`);
        continue;
      }
      if (!this.trustedUrl(file.url)) {
        notes.push(`[file ${label} not downloaded: its address is not on Slack]`);
        continue;
      }
      try {
        const response = await fetch(file.url, {
          headers: { authorization: `Bearer ${this.settings.botToken}` },
          signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
        });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const data = Buffer.from(await response.arrayBuffer());
        if (data.length > MEDIA_MAX_BYTES) throw new Error('larger than allowed');
        const dir = join(this.ctx.stateDir, 'media', 'slack', this.accountId);
        await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
        const path = join(dir, `${file.id}-${file.fileName.replace(/[^\w.-]+/g, '_').slice(0, 100)}`);
        await writeFileAtomicAsync(path, data, { mode: PRIVATE_FILE_MODE });
        const mimeType = file.mimeType ?? 'application/octet-stream';
        media.push(
          mimeType.startsWith('image/')
            ? { data: data.toString('base64'), mimeType, fileName: file.fileName }
            : { url: path, mimeType, fileName: file.fileName },
        );
        notes.push(`[file ${label} saved to ${path}]`);
      } catch (error) {
        notes.push(`[file ${label} could not be downloaded: ${this.redact.text(describeError(error))}]`);
      }
    }
    return { media, notes };
  }
}
