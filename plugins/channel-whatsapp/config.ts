/**
 * The WhatsApp keys of `channels.whatsapp` (and `accounts.<id>`), beside the access keys
 * the channels pipeline reads: where the account's credentials live, self-chat, read
 * receipts and the media cap. Errors name the key to fix.
 */
import { isAbsolute, join } from 'node:path';
import { expandHome } from '../../sdk/index.js';

export const DEFAULT_MEDIA_MAX_MB = 50;

export interface WhatsAppSettings {
  accountId: string;
  /** `<stateDir>/credentials/whatsapp/<accountId>` unless `authDir` says otherwise. */
  authDir: string;
  /** undefined: self-chat is admitted, safeguards only when the own number is in allowFrom. */
  selfChatMode?: boolean;
  sendReadReceipts: boolean;
  mediaMaxBytes: number;
}

export class WhatsAppConfigError extends Error {
  override readonly name = 'WhatsAppConfigError';
}

type AnyRecord = Record<string, unknown>;

export function configPath(accountId: string): string {
  return accountId === 'default' ? 'channels.whatsapp' : `channels.whatsapp.accounts.${accountId}`;
}

/** Account ids are folder names: keep them to what is safe in a path. */
export function checkAccountId(accountId: string): string {
  if (!/^[A-Za-z0-9][\w-]{0,63}$/.test(accountId))
    throw new WhatsAppConfigError(
      `WhatsApp account id "${accountId}" may only use letters, digits, "_" and "-" (it names the account's credentials folder)`,
    );
  return accountId;
}

export function defaultAuthDir(stateDir: string, accountId: string): string {
  return join(stateDir, 'credentials', 'whatsapp', checkAccountId(accountId));
}

/** One account's settings from its merged config (account keys over the channel root). */
export function resolveSettings(
  accountId: string,
  raw: AnyRecord,
  stateDir: string,
  env: Readonly<Record<string, string | undefined>>,
): WhatsAppSettings {
  const where = configPath(accountId);
  let authDir = defaultAuthDir(stateDir, accountId);
  if (raw.authDir !== undefined) {
    if (typeof raw.authDir !== 'string' || !raw.authDir.trim())
      throw new WhatsAppConfigError(`${where}.authDir must be a folder path`);
    const expanded = expandHome(raw.authDir.trim(), env);
    if (!isAbsolute(expanded))
      throw new WhatsAppConfigError(
        `${where}.authDir must be an absolute path (or start with ~), got "${raw.authDir}"`,
      );
    authDir = expanded;
  }
  for (const key of ['selfChatMode', 'sendReadReceipts'] as const) {
    if (raw[key] !== undefined && typeof raw[key] !== 'boolean')
      throw new WhatsAppConfigError(`${where}.${key} must be true or false`);
  }
  const mediaMaxMb = raw.mediaMaxMb ?? DEFAULT_MEDIA_MAX_MB;
  if (typeof mediaMaxMb !== 'number' || !(mediaMaxMb > 0))
    throw new WhatsAppConfigError(`${where}.mediaMaxMb must be a positive number of megabytes`);
  return {
    accountId,
    authDir,
    ...(typeof raw.selfChatMode === 'boolean' ? { selfChatMode: raw.selfChatMode } : {}),
    sendReadReceipts: raw.sendReadReceipts !== false,
    mediaMaxBytes: Math.round(mediaMaxMb * 1024 * 1024),
  };
}
