/**
 * The WhatsApp channel: WhatsApp Web through Baileys, linked by QR code. Each account
 * (`channels.whatsapp.accounts.<id>`, or the flat section as "default") has its own
 * credentials folder and socket; see account.ts for the connection rules.
 *
 * Registering costs nothing: Baileys is imported (and installed on demand) only when an
 * account connects or logs in. Tests hand `createWhatsAppPlugin` a fake socket factory.
 */
import {
  definePlugin,
  runtimeDeps,
  type KernelServices,
  type Logger,
  type PluginDefinition,
  type SystemEventsService,
} from '../../sdk/index.js';
import {
  channelSettings,
  configuredAccounts,
  ChannelSendError,
  type ChannelAccountContext,
  type ChannelLoginParams,
  type ChannelLoginState,
  type ChannelPlugin,
  type ChannelStatus,
  type OutboundMessage,
  type RetrySettings,
  type SendResult,
} from '../../sdk/channels/index.js';
import { useService } from '../../sdk/services.js';
import { DEFAULT_RECONNECT, WhatsAppAccount, type AccountDeps } from './account.js';
import { AuthStore } from './auth-store.js';
import { checkAccountId, resolveSettings, WhatsAppConfigError } from './config.js';
import { qrToSvgDataUrl } from './qr.js';
import { baileysSocketFactory } from './socket.js';
import type { SocketFactory } from './types.js';

/** OpenClaw's default `textChunkLimit` for WhatsApp. */
export const WHATSAPP_TEXT_LIMIT = 4000;
const DEFAULT_LOGIN_WAIT_MS = 60_000;

type AnyRecord = Record<string, unknown>;
type Kernel = Pick<KernelServices, 'config' | 'env' | 'paths' | 'channels' | 'capabilities'>;

export interface WhatsAppPluginOptions {
  socketFactory?: SocketFactory;
  reconnect?: Partial<RetrySettings>;
  /** How long a send waits for a reconnecting socket. */
  sendWaitMs?: number;
  random?: () => number;
}

export class WhatsAppChannel {
  /** Accounts the gateway runs (they answer messages). */
  private readonly accounts = new Map<string, WhatsAppAccount>();
  /** Accounts linking from a process that does not run them (the CLI). */
  private readonly logins = new Map<string, WhatsAppAccount>();

  constructor(
    private readonly kernel: Kernel,
    private readonly logger: Logger,
    private readonly options: WhatsAppPluginOptions,
  ) {}

  plugin(): ChannelPlugin {
    return {
      id: 'whatsapp',
      label: 'WhatsApp',
      textLimit: WHATSAPP_TEXT_LIMIT,
      start: (ctx) => this.start(ctx),
      stop: (accountId) => this.stop(accountId),
      send: (message) => this.send(message),
      typing: (target) => this.typing(target),
      status: () => this.status(),
      loginStart: (params) => this.loginStart(params),
      loginWait: (params) => this.loginWait(params),
      logout: (accountId) => this.logout(accountId),
    };
  }

  private section(): AnyRecord | undefined {
    const section = (this.kernel.config().channels as AnyRecord | undefined)?.whatsapp;
    return section && typeof section === 'object' ? (section as AnyRecord) : undefined;
  }

  private accountDeps(accountId: string, raw: AnyRecord, extra: Partial<AccountDeps>): AccountDeps {
    const settings = resolveSettings(accountId, raw, this.kernel.paths.stateDir, this.kernel.env);
    return {
      settings,
      auth: new AuthStore(settings.authDir),
      factory: this.options.socketFactory ?? baileysSocketFactory(runtimeDeps(this.kernel, 'WhatsApp')),
      logger: this.logger,
      stateDir: this.kernel.paths.stateDir,
      reconnect: { ...DEFAULT_RECONNECT, ...this.options.reconnect },
      ...(this.options.sendWaitMs !== undefined ? { sendWaitMs: this.options.sendWaitMs } : {}),
      ...(this.options.random ? { random: this.options.random } : {}),
      ...extra,
    };
  }

