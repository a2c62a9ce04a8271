/**
 * Channels at run time: which channel accounts run, their status, and the entry points
 * plugins and apps use — `receive` (the inbound pipeline), `send` (the outbound path),
 * pairing. Channel plugins are loaded only when their channel is configured
 * (`channels.<id>` in openclaw.json): the gateway starts each enabled account at start-up
 * and stops it on shutdown.
 */
import type {
  ChannelInfo,
  ChannelPlugin,
  ChannelsApi,
  ChannelStatus,
  HookBus,
  InboundMessage,
  InboundOutcome,
  KernelConfig,
  Logger,
  OutboundRequest,
  OutboundResult,
  Redactor,
} from '../../sdk/index.js';
import { channelSection, channelSettings, configuredAccounts, type ChannelSettings } from '../../sdk/channels/index.js';
import { sendOutbound } from './outbound.js';
import { ChannelAccess } from './access.js';
import type { AgentService, DeliveryStatus } from '../../sdk/agent/index.js';
import { InboundPipeline } from './pipeline.js';
import { join } from 'node:path';

export interface ChannelManagerDeps {
  config(): KernelConfig;
  hooks: Pick<HookBus, 'runModifying' | 'runSync' | 'runVoid' | 'ready'>;
  logger: Logger;
  redact: Redactor;
  stateDir: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Channel ids declared by enabled plugins, with the declaring plugin. */
  declaredChannels(): Array<{ id: string; pluginId: string; loaded: boolean }>;
  findChannel(id: string): Promise<ChannelPlugin | undefined>;
  agent(): Promise<AgentService | undefined>;
  /** Folders local attachments may come from (workspaces, the media folder). */
  mediaRoots(): string[];
  /** Replies the agent could not deliver yet, or gave up, per channel account (its outbox). */
  deliveries?(): Promise<DeliveryStatus[]>;
}

export interface AccountStart {
  started: boolean;
  outcome: { status: 'handed-off' } | { status: 'skipped'; reason: string };
  /** Why it did not start (redacted), when it tried. */
  error?: string;
}

interface RunningAccount {
  channel: string;
  accountId: string;
  controller: AbortController;
  running: boolean;
  lastError?: string;
  lastInboundAt?: number;
  lastOutboundAt?: number;
}

export class ChannelManager implements ChannelsApi {
  readonly access: ChannelAccess;
  private readonly pipeline: InboundPipeline;
  private readonly accounts = new Map<string, RunningAccount>();

  constructor(private readonly deps: ChannelManagerDeps) {
    this.access = new ChannelAccess(deps.stateDir);
    this.pipeline = new InboundPipeline({
      config: deps.config,
      access: this.access,
      logger: deps.logger,
      agent: deps.agent,
      findChannel: deps.findChannel,
      send: (request) => this.send(request),
      seenFile: join(deps.stateDir, 'channels', 'inbound-seen.log'),
    });
  }

  readonly pairing = {
    list: async (channel?: string) => this.access.pending(channel),
    approve: async (channel: string, code: string) => this.access.approve(channel, code),
  };

  send(request: OutboundRequest): Promise<OutboundResult> {
    const account = this.accounts.get(`${request.channel}\u0000${request.accountId ?? 'default'}`);
    if (account) account.lastOutboundAt = Date.now();
    return sendOutbound(
      {
        hooks: this.deps.hooks,
        findChannel: this.deps.findChannel,
        retrySettings: (channel, accountId) => channelSettings(this.deps.config(), channel, accountId).retry,
        textLimit: (channel, accountId) => {
          if (!Number.isInteger(channel.textLimit) || channel.textLimit < 1) {
            throw new Error(
              `channel "${channel.id}" has no valid textLimit (got ${String(channel.textLimit)}); its plugin must register a positive integer`,
            );
          }
          return Math.min(
            channel.textLimit,
            channelSettings(this.deps.config(), channel.id, accountId).textChunkLimit ?? Number.POSITIVE_INFINITY,
          );
        },
        mediaRoots: this.deps.mediaRoots(),
        isChannel: (id) =>
          channelSection(this.deps.config(), id) !== undefined ||
          this.deps.declaredChannels().some((channel) => channel.id === id),
      },
      request,
    );
  }

