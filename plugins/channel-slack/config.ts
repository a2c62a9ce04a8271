/**
 * The Slack keys of `channels.slack` (and `channels.slack.accounts.<id>`), checked here in
 * words a user can act on; the pipeline reads the access keys (dmPolicy, allowFrom,
 * groupPolicy, replyToMode, …) itself. Nothing here loads Bolt.
 */

export const BOT_TOKEN_ENV = 'SLACK_BOT_TOKEN';
export const APP_TOKEN_ENV = 'SLACK_APP_TOKEN';
export const SIGNING_SECRET_ENV = 'SLACK_SIGNING_SECRET';
/** HTTP mode's paths live under the prefix the manifest declares in `httpRoutes`. */
export const WEBHOOK_PREFIX = '/slack/';
export const DEFAULT_WEBHOOK_PATH = '/slack/events';
/** The Web API root, overridable for tests and self-hosted proxies (loopback http only). */
export const API_URL_ENV = 'SLACK_API_URL';
export const DEFAULT_API_URL = 'https://slack.com/api/';
/** Slack's advice for one message's text (longer text is truncated by Slack). */
export const SLACK_TEXT_LIMIT = 4000;

export interface SlackAccountSettings {
  accountId: string;
  mode: 'socket' | 'http';
  botToken: string;
  /** Socket Mode's app-level token (empty in HTTP mode). */
  appToken: string;
  /** HTTP mode's signing secret (empty in Socket Mode). */
  signingSecret: string;
  /** HTTP mode: the gateway path Slack posts events to. */
  webhookPath: string;
  apiUrl: string;
  /** Acknowledgement emoji name from the channel keys (undefined: fall back to messages.ackReaction). */
  ackReaction?: string;
  slashCommand: SlashCommandSettings;
  /**
   * `commands.native` (here, else the top-level one): each chat command is its own Slack slash
   * command (`/new`, `/agentstatus` for `/status`). "auto" leaves it off on Slack, as in OpenClaw.
   */
  nativeCommands: boolean;
}

/** OpenClaw's `slashCommand`: one command (`/openclaw <text>`) whose runs get sessions of their own. */
export interface SlashCommandSettings {
  enabled: boolean;
  /** Without the "/". */
  name: string;
  /** Answers only the user sees (true), or the whole channel. */
  ephemeral: boolean;
  /** Session keys are `agent:<agentId>:<sessionPrefix>:<userId>`. */
  sessionPrefix: string;
}

function nativeCommands(raw: unknown, globalNative: unknown, where: string): boolean {
  if (raw !== undefined && !isRecord(raw))
    throw new SlackConfigError(`${where}.commands must be an object: { native: true | false | "auto" }`);
  const native = (raw as AnyRecord | undefined)?.native ?? globalNative ?? 'auto';
  if (native !== 'auto' && typeof native !== 'boolean')
    throw new SlackConfigError(`${where}.commands.native must be true, false or "auto"`);
  return native === true;
}

