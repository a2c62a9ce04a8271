/**
 * The IRC channel: one irc-framework connection per account, replies cut into lines that
 * fit IRC's 512-byte limit. irc-framework is imported (and installed into the runtime-deps
 * folder when claw was installed without it) when an account starts or a message is sent,
 * never at load.
 */
import { definePlugin, runtimeDeps, type KernelServices, type RuntimeDeps } from '../../sdk/index.js';
import {
  ChannelAccounts,
  ChannelSendError,
  mergedAccountConfig,
  type ChannelAccountContext,
  type ChannelPlugin,
  type ChannelStatus,
  type OutboundMessage,
  type SendResult,
} from '../../sdk/channels/index.js';
import { ircGroupAccess } from './access.js';
import { IrcAccount, loadIrc } from './account.js';
import { IrcConfigError, ircSecrets, isRecord, resolveIrcSettings } from './config.js';
import { IRC_SETUP } from './setup.js';

type AnyRecord = Record<string, unknown>;

/**
 * What the pipeline cuts a reply into before it reaches `send`, which cuts each piece into
 * lines of at most ≈ 400 bytes of text: a piece is about one IRC line of plain text.
 */
export const IRC_TEXT_LIMIT = 350;

export class IrcChannel {
  private readonly accounts = new ChannelAccounts<IrcAccount, IrcAccount>(() => this.section());
  private readonly deps: RuntimeDeps;

  constructor(private readonly kernel: Pick<KernelServices, 'config' | 'env' | 'redact' | 'capabilities' | 'plugins'>) {
    this.deps = runtimeDeps(kernel, 'IRC');
  }

  plugin(): ChannelPlugin {
    return {
      id: 'irc',
      label: 'IRC',
      textLimit: IRC_TEXT_LIMIT,
      start: (ctx) => this.start(ctx),
      stop: (accountId) => this.accounts.stop(accountId),
      send: (message) => this.send(message),
      status: () => this.status(),
      groupAccess: (message, config) => ircGroupAccess(message, config),
      setup: IRC_SETUP,
    };
  }

  private section(): AnyRecord | undefined {
    const section = (this.kernel.config().channels as AnyRecord | undefined)?.irc;
    return isRecord(section) ? section : undefined;
  }

  async start(ctx: ChannelAccountContext): Promise<void> {
    const settings = resolveIrcSettings(ctx.accountId, ctx.config as AnyRecord, ctx.env);
    // Secrets may come from files or the environment: the redactor must know them before any error text.
    for (const secret of ircSecrets(settings)) this.kernel.redact.add(secret);
    const twin = this.accounts
      .all()
      .find(
        (other) =>
          other.accountId !== ctx.accountId &&
          other.settings.host === settings.host &&
          other.settings.port === settings.port &&
          other.settings.nick.toLowerCase() === settings.nick.toLowerCase(),
      );
    if (twin)
      throw new IrcConfigError(
        `IRC accounts "${twin.accountId}" and "${ctx.accountId}" use the same nick on the same server: give each its own nick`,
      );
    const irc = await loadIrc(this.deps);
    await this.accounts.start(ctx, () => new IrcAccount(settings, ctx, irc, this.kernel.redact));
  }

  /** IRC sends only over a registered connection: there is no send-only client. */
  async send(message: OutboundMessage): Promise<SendResult> {
    const id = message.accountId ?? this.accounts.defaultAccount();
    const running = this.accounts.get(id);
    if (running) return running.send(message);
    const configured = mergedAccountConfig(this.section(), id);
    throw new ChannelSendError(
      configured.host
        ? `the IRC account "${id}" is not connected (IRC can only send from the running gateway)`
        : `no IRC account "${id}" is configured (channels.irc.host)`,
      { retryable: false },
    );
  }

  status(): ChannelStatus[] {
    return this.accounts.status();
  }
}

export default definePlugin({
  id: 'channel-irc',
  register(api) {
    api.registerChannel(new IrcChannel(api.kernel).plugin());
  },
});
