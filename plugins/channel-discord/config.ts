/**
 * The Discord keys of `channels.discord` (and `channels.discord.accounts.<id>`), checked
 * here in words a user can act on; the pipeline reads the access keys (dmPolicy,
 * allowFrom, groupPolicy, …) itself. Nothing here loads discord.js.
 */

export const TOKEN_ENV = 'DISCORD_BOT_TOKEN';
/** OpenClaw's override of the versioned REST base (`https://discord.com/api/v10`). */
export const API_URL_ENV = 'DISCORD_API_URL';
export const DEFAULT_API_URL = 'https://discord.com/api/v10';
/** Discord's limit for one message's content. */
export const DISCORD_TEXT_LIMIT = 2000;
const DEFAULT_MEDIA_MAX_MB = 100;

export type ReplyToMode = 'off' | 'first';

export interface DiscordAccountSettings {
  accountId: string;
  token: string;
  /** REST base without the version (discord.js adds `/v10`). */
  apiBase: string;
  apiVersion: string;
  /** Attachments larger than this are neither downloaded nor uploaded. */
  mediaMaxBytes: number;
  replyToMode: ReplyToMode;
  /** Register the enabled slash commands as the bot's application commands. */
  nativeCommands: boolean;
  /** Slash command answers only the invoker sees. */
  ephemeral: boolean;
  /** Outbound messages without Discord's generated link embeds. */
  suppressEmbeds: boolean;
  /** Acknowledgement emoji from the channel keys (undefined: fall back to messages.ackReaction). */
  ackReaction?: string;
}

export class DiscordConfigError extends Error {
  override readonly name = 'DiscordConfigError';
}

type AnyRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is AnyRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function configPath(accountId: string): string {
  return accountId === 'default' ? 'channels.discord' : `channels.discord.accounts.${accountId}`;
}

// Account ids and per-account config come from the SDK, as the channel pipeline reads them.
export { configuredAccounts as accountIds, mergedAccountConfig } from '../../sdk/channels/index.js';

function text(raw: AnyRecord, key: string, where: string): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new DiscordConfigError(`${where}.${key} must be a string`);
  return value.trim();
}

function flag(raw: AnyRecord, key: string, where: string, fallback: boolean): boolean {
  const value = raw[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new DiscordConfigError(`${where}.${key} must be true or false`);
  return value;
}

/** `DISCORD_API_URL` → the REST base discord.js wants (without `/v<n>`) and the version. */
export function apiBaseFrom(env: Readonly<Record<string, string | undefined>>): {
  apiBase: string;
  apiVersion: string;
} {
  const configured = env[API_URL_ENV]?.trim() || DEFAULT_API_URL;
  let url: URL;
  try {
    url = new URL(configured);
  } catch {
    throw new DiscordConfigError(`${API_URL_ENV} must be a URL like ${DEFAULT_API_URL} (got "${configured}")`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  // A token sent in clear text to another host would be a leak: plain HTTP only on this machine.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new DiscordConfigError(`${API_URL_ENV} must be an https URL (plain http only on 127.0.0.1 / localhost)`);
  const match = /^(.*?)\/v(\d+)\/?$/.exec(url.pathname);
  if (!match) throw new DiscordConfigError(`${API_URL_ENV} must end with the API version, like ${DEFAULT_API_URL}`);
  return { apiBase: `${url.origin}${match[1]}`, apiVersion: match[2]! };
}

/** Resolve one account's settings; throws DiscordConfigError naming the key to fix. */
export function resolveAccountSettings(
  accountId: string,
  raw: AnyRecord,
  env: Readonly<Record<string, string | undefined>>,
): DiscordAccountSettings {
  const where = configPath(accountId);
  // The environment variable is one bot's token: it stands in for the default account only.
  const token =
    text(raw, 'token', where) ?? (accountId === 'default' ? env[TOKEN_ENV]?.trim() || undefined : undefined);
  if (!token) {
    throw new DiscordConfigError(
      accountId === 'default'
        ? `Discord has no bot token: set ${where}.token (claw channels add --channel discord --token <token>) or the ${TOKEN_ENV} environment variable (Developer Portal → your application → Bot → Reset Token)`
        : `Discord account "${accountId}" has no bot token: set ${where}.token (${TOKEN_ENV} only applies to the default account)`,
    );
  }
  // A pasted "Bot xyz" header value or a client secret would fail at login with a vaguer error.
  if (/\s/.test(token) || token.split('.').length !== 3) {
    throw new DiscordConfigError(
      `${accountId === 'default' && !raw.token ? TOKEN_ENV : `${where}.token`} does not look like a Discord bot token (three dot-separated parts, as the Developer Portal's Bot page gives it, without "Bot ")`,
    );
  }
  const mediaMaxMb = raw.mediaMaxMb ?? DEFAULT_MEDIA_MAX_MB;
  if (typeof mediaMaxMb !== 'number' || !(mediaMaxMb > 0))
    throw new DiscordConfigError(`${where}.mediaMaxMb must be a positive number`);
  const replyToMode = raw.replyToMode ?? 'off';
  if (replyToMode !== 'off' && replyToMode !== 'first')
    throw new DiscordConfigError(`${where}.replyToMode must be "off" or "first" (got ${JSON.stringify(replyToMode)})`);
  const commands = raw.commands;
  if (commands !== undefined && !isRecord(commands))
    throw new DiscordConfigError(`${where}.commands must be an object: { native: true | false | "auto" }`);
  const native = (commands as AnyRecord | undefined)?.native ?? 'auto';
  if (native !== 'auto' && typeof native !== 'boolean')
    throw new DiscordConfigError(`${where}.commands.native must be true, false or "auto"`);
  const slash = raw.slashCommand;
  if (slash !== undefined && !isRecord(slash))
    throw new DiscordConfigError(`${where}.slashCommand must be an object: { ephemeral: true | false }`);
  const ack = raw.ackReaction;
  if (ack !== undefined && typeof ack !== 'string')
    throw new DiscordConfigError(`${where}.ackReaction must be an emoji string ("" turns it off)`);
  if (raw.guilds !== undefined && !isRecord(raw.guilds))
    throw new DiscordConfigError(`${where}.guilds must be an object keyed by server id`);
  return {
    accountId,
    token,
    ...apiBaseFrom(env),
    mediaMaxBytes: Math.round(mediaMaxMb * 1024 * 1024),
    replyToMode,
    nativeCommands: native !== false,
    ephemeral: flag((slash ?? {}) as AnyRecord, 'ephemeral', `${where}.slashCommand`, true),
    suppressEmbeds: flag(raw, 'suppressEmbeds', where, true),
    ...(typeof ack === 'string' ? { ackReaction: ack } : {}),
  };
}
