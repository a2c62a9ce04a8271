/**
 * The Telegram channel: bot accounts on grammY, long polling by default, a webhook through
 * the gateway when `channels.telegram.webhook.url` is set.
 *
 * Registering costs nothing: grammY is imported when an account starts or the first
 * message is sent (`claw message send` sends without polling), never at load.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { definePlugin, type KernelServices, type Logger } from '../../sdk/index.js';
import {
  ChannelAccounts,
  type ChannelAccountContext,
  type ChannelPlugin,
  type ChannelStatus,
  type OutboundMessage,
  type SendResult,
} from '../../sdk/channels/index.js';
import type { AgentService, ChatCommandInfo } from '../../sdk/agent/index.js';
import { useService } from '../../sdk/services.js';
import { loadGrammy, TelegramAccount } from './bot.js';
import { mergedAccountConfig, resolveAccountSettings, TelegramConfigError, TOKEN_ENV } from './config.js';
import { TelegramSender } from './send.js';
import { checkTelegramToken } from './token-check.js';
import { PreviewLedger, previewsFile, takeOverPages } from './previews.js';

/** Telegram's limit for one message's text, counted after formatting is parsed. */
export const TELEGRAM_TEXT_LIMIT = 4096;
/** …and for a photo's or document's caption. */
export const TELEGRAM_CAPTION_LIMIT = 1024;

type AnyRecord = Record<string, unknown>;

export class TelegramChannel {
  private readonly accounts = new ChannelAccounts<TelegramAccount, TelegramSender>(() => this.section());
  /** Reply preview pages up in chats, per account, kept across restarts (previews.ts). */
  private readonly ledgers = new Map<string, PreviewLedger>();

  constructor(
    private readonly kernel: Pick<KernelServices, 'config' | 'env' | 'redact' | 'paths'>,
    /** The agent service, for the command menu (undefined when no agent plugin runs). */
    private readonly agent: () => Promise<AgentService | undefined> = async () => undefined,
    private readonly logger: Logger = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger,
  ) {}

  plugin(): ChannelPlugin {
    return {
      id: 'telegram',
      label: 'Telegram',
      textLimit: TELEGRAM_TEXT_LIMIT,
      captionLimit: TELEGRAM_CAPTION_LIMIT,
      // As OpenClaw: replies do not quote the message they answer unless replyToMode says so.
      defaults: { replyToMode: 'off' },
      start: (ctx) => this.start(ctx),
      stop: (accountId) => this.stop(accountId),
      send: (message) => this.send(message),
      replyStarted: (message, ack) => this.accounts.get(message.accountId)?.replyStarted(message, ack),
      typing: (target) => this.typing(target),
      status: () => this.status(),
      setup: {
        hint: 'bot token',
        fields: [
          {
            flag: 'token',
            key: 'botToken',
            label: 'Bot token (from @BotFather)',
            secret: true,
            env: TOKEN_ENV,
            required: true,
          },
        ],
        // At the account's apiRoot (the values are its merged config): where the token will be used.
        verify: (values) =>
          checkTelegramToken(
            String(values.botToken),
            typeof values.apiRoot === 'string' && values.apiRoot.trim() ? values.apiRoot.trim() : undefined,
          ),
      },
    };
  }

  private section(): AnyRecord | undefined {
    const section = (this.kernel.config().channels as AnyRecord | undefined)?.telegram;
    return section && typeof section === 'object' ? (section as AnyRecord) : undefined;
  }