  async start(ctx: ChannelAccountContext): Promise<void> {
    await this.stop(ctx.accountId);
    checkAccountId(ctx.accountId);
    const account = new WhatsAppAccount(
      this.accountDeps(ctx.accountId, ctx.config as AnyRecord, {
        logger: ctx.logger,
        stateDir: ctx.stateDir,
        receive: (message) => ctx.receive(message),
        onLoggedOut: (accountId, reason) => void this.reportLoggedOut(accountId, reason),
      }),
    );
    const clash = [...this.accounts.values()].find((other) => other.authDir === account.authDir);
    if (clash)
      throw new WhatsAppConfigError(
        `WhatsApp accounts "${clash.accountId}" and "${ctx.accountId}" use the same authDir: each linked device needs its own folder`,
      );
    this.accounts.set(ctx.accountId, account);
    ctx.signal.addEventListener('abort', () => void account.stop(), { once: true });
    await account.start();
  }

  async stop(accountId: string): Promise<void> {
    const account = this.accounts.get(accountId);
    if (!account) return;
    this.accounts.delete(accountId);
    await account.stop();
  }

  /** The account a call without one means: "default" if configured, else the first. */
  private accountId(requested: string | undefined): string {
    if (requested) return checkAccountId(requested);
    if (this.accounts.has('default')) return 'default';
    const ids = configuredAccounts(this.section() ?? {});
    return ids.includes('default') ? 'default' : ids[0]!;
  }

  private merged(accountId: string): AnyRecord {
    return channelSettings(this.kernel.config(), 'whatsapp', accountId).raw;
  }

  private running(accountId: string | undefined): WhatsAppAccount | undefined {
    return this.accounts.get(this.accountId(accountId));
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const account = this.running(message.accountId);
    // Only the gateway holds the WhatsApp connection; a second socket would knock it off.
    if (!account)
      throw new ChannelSendError(
        `WhatsApp account "${this.accountId(message.accountId)}" is not running here: start the gateway (claw gateway) and link it with claw channels login --channel whatsapp`,
        { retryable: false },
      );
    return account.send(message);
  }

  async typing(target: { accountId: string; to: string }): Promise<void> {
    await this.running(target.accountId)?.typing(target.to);
  }

  status(): ChannelStatus[] {
    return [...this.accounts.values()].map((account) => account.status());
  }

  // ── QR login (web.login.start / web.login.wait) and logout ─────────────────────────

  private async loginState(account: WhatsAppAccount): Promise<ChannelLoginState> {
    const base = { accountId: account.accountId, connected: account.state === 'open' };
    if (account.state === 'open')
      return {
        ...base,
        message: `WhatsApp is linked${account.status().number ? ` as ${account.status().number}` : ''}.`,
      };
    if (account.state === 'qr' && account.qr) {
      const message = 'Scan this QR code in WhatsApp: Settings → Linked devices → Link a device.';
      return { ...base, qr: account.qr, qrDataUrl: await qrToSvgDataUrl(account.qr), message };
    }
    return { ...base, message: account.lastError ?? `WhatsApp is ${account.status().detail}.` };
  }

  private failed(account: WhatsAppAccount): boolean {
    return (
      account.state === 'not-linked' ||
      account.state === 'logged-out' ||
      account.state === 'conflict' ||
      account.state === 'stopped'
    );
  }

  async loginStart(params: ChannelLoginParams): Promise<ChannelLoginState> {
    const accountId = this.accountId(params.accountId);
    let account = this.accounts.get(accountId);
    // Linked creds are kept unless asked: a login while the connection is merely down must not unlink.
    if (!params.force && account?.state !== 'open' && account?.state !== 'qr') {
      const auth = new AuthStore(
        account?.authDir ??
          resolveSettings(accountId, this.merged(accountId), this.kernel.paths.stateDir, this.kernel.env).authDir,
      );
      if (await auth.linked()) {
        return {
          accountId,
          connected: true,
          message: `WhatsApp account "${accountId}" is already linked${account ? ` (${account.status().detail})` : ''}; use --force (force: true) to link it again with a new QR code.`,
        };
      }
    }
    if (!account) {
      await this.logins.get(accountId)?.stop();
      account = new WhatsAppAccount(this.accountDeps(accountId, this.merged(accountId), {}));
      this.logins.set(accountId, account);
    }
    await account.login(params.force === true);
    const target = account;
    await account.waitFor(
      () => target.state === 'qr' || target.state === 'open' || this.failed(target),
      params.timeoutMs ?? DEFAULT_LOGIN_WAIT_MS,
    );
    if (this.failed(account)) throw new Error((await this.loginState(account)).message);
    return this.finish(account);
  }

