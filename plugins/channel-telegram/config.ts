/**
 * The Telegram keys of `channels.telegram` (and `channels.telegram.accounts.<id>`): the
 * kernel validates the access keys it reads, this module the rest, in words a user can act
 * on. Nothing here loads grammY.
 */
import { createHmac } from 'node:crypto';

export const DEFAULT_API_ROOT = 'https://api.telegram.org';
export const TOKEN_ENV = 'TELEGRAM_BOT_TOKEN';
/** Webhook paths live under the prefix the manifest declares in `httpRoutes`. */
export const WEBHOOK_PREFIX = '/telegram/';
const DEFAULT_MEDIA_MAX_MB = 20;

export interface WebhookSettings {
  /** What Telegram calls (public, normally https). */
  url: string;
  /** The gateway path that receives it. */
  path: string;
  secret: string;
}

export interface TelegramAccountSettings {
  accountId: string;
  token: string;
  apiRoot: string;
  webhook?: WebhookSettings;
  /** Inbound files larger than this are not downloaded. */
  mediaMaxBytes: number;
  /** Telegram's link previews under messages with URLs. */
  linkPreview: boolean;
  /** How a reply shows while it is written: edits of one message (partial, block) or not at all. */
  streaming: StreamingMode;
  /** `draftChunk`: how far the preview advances at a time in "block" mode. */
  draftChunk: { minChars: number; maxChars: number };
  /** `replyToMode`: replies quote the message they answer on no piece, the first, or all. */
  replyToMode: 'off' | 'first' | 'all';
  /** `reactionLevel: "off"` turns acknowledgement reactions off for the account. */
  reactions: boolean;
  /** The bot's command menu (setMyCommands). */
  commandMenu: CommandMenuSettings;
}

export type StreamingMode = 'off' | 'partial' | 'block';

export interface CommandMenuSettings {
  /** `commands.native`: built-in and plugin commands in the menu. */
  native: boolean;
  /** `commands.nativeSkills`: user-invocable skills in the menu. */
  nativeSkills: boolean;
  /** `customCommands`: extra menu entries. */
  custom: Array<{ command: string; description: string }>;
}

export class TelegramConfigError extends Error {
  override readonly name = 'TelegramConfigError';
}

type AnyRecord = Record<string, unknown>;

const isRecord = (value: unknown): value is AnyRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Where an account's keys live, for messages. */
export function configPath(accountId: string): string {
  return accountId === 'default' ? 'channels.telegram' : `channels.telegram.accounts.${accountId}`;
}

// Account ids and per-account config come from the SDK, as the channel pipeline reads them.
export { configuredAccounts as accountIds, mergedAccountConfig } from '../../sdk/channels/index.js';

/** A webhook secret that survives restarts without being configured: derived from the token. */
export function derivedWebhookSecret(token: string): string {
  return createHmac('sha256', token).update('claw channel-telegram webhook secret').digest('hex');
}

function text(raw: AnyRecord, key: string, where: string): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new TelegramConfigError(`${where}.${key} must be a string`);
  return value.trim();
}

