/**
 * An IRC account's connection settings from `channels.irc` (and `accounts.<id>`), with
 * OpenClaw's keys and defaults: TLS on (port 6697, else 6667), username from the nick,
 * realname "claw". The default account may also take them from IRC_* variables.
 */
import { readFileSync, statSync } from 'node:fs';

type AnyRecord = Record<string, unknown>;

export class IrcConfigError extends Error {
  override name = 'IrcConfigError';
}

export interface IrcAccountSettings {
  host: string;
  port: number;
  tls: boolean;
  nick: string;
  username: string;
  realname: string;
  /** Server password (PASS). */
  password?: string;
  channels: string[];
  /** SASL PLAIN (claw's key: OpenClaw's IRC plugin has none); a failed login disconnects. */
  sasl?: { account: string; password: string };
  nickserv?: { service: string; password?: string; register?: { email: string } };
  /** Senders are `nick!user@host` unless bare nicks may match (OpenClaw's dangerouslyAllowNameMatching). */
  allowNameMatching: boolean;
}

export const isRecord = (value: unknown): value is AnyRecord =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() ? value.trim() : undefined;

/** A secret from `<key>` or `<key>File` (a regular file, first line). */
function secret(raw: AnyRecord, key: string, where: string): string | undefined {
  const inline = text(raw[key]);
  if (inline) return inline;
  const file = text(raw[`${key}File`]);
  if (!file) return undefined;
  let stat;
  try {
    stat = statSync(file);
  } catch {
    throw new IrcConfigError(`${where}${key}File: ${file} does not exist`);
  }
  if (!stat.isFile()) throw new IrcConfigError(`${where}${key}File: ${file} is not a regular file`);
  const value = readFileSync(file, 'utf8').split(/\r?\n/)[0]!.trim();
  if (!value) throw new IrcConfigError(`${where}${key}File: ${file} is empty`);
  return value;
}

/** IRC nicks: a letter or one of `[]\`_^{|}`, then those, digits and `-`. */
const NICK = /^[A-Za-z[\]\\`_^{|}][A-Za-z0-9[\]\\`_^{|}-]{0,29}$/;
const CHANNEL = /^[#&+!][^\s,\x07]{1,49}$/;

export function resolveIrcSettings(
  accountId: string,
  raw: AnyRecord,
  env: Readonly<Record<string, string | undefined>>,
): IrcAccountSettings {
  const where = accountId === 'default' ? 'channels.irc.' : `channels.irc.accounts.${accountId}.`;
  // Variables fill only the default account, as in OpenClaw.
  const fromEnv = (name: string) => (accountId === 'default' ? text(env[name]) : undefined);
  const host = text(raw.host) ?? fromEnv('IRC_HOST');
  if (!host) throw new IrcConfigError(`${where}host is required (the IRC server's host name)`);
  const tlsValue = raw.tls ?? (fromEnv('IRC_TLS') !== undefined ? fromEnv('IRC_TLS') !== 'false' : undefined);
  const tls = tlsValue !== false;
  const portValue = raw.port ?? fromEnv('IRC_PORT');
  const port = portValue === undefined ? (tls ? 6697 : 6667) : Number(portValue);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new IrcConfigError(`${where}port must be a port number (1-65535), got ${JSON.stringify(portValue)}`);
  const nick = text(raw.nick) ?? fromEnv('IRC_NICK');
  if (!nick) throw new IrcConfigError(`${where}nick is required`);
  if (!NICK.test(nick)) throw new IrcConfigError(`${where}nick "${nick}" is not a valid IRC nick`);
  const channelList = Array.isArray(raw.channels)
    ? raw.channels.filter((item): item is string => typeof item === 'string')
    : (fromEnv('IRC_CHANNELS')?.split(',') ?? []);
  const channels = channelList.map((name) => name.trim()).filter(Boolean);
  for (const name of channels)
    if (!CHANNEL.test(name)) throw new IrcConfigError(`${where}channels: "${name}" is not an IRC channel name`);
  const password = secret(raw, 'password', where) ?? fromEnv('IRC_PASSWORD');
  const saslRaw = isRecord(raw.sasl) ? raw.sasl : undefined;
  let sasl: IrcAccountSettings['sasl'];
  if (saslRaw) {
    const saslPassword = secret(saslRaw, 'password', `${where}sasl.`);
    if (!saslPassword) throw new IrcConfigError(`${where}sasl.password (or passwordFile) is required`);
    sasl = { account: text(saslRaw.account) ?? nick, password: saslPassword };
  }
  const nickservRaw = isRecord(raw.nickserv) ? raw.nickserv : {};
  const nickservPassword = secret(nickservRaw, 'password', `${where}nickserv.`) ?? fromEnv('IRC_NICKSERV_PASSWORD');
  const registerEmail = text(nickservRaw.registerEmail) ?? fromEnv('IRC_NICKSERV_REGISTER_EMAIL');
  if (nickservRaw.register === true && !registerEmail)
    throw new IrcConfigError(`${where}nickserv.register needs nickserv.registerEmail`);
  if (nickservRaw.register === true && !nickservPassword)
    throw new IrcConfigError(`${where}nickserv.register needs nickserv.password`);
  const nickserv =
    nickservRaw.enabled !== false && nickservPassword
      ? {
          service: text(nickservRaw.service) ?? 'NickServ',
          password: nickservPassword,
          ...(nickservRaw.register === true ? { register: { email: registerEmail! } } : {}),
        }
      : undefined;
  return {
    host,
    port,
    tls,
    nick,
    username: text(raw.username) ?? fromEnv('IRC_USERNAME') ?? nick,
    realname: text(raw.realname) ?? fromEnv('IRC_REALNAME') ?? 'claw',
    ...(password ? { password } : {}),
    channels,
    ...(sasl ? { sasl } : {}),
    ...(nickserv ? { nickserv } : {}),
    allowNameMatching: raw.dangerouslyAllowNameMatching === true,
  };
}

/** The secrets in the settings, for the redactor. */
export function ircSecrets(settings: IrcAccountSettings): string[] {
  return [settings.password, settings.sasl?.password, settings.nickserv?.password].filter(
    (value): value is string => typeof value === 'string',
  );
}
