/**
 * The channels' gateway methods: `channels.status`, QR login and logout (OpenClaw's
 * `web.login.*` and `channels.logout`, forwarded to the channel plugin that has them), `send`
 * and the sender pairing of messaging channels (`pairing.*`). They go through the kernel's
 * channel choke point (`api.kernel.channels`), so `send` runs the same hooks as a reply.
 */
import { ErrorCodes, ProtocolError, type ChannelPlugin, type PluginApi } from '../../sdk/index.js';
import { channelSettings, type ChannelInfo } from '../../sdk/channels/index.js';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pairingRequestId } from './pairing-request-id.js';
import { unknownChannelProblem } from './send-channel.js';
import { MAX_PENDING_PAIRINGS, PAIRING_TTL_MS } from './access.js';

function invalid(message: string, details?: unknown): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message, details);
}

const LOGIN_PARAMS = {
  channel: { type: 'string', minLength: 1 },
  accountId: { type: 'string', minLength: 1 },
  timeoutMs: { type: 'integer', minimum: 1, maximum: 300_000 },
} as const;

export function registerChannelMethods(api: PluginApi): void {
  const kernel = api.kernel;

  api.registerGatewayMethod('channels.status', {
    params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        channel: { type: 'string', minLength: 1 },
        // claw reads each running channel's live state on every call, so a probe is what it
        // always does; timeoutMs bounds that read.
        probe: { type: 'boolean' },
        timeoutMs: { type: 'integer', minimum: 1, maximum: 600_000 },
      },
    },
    scope: 'operator.read',
    description:
      'Channels declared by enabled plugins, whether they are configured, and each account’s state (also in OpenClaw’s channelAccounts shape).',
    handler: async (params: { channel?: string; timeoutMs?: number }) => {
      const read = kernel.channels.status();
      const all =
        params.timeoutMs === undefined ? await read : await withTimeout(read, params.timeoutMs, 'channels.status');
      return openClawChannelStatus(
        all.filter((channel) => params.channel === undefined || channel.id === params.channel),
      );
    },
  });

  const loginChannel = async (id: string | undefined, needs: 'loginStart' | 'logout'): Promise<ChannelPlugin> => {
    const ids = id ? [id] : kernel.capabilities.list('channel').map((info) => info.name);
    for (const candidate of ids) {
      const channel = (await kernel.capabilities.find('channel', candidate).catch(() => undefined)) as
        ChannelPlugin | undefined;
      if (channel?.[needs]) return channel;
    }
    throw invalid(
      id
        ? `channel "${id}" has no ${needs === 'logout' ? 'logout' : 'QR login'} (is its plugin enabled?)`
        : 'no enabled channel logs in by QR code',
    );
  };
  const loginFailed = (error: unknown) => new ProtocolError(ErrorCodes.UNAVAILABLE, (error as Error).message);
  api.registerGatewayMethod('web.login.start', {
    params: {
      type: 'object',
      additionalProperties: false,
      properties: { ...LOGIN_PARAMS, force: { type: 'boolean' } },
    },
    scope: 'operator.admin',
    sideEffect: true,
    description:
      'Start linking a channel account by QR code (WhatsApp): answers with the QR (qr, qrDataUrl) or connected.',
    handler: async (params: { channel?: string; accountId?: string; force?: boolean; timeoutMs?: number }) => {
      const channel = await loginChannel(params.channel, 'loginStart');
      return {
        channel: channel.id,
        ...(await channel.loginStart!({ ...params }).catch((error: unknown) => Promise.reject(loginFailed(error)))),
      };
    },
  });
  api.registerGatewayMethod('web.login.wait', {
    params: {
      type: 'object',
      additionalProperties: false,
      properties: { ...LOGIN_PARAMS, currentQr: { type: 'string' }, sessionKey: { type: 'string' } },
    },
    scope: 'operator.admin',
    description: 'Wait until the account is linked or shows a new QR (after currentQr), up to timeoutMs.',
    handler: async (params: { channel?: string; accountId?: string; timeoutMs?: number; currentQr?: string }) => {
      const channel = await loginChannel(params.channel, 'loginStart');
      return {
        channel: channel.id,
        ...(await channel.loginWait!({ ...params }).catch((error: unknown) => Promise.reject(loginFailed(error)))),
      };
    },
  });
  api.registerGatewayMethod('channels.logout', {
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['channel'],
      properties: { channel: LOGIN_PARAMS.channel, accountId: LOGIN_PARAMS.accountId },
    },
    scope: 'operator.admin',
    sideEffect: true,
    description: 'Stop a channel account and remove its credentials (WhatsApp: unlinks the device).',
    handler: async (params: { channel: string; accountId?: string }) => ({
      channel: params.channel,
      ...(await (
        await loginChannel(params.channel, 'logout')
      ).logout!(params.accountId)),
    }),
  });

  api.registerGatewayMethod('send', {
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['channel', 'to', 'message'],
      properties: {
        channel: { type: 'string', minLength: 1 },
        to: { type: 'string', minLength: 1 },
        message: { type: 'string', minLength: 1, maxLength: 100_000 },
        accountId: { type: 'string', minLength: 1 },
        threadId: { type: 'string', minLength: 1 },
        replyTo: { type: 'string', minLength: 1 },
        media: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 10 },
      },
    },
    scope: 'operator.write',
    sideEffect: true,
    description: 'Send a message through a channel (the same outbound path as agent replies).',
    handler: async (params: {
      channel: string;
      to: string;
      message: string;
      accountId?: string;
      threadId?: string;
      replyTo?: string;
      media?: string[];
    }) => {
      const problem = await unknownChannelProblem(kernel, params.channel);
      if (problem) throw invalid(problem);
      const result = await kernel.channels.send({
        channel: params.channel,
        to: params.to,
        text: params.message,
        ...(params.accountId ? { accountId: params.accountId } : {}),
        ...(params.threadId ? { threadId: params.threadId } : {}),
        ...(params.replyTo ? { replyTo: params.replyTo } : {}),
        ...(params.media ? { media: params.media } : {}),
        context: { channel: params.channel },
      });
      if (result.cancelled) throw invalid('a message_sending hook cancelled the message', { code: 'CANCELLED' });
      if (!result.delivered)
        throw new ProtocolError(
          ErrorCodes.UNAVAILABLE,
          `sending to ${params.channel}:${params.to} failed: ${result.error}`,
        );
      return { ok: true, channel: params.channel, to: params.to, pieces: result.pieces, messageIds: result.messageIds };
    },
  });

  api.registerGatewayMethod('channels.pairing.list', {
    // OpenClaw's clients may send filters newer than these: tolerated.
    params: {
      type: 'object',
      properties: { channel: { type: 'string', minLength: 1 }, accountId: { type: 'string', minLength: 1 } },
    },
    scope: 'operator.pairing',
    description:
      "DM pairing in OpenClaw's shape: the channel accounts whose dmPolicy is pairing, and the senders waiting on them.",
    handler: async (params: { channel?: string; accountId?: string }) => {
      const config = kernel.config();
      const accounts = (await kernel.channels.status())
        .filter((info) => info.enabled && (!params.channel || info.id === params.channel))
        .flatMap((info) =>
          info.accounts
            .filter((account) => !params.accountId || account.accountId === params.accountId)
            .filter((account) => channelSettings(config, info.id, account.accountId).dmPolicy === 'pairing')
            // claw tells nobody when a pairing is approved: the sender's next message simply gets through.
            .map((account) => ({
              channel: info.id,
              channelLabel: info.id,
              accountId: account.accountId,
              notifySupported: false,
            })),
        );
      const pairs = new Set(accounts.map((account) => `${account.channel}\0${account.accountId}`));
      const requests = (await kernel.channels.pairing.list(params.channel))
        .filter((request) => pairs.has(`${request.channel}\0${request.accountId}`))
        .map((request) => ({
          requestId: pairingRequestId(request),
          channel: request.channel,
          channelLabel: request.channel,
          accountId: request.accountId,
          senderId: request.senderId,
          senderLabel: 'sender id',
          ...(request.senderName ? { metadata: { name: request.senderName } } : {}),
          createdAt: new Date(request.createdAt).toISOString(),
          lastSeenAt: new Date(request.createdAt).toISOString(),
          expiresAt: new Date(request.expiresAt).toISOString(),
          notifySupported: false,
        }));
      return {
        accounts,
        requests,
        // claw has no command owners (OpenClaw's commands.ownerAllowFrom).
        commandOwnerConfigured: false,
        limits: { pendingPerAccount: MAX_PENDING_PAIRINGS, ttlMs: PAIRING_TTL_MS },
      };
    },
  });

  api.registerGatewayMethod('pairing.list', {
    params: { type: 'object', additionalProperties: false, properties: { channel: { type: 'string', minLength: 1 } } },
    scope: 'operator.pairing',
    description: 'Senders waiting for approval on messaging channels, with their codes.',
    handler: async (params: { channel?: string }) => ({ requests: await kernel.channels.pairing.list(params.channel) }),
  });

  api.registerGatewayMethod('pairing.approve', {
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['channel', 'code'],
      properties: { channel: { type: 'string', minLength: 1 }, code: { type: 'string', minLength: 1 } },
    },
    scope: 'operator.pairing',
    sideEffect: true,
    description: 'Approve a channel pairing code: the sender may message the assistant from now on.',
    handler: async (params: { channel: string; code: string }) => {
      const request = await kernel.channels.pairing.approve(params.channel, params.code);
      if (!request)
        throw invalid(`no pending pairing code "${params.code}" on ${params.channel} (codes expire after one hour)`);
      return { approved: true, channel: params.channel, senderId: request.senderId, senderName: request.senderName };
    },
  });
}

