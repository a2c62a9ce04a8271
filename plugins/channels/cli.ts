/**
 * `claw channels list|status`, `claw message send`, `claw pairing list|approve`.
 *
 * With a gateway running for this state dir they ask it (it knows which accounts run and
 * its channels are connected); without one, `channels` reports the configuration, `message
 * send` sends from this process through the same outbound path, and pairing (which lives in
 * files) works either way.
 */
import { randomUUID } from 'node:crypto';
import type { ChannelPlugin, CliContext, PluginApi } from '../../sdk/index.js';
import { parseFlags, runCliCommand, unknownCommand, UsageError } from '../../sdk/cli.js';
import { unknownChannelProblem } from './send-channel.js';
import { channelLoginCommand, LOGIN_HELP } from './login-cli.js';
import { channelIdOf, channelSetupCommand, SETUP_ACTIONS, SETUP_HELP, type SetupAction } from './setup-cli.js';

type ChannelInfo = Awaited<ReturnType<PluginApi['kernel']['channels']['status']>>[number];

export const CHANNEL_HELP: Record<string, string> = {
  channels: `Usage: claw channels list [--json]      channels the enabled plugins provide, and whether they are configured
       claw channels status [--json]    each account: running, connected, last error (from the running gateway)
${LOGIN_HELP}
${SETUP_HELP.replace('Usage: ', '       ')}`,
  message: `Usage: claw message send --channel <id> --to <peer> [--account <id>] [--thread <id>] [--reply-to <messageId>] "<text>"`,
  pairing: `Usage: claw pairing list [<channel>] [--json]
       claw pairing approve <channel> <code>`,
};

const COMMON = {
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  url: { type: 'string' },
  token: { type: 'string' },
  password: { type: 'string' },
  timeout: { type: 'string' },
} as const;

export function runChannelsCli(
  name: 'channels' | 'message' | 'pairing',
  argv: string[],
  ctx: CliContext,
  api: PluginApi,
): Promise<number> {
  return runCliCommand(ctx, () => channelsCommand(name, argv, ctx, api));
}