  async loginWait(params: ChannelLoginParams & { currentQr?: string }): Promise<ChannelLoginState> {
    const accountId = this.accountId(params.accountId);
    const account = this.accounts.get(accountId) ?? this.logins.get(accountId);
    if (!account)
      throw new Error(
        `no WhatsApp login is in progress for account "${accountId}": start one with web.login.start (claw channels login --channel whatsapp)`,
      );
    await account.waitFor(
      () =>
        account.state === 'open' || this.failed(account) || (account.state === 'qr' && account.qr !== params.currentQr),
      params.timeoutMs ?? DEFAULT_LOGIN_WAIT_MS,
    );
    if (this.failed(account)) throw new Error((await this.loginState(account)).message);
    return this.finish(account);
  }

  /** A login-only account hangs up once linked: the gateway will own the connection. */
  private async finish(account: WhatsAppAccount): Promise<ChannelLoginState> {
    const state = await this.loginState(account);
    if (state.connected && this.logins.get(account.accountId) === account) {
      this.logins.delete(account.accountId);
      await account.stop();
    }
    return state;
  }

  async logout(requested?: string): Promise<{ accountId: string; cleared: boolean }> {
    const accountId = this.accountId(requested);
    const account =
      this.accounts.get(accountId) ??
      this.logins.get(accountId) ??
      new WhatsAppAccount(this.accountDeps(accountId, this.merged(accountId), {}));
    this.logins.delete(accountId);
    const cleared = await account.logout();
    return { accountId, cleared };
  }

  // ── Logged out: say so once, where the owner will see it ───────────────────────────

  private async reportLoggedOut(accountId: string, reason: string): Promise<void> {
    const text = `WhatsApp${accountId === 'default' ? '' : ` account "${accountId}"`} was logged out by the phone (${reason}). Messages sent to it are not received until you link it again: claw channels login --channel whatsapp${accountId === 'default' ? '' : ` --account ${accountId}`}`;
    const events = await useService<SystemEventsService>(this.kernel, 'system-events').catch(() => undefined);
    await events
      ?.enqueue({ text, source: 'channel:whatsapp', contextKey: `whatsapp:logged-out:${accountId}` })
      .catch((error: unknown) =>
        this.logger.warn(`whatsapp: could not queue the logged-out notice: ${(error as Error).message}`),
      );
    // The owner on another channel: the first connected account whose allowFrom names someone.
    try {
      const config = this.kernel.config();
      for (const channel of await this.kernel.channels.status()) {
        if (channel.id === 'whatsapp') continue;
        for (const account of channel.accounts) {
          if (!account.running || !account.connected) continue;
          const owner = channelSettings(config, channel.id, account.accountId).allowFrom.find((entry) => entry !== '*');
          if (!owner) continue;
          const sent = await this.kernel.channels.send({
            channel: channel.id,
            to: owner.replace(new RegExp(`^${channel.id}:`, 'i'), ''),
            accountId: account.accountId,
            text,
            context: { channel: channel.id },
          });
          if (sent.delivered) return;
        }
      }
    } catch (error) {
      this.logger.warn(`whatsapp: could not report the logout on another channel: ${(error as Error).message}`);
    }
  }
}

/** The plugin, with its socket factory replaceable (tests, benchmarks). */
export function createWhatsAppPlugin(options: WhatsAppPluginOptions = {}): PluginDefinition {
  return definePlugin({
    id: 'channel-whatsapp',
    register(api) {
      api.registerChannel(new WhatsAppChannel(api.kernel, api.logger, options).plugin());
    },
  });
}

export default createWhatsAppPlugin();
