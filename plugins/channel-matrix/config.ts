/**
 * The Matrix keys of `channels.matrix` (and `channels.matrix.accounts.<id>`), checked here in
 * words a user can act on. The pipeline reads the access keys itself (`dm.policy` /
 * `dmPolicy`, `dm.allowFrom`, `groupPolicy`, `groupAllowFrom`, `replyToMode`, `historyLimit`,
 * `textChunkLimit`, `ackReaction`); room entries (`groups`) are read by access.ts. Nothing
 * here loads matrix-js-sdk.
 */

export const HOMESERVER_ENV = 'MATRIX_HOMESERVER';
export const USER_ID_ENV = 'MATRIX_USER_ID';
export const ACCESS_TOKEN_ENV = 'MATRIX_ACCESS_TOKEN';
export const PASSWORD_ENV = 'MATRIX_PASSWORD';

/** Matrix has no hard limit below the 64 KiB event size; OpenClaw cuts replies at 4,000. */
export const MATRIX_TEXT_LIMIT = 4000;
export const DEFAULT_MEDIA_MAX_MB = 20;
/** First start: how many recent events per room the catch-up sync reads (they are context, not answered). */
export const DEFAULT_INITIAL_SYNC_LIMIT = 10;

export type AutoJoin = 'always' | 'allowlist' | 'off';
export type ThreadReplies = 'off' | 'inbound' | 'always';

export interface MatrixAccountSettings {
  accountId: string;
  /** The homeserver's base URL without a trailing slash. */
  homeserver: string;
  userId: string;
  accessToken?: string;
  password?: string;
  deviceId?: string;
  deviceName: string;
  initialSyncLimit: number;
  autoJoin: AutoJoin;
  /** Room ids and aliases `autoJoin: "allowlist"` accepts invites to. */
  autoJoinAllowlist: string[];
  /** DMs: `per-user` (one session per person, default) or `per-room`. */
  dmSessionScope: 'per-user' | 'per-room';
  threadReplies: ThreadReplies;
  dmThreadReplies: ThreadReplies;
  mediaMaxBytes: number;
  /** `network.dangerouslyAllowPrivateNetwork`: a homeserver on localhost or the LAN. */
  allowPrivateNetwork: boolean;
}

export class MatrixConfigError extends Error {
  override readonly name = 'MatrixConfigError';
}

type AnyRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is AnyRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function configPath(accountId: string): string {
  return accountId === 'default' ? 'channels.matrix' : `channels.matrix.accounts.${accountId}`;
}

function text(raw: AnyRecord, key: string, where: string): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new MatrixConfigError(`${where}.${key} must be a string`);
  return value.trim() || undefined;
}

function oneOf<T extends string>(raw: AnyRecord, key: string, where: string, allowed: readonly T[], fallback: T): T {
  const value = raw[key];
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new MatrixConfigError(
    `${where}.${key} must be one of ${allowed.map((item) => `"${item}"`).join(', ')} (got ${JSON.stringify(value)})`,
  );
}

/**
 * OpenClaw's Matrix keys this plugin does not implement: each one that is set is named at
 * start, never silently dropped.
 */
const NOT_IMPLEMENTED = [
  'proxy',
  'avatarUrl',
  'streaming',
  'markdown',
  'reactionNotifications',
  'actions',
  'execApprovals',
  'threadBindings',
  'contextVisibility',
  'mentionPatterns',
  'allowlistOnly',
  'allowBots',
  'joinIntro',
  'startupVerification',
  'startupVerificationCooldownHours',
  'dangerouslyAllowNameMatching',
];

export function ignoredSettings(accountId: string, raw: AnyRecord): string[] {
  const where = configPath(accountId);
  const out = NOT_IMPLEMENTED.filter((key) => raw[key] !== undefined).map(
    (key) => `${where}.${key} is an OpenClaw Matrix setting claw does not implement; ignored`,
  );
  if (raw.replyToMode === 'batched')
    out.push(`${where}.replyToMode "batched" is not implemented; replies quote the first message of a run`);
  return out;
}

