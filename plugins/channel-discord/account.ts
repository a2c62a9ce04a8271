/**
 * One Discord bot account at run time: a discord.js Client holding the gateway connection
 * (IDENTIFY, heartbeats, and RESUME after a dropped socket, which replays what was missed),
 * turning MESSAGE_CREATE and INTERACTION_CREATE into InboundMessages for the pipeline.
 *
 * The raw gateway payloads are read (client `raw` events), not discord.js's cached
 * structures: a DM or a channel the cache has not seen must not be dropped, and the
 * pipeline wants plain ids anyway. Channel metadata (thread parents, names) comes from
 * GUILD_CREATE / THREAD_CREATE and, for a channel not seen yet, one REST lookup.
 *
 * Ordering: a channel's messages reach the pipeline strictly in order (a slow attachment
 * download holds back only its own channel); different channels run side by side. A
 * replayed or redelivered message is dropped by the pipeline's dedupe (message id).
 *
 * Supervision: a network failure never fails `start` (the gateway must come up while
 * Discord is unreachable): login is retried with backoff and `status()` shows the last
 * error. Only a token Discord rejects stops the account for good.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from 'discord.js';
import {
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  type Redactor,
  runtimeDependencyLoader,
  type RuntimeDependency,
  writeFileAtomicAsync,
} from '../../sdk/index.js';
import type {
  ChannelAccountContext,
  ChannelStatus,
  InboundMedia,
  InboundMessage,
  InboundOutcome,
  OutboundMessage,
  SendResult,
} from '../../sdk/channels/index.js';
import { applicationCommands } from './commands.js';
import { configPath, TOKEN_ENV, type DiscordAccountSettings } from './config.js';
import {
  DM,
  isThread,
  parseInteraction,
  parseMessage,
  type Attachment,
  type ChannelInfo,
  type ParsedInteraction,
} from './inbound.js';
import { describeError, DiscordSender, isTokenRejected, type RestLike } from './send.js';

export type DiscordJs = typeof import('discord.js');

export const DISCORD_JS: RuntimeDependency = { name: 'discord.js', version: '^14.28.1', approxSizeMb: 20 };

/** discord.js, imported (and installed when missing) on first use. */
export const loadDiscord = runtimeDependencyLoader<DiscordJs>(
  DISCORD_JS,
  'Client',
  'claw plugins enable channel-discord',
);

/** A REST client for the account's token and API base (send-only use needs no gateway). */
export function createRest(discord: DiscordJs, settings: DiscordAccountSettings): RestLike {
  return new discord.REST({ api: settings.apiBase, version: settings.apiVersion }).setToken(
    settings.token,
  ) as unknown as RestLike;
}

const LOGIN_TIMEOUT_MS = 30_000;
const DOWNLOAD_TIMEOUT_MS = 60_000;
/** Discord keeps an interaction token valid for 15 minutes. */
const INTERACTION_TTL_MS = 14 * 60_000;
/** Pieces of one answer arrive back to back; later sends to the channel are ordinary messages. */
const FOLLOWUP_WINDOW_MS = 5_000;

type Json = any;

export type AckScope = 'all' | 'direct' | 'group-all' | 'group-mentions' | 'off' | 'none';

export interface AckSettings {
  emoji: string;
  scope: AckScope;
}

interface PendingInteraction {
  interaction: ParsedInteraction;
  ephemeral: boolean;
  expiresAt: number;
  answeredAt?: number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

export class DiscordAccount {
  readonly accountId: string;
  readonly sender: DiscordSender;
  private readonly client: Client;
  private readonly abort = new AbortController();
  private readonly channelInfo = new Map<string, ChannelInfo>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly pending = new Map<string, PendingInteraction>();
  /** Interactions already taken: a RESUME may replay one, and it can be acknowledged only once. */
  private readonly seenInteractions = new Set<string>();
  private connected = false;
  private lastError?: string;
  private botId = '';
  private botName?: string;
  private resumes = 0;
  private stopping?: Promise<void>;