/** Resolve one account's settings; throws TelegramConfigError naming the key to fix. */
export function resolveAccountSettings(
  accountId: string,
  raw: AnyRecord,
  env: Readonly<Record<string, string | undefined>>,
): TelegramAccountSettings {
  const where = configPath(accountId);
  // The environment variable is one bot's token: it stands in for the default account only.
  const token =
    text(raw, 'botToken', where) ?? (accountId === 'default' ? env[TOKEN_ENV]?.trim() || undefined : undefined);
  if (!token) {
    throw new TelegramConfigError(
      accountId === 'default'
        ? `Telegram has no bot token: set ${where}.botToken in openclaw.json or the ${TOKEN_ENV} environment variable (create a bot and get its token from @BotFather)`
        : `Telegram account "${accountId}" has no bot token: set ${where}.botToken (${TOKEN_ENV} only applies to the default account)`,
    );
  }
  if (!/^\d+:[A-Za-z0-9_-]+$/.test(token)) {
    throw new TelegramConfigError(
      `${accountId === 'default' && !raw.botToken ? TOKEN_ENV : `${where}.botToken`} does not look like a Telegram bot token (expected "<digits>:<secret>" as @BotFather gives it)`,
    );
  }

  const apiRootText = text(raw, 'apiRoot', where) ?? DEFAULT_API_ROOT;
  let apiRoot: URL;
  try {
    apiRoot = new URL(apiRootText);
  } catch {
    throw new TelegramConfigError(`${where}.apiRoot must be a URL like ${DEFAULT_API_ROOT} (got "${apiRootText}")`);
  }
  if (!/^https?:$/.test(apiRoot.protocol)) throw new TelegramConfigError(`${where}.apiRoot must be an http(s) URL`);
  if (/\/bot[^/]*/.test(apiRoot.pathname))
    throw new TelegramConfigError(`${where}.apiRoot is the Bot API server's root: leave out "/bot<token>"`);

  const mediaMaxMb = raw.mediaMaxMb ?? DEFAULT_MEDIA_MAX_MB;
  if (typeof mediaMaxMb !== 'number' || !(mediaMaxMb > 0))
    throw new TelegramConfigError(`${where}.mediaMaxMb must be a positive number`);

  for (const key of ['ackReaction'] as const) {
    if (raw[key] !== undefined && typeof raw[key] !== 'string')
      throw new TelegramConfigError(`${where}.${key} must be an emoji such as "👀" ("" turns it off)`);
  }
  if (raw.replyToMode !== undefined && !['off', 'first', 'all'].includes(raw.replyToMode as string))
    throw new TelegramConfigError(`${where}.replyToMode must be "off", "first" or "all"`);
  if (
    raw.reactionLevel !== undefined &&
    !['off', 'ack', 'minimal', 'extensive'].includes(raw.reactionLevel as string)
  ) {
    throw new TelegramConfigError(`${where}.reactionLevel must be "off", "ack", "minimal" or "extensive"`);
  }

  return {
    accountId,
    token,
    apiRoot: apiRootText.replace(/\/+$/, ''),
    webhook: resolveWebhook(accountId, raw, token, where),
    mediaMaxBytes: Math.round(mediaMaxMb * 1024 * 1024),
    linkPreview: raw.linkPreview !== false,
    streaming: resolveStreaming(raw, where),
    draftChunk: resolveDraftChunk(raw, where),
    replyToMode: (raw.replyToMode as 'off' | 'first' | 'all' | undefined) ?? 'off',
    reactions: raw.reactionLevel !== 'off',
    commandMenu: resolveCommandMenu(raw, where),
  };
}

/** OpenClaw options claw does not have are refused by name rather than ignored. */
function unsupportedKeys(section: AnyRecord, known: readonly string[], where: string): void {
  const unknown = Object.keys(section).filter((key) => !known.includes(key));
  if (unknown.length > 0)
    throw new TelegramConfigError(`${where}.${unknown[0]} is not supported (${where} takes ${known.join(', ')})`);
}

/** `streaming: "partial" | "block" | "off"` or `{ mode }`; OpenClaw's older `streamMode` and booleans too. */
function resolveStreaming(raw: AnyRecord, where: string): StreamingMode {
  if (isRecord(raw.streaming)) unsupportedKeys(raw.streaming, ['mode'], `${where}.streaming`);
  const value = isRecord(raw.streaming) ? raw.streaming.mode : (raw.streaming ?? raw.streamMode);
  if (value === undefined) return 'partial';
  if (value === true) return 'partial';
  if (value === false) return 'off';
  if (value === 'off' || value === 'partial' || value === 'block') return value;
  const key = isRecord(raw.streaming) ? 'streaming.mode' : raw.streaming !== undefined ? 'streaming' : 'streamMode';
  throw new TelegramConfigError(
    `${where}.${key} must be "partial" (edit one message as the reply grows), "block" (in chunks, see draftChunk) or "off" (got ${JSON.stringify(value)})`,
  );
}