/** The homeserver URL: https, or plain http only to this machine (the access token travels with every request). */
export function homeserverUrl(value: string, where: string): string {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `https://${value}`);
  } catch {
    throw new MatrixConfigError(`${where}.homeserver must be a URL like https://matrix.example.org (got "${value}")`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new MatrixConfigError(
      `${where}.homeserver must be an https URL (plain http only on 127.0.0.1 / localhost): the access token would travel in clear text`,
    );
  if (url.username || url.password || url.search || url.hash)
    throw new MatrixConfigError(`${where}.homeserver must be a plain base URL, without credentials, query or fragment`);
  return url.href.replace(/\/+$/, '');
}

const LOGIN_KEYS = ['userId', 'accessToken', 'password', 'deviceId'] as const;

/**
 * One account's keys over the channel's, except the login: an account that names any of
 * `userId` / `accessToken` / `password` / `deviceId` logs in with its own alone, so a token
 * at the top never logs a second account in as the first one's user.
 */
export function accountConfig(section: AnyRecord | undefined, accountId: string): AnyRecord {
  const { accounts, ...root } = section ?? {};
  const own = isRecord(accounts) && isRecord(accounts[accountId]) ? accounts[accountId] : {};
  const merged: AnyRecord = { ...root, ...own };
  if (LOGIN_KEYS.some((key) => own[key] !== undefined))
    for (const key of LOGIN_KEYS) if (own[key] === undefined) delete merged[key];
  return merged;
}

/** Resolve one account's settings; throws MatrixConfigError naming the key to fix. */
export function resolveMatrixSettings(
  accountId: string,
  raw: AnyRecord,
  env: Readonly<Record<string, string | undefined>>,
): MatrixAccountSettings {
  const where = configPath(accountId);
  // The environment variables are one login: they stand in for the default account only.
  const fromEnv = (name: string) => (accountId === 'default' ? env[name]?.trim() || undefined : undefined);
  const homeserverValue = text(raw, 'homeserver', where) ?? fromEnv(HOMESERVER_ENV);
  if (!homeserverValue)
    throw new MatrixConfigError(
      `Matrix${accountId === 'default' ? '' : ` account "${accountId}"`} has no homeserver: set ${where}.homeserver (e.g. https://matrix.example.org)${accountId === 'default' ? ` or ${HOMESERVER_ENV}` : ''}`,
    );
  const homeserver = homeserverUrl(homeserverValue, where);
  const userId = text(raw, 'userId', where) ?? fromEnv(USER_ID_ENV);
  const accessToken = text(raw, 'accessToken', where) ?? fromEnv(ACCESS_TOKEN_ENV);
  const password = text(raw, 'password', where) ?? fromEnv(PASSWORD_ENV);
  if (!accessToken && !password)
    throw new MatrixConfigError(
      `Matrix${accountId === 'default' ? '' : ` account "${accountId}"`} needs a login: set ${where}.accessToken, or ${where}.userId with ${where}.password`,
    );
  if (!userId && !accessToken)
    throw new MatrixConfigError(`${where}.password needs ${where}.userId (the full @bot:example.org id)`);
  if (userId && !/^@[^:\s]+:\S+$/.test(userId))
    throw new MatrixConfigError(
      `${where}.userId must be a full Matrix user id like @bot:example.org (got "${userId}")`,
    );
  if (raw.encryption === true)
    throw new MatrixConfigError(
      `${where}.encryption: end-to-end encryption is not supported by claw's Matrix channel; set it to false (encrypted rooms are reported in claw channels status and their messages are not read)`,
    );
  if (raw.encryption !== undefined && raw.encryption !== false)
    throw new MatrixConfigError(`${where}.encryption must be true or false`);
  const limit = raw.initialSyncLimit ?? DEFAULT_INITIAL_SYNC_LIMIT;
  if (!Number.isInteger(limit) || (limit as number) < 0 || (limit as number) > 1000)
    throw new MatrixConfigError(`${where}.initialSyncLimit must be a whole number from 0 to 1000`);
  const mediaMaxMb = raw.mediaMaxMb ?? DEFAULT_MEDIA_MAX_MB;
  if (typeof mediaMaxMb !== 'number' || !(mediaMaxMb > 0) || mediaMaxMb > 1024)
    throw new MatrixConfigError(`${where}.mediaMaxMb must be a number of megabytes above 0 (at most 1024)`);
  const allowlist = raw.autoJoinAllowlist ?? [];
  if (!Array.isArray(allowlist) || allowlist.some((entry) => typeof entry !== 'string'))
    throw new MatrixConfigError(`${where}.autoJoinAllowlist must be a list of room ids (!…) or aliases (#…)`);
  const dm = isRecord(raw.dm) ? raw.dm : {};
  const threadReplies = oneOf(raw, 'threadReplies', where, ['off', 'inbound', 'always'] as const, 'inbound');
  const network = isRecord(raw.network) ? raw.network : {};
  return {
    accountId,
    homeserver,
    userId: userId ?? '',
    ...(accessToken ? { accessToken } : {}),
    ...(password ? { password } : {}),
    ...(text(raw, 'deviceId', where) ? { deviceId: text(raw, 'deviceId', where)! } : {}),
    deviceName: text(raw, 'deviceName', where) ?? 'claw',
    initialSyncLimit: limit as number,
    autoJoin: oneOf(raw, 'autoJoin', where, ['always', 'allowlist', 'off'] as const, 'off'),
    autoJoinAllowlist: (allowlist as string[]).map((entry) => entry.trim()).filter(Boolean),
    dmSessionScope: oneOf(dm, 'sessionScope', `${where}.dm`, ['per-user', 'per-room'] as const, 'per-user'),
    threadReplies,
    dmThreadReplies: oneOf(dm, 'threadReplies', `${where}.dm`, ['off', 'inbound', 'always'] as const, threadReplies),
    mediaMaxBytes: Math.floor(mediaMaxMb * 1024 * 1024),
    allowPrivateNetwork: network.dangerouslyAllowPrivateNetwork === true,
  };
}

export function matrixSecrets(settings: MatrixAccountSettings): string[] {
  return [settings.accessToken, settings.password].filter((value): value is string => !!value);
}