  constructor(
    readonly settings: DiscordAccountSettings,
    private readonly ctx: ChannelAccountContext,
    discord: DiscordJs,
    private readonly redact: Pick<Redactor, 'text'>,
    private readonly ack: (agentId: string) => AckSettings,
    private readonly pluginCommands: () => ReadonlyArray<{ name: string; pluginId: string }>,
  ) {
    this.accountId = settings.accountId;
    const { GatewayIntentBits, Events } = discord;
    this.client = new discord.Client({
      intents: [
        GatewayIntentBits.Guilds,
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.DirectMessages,
        GatewayIntentBits.MessageContent,
      ],
      rest: { api: settings.apiBase, version: settings.apiVersion },
      // Messages are read from the raw payloads; discord.js's message cache would only hold memory.
      makeCache: discord.Options.cacheWithLimits({ ...discord.Options.DefaultMakeCacheSettings, MessageManager: 0 }),
    });
    this.sender = new DiscordSender(this.client.rest as unknown as RestLike, settings);
    this.client.on(Events.Raw, (packet: Json) => this.onPacket(packet));
    this.client.on(Events.ShardResume, () => {
      this.resumes++;
      this.connected = true;
      ctx.logger.info(`${this.where}: gateway session resumed`);
    });
    this.client.on(Events.ShardReconnecting, () => {
      this.connected = false;
    });
    this.client.on(Events.ShardDisconnect, (event: { code?: number }) => {
      this.failed(`gateway closed for good (code ${event?.code})`);
    });
    this.client.on(Events.ShardError, (error: Error) => this.failed(`gateway: ${describeError(error)}`));
    this.client.on(Events.Error, (error: Error) => this.failed(describeError(error)));
  }

  private get where(): string {
    return this.accountId === 'default' ? 'Discord' : `Discord account "${this.accountId}"`;
  }

  private failed(error: string): void {
    this.connected = false;
    this.lastError = this.redact.text(error);
  }

  async start(): Promise<void> {
    try {
      await this.login();
    } catch (error) {
      if (isTokenRejected(error))
        throw new Error(
          `${this.where} rejected the bot token (${describeError(error)}): check ${configPath(this.accountId)}.token${this.accountId === 'default' ? ` or ${TOKEN_ENV}` : ''}`,
        );
      this.failed(`login: ${describeError(error)}`);
      this.ctx.logger.warn(`${this.where}: cannot reach Discord yet (${this.lastError}); retrying in the background`);
      void this.retryLogin();
    }
  }