/** claw's list next to the same accounts keyed by channel, as OpenClaw's clients read them. */
function openClawChannelStatus(channels: ChannelInfo[]) {
  const entries = channels.map((channel) => {
    const accounts = channel.accounts.map((account) => ({
      ...account,
      enabled: channel.enabled,
      configured: channel.configured,
    }));
    return { channel, accounts };
  });
  return {
    ts: Date.now(),
    // claw's own list (claw channels status reads it).
    channels,
    channelOrder: channels.map((channel) => channel.id),
    channelLabels: Object.fromEntries(channels.map((channel) => [channel.id, channel.id])),
    channelAccounts: Object.fromEntries(entries.map(({ channel, accounts }) => [channel.id, accounts])),
    channelDefaultAccountId: Object.fromEntries(
      entries.map(({ channel, accounts }) => [channel.id, accounts[0]?.accountId ?? 'default']),
    ),
    // claw's channels carry no detail labels, system images or extra metadata, and report their
    // problems on each account; OpenClaw's empty values keep its clients' lookups safe.
    channelDetailLabels: {},
    channelSystemImages: {},
    channelMeta: [],
    statusIssues: [],
    eventLoop: eventLoopLoad(),
  };
}

let lastLoad = performance.eventLoopUtilization();
let lastCpu = process.cpuUsage();
let lastAt = Date.now();

/** How busy the gateway's event loop has been since the last answer (delays are not sampled here). */
function eventLoopLoad() {
  const load = performance.eventLoopUtilization(lastLoad);
  const cpu = process.cpuUsage(lastCpu);
  const now = Date.now();
  const intervalMs = Math.max(1, now - lastAt);
  const ratio = Math.round(((cpu.user + cpu.system) / 1000 / intervalMs) * 1000) / 1000;
  lastLoad = performance.eventLoopUtilization();
  lastCpu = process.cpuUsage();
  lastAt = now;
  return {
    degraded: false,
    degradedSinceMs: null,
    reasons: [],
    intervalMs,
    delayP99Ms: null,
    delayMaxMs: null,
    utilization: Math.round(load.utilization * 1000) / 1000,
    cpuCoreRatio: ratio,
    cpuBreakdown: { mainThreadCoreRatio: ratio, hostCpuCount: availableParallelism() },
  };
}

/** `work`, or an UNAVAILABLE error naming `what` once `ms` have passed. */
async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new ProtocolError(ErrorCodes.UNAVAILABLE, `${what} took longer than timeoutMs (${ms} ms)`, undefined, true),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