async function channelsCommand(
  name: 'channels' | 'message' | 'pairing',
  argv: string[],
  ctx: CliContext,
  api: PluginApi,
): Promise<number> {
  // add / login / logout / remove: the flags are the channel's own (its setup declares them).
  // A channel without setup logs in by QR (WhatsApp), below.
  if (name === 'channels' && SETUP_ACTIONS.has(argv[0] ?? '')) {
    const action = argv[0] as SetupAction;
    const id = channelIdOf(argv.slice(1));
    const plugin = id
      ? ((await api.kernel.capabilities.find('channel', id).catch(() => undefined)) as ChannelPlugin | undefined)
      : undefined;
    if ((action !== 'login' && action !== 'logout') || plugin?.setup || !id)
      return channelSetupCommand(action, argv.slice(1), plugin, ctx, api);
  }
  const { values, positionals } = parseFlags(argv, {
    ...COMMON,
    channel: { type: 'string' },
    to: { type: 'string' },
    account: { type: 'string' },
    thread: { type: 'string' },
    'reply-to': { type: 'string' },
    force: { type: 'boolean' },
    delete: { type: 'boolean' },
  });
  if (values.help) {
    ctx.stdout.write(`${CHANNEL_HELP[name]}\n`);
    return 0;
  }
  const json = values.json === true;
  const viaGateway = values.url !== undefined || ctx.gateway.running() !== undefined;
  const [action, ...rest] = positionals;

  if (values.force && !(name === 'channels' && action === 'login'))
    throw new UsageError('--force only goes with claw channels login');
  // QR channels (WhatsApp) link by scanning.
  if (name === 'channels' && (action === 'login' || action === 'logout'))
    return channelLoginCommand(action, values, ctx, api, viaGateway);
  if (name === 'channels') {
    if (action !== undefined && action !== 'list' && action !== 'status')
      throw unknownCommand('channels', action, ['list', 'status', 'add', 'remove', 'login', 'logout']);
    if (action === undefined) throw new UsageError(CHANNEL_HELP.channels!);
    let channels: ChannelInfo[];
    let source: 'gateway' | 'config';
    if (viaGateway) {
      channels = (
        await ctx.gateway.connect(values, (client) => client.request<{ channels: ChannelInfo[] }>('channels.status'))
      ).channels;
      source = 'gateway';
    } else {
      channels = await api.kernel.channels.status();
      source = 'config';
    }
    // The gateway masks what it sends; masking here too covers a gateway of another version
    // or one that knows fewer secrets, and the local status.
    channels = api.kernel.redact.value(channels);
    if (json) {
      ctx.stdout.write(`${JSON.stringify({ source, channels }, null, 2)}\n`);
      return 0;
    }
    if (channels.length === 0) {
      ctx.stdout.write('No channel plugins are enabled.\n');
      return 0;
    }
    const lines: string[] = [];
    if (source === 'config' && action === 'status')
      lines.push('(no gateway is running: showing configuration only; start it with `claw gateway`)');
    for (const channel of channels) {
      lines.push(
        `${channel.id.padEnd(12)} ${channel.configured ? 'configured' : 'not configured'}${channel.enabled ? '' : ', off'}  (plugin ${channel.pluginId})`,
      );
      if (action === 'status') {
        for (const account of channel.accounts) {
          const state = account.running
            ? account.connected
              ? 'running, connected'
              : 'running, not connected'
            : 'stopped';
          lines.push(
            `  ${account.accountId.padEnd(10)} ${state}${account.lastError ? `  error: ${account.lastError}` : ''}${account.detail ? `  ${account.detail}` : ''}`,
          );
        }
      }
    }
    ctx.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  }

  if (name === 'message') {
    if (action !== 'send') throw new UsageError(CHANNEL_HELP.message!);
    const text = rest.join(' ').trim();
    const channel = values.channel as string | undefined;
    const to = values.to as string | undefined;
    if (!channel || !to || !text) throw new UsageError(`give --channel, --to and the text: ${CHANNEL_HELP.message}`);
    const request = {
      channel,
      to,
      message: text,
      ...(values.account ? { accountId: values.account as string } : {}),
      ...(values.thread ? { threadId: values.thread as string } : {}),
      ...(values['reply-to'] ? { replyTo: values['reply-to'] as string } : {}),
    };
    let result: { pieces: number; messageIds: string[] };
    if (viaGateway) {
      result = await ctx.gateway.connect(values, (client) =>
        client.request('send', { ...request, idempotencyKey: randomUUID() }),
      );
    } else {
      const problem = await unknownChannelProblem(api.kernel, channel);
      if (problem) throw new UsageError(problem);
      const sent = await api.kernel.channels.send({ ...request, text, context: { channel } });
      if (sent.cancelled) throw new Error('a message_sending hook cancelled the message');
      if (!sent.delivered) throw new Error(`sending to ${channel}:${to} failed: ${sent.error}`);
      result = sent;
    }
    if (json) ctx.stdout.write(`${JSON.stringify({ ok: true, ...result }, null, 2)}\n`);
    else ctx.stdout.write(`Sent to ${channel}:${to}${result.pieces > 1 ? ` in ${result.pieces} messages` : ''}.\n`);
    return 0;
  }

  // Pairing lives in files under the state dir: the same answer with or without a gateway.
  const pairing = api.kernel.channels.pairing;
  if (action === 'list' || action === undefined) {
    const requests = await pairing.list(rest[0]);
    if (json) ctx.stdout.write(`${JSON.stringify({ requests }, null, 2)}\n`);
    else if (requests.length === 0)
      ctx.stdout.write(`No pairing requests are waiting${rest[0] ? ` on ${rest[0]}` : ''}.\n`);
    else {
      const now = Date.now();
      ctx.stdout.write(
        `${requests
          .map(
            (request) =>
              `${request.channel.padEnd(10)} ${request.code}  from ${request.senderName ? `${request.senderName} (${request.senderId})` : request.senderId}  expires in ${Math.max(1, Math.round((request.expiresAt - now) / 60_000))} min`,
          )
          .join('\n')}\n`,
      );
    }
    return 0;
  }
  if (action === 'approve') {
    const [channel, code] = rest;
    if (!channel || !code) throw new UsageError('usage: claw pairing approve <channel> <code>');
    const approved = await pairing.approve(channel, code);
    if (!approved)
      throw new UsageError(
        `no pending pairing code "${code}" on ${channel} (codes expire after one hour; see claw pairing list)`,
      );
    if (json)
      ctx.stdout.write(`${JSON.stringify({ approved: true, channel, senderId: approved.senderId }, null, 2)}\n`);
    else
      ctx.stdout.write(
        `Approved ${approved.senderName ? `${approved.senderName} (${approved.senderId})` : approved.senderId} on ${channel}. Their next message reaches the assistant.\n`,
      );
    return 0;
  }
  throw new UsageError(CHANNEL_HELP.pairing!);
}