function resolveDraftChunk(raw: AnyRecord, where: string): { minChars: number; maxChars: number } {
  if (raw.draftChunk === undefined) return { minChars: 200, maxChars: 800 };
  if (!isRecord(raw.draftChunk))
    throw new TelegramConfigError(`${where}.draftChunk must be an object: { minChars, maxChars }`);
  unsupportedKeys(raw.draftChunk, ['minChars', 'maxChars'], `${where}.draftChunk`);
  const minChars = raw.draftChunk.minChars ?? 200;
  const maxChars = raw.draftChunk.maxChars ?? 800;
  if (
    !Number.isInteger(minChars) ||
    !Number.isInteger(maxChars) ||
    (minChars as number) < 1 ||
    (maxChars as number) < (minChars as number) ||
    (maxChars as number) > 4096
  ) {
    throw new TelegramConfigError(`${where}.draftChunk needs whole numbers with 1 ≤ minChars ≤ maxChars ≤ 4096`);
  }
  return { minChars: minChars as number, maxChars: maxChars as number };
}

/** `commands.native` / `commands.nativeSkills` ("auto" = on) and `customCommands`. */
function resolveCommandMenu(raw: AnyRecord, where: string): CommandMenuSettings {
  if (raw.commands !== undefined && !isRecord(raw.commands))
    throw new TelegramConfigError(`${where}.commands must be an object: { native, nativeSkills }`);
  const commands = (raw.commands ?? {}) as AnyRecord;
  unsupportedKeys(commands, ['native', 'nativeSkills'], `${where}.commands`);
  const flag = (key: string, fallback: boolean): boolean => {
    const value = commands[key];
    if (value === undefined || value === 'auto') return fallback;
    if (typeof value !== 'boolean')
      throw new TelegramConfigError(`${where}.commands.${key} must be true, false or "auto"`);
    return value;
  };
  const native = flag('native', true);
  const custom = raw.customCommands ?? [];
  if (!Array.isArray(custom))
    throw new TelegramConfigError(`${where}.customCommands must be a list of { command, description }`);
  return {
    native,
    nativeSkills: flag('nativeSkills', native),
    custom: custom.map((entry, index) => {
      if (
        !isRecord(entry) ||
        typeof entry.command !== 'string' ||
        (entry.description !== undefined && typeof entry.description !== 'string')
      ) {
        throw new TelegramConfigError(
          `${where}.customCommands[${index}] must be { command: "name", description: "what it does" }`,
        );
      }
      return { command: entry.command, description: (entry.description as string | undefined) ?? '' };
    }),
  };
}

function resolveWebhook(accountId: string, raw: AnyRecord, token: string, where: string): WebhookSettings | undefined {
  if (raw.webhook !== undefined && !isRecord(raw.webhook))
    throw new TelegramConfigError(`${where}.webhook must be an object: { url, secret?, path? }`);
  const section = (raw.webhook ?? {}) as AnyRecord;
  // OpenClaw's flat spellings are accepted so its configs keep working.
  const url = text(section, 'url', `${where}.webhook`) ?? text(raw, 'webhookUrl', where);
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TelegramConfigError(
      `${where}.webhook.url must be the public URL Telegram posts updates to (got "${url}")`,
    );
  }
  if (!/^https?:$/.test(parsed.protocol)) throw new TelegramConfigError(`${where}.webhook.url must be an https URL`);

  const secret =
    text(section, 'secret', `${where}.webhook`) ?? text(raw, 'webhookSecret', where) ?? derivedWebhookSecret(token);
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(secret)) {
    throw new TelegramConfigError(
      `${where}.webhook.secret may only use A-Z, a-z, 0-9, "_" and "-" (1 to 256 characters), as Telegram requires`,
    );
  }

  const configuredPath = text(section, 'path', `${where}.webhook`) ?? text(raw, 'webhookPath', where);
  // Behind a proxy the public path may differ from the gateway's; by default they match when they can.
  const path =
    configuredPath ??
    (parsed.pathname.startsWith(WEBHOOK_PREFIX) ? parsed.pathname : `${WEBHOOK_PREFIX}webhook/${accountId}`);
  if (!path.startsWith(WEBHOOK_PREFIX) || path.length <= WEBHOOK_PREFIX.length) {
    throw new TelegramConfigError(
      `${where}.webhook.path must start with "${WEBHOOK_PREFIX}" (the gateway serves Telegram webhooks there), got "${path}"`,
    );
  }
  return { url, path, secret };
}
