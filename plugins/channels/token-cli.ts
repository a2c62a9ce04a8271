/**
 * `claw channels add|remove|login|logout` for channels whose account is a bot token
 * (Discord, Telegram), with OpenClaw's flags:
 *
 *   claw channels add --channel discord --token <bot-token> [--account <id>]
 *   claw channels login --channel discord --token <bot-token>     (the same: Discord has no QR login)
 *   claw channels logout --channel discord [--account <id>]       the token is removed
 *   claw channels remove --channel discord [--account <id>] [--delete]   disabled, or deleted
 *
 * The change goes through a running gateway (`config.patch`: validated and applied at once),
 * else into the config file under its lock. The token is never printed.
 */
import type { CliContext, PluginApi } from '../../sdk/index.js';
import { UsageError } from '../../sdk/cli.js';

/** Where each token channel keeps its bot token (OpenClaw's key names). */
export const TOKEN_KEYS: Readonly<Record<string, string>> = { discord: 'token', telegram: 'botToken' };

export const TOKEN_HELP = `Usage: claw channels add --channel <discord|telegram> --token <bot-token> [--account <id>]
       claw channels login --channel <discord|telegram> --token <bot-token> [--account <id>]
       claw channels logout --channel <discord|telegram> [--account <id>]   remove the stored token
       claw channels remove --channel <id> [--account <id>] [--delete]     disable (or delete) the channel or account`;

type AnyRecord = Record<string, unknown>;

const record = (parent: AnyRecord, key: string): AnyRecord => {
  const value = parent[key];
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as AnyRecord;
  return (parent[key] = {});
};

export interface TokenCommandValues {
  channel?: string;
  account?: string;
  token?: string;
  delete?: boolean;
  url?: string;
  password?: string;
  timeout?: string;
}

export async function channelTokenCommand(
  action: 'add' | 'remove' | 'login' | 'logout',
  values: TokenCommandValues,
  ctx: CliContext,
  api: PluginApi,
): Promise<number> {
  const channel = values.channel?.trim().toLowerCase();
  if (!channel) throw new UsageError(`give --channel: ${TOKEN_HELP}`);
  const account = values.account?.trim() || 'default';
  const tokenKey = TOKEN_KEYS[channel];
  if (action !== 'remove' && !tokenKey)
    throw new UsageError(
      `claw channels ${action} takes a bot token for ${Object.keys(TOKEN_KEYS).join(' or ')}; "${channel}" is not one of them`,
    );
  const token = values.token?.trim();
  if ((action === 'add' || action === 'login') && !token)
    throw new UsageError(`give the bot token with --token: ${TOKEN_HELP}`);
  if ((action === 'logout' || action === 'remove') && token)
    throw new UsageError(`claw channels ${action} takes no --token`);
  if (token) api.kernel.redact.add(token);

  const where = account === 'default' ? `channels.${channel}` : `channels.${channel}.accounts.${account}`;
  const edit = (raw: AnyRecord) => {
    const section = record(record(raw, 'channels'), channel);
    const target = account === 'default' ? section : record(record(section, 'accounts'), account);
    if (action === 'add' || action === 'login') {
      target[tokenKey!] = token;
      delete target.enabled;
    } else if (action === 'logout') {
      delete target[tokenKey!];
    } else if (values.delete) {
      if (account === 'default') delete (raw.channels as AnyRecord)[channel];
      else delete (section.accounts as AnyRecord)[account];
    } else {
      target.enabled = false;
    }
  };
  const purpose = `claw channels ${action} --channel ${channel}${account === 'default' ? '' : ` --account ${account}`}`;
  // Here --token is the bot token: the gateway is reached with --url, --password, --timeout.
  const change = await ctx.gateway.changeConfig(purpose, edit, {
    url: values.url,
    password: values.password,
    timeout: values.timeout,
  });
  const done =
    action === 'add' || action === 'login'
      ? `Saved the ${channel} bot token in ${where}.${tokenKey}.`
      : action === 'logout'
        ? `Removed the ${channel} bot token from ${where}.`
        : values.delete
          ? `Deleted ${where}.`
          : `Disabled ${where} (enabled: false).`;
  const live =
    change.via === 'gateway'
      ? ' The running gateway has applied it.'
      : ctx.gateway.running()
        ? ''
        : ' It takes effect when the gateway starts (claw gateway).';
  ctx.stdout.write(
    `${change.changed ? done : `Nothing to change: ${where} already says so.`}${change.changed ? live : ''}\n`,
  );
  return 0;
}
