/**
 * Discord's guild rules, as OpenClaw configures them: `groupPolicy` with
 * `guilds.<guildId>` entries (`requireMention`, `users`, `roles`, `enabled`) and their
 * `channels.<channelId | name | "*">` maps. A guild with a `channels` map answers only in
 * the channels it lists; a thread uses its own entry, else its parent channel's.
 *
 * The pipeline asks this (ChannelPlugin.groupAccess) instead of its generic
 * `groups`/`groupAllowFrom` check when `guilds` is configured; without `guilds` the generic
 * keys apply, keyed by channel id. Pure: no discord.js, no network.
 */
import type { InboundMessage } from '../../sdk/channels/index.js';
import { isRecord } from './config.js';

type AnyRecord = Record<string, unknown>;

export type GroupVerdict = { allow: true; requireMention: boolean } | { allow: false; reason: string };

const list = (value: unknown): string[] | undefined =>
  Array.isArray(value) ? value.map((item) => String(item).trim()) : undefined;

/** "General Chat" → "general-chat", as Discord shows channel names. */
export function slug(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/^#/, '')
    .replace(/[^\p{L}\p{N}_-]+/gu, '-')
    .replace(/^-+|-+$/g, '');
}

function senderAllowed(entry: AnyRecord, message: InboundMessage): boolean | undefined {
  const users = list(entry.users);
  const roles = list(entry.roles);
  if (!users?.length && !roles?.length) return undefined;
  const ids = new Set([
    message.sender.id,
    `discord:${message.sender.id}`,
    `user:${message.sender.id}`,
    `<@${message.sender.id}>`,
  ]);
  if (users?.some((user) => user === '*' || ids.has(user))) return true;
  if (roles?.some((role) => message.memberRoleIds?.includes(role))) return true;
  return false;
}

/** The guild verdict, or undefined when `guilds` is not configured (the generic keys decide). */
export function guildAccess(message: InboundMessage, config: Readonly<AnyRecord>): GroupVerdict | undefined {
  const guilds = config.guilds;
  if (!isRecord(guilds) || Object.keys(guilds).length === 0) return undefined;
  const policy = config.groupPolicy ?? 'allowlist';
  if (policy === 'disabled') return { allow: false, reason: 'guild messages are disabled (groupPolicy "disabled")' };
  const guildId = message.guildId ?? '';
  const guild = (isRecord(guilds[guildId]) ? guilds[guildId] : isRecord(guilds['*']) ? guilds['*'] : undefined) as
    AnyRecord | undefined;
  if (!guild) {
    if (policy === 'open') return { allow: true, requireMention: true };
    return { allow: false, reason: `server ${guildId} is not in channels.discord.guilds (groupPolicy "allowlist")` };
  }
  if (guild.enabled === false)
    return { allow: false, reason: `server ${guildId} is disabled (guilds.${guildId}.enabled)` };

  let channel: AnyRecord | undefined;
  const channels = guild.channels;
  if (isRecord(channels) && Object.keys(channels).length > 0) {
    const keys = [message.threadId, message.peer.id, message.peerName ? slug(message.peerName) : undefined, '*'].filter(
      (key): key is string => !!key,
    );
    const bySlug = Object.fromEntries(Object.entries(channels).map(([key, value]) => [slug(key), value]));
    const found = keys.map((key) => channels[key] ?? bySlug[slug(key)]).find(isRecord);
    // A channel map is an allowlist: a channel it does not name is not answered.
    if (!found)
      return { allow: false, reason: `channel ${message.peer.id} is not listed in guilds.${guildId}.channels` };
    channel = found;
    if (channel.enabled === false || channel.allow === false)
      return { allow: false, reason: `channel ${message.peer.id} is disabled in guilds.${guildId}.channels` };
  }
  const allowed = (channel ? senderAllowed(channel, message) : undefined) ?? senderAllowed(guild, message);
  if (allowed === false)
    return { allow: false, reason: `sender ${message.sender.id} is not in the users or roles of server ${guildId}` };
  const requireMention = (channel?.requireMention ?? guild.requireMention ?? true) !== false;
  return { allow: true, requireMention };
}