  receive(channel: string, message: InboundMessage): Promise<InboundOutcome> {
    const account = this.accounts.get(`${channel}\u0000${message.accountId}`);
    if (account) account.lastInboundAt = Date.now();
    return this.pipeline.handle(channel, message);
  }

  /** Start every enabled account of every configured channel. Failures are recorded, not thrown. */
  async start(): Promise<void> {
    const config = this.deps.config();
    for (const { id, loaded } of this.deps.declaredChannels()) {
      const section = channelSection(config, id);
      // Unconfigured channels stay unloaded, unless already loaded and on by default (WebChat).
      if (!section && !loaded) continue;
      if (section?.enabled === false) continue;
      let plugin: ChannelPlugin | undefined;
      try {
        plugin = await this.deps.findChannel(id);
      } catch (error) {
        this.deps.logger.error(
          `channel ${id} is configured but its plugin failed to load: ${(error as Error).message}`,
        );
        continue;
      }
      if (!plugin?.start) continue;
      if (!section && plugin.defaults?.enabled !== true) continue;
      for (const accountId of this.accountIds(plugin)) await this.startAccount(plugin, accountId);
    }
  }

  /** The channel's configured account ids (its plugin may derive them from the section). */
  accountIds(plugin: ChannelPlugin): string[] {
    const merged = { ...plugin.defaults, ...channelSection(this.deps.config(), plugin.id) };
    return plugin.accounts ? plugin.accounts(merged) : configuredAccounts(merged);
  }

  /**
   * `channels.start`: start one account now, in OpenClaw's outcome terms (handed-off when it
   * runs, skipped with the reason when it does not). One already running is left running.
   */
  async startOne(plugin: ChannelPlugin, accountId: string): Promise<AccountStart> {
    const key = `${plugin.id}\u0000${accountId}`;
    if (this.accounts.get(key)?.running)
      return { started: true, outcome: { status: 'skipped', reason: 'already-running' } };
    this.accounts.get(key)?.controller.abort();
    await this.startAccount(plugin, accountId);
    const state = this.accounts.get(key)!;
    if (state.running) return { started: true, outcome: { status: 'handed-off' } };
    const settings = channelSettings(this.deps.config(), plugin.id, accountId, plugin.defaults);
    const reason = !settings.enabled
      ? 'disabled'
      : channelConfigProblems(settings).length > 0
        ? 'unconfigured'
        : 'failed';
    return {
      started: false,
      outcome: { status: 'skipped', reason },
      ...(state.lastError ? { error: state.lastError } : {}),
    };
  }

  /** `channels.stop`: stop one account (its status then shows it not running). */
  async stopOne(plugin: ChannelPlugin, accountId: string): Promise<{ stopped: boolean }> {
    const state = this.accounts.get(`${plugin.id}\u0000${accountId}`);
    if (!state) return { stopped: true };
    state.controller.abort();
    if (state.running) {
      try {
        await plugin.stop?.(accountId);
      } catch (error) {
        state.lastError = this.deps.redact.text((error as Error).message ?? String(error));
        this.deps.logger.error(`channel ${plugin.id} account ${accountId} failed to stop: ${state.lastError}`);
        return { stopped: false };
      }
      state.running = false;
      this.deps.logger.info(`channel ${plugin.id} account ${accountId} stopped`);
    }
    return { stopped: true };
  }

  private async startAccount(plugin: ChannelPlugin, accountId: string): Promise<void> {
    const settings = channelSettings(this.deps.config(), plugin.id, accountId, plugin.defaults);
    const key = `${plugin.id}\u0000${accountId}`;
    const state: RunningAccount = { channel: plugin.id, accountId, controller: new AbortController(), running: false };
    this.accounts.set(key, state);
    if (!settings.enabled) return;
    const problems = channelConfigProblems(settings);
    if (problems.length > 0) {
      state.lastError = this.deps.redact.text(problems.join('; '));
      this.deps.logger.error(`channel ${plugin.id} account ${accountId} not started: ${state.lastError}`);
      return;
    }
    try {
      await plugin.start!({
        accountId,
        config: settings.raw,
        logger: this.deps.logger.child({ channel: plugin.id, account: accountId }),
        signal: state.controller.signal,
        stateDir: this.deps.stateDir,
        env: this.deps.env,
        receive: (message) => this.receive(plugin.id, { ...message, accountId }),
      });
      state.running = true;
      this.deps.logger.info(`channel ${plugin.id} account ${accountId} started`);
    } catch (error) {
      // Network errors of bot libraries carry request URLs, and those carry tokens.
      state.lastError = this.deps.redact.text((error as Error).message ?? String(error));
      this.deps.logger.error(`channel ${plugin.id} account ${accountId} failed to start: ${state.lastError}`);
    }
  }

