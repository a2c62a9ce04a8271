/**
 * The Slack channel: Slack apps on @slack/bolt in Socket Mode, everything outbound through
 * its Web API client.
 *
 * Registering costs nothing: Bolt is imported (and installed into the runtime-deps folder
 * when claw was installed without it) when an account starts or the first message is sent
 * (`claw message send` sends without a socket), never at load.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { definePlugin, runtimeDeps, type KernelServices, type Logger, type RuntimeDeps } from '../../sdk/index.js';
import { resolveAgentIdentity, type AgentService } from '../../sdk/agent/index.js';
import {
  ChannelAccounts,
  type ChannelAccountContext,
  type ChannelPlugin,
  type ChannelStatus,
  type OutboundMessage,
  type SendResult,
} from '../../sdk/channels/index.js';
import { useService } from '../../sdk/services.js';
import { channelAccess } from './access.js';
import {
  createWebClient,
  loadBolt,
  SlackAccount,
  type AccountHooks,
  type AckScope,
  type AckSettings,
} from './account.js';
import {
  ignoredSettings,
  isRecord,
  mergedAccountConfig,
  resolveAccountSettings,
  SLACK_TEXT_LIMIT,
  SlackConfigError,
  type SlackAccountSettings,
} from './config.js';
import { serveEvents } from './http.js';
import { SlackSender } from './send.js';
import { slackSetup } from './token-check.js';

type AnyRecord = Record<string, unknown>;

const ACK_SCOPES = new Set<AckScope>(['all', 'direct', 'group-all', 'group-mentions', 'off', 'none']);
/** Slack reactions take emoji names; the few emoji people configure most are translated. */
const EMOJI_NAMES: Record<string, string> = {
  '👀': 'eyes',
  '✅': 'white_check_mark',
  '👍': 'thumbsup',
  '🤖': 'robot_face',
};