function slashCommandSettings(raw: unknown, where: string): SlashCommandSettings {
  const at = `${where}.slashCommand`;
  if (raw !== undefined && !isRecord(raw)) throw new SlackConfigError(`${at} must be an object`);
  const entry: AnyRecord = isRecord(raw) ? raw : {};
  for (const key of ['enabled', 'ephemeral'])
    if (entry[key] !== undefined && typeof entry[key] !== 'boolean')
      throw new SlackConfigError(`${at}.${key} must be true or false`);
  const name = (text(entry, 'name', at) ?? 'openclaw').replace(/^\//, '').toLowerCase();
  if (!/^[a-z0-9_-]{1,31}$/.test(name))
    throw new SlackConfigError(`${at}.name must be a Slack command name like "openclaw" (got "${name}")`);
  const sessionPrefix = text(entry, 'sessionPrefix', at) ?? 'slack:slash';
  if (/\s/.test(sessionPrefix)) throw new SlackConfigError(`${at}.sessionPrefix must not contain spaces`);
  return { enabled: entry.enabled === true, name, ephemeral: entry.ephemeral !== false, sessionPrefix };
}

export class SlackConfigError extends Error {
  override readonly name = 'SlackConfigError';
}

type AnyRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is AnyRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function configPath(accountId: string): string {
  return accountId === 'default' ? 'channels.slack' : `channels.slack.accounts.${accountId}`;
}

export { mergedAccountConfig } from '../../sdk/channels/index.js';

/** `SLACK_API_URL` → the Web API root with a trailing slash, as @slack/web-api joins method names. */
export function apiUrlFrom(env: Readonly<Record<string, string | undefined>>): string {
  const configured = env[API_URL_ENV]?.trim() || DEFAULT_API_URL;
  let url: URL;
  try {
    url = new URL(configured);
  } catch {
    throw new SlackConfigError(`${API_URL_ENV} must be a URL like ${DEFAULT_API_URL} (got "${configured}")`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  // Tokens sent in clear text to another host would leak: plain HTTP only on this machine.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new SlackConfigError(`${API_URL_ENV} must be an https URL (plain http only on 127.0.0.1 / localhost)`);
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

function text(raw: AnyRecord, key: string, where: string): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new SlackConfigError(`${where}.${key} must be a string`);
  return value.trim();
}

/** OpenClaw's Slack keys this plugin does not implement: each set one is named at start, never silently dropped. */
const NOT_IMPLEMENTED = ['userToken', 'postAs', 'replyToModeByChatType', 'mediaMaxMb'];

/** The settings in `raw` that claw's Slack channel ignores, each with why. */
export function ignoredSettings(accountId: string, raw: AnyRecord): string[] {
  const where = configPath(accountId);
  const out = NOT_IMPLEMENTED.filter((key) => raw[key] !== undefined).map(
    (key) => `${where}.${key} is an OpenClaw Slack setting claw does not implement; ignored`,
  );
  if (raw.replyToMode === 'batched')
    out.push(
      `${where}.replyToMode "batched" is not implemented; replies thread their first piece in channels, none in DMs`,
    );
  const channels = raw.channels && typeof raw.channels === 'object' ? (raw.channels as AnyRecord) : {};
  for (const [id, entry] of Object.entries(channels))
    if (entry && typeof entry === 'object' && (entry as AnyRecord).replyToMode !== undefined)
      out.push(`${where}.channels.${id}.replyToMode is not implemented per channel; ${where}.replyToMode applies`);
  return out;
}

/** Resolve one account's settings; throws SlackConfigError naming the key to fix. */
export function resolveAccountSettings(
  accountId: string,
  raw: AnyRecord,
  env: Readonly<Record<string, string | undefined>>,
  /** The top-level `commands.native`, which a channel's own `commands.native` overrides. */
  globalNative?: unknown,
): SlackAccountSettings {
  const where = configPath(accountId);
  const mode = raw.mode ?? 'socket';
  if (mode !== 'socket' && mode !== 'http')
    throw new SlackConfigError(`${where}.mode must be "socket" or "http" (got ${JSON.stringify(mode)})`);
  // The environment variables are one app's tokens: they stand in for the default account only.
  const fromEnv = (name: string) => (accountId === 'default' ? env[name]?.trim() || undefined : undefined);
  const botToken = text(raw, 'botToken', where) ?? fromEnv(BOT_TOKEN_ENV);
  if (!botToken)
    throw new SlackConfigError(
      `Slack${accountId === 'default' ? '' : ` account "${accountId}"`} has no bot token: set ${where}.botToken (the xoxb-… token from OAuth & Permissions)${accountId === 'default' ? ` or ${BOT_TOKEN_ENV}` : ''}`,
    );
  if (!botToken.startsWith('xoxb-'))
    throw new SlackConfigError(`${where}.botToken must be a bot token starting with "xoxb-"`);
  let appToken = '';
  let signingSecret = '';
  if (mode === 'socket') {
    appToken = text(raw, 'appToken', where) ?? fromEnv(APP_TOKEN_ENV) ?? '';
    if (!appToken)
      throw new SlackConfigError(
        `Slack Socket Mode needs an app-level token: set ${where}.appToken (an xapp-… token with connections:write, from Basic Information → App-Level Tokens)${accountId === 'default' ? ` or ${APP_TOKEN_ENV}` : ''}, or use mode "http" with a signingSecret`,
      );
    if (!appToken.startsWith('xapp-'))
      throw new SlackConfigError(`${where}.appToken must be an app-level token starting with "xapp-"`);
  } else {
    signingSecret = text(raw, 'signingSecret', where) ?? fromEnv(SIGNING_SECRET_ENV) ?? '';
    if (!signingSecret)
      throw new SlackConfigError(
        `Slack HTTP mode needs the app's signing secret: set ${where}.signingSecret (Basic Information → App Credentials)${accountId === 'default' ? ` or ${SIGNING_SECRET_ENV}` : ''}`,
      );
  }
  const webhookPath = text(raw, 'webhookPath', where) ?? DEFAULT_WEBHOOK_PATH;
  if (
    !webhookPath.startsWith(WEBHOOK_PREFIX) ||
    webhookPath.length <= WEBHOOK_PREFIX.length ||
    /[?#\s]/.test(webhookPath)
  )
    throw new SlackConfigError(
      `${where}.webhookPath must be a path under ${WEBHOOK_PREFIX} on the gateway, like ${DEFAULT_WEBHOOK_PATH} (got "${webhookPath}")`,
    );
  for (const key of ['ackReaction', 'typingReaction'])
    if (raw[key] !== undefined && typeof raw[key] !== 'string')
      throw new SlackConfigError(`${where}.${key} must be an emoji name string ("" turns it off)`);
  const ack = raw.ackReaction as string | undefined;
  return {
    accountId,
    mode,
    botToken,
    appToken,
    signingSecret,
    webhookPath,
    apiUrl: apiUrlFrom(env),
    ...(typeof ack === 'string' ? { ackReaction: ack } : {}),
    slashCommand: slashCommandSettings(raw.slashCommand, where),
    nativeCommands: nativeCommands(raw.commands, globalNative, where),
  };
}
