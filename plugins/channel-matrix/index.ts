/**
 * The Matrix channel: one login per account on a homeserver, its /sync loop (account.ts)
 * and replies through the client-server API. matrix-js-sdk is imported (and installed into
 * the runtime-deps folder when claw was installed without it) when an account starts or a
 * message is sent, never at load.
 */
import { definePlugin, runtimeDeps, type KernelServices, type RuntimeDeps } from '../../sdk/index.js';
import { guardedNet } from '../../sdk/net/index.js';
import {
  ChannelAccounts,
  type AckReaction,
  type ChannelAccountContext,
  type ChannelPlugin,
  type ChannelStatus,
  type InboundMessage,
  type OutboundMessage,
  type ReplyObserver,
  type SendResult,
} from '../../sdk/channels/index.js';
import { roomAccess } from './access.js';
import { MatrixAccount } from './account.js';
import { createMatrixApi, describeError, loadMatrixSdk } from './client.js';
import {
  accountConfig,
  configPath,
  ignoredSettings,
  isRecord,
  MATRIX_TEXT_LIMIT,
  MatrixConfigError,
  matrixSecrets,
  resolveMatrixSettings,
  type MatrixAccountSettings,
} from './config.js';
import { MatrixSender } from './send.js';
import { matrixSetup } from './setup.js';
import { credentialsFile, forgetCredentials, loadCredentials } from './state.js';

type AnyRecord = Record<string, unknown>;

export class MatrixChannel {
  private readonly accounts = new ChannelAccounts<MatrixAccount, MatrixSender>(() => this.section());
  private readonly deps: RuntimeDeps;

  constructor(
    private readonly kernel: Pick<KernelServices, 'config' | 'env' | 'redact' | 'paths' | 'capabilities' | 'plugins'>,
  ) {
    this.deps = runtimeDeps(kernel, 'Matrix');
  }

  plugin(): ChannelPlugin {
    return {
      id: 'matrix',
      label: 'Matrix',
      textLimit: MATRIX_TEXT_LIMIT,
      start: (ctx) => this.start(ctx),
      stop: (accountId) => this.accounts.stop(accountId),
      send: (message) => this.send(message),
      status: () => this.status(),
      typing: (target) => this.typing(target),
      replyStarted: (message, ack) => this.replyStarted(message, ack),
      groupAccess: (message, config) =>
        roomAccess(message, config, {
          alias: this.accounts.get(message.accountId)?.room(message.peer.id)?.canonicalAlias,
        }),
      logout: (accountId) => this.logout(accountId),
      setup: matrixSetup(this.kernel, this.deps),
    };
  }

  private section(): AnyRecord | undefined {
    const section = (this.kernel.config().channels as AnyRecord | undefined)?.matrix;
    return isRecord(section) ? section : undefined;
  }

  /** A homeserver on loopback or the LAN only with `network.dangerouslyAllowPrivateNetwork` (OpenClaw's rule). */
  private async checkHomeserver(settings: MatrixAccountSettings): Promise<void> {
    const check = await guardedNet(this.kernel, 'Matrix').checkUrl(settings.homeserver, {
      dangerouslyAllowPrivateNetwork: settings.allowPrivateNetwork,
    });
    if (!check.allowed)
      throw new MatrixConfigError(
        `${configPath(settings.accountId)}.homeserver ${settings.homeserver} is refused: ${check.reason}${settings.allowPrivateNetwork ? '' : ` (a homeserver on this machine or the LAN needs ${configPath(settings.accountId)}.network.dangerouslyAllowPrivateNetwork: true)`}`,
      );
  }