  async start(ctx: ChannelAccountContext): Promise<void> {
    const settings = resolveAccountSettings(ctx.accountId, ctx.config as AnyRecord, ctx.env);
    const others = this.accounts.all().filter((other) => other.accountId !== ctx.accountId);
    const twin = others.find((other) => other.settings.token === settings.token);
    // Telegram hands each update to one consumer: two accounts on one bot would steal each other's messages.
    if (twin)
      throw new TelegramConfigError(
        `Telegram accounts "${twin.accountId}" and "${ctx.accountId}" use the same bot token: give each account its own bot (botToken)`,
      );
    const clash = settings.webhook && others.find((other) => other.webhookPath === settings.webhook!.path);
    if (clash)
      throw new TelegramConfigError(
        `Telegram accounts "${clash.accountId}" and "${ctx.accountId}" use the same webhook path ${settings.webhook!.path}: give one a different webhook.path`,
      );
    // The token may come from the environment or an account the redactor did not see as
    // secret: register it, since grammY puts it into every request URL and so every network error.
    this.kernel.redact.add(settings.token);
    const grammy = await loadGrammy();
    await this.accounts.start(
      ctx,
      () =>
        new TelegramAccount(
          settings,
          ctx,
          grammy,
          this.kernel.redact,
          () => this.commandsFor(ctx.config as AnyRecord),
          this.ledger(ctx.accountId),
        ),
    );
  }

  stop(accountId: string): Promise<void> {
    return this.accounts.stop(accountId);
  }

  private senderFor(accountId: string | undefined): Promise<TelegramSender> {
    return this.accounts.sender(accountId, async (id) => {
      const settings = resolveAccountSettings(id, mergedAccountConfig(this.section(), id), this.kernel.env);
      this.kernel.redact.add(settings.token);
      const sender = async () => {
        const grammy = await loadGrammy();
        return new TelegramSender(new grammy.Api(settings.token, { apiRoot: settings.apiRoot }), grammy.InputFile, {
          linkPreview: settings.linkPreview,
        });
      };
      return { key: `${settings.apiRoot}\u0000${settings.token}\u0000${settings.linkPreview}`, sender };
    });
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const accountId = message.accountId ?? this.accounts.defaultAccount();
    const running = this.accounts.get(accountId);
    if (running) return running.send(message);
    // Before the account runs (a reply a restart delivers early) pages a previous process left still take it.
    const sender = await this.senderFor(message.accountId);
    const taken = await takeOverPages(this.ledger(accountId), sender, message, this.logger);
    return taken ?? sender.send(message);
  }

  private ledger(accountId: string): PreviewLedger {
    let ledger = this.ledgers.get(accountId);
    if (!ledger) {
      ledger = new PreviewLedger(previewsFile(this.kernel.paths.stateDir, accountId));
      this.ledgers.set(accountId, ledger);
    }
    return ledger;
  }

  /** The commands of the agent that answers this account (its `agentId`, else the default agent). */
  private async commandsFor(config: AnyRecord): Promise<ChatCommandInfo[] | undefined> {
    const agent = await this.agent();
    if (!agent?.commands) return undefined;
    return agent.commands(typeof config.agentId === 'string' ? config.agentId : undefined);
  }

  async typing(target: { accountId: string; to: string; threadId?: string }): Promise<void> {
    await (await this.senderFor(target.accountId)).typing(target.to, target.threadId);
  }

  status(): ChannelStatus[] {
    return this.accounts.status();
  }

  /** POST /telegram/…: the account whose webhook path this is. */
  async webhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://gateway').pathname;
    const account = this.accounts.all().find((candidate) => candidate.webhookPath === path);
    if (!account) {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `no Telegram account takes webhooks at ${path}` }));
      return;
    }
    await account.handleWebhook(req, res);
  }
}

export default definePlugin({
  id: 'channel-telegram',
  register(api) {
    const channel = new TelegramChannel(
      api.kernel,
      () => useService<AgentService>(api.kernel, 'agent').catch(() => undefined),
      api.logger,
    );
    api.registerChannel(channel.plugin());
    // Telegram authenticates with the secret header, not gateway auth; account paths come
    // from config, so one route takes the whole prefix and dispatches by path.
    api.registerHttpRoute({
      method: 'POST',
      path: '/telegram/*',
      auth: 'none',
      handler: (req, res) => channel.webhook(req, res),
    });
  },
});