  private async login(): Promise<void> {
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`no READY from the gateway within ${LOGIN_TIMEOUT_MS / 1000} s`)),
        LOGIN_TIMEOUT_MS,
      ).unref(),
    );
    await Promise.race([this.client.login(this.settings.token), timeout]);
  }

  private async retryLogin(): Promise<void> {
    let delay = 1000;
    while (!this.abort.signal.aborted && !this.connected) {
      await sleep(delay, this.abort.signal);
      if (this.abort.signal.aborted) return;
      try {
        this.client.destroy();
        await this.login();
        return;
      } catch (error) {
        this.failed(`login: ${describeError(error)}`);
        if (isTokenRejected(error)) {
          this.ctx.logger.error(`${this.where} rejected the bot token; the account is stopped`);
          return;
        }
        delay = Math.min(delay * 2, 60_000);
      }
    }
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.abort.abort();
      await this.client.destroy();
      // Messages already taken reach the pipeline (bounded).
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
      ...(this.botName
        ? {
            username: this.botName,
            detail: `@${this.botName} via the gateway${this.resumes ? ` (resumed ${this.resumes}×)` : ''}`,
          }
        : {}),
      ...(this.botId ? { botId: this.botId } : {}),
      resumes: this.resumes,
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  // ── Gateway events ───────────────────────────────────────────────────────────────

  private onPacket(packet: Json): void {
    const data = packet?.d;
    switch (packet?.t) {
      case 'READY':
        this.botId = String(data.user?.id ?? '');
        this.botName = data.user?.username;
        this.connected = true;
        this.lastError = undefined;
        void this.registerCommands(String(data.application?.id ?? this.botId));
        return;
      case 'RESUMED':
        this.connected = true;
        return;
      case 'GUILD_CREATE':
        for (const channel of [...(data.channels ?? []), ...(data.threads ?? [])])
          this.remember({ ...channel, guild_id: channel.guild_id ?? data.id });
        return;
      case 'CHANNEL_CREATE':
      case 'CHANNEL_UPDATE':
      case 'THREAD_CREATE':
      case 'THREAD_UPDATE':
        this.remember(data);
        return;
      case 'MESSAGE_CREATE':
        if (data?.channel_id) this.enqueue(String(data.channel_id), () => this.onMessage(data));
        return;
      case 'INTERACTION_CREATE':
        void this.onInteraction(data).catch((error) =>
          this.ctx.logger.error(`${this.where}: a slash command failed: ${describeError(error)}`),
        );
        return;
    }
  }

  private remember(channel: Json): void {
    if (!channel?.id) return;
    this.channelInfo.set(String(channel.id), {
      id: String(channel.id),
      type: Number(channel.type ?? 0),
      ...(channel.name ? { name: String(channel.name) } : {}),
      ...(channel.guild_id ? { guildId: String(channel.guild_id) } : {}),
      ...(channel.parent_id ? { parentId: String(channel.parent_id) } : {}),
    });
  }

  /** Metadata of a guild channel; one REST lookup for a channel the gateway has not described. */
  private async channel(channelId: string, inGuild: boolean): Promise<ChannelInfo | undefined> {
    const known = this.channelInfo.get(channelId);
    if (known || !inGuild) return known;
    try {
      this.remember(await this.sender.rest.get(`/channels/${channelId}`));
    } catch (error) {
      this.ctx.logger.debug(`discord: no metadata for channel ${channelId}: ${describeError(error)}`);
    }
    return this.channelInfo.get(channelId);
  }

  private enqueue(key: string, task: () => Promise<void>): void {
    const tail = (this.chains.get(key) ?? Promise.resolve())
      .then(task)
      .catch((error) => this.ctx.logger.error(`discord: an incoming message failed: ${describeError(error)}`));
    this.chains.set(key, tail);
    void tail.then(() => {
      if (this.chains.get(key) === tail) this.chains.delete(key);
    });
  }

  private async onMessage(data: Json): Promise<void> {
    if (this.stopping) return;
    const channel = await this.channel(String(data.channel_id), !!data.guild_id);
    const parsed = parseMessage(
      data,
      this.botId,
      channel ?? (data.guild_id ? undefined : { id: String(data.channel_id), type: DM }),
    );
    if (!parsed) return;
    if (parsed.inbound.peer.kind === 'direct') this.sender.dmChannels.set(parsed.inbound.sender.id, parsed.channelId);
    const { media, notes } = await this.fetchAttachments(parsed.attachments);
    const text = [parsed.inbound.text, ...notes].filter(Boolean).join('\n');
    const inbound: InboundMessage = {
      accountId: this.accountId,
      ...parsed.inbound,
      text,
      ...(media.length > 0 ? { media } : {}),
    };
    const outcome = await this.ctx.receive(inbound);
    this.ctx.logger.debug(
      `discord: message ${inbound.messageId} in ${inbound.peer.kind} ${inbound.peer.id}: ${outcome.status}`,
    );
    if (outcome.status === 'dispatched')
      await this.acknowledge(parsed.channelId, inbound, /^agent:([^:]+):/.exec(outcome.sessionKey)?.[1] ?? 'main');
  }

  /** The acknowledgement reaction, where `messages.ackReactionScope` wants one. */
  private async acknowledge(channelId: string, inbound: InboundMessage, agentId: string): Promise<void> {
    const { emoji, scope } = this.ack(agentId);
    if (!emoji) return;
    const direct = inbound.peer.kind === 'direct';
    const wanted =
      scope === 'all' ||
      (scope === 'direct' && direct) ||
      (scope === 'group-all' && !direct) ||
      (scope === 'group-mentions' && !direct && inbound.mentioned === true);
    if (!wanted) return;
    try {
      await this.sender.react(channelId, inbound.messageId, emoji);
    } catch (error) {
      this.ctx.logger.warn(`${this.where}: could not add the ${emoji} reaction: ${describeError(error)}`);
    }
  }

  /**
   * Every attachment is saved under `<stateDir>/media/discord/<account>/` (owner-only) and
   * named in the text; images also go inline so the model sees them.
   */
  private async fetchAttachments(attachments: Attachment[]): Promise<{ media: InboundMedia[]; notes: string[] }> {
    const media: InboundMedia[] = [];
    const notes: string[] = [];
    const max = this.settings.mediaMaxBytes;
    for (const attachment of attachments) {
      const label = `"${attachment.fileName}"`;
      if (attachment.size !== undefined && attachment.size > max) {
        notes.push(`[attachment ${label} not downloaded: larger than ${Math.round(max / 1024 / 1024)} MB]`);
        continue;
      }
      try {
        const data = await this.download(attachment.url, max);
        const mimeType = attachment.mimeType ?? 'application/octet-stream';
        const dir = join(this.ctx.stateDir, 'media', 'discord', this.accountId);
        await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
        const path = join(dir, `${attachment.id}-${attachment.fileName.replace(/[^\w.-]+/g, '_').slice(0, 100)}`);
        await writeFileAtomicAsync(path, data, { mode: PRIVATE_FILE_MODE });
        media.push(
          mimeType.startsWith('image/')
            ? { data: data.toString('base64'), mimeType, fileName: attachment.fileName }
            : { url: path, mimeType, fileName: attachment.fileName },
        );
        notes.push(`[attachment ${label} (${mimeType}, ${data.length} bytes) saved at ${path}]`);
      } catch (error) {
        this.ctx.logger.warn(`discord: could not download attachment ${label}: ${describeError(error)}`);
        notes.push(`[attachment ${label} could not be downloaded]`);
      }
    }
    return { media, notes };
  }

  private async download(url: string, max: number): Promise<Buffer> {
    const response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
    if (!response.ok || !response.body) throw new Error(`download failed with HTTP ${response.status}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > max) throw new Error(`larger than ${max} bytes`);
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks);
  }

  // ── Slash commands ───────────────────────────────────────────────────────────────

  private async registerCommands(applicationId: string): Promise<void> {
    if (!this.settings.nativeCommands || !applicationId) return;
    try {
      const commands = applicationCommands(this.pluginCommands());
      await this.sender.registerCommands(applicationId, commands);
      this.ctx.logger.info(`${this.where}: registered ${commands.length} slash commands`);
    } catch (error) {
      this.ctx.logger.warn(`${this.where}: could not register slash commands: ${describeError(error)}`);
    }
  }

  private pendingKey(to: string, threadId?: string): string {
    return `${to}\u0000${threadId ?? ''}`;
  }

  private async onInteraction(data: Json): Promise<void> {
    const interaction = parseInteraction(data);
    if (!interaction || this.stopping || this.seenInteractions.has(interaction.id)) return;
    this.seenInteractions.add(interaction.id);
    if (this.seenInteractions.size > 1000) this.seenInteractions.delete(this.seenInteractions.values().next().value!);
    // Discord wants an answer within 3 s; the agent may take longer.
    await this.sender.defer(interaction.id, interaction.token, this.settings.ephemeral);
    const channel = interaction.guildId ? await this.channel(interaction.channelId, true) : undefined;
    const thread = isThread(channel) && channel?.parentId ? channel : undefined;
    const peerId = interaction.guildId ? (thread ? thread.parentId! : interaction.channelId) : interaction.user.id;
    if (!interaction.guildId) this.sender.dmChannels.set(interaction.user.id, interaction.channelId);
    const key = this.pendingKey(peerId, thread?.id);
    this.pending.set(key, {
      interaction,
      ephemeral: this.settings.ephemeral,
      expiresAt: Date.now() + INTERACTION_TTL_MS,
    });
    const inbound: InboundMessage = {
      accountId: this.accountId,
      peer: { kind: interaction.guildId ? 'channel' : 'direct', id: peerId },
      sender: interaction.user,
      text: interaction.text,
      messageId: interaction.id,
      mentioned: true,
      ...(thread ? { threadId: thread.id } : {}),
      ...(interaction.guildId ? { guildId: interaction.guildId } : {}),
      ...(interaction.roles ? { memberRoleIds: interaction.roles } : {}),
      ...(channel?.name && !thread ? { peerName: channel.name } : {}),
    };
    const outcome: InboundOutcome = await this.ctx.receive(inbound);
    const still = this.pending.get(key);
    if (outcome.status === 'dispatched' || outcome.status === 'duplicate' || still?.answeredAt) return;
    const reason =
      outcome.status === 'pairing'
        ? `You are not paired yet: ask the owner to approve code ${outcome.code} (claw pairing approve discord ${outcome.code}).`
        : outcome.status === 'unavailable'
          ? 'The assistant is restarting; try again in a moment.'
          : 'You are not authorized to use this command here.';
    this.pending.delete(key);
    await this.sender.editOriginal(interaction.applicationId, interaction.token, { to: peerId, text: reason });
  }

  /** The slash command this piece answers, if one waits on its conversation. */
  private answering(message: OutboundMessage): PendingInteraction | undefined {
    const key = this.pendingKey(message.to, message.threadId);
    const pending = this.pending.get(key);
    if (!pending) return undefined;
    const now = Date.now();
    if (
      now > pending.expiresAt ||
      (pending.answeredAt !== undefined && now - pending.answeredAt > FOLLOWUP_WINDOW_MS)
    ) {
      this.pending.delete(key);
      return undefined;
    }
    return pending;
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const pending = this.answering(message);
    if (!pending) return this.sender.send(message);
    const { interaction } = pending;
    const first = pending.answeredAt === undefined;
    const result = first
      ? await this.sender.editOriginal(interaction.applicationId, interaction.token, message)
      : await this.sender.followUp(interaction.applicationId, interaction.token, message, pending.ephemeral);
    pending.answeredAt = Date.now();
    return result;
  }
}
