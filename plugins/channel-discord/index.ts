/**
 * The Discord channel: bot accounts on discord.js's gateway client, everything outbound
 * through its REST client.
 *
 * Registering costs nothing: discord.js is imported (and installed into the runtime-deps
 * folder when claw was installed without it) when an account starts or the first message
 * is sent (`claw message send` sends without a gateway connection), never at load.
 */
import { definePlugin, runtimeDeps, type KernelServices, type RuntimeDeps } from '../../sdk/index.js';
import { resolveAgentIdentity } from '../../sdk/agent/index.js';
import {
  ChannelAccounts,
  type ChannelAccountContext,
  type ChannelPlugin,
  type ChannelStatus,
  type OutboundMessage,
  type SendResult,
} from '../../sdk/channels/index.js';
import { guildAccess } from './access.js';
import { createRest, DiscordAccount, loadDiscord, type AckScope, type AckSettings } from './account.js';
import {
  DISCORD_TEXT_LIMIT,
  DiscordConfigError,
  isRecord,
  mergedAccountConfig,
  resolveAccountSettings,
  TOKEN_ENV,
} from './config.js';
import { DiscordSender } from './send.js';
import { checkDiscordToken } from './token-check.js';

type AnyRecord = Record<string, unknown>;

const ACK_SCOPES = new Set<AckScope>(['all', 'direct', 'group-all', 'group-mentions', 'off', 'none']);
const DEFAULT_ACK_EMOJI = '👀';

export class DiscordChannel {
  private readonly accounts = new ChannelAccounts<DiscordAccount, DiscordSender>(() => this.section());

  private readonly deps: RuntimeDeps;

  constructor(
    private readonly kernel: Pick<KernelServices, 'config' | 'env' | 'redact' | 'paths' | 'capabilities' | 'plugins'>,
  ) {
    this.deps = runtimeDeps(kernel, 'Discord');
  }

  plugin(): ChannelPlugin {
    return {
      id: 'discord',
      label: 'Discord',
      textLimit: DISCORD_TEXT_LIMIT,
      start: (ctx) => this.start(ctx),
      stop: (accountId) => this.stop(accountId),
      send: (message) => this.send(message),
      typing: (target) => this.typing(target),
      status: () => this.status(),
      groupAccess: (message, config) => guildAccess(message, config),
      setup: {
        hint: 'bot token',
        fields: [
          {
            flag: 'token',
            key: 'token',
            label: 'Bot token (Developer Portal → your application → Bot)',
            secret: true,
            env: TOKEN_ENV,
            required: true,
          },
        ],
        verify: (values) => checkDiscordToken(String(values.token), this.kernel.env),
      },
    };
  }

  private section(): AnyRecord | undefined {
    const section = (this.kernel.config().channels as AnyRecord | undefined)?.discord;
    return isRecord(section) ? section : undefined;
  }

  /**
   * `channels.discord[.accounts.<id>].ackReaction`, else `messages.ackReaction`, else the
   * answering agent's `identity.emoji`, else 👀; scope from `messages.ackReactionScope`.
   */
  private ackSettings(accountId: string, agentId: string): AckSettings {
    const config = this.kernel.config();
    const messages = (config.messages ?? {}) as AnyRecord;
    const merged = mergedAccountConfig(this.section(), accountId);
    const emoji =
      typeof merged.ackReaction === 'string'
        ? merged.ackReaction
        : typeof messages.ackReaction === 'string'
          ? messages.ackReaction
          : (resolveAgentIdentity(config, agentId).emoji ?? DEFAULT_ACK_EMOJI);
    const scope = ACK_SCOPES.has(messages.ackReactionScope as AckScope)
      ? (messages.ackReactionScope as AckScope)
      : 'group-mentions';
    return { emoji: emoji.trim(), scope };
  }

  async start(ctx: ChannelAccountContext): Promise<void> {
    const settings = resolveAccountSettings(ctx.accountId, ctx.config as AnyRecord, ctx.env);
    const twin = this.accounts
      .all()
      .find((other) => other.accountId !== ctx.accountId && other.settings.token === settings.token);
    // One bot on two gateway sessions would answer every message twice.
    if (twin)
      throw new DiscordConfigError(
        `Discord accounts "${twin.accountId}" and "${ctx.accountId}" use the same bot token: give each account its own bot (token)`,
      );
    // The token may come from the environment: the redactor must know it before any error text.
    this.kernel.redact.add(settings.token);
    const discord = await loadDiscord(this.deps);
    await this.accounts.start(
      ctx,
      () =>
        new DiscordAccount(
          settings,
          ctx,
          discord,
          this.kernel.redact,
          (agentId) => this.ackSettings(ctx.accountId, agentId),
          () => this.kernel.capabilities.list('command').map((info) => ({ name: info.name, pluginId: info.pluginId })),
        ),
    );
  }

  stop(accountId: string): Promise<void> {
    return this.accounts.stop(accountId);
  }

  private senderFor(accountId: string | undefined): Promise<DiscordSender> {
    return this.accounts.sender(accountId, async (id) => {
      const settings = resolveAccountSettings(id, mergedAccountConfig(this.section(), id), this.kernel.env);
      this.kernel.redact.add(settings.token);
      return {
        key: JSON.stringify(settings),
        sender: async () => new DiscordSender(createRest(await loadDiscord(this.deps), settings), settings),
      };
    });
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const running = this.accounts.get(message.accountId ?? this.accounts.defaultAccount());
    // A running account may owe a slash command its answer.
    if (running) return running.send(message);
    return (await this.senderFor(message.accountId)).send(message);
  }

  async typing(target: { accountId: string; to: string; threadId?: string }): Promise<void> {
    await (await this.senderFor(target.accountId)).typing(target.to, target.threadId);
  }

  status(): ChannelStatus[] {
    return this.accounts.status();
  }
}

export default definePlugin({
  id: 'channel-discord',
  register(api) {
    api.registerChannel(new DiscordChannel(api.kernel).plugin());
  },
});