  async start(ctx: ChannelAccountContext): Promise<void> {
    const settings = resolveMatrixSettings(ctx.accountId, accountConfig(this.section(), ctx.accountId), ctx.env);
    // Secrets may come from the environment: the redactor must know them before any error text.
    for (const secret of matrixSecrets(settings)) this.kernel.redact.add(secret);
    for (const note of ignoredSettings(ctx.accountId, ctx.config as AnyRecord)) ctx.logger.warn(`matrix: ${note}`);
    const twin = this.accounts
      .all()
      .find(
        (other) =>
          other.accountId !== ctx.accountId &&
          other.settings.homeserver === settings.homeserver &&
          !!settings.userId &&
          other.settings.userId === settings.userId,
      );
    // One user's two sync loops would each answer every message.
    if (twin)
      throw new MatrixConfigError(
        `Matrix accounts "${twin.accountId}" and "${ctx.accountId}" log in as ${settings.userId} on the same homeserver: give each its own user`,
      );
    await this.checkHomeserver(settings);
    const sdk = await loadMatrixSdk(this.deps);
    await this.accounts.start(ctx, () => new MatrixAccount(settings, ctx, sdk, this.kernel.redact));
  }

  /** The running account's sender, else a send-only one from the configured token or the cached login. */
  private senderFor(accountId: string | undefined): Promise<MatrixSender> {
    return this.accounts.sender(accountId, async (id) => {
      const settings = resolveMatrixSettings(id, accountConfig(this.section(), id), this.kernel.env);
      for (const secret of matrixSecrets(settings)) this.kernel.redact.add(secret);
      await this.checkHomeserver(settings);
      const cached = settings.accessToken
        ? undefined
        : loadCredentials(credentialsFile(this.kernel.paths.stateDir, id), settings.homeserver, settings.userId);
      const accessToken = settings.accessToken ?? cached?.accessToken;
      if (!accessToken)
        throw new MatrixConfigError(
          `the Matrix account "${id}" has not logged in yet: start the gateway once (it logs in with ${configPath(id)}.password), or set ${configPath(id)}.accessToken`,
        );
      this.kernel.redact.add(accessToken);
      return {
        key: JSON.stringify([settings.homeserver, accessToken, settings.mediaMaxBytes]),
        sender: async () => {
          const api = createMatrixApi(await loadMatrixSdk(this.deps), {
            baseUrl: settings.homeserver,
            accessToken,
            warn: () => undefined,
          });
          const userId = settings.userId || String((await api.request('GET', '/account/whoami')).user_id);
          const dms = new Map<string, string>();
          return new MatrixSender(
            api,
            userId,
            { get: (user) => dms.get(user), set: (user, room) => void dms.set(user, room) },
            settings.mediaMaxBytes,
          );
        },
      };
    });
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const sender = await this.senderFor(message.accountId);
    const result = await sender.send(message);
    // The reply is out: the "typing…" shown while the agent worked ends with it.
    if (result.roomId) void sender.typing(String(result.roomId), false).catch(() => undefined);
    return result;
  }

  private async typing(target: { accountId: string; to: string }): Promise<void> {
    const account = this.accounts.get(target.accountId);
    if (!account) return;
    await account.sender.typing(await account.sender.roomFor(target.to), true);
  }

  /** The acknowledgement reaction on the message (an `m.annotation`), taken back after the reply when asked. */
  private replyStarted(message: InboundMessage, ack: AckReaction): ReplyObserver | undefined {
    const account = this.accounts.get(message.accountId);
    const roomId = account?.roomOf(message.messageId);
    if (!account || !roomId || !ack.emoji) return undefined;
    const reaction = account.sender.react(roomId, message.messageId, ack.emoji).catch((error) => {
      this.kernel.redact.text(describeError(error));
      return undefined;
    });
    return {
      done: async () => {
        if (!ack.removeAfterReply) return;
        const eventId = await reaction;
        if (eventId) await account.sender.redact(roomId, eventId).catch(() => undefined);
      },
    };
  }

  /** `channels.logout`: stop the account and forget the cached login (a configured token stays in config). */
  async logout(accountId?: string): Promise<{ accountId: string; cleared: boolean }> {
    const id = accountId ?? this.accounts.defaultAccount();
    await this.accounts.stop(id);
    return { accountId: id, cleared: forgetCredentials(credentialsFile(this.kernel.paths.stateDir, id)) };
  }

  status(): ChannelStatus[] {
    return this.accounts.status();
  }
}

export default definePlugin({
  id: 'channel-matrix',
  register(api) {
    api.registerChannel(new MatrixChannel(api.kernel).plugin());
  },
});