export function reactionName(emoji: string): string {
  const trimmed = emoji.trim();
  if (!trimmed) return '';
  const named = /^:?([a-z0-9_+'-]+):?$/i.exec(trimmed)?.[1];
  return named ?? EMOJI_NAMES[trimmed] ?? 'eyes';
}

export class SlackChannel {
  private readonly accounts = new ChannelAccounts<SlackAccount, SlackSender>(() => this.section());

  private readonly deps: RuntimeDeps;

  constructor(
    private readonly kernel: Pick<KernelServices, 'config' | 'env' | 'redact' | 'paths' | 'capabilities' | 'plugins'>,
    private readonly log: Pick<Logger, 'warn'>,
  ) {
    this.deps = runtimeDeps(kernel, 'Slack');
  }

  plugin(): ChannelPlugin {
    return {
      id: 'slack',
      label: 'Slack',
      textLimit: SLACK_TEXT_LIMIT,
      // OpenClaw's Slack default: answers go to the channel, not into a thread, unless replyToMode says so.
      defaults: { replyToMode: 'off' },
      start: (ctx) => this.start(ctx),
      stop: (accountId) => this.stop(accountId),
      send: (message) => this.send(message),
      replyStarted: (message) => this.accounts.get(message.accountId)?.replyStarted(message),
      typing: async (target) => this.accounts.get(target.accountId)?.typing(target),
      status: () => this.status(),
      groupAccess: (message, config) => channelAccess(message, config),
      setup: slackSetup(this.kernel.env),
    };
  }

  private section(): AnyRecord | undefined {
    const section = (this.kernel.config().channels as AnyRecord | undefined)?.slack;
    return isRecord(section) ? section : undefined;
  }

  /**
   * `channels.slack[.accounts.<id>].ackReaction`, else `messages.ackReaction`, else the
   * answering agent's `identity.emoji`, else 👀 (`eyes`); scope from `messages.ackReactionScope`.
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
          : (resolveAgentIdentity(config, agentId).emoji ?? 'eyes');
    const scope = ACK_SCOPES.has(messages.ackReactionScope as AckScope)
      ? (messages.ackReactionScope as AckScope)
      : 'group-mentions';
    return { name: reactionName(emoji), scope };
  }

  /** `channels.slack[.accounts.<id>].typingReaction`, read at each message (no default: off). */
  private typingReaction(accountId: string): string {
    const emoji = mergedAccountConfig(this.section(), accountId).typingReaction;
    return typeof emoji === 'string' ? reactionName(emoji) : '';
  }

  /** The agent's chat commands and their aliases, for `/openclaw status` → `/status`. */
  private async chatCommands(): Promise<ReadonlySet<string>> {
    const agent = await useService<AgentService>(this.kernel, 'agent').catch(() => undefined);
    const commands = (await agent?.commands?.()) ?? [];
    return new Set(
      commands.flatMap((command) => [command.name, ...(command.aliases ?? [])].map((name) => name.toLowerCase())),
    );
  }

  async start(ctx: ChannelAccountContext): Promise<void> {
    const settings = resolveAccountSettings(
      ctx.accountId,
      ctx.config as AnyRecord,
      ctx.env,
      ((this.kernel.config() as AnyRecord).commands as AnyRecord | undefined)?.native,
    );
    for (const note of ignoredSettings(ctx.accountId, ctx.config as AnyRecord)) ctx.logger.warn(`slack: ${note}`);
    for (const other of this.accounts.all()) {
      if (other.accountId === ctx.accountId || other.settings.mode !== settings.mode) continue;
      // Two sockets of one app split its events between them at random; two accounts cannot share a path.
      if (settings.mode === 'socket' && other.settings.appToken === settings.appToken)
        throw new SlackConfigError(
          `Slack accounts "${other.accountId}" and "${ctx.accountId}" use the same app token: give each account its own Slack app`,
        );
      if (settings.mode === 'http' && other.settings.webhookPath === settings.webhookPath)
        throw new SlackConfigError(
          `Slack accounts "${other.accountId}" and "${ctx.accountId}" both use webhookPath ${settings.webhookPath}: give each its own`,
        );
    }
    // The secrets may come from the environment: the redactor must know them before any error text.
    this.redactSecrets(settings);
    const bolt = await loadBolt(this.deps);
    await this.accounts.start(
      ctx,
      () =>
        new SlackAccount(settings, ctx, bolt, this.kernel.redact, {
          ack: (agentId) => this.ackSettings(ctx.accountId, agentId),
          typingReaction: () => this.typingReaction(ctx.accountId),
          chatCommands: () => this.chatCommands(),
        } satisfies AccountHooks),
    );
  }

  private redactSecrets(settings: SlackAccountSettings): void {
    for (const secret of [settings.botToken, settings.appToken, settings.signingSecret])
      if (secret) this.kernel.redact.add(secret);
  }

  /** The gateway route for HTTP mode: the account whose webhookPath the request names. */
  webhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://gateway').pathname;
    const account = this.accounts
      .all()
      .find((candidate) => candidate.settings.mode === 'http' && candidate.settings.webhookPath === path);
    return serveEvents(
      req,
      res,
      account
        ? {
            signingSecret: account.settings.signingSecret,
            handleEvent: (body) => account.handleEvent(body),
            handleCommand: (fields) => account.handleCommand(fields),
          }
        : undefined,
      (line) => this.log.warn(this.kernel.redact.text(line)),
    );
  }

  stop(accountId: string): Promise<void> {
    return this.accounts.stop(accountId);
  }

  private senderFor(accountId: string | undefined): Promise<SlackSender> {
    return this.accounts.sender(accountId, async (id) => {
      const settings = resolveAccountSettings(id, mergedAccountConfig(this.section(), id), this.kernel.env);
      this.redactSecrets(settings);
      return {
        key: JSON.stringify(settings),
        sender: async () => new SlackSender(createWebClient(await loadBolt(this.deps), settings)),
      };
    });
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    return (await this.senderFor(message.accountId)).send(message);
  }

  status(): ChannelStatus[] {
    return this.accounts.status();
  }
}

export default definePlugin({
  id: 'channel-slack',
  register(api) {
    const channel = new SlackChannel(api.kernel, api.logger);
    api.registerChannel(channel.plugin());
    // Slack signs its requests (checked in http.ts), so the route is outside gateway auth.
    api.registerHttpRoute({
      method: 'POST',
      path: '/slack/*',
      auth: 'none',
      // Slash commands arrive form-encoded.
      formBodies: true,
      handler: (req, res) => channel.webhook(req, res),
    });
  },
});
