/**
 * `claw channels login --channel <id> [--account <id>] [--force]` and `claw channels logout`.
 *
 * Login is a QR flow (WhatsApp): the QR is drawn in the terminal, redrawn each time the
 * channel rotates it, until the phone links or the time runs out. With a gateway running it
 * goes through `web.login.start` / `web.login.wait` (the gateway owns the connection and
 * starts answering as soon as it is linked); without one the channel plugin links from this
 * process and hangs up, leaving the creds for the next `claw gateway`.
 */
import { randomUUID } from 'node:crypto';
import type { ChannelLoginState, ChannelPlugin, CliContext, PluginApi } from '../../sdk/index.js';
import { UsageError, type GatewayFlags } from '../../sdk/cli.js';

export const LOGIN_HELP = `       claw channels login --channel <id> [--account <id>] [--force]   link an account by QR code (WhatsApp)
       claw channels logout --channel <id> [--account <id>]           unlink it and remove its credentials`;

/** Each wait returns at the latest after this; the whole login gives up after LOGIN_TOTAL_MS. */
const WAIT_STEP_MS = 20_000;
const LOGIN_TOTAL_MS = 3 * 60_000;

export interface LoginCalls {
  start(): Promise<ChannelLoginState>;
  wait(currentQr: string | undefined): Promise<ChannelLoginState>;
}

/**
 * A QR code as terminal text, from the qrcode package: two module rows per line in half
 * blocks, a two-module quiet zone, error correction level L (the smallest code for
 * WhatsApp's long linking strings). The colours are swapped (dark modules are blanks, light
 * ones blocks): terminals draw text light on dark, so the code comes out dark on light.
 * qrcode loads on the first code shown, not with the CLI.
 */
export async function qrToTerminal(text: string): Promise<string> {
  const QRCode = await import('qrcode');
  return QRCode.toString(text, {
    type: 'utf8',
    errorCorrectionLevel: 'L',
    margin: 2,
    color: { dark: '#ffffff', light: '#000000' },
  });
}

/** Show QR codes until linked; returns the final state. */
export async function runQrLogin(
  calls: LoginCalls,
  out: NodeJS.WritableStream,
  options: { json?: boolean; totalMs?: number; now?: () => number } = {},
): Promise<ChannelLoginState> {
  const now = options.now ?? Date.now;
  const deadline = now() + (options.totalMs ?? LOGIN_TOTAL_MS);
  let state = await calls.start();
  let shown: string | undefined;
  for (;;) {
    if (state.qr && state.qr !== shown && !options.json) {
      const code = await qrToTerminal(state.qr);
      out.write(
        `\n${code}\n\n${state.message}\n(Waiting for the scan; a new code appears here when this one expires.)\n`,
      );
      shown = state.qr;
    }
    if (state.connected) return state;
    if (now() > deadline) throw new Error('no QR code was scanned in time; run the login again');
    state = await calls.wait(state.qr);
  }
}

async function findQrChannel(api: PluginApi, id: string): Promise<ChannelPlugin> {
  const plugin = (await api.kernel.capabilities.find('channel', id).catch(() => undefined)) as
    ChannelPlugin | undefined;
  if (!plugin) throw new UsageError(`no enabled plugin provides the channel "${id}" (see claw channels list)`);
  return plugin;
}

export async function channelLoginCommand(
  action: 'login' | 'logout',
  values: GatewayFlags & {
    channel?: string | boolean;
    account?: string | boolean;
    force?: string | boolean;
    json?: string | boolean;
  },
  ctx: CliContext,
  api: PluginApi,
  viaGateway: boolean,
): Promise<number> {
  const channel = typeof values.channel === 'string' ? values.channel : undefined;
  if (!channel) throw new UsageError(`give the channel: claw channels ${action} --channel whatsapp`);
  const accountId = typeof values.account === 'string' ? values.account : undefined;
  const json = values.json === true;
  const params = { channel, ...(accountId ? { accountId } : {}) };

  if (action === 'logout') {
    let result: { accountId: string; cleared: boolean };
    if (viaGateway)
      result = await ctx.gateway.connect(values, (client) =>
        client.request('channels.logout', { ...params, idempotencyKey: randomUUID() }),
      );
    else {
      const plugin = await findQrChannel(api, channel);
      if (!plugin.logout)
        throw new UsageError(`${channel} has no logout: its credentials live in the config (remove them there)`);
      result = await plugin.logout(accountId);
    }
    if (json) ctx.stdout.write(`${JSON.stringify({ channel, ...result }, null, 2)}\n`);
    else
      ctx.stdout.write(
        result.cleared
          ? `Logged out of ${channel} account ${result.accountId}: its credentials are removed.\n`
          : `${channel} account ${result.accountId} had no credentials.\n`,
      );
    return 0;
  }

  const force = values.force === true;
  let state: ChannelLoginState;
  if (viaGateway) {
    const timeoutMs = WAIT_STEP_MS + 15_000;
    state = await ctx.gateway.connect(values, (client) =>
      runQrLogin(
        {
          start: () =>
            client.request<ChannelLoginState>(
              'web.login.start',
              { ...params, force, idempotencyKey: randomUUID() },
              { timeoutMs },
            ),
          wait: (currentQr) =>
            client.request<ChannelLoginState>(
              'web.login.wait',
              { ...params, timeoutMs: WAIT_STEP_MS, ...(currentQr ? { currentQr } : {}) },
              { timeoutMs },
            ),
        },
        ctx.stdout,
        { json },
      ),
    );
  } else {
    const plugin = await findQrChannel(api, channel);
    if (!plugin.loginStart || !plugin.loginWait)
      throw new UsageError(
        `${channel} does not log in by QR code: set its token in the config (see claw channels list)`,
      );
    state = await runQrLogin(
      {
        start: () => plugin.loginStart!({ ...(accountId ? { accountId } : {}), force }),
        wait: (currentQr) =>
          plugin.loginWait!({
            ...(accountId ? { accountId } : {}),
            timeoutMs: WAIT_STEP_MS,
            ...(currentQr ? { currentQr } : {}),
          }),
      },
      ctx.stdout,
      { json },
    );
  }
  if (json)
    ctx.stdout.write(
      `${JSON.stringify({ channel, accountId: state.accountId, connected: state.connected, message: state.message }, null, 2)}\n`,
    );
  else {
    const configured = Boolean((api.kernel.config().channels as Record<string, unknown> | undefined)?.[channel]);
    const next = viaGateway
      ? ''
      : configured
        ? ' Start the gateway (claw gateway) to use it.'
        : ` Configure channels.${channel} (e.g. who may write: allowFrom), then start the gateway (claw gateway).`;
    ctx.stdout.write(`${state.message}${next}\n`);
  }
  return 0;
}