  async stop(): Promise<void> {
    for (const state of [...this.accounts.values()].reverse()) {
      state.controller.abort();
      if (!state.running) continue;
      try {
        const plugin = await this.deps.findChannel(state.channel);
        await plugin?.stop?.(state.accountId);
      } catch (error) {
        this.deps.logger.error(
          `channel ${state.channel} account ${state.accountId} failed to stop: ${(error as Error).message}`,
        );
      }
      state.running = false;
    }
    this.accounts.clear();
  }

  async status(): Promise<ChannelInfo[]> {
    const config = this.deps.config();
    const out: ChannelInfo[] = [];
    const deliveries = (await this.deps.deliveries?.().catch(() => [])) ?? [];
    for (const { id, pluginId, loaded } of this.deps.declaredChannels()) {
      const section = channelSection(config, id);
      const running = [...this.accounts.values()].filter((state) => state.channel === id);
      let reported: ChannelStatus[] = [];
      // Only a loaded plugin is asked: a status call must not load every channel plugin there is.
      const plugin = loaded || running.length ? await this.deps.findChannel(id).catch(() => undefined) : undefined;
      if (running.some((state) => state.running))
        reported = (await Promise.resolve(plugin?.status?.()).catch(() => undefined)) ?? [];
      // A channel on by default (WebChat, inside the gateway) is configured without a config section.
      const byDefault = !section && plugin?.defaults?.enabled === true;
      const accountIds = new Set([
        ...(section ? configuredAccounts(section) : []),
        ...running.map((state) => state.accountId),
      ]);
      out.push({
        id,
        pluginId,
        configured: section !== undefined || byDefault,
        enabled: byDefault || (section !== undefined && section.enabled !== false),
        accounts: [...accountIds].map((accountId) => {
          const state = running.find((item) => item.accountId === accountId);
          const own = reported.find((item) => item.accountId === accountId);
          const delivery = deliveries.find((item) => item.channel === id && item.accountId === accountId);
          return {
            accountId,
            connected: own?.connected ?? false,
            ...own,
            running: state?.running ?? false,
            ...(state?.lastError ? { lastError: state.lastError } : {}),
            ...(state?.lastInboundAt ? { lastInboundAt: state.lastInboundAt } : {}),
            ...(state?.lastOutboundAt ? { lastOutboundAt: state.lastOutboundAt } : {}),
            // Replies waiting for another delivery round, and those given up (see the agent's outbox).
            ...(delivery && (delivery.pending || delivery.failed)
              ? {
                  undeliveredReplies: delivery.pending,
                  failedDeliveries: delivery.failed,
                  ...(delivery.lastError
                    ? { lastDeliveryError: delivery.lastError, lastDeliveryErrorAt: delivery.lastErrorAt }
                    : {}),
                }
              : {}),
          };
        }),
      });
    }
    // What channel plugins report (their own lastError, detail, URLs) is masked here too.
    return this.deps.redact.value(out);
  }
}

/** Problems a channel config has that the schema cannot express, in words. */
export function channelConfigProblems(settings: ChannelSettings): string[] {
  const problems: string[] = [];
  const where = `channels.${settings.channel}${settings.accountId === 'default' ? '' : `.accounts.${settings.accountId}`}`;
  if (settings.dmPolicy === 'open' && !settings.allowFrom.includes('*')) {
    problems.push(
      `${where}.dmPolicy is "open" but allowFrom does not include "*": add "*" to allowFrom to let anyone message the bot, or use "pairing"`,
    );
  }
  return problems;
}
