/**
 * Slack's channel rules, as OpenClaw configures them: `groupPolicy` with a
 * `channels.<channelId | name | "*">` map whose entries carry `requireMention`, `users` and
 * `enabled`/`allow`. With a `channels` map the bot answers only in the channels it lists;
 * without one the pipeline's generic keys decide. Pure: no Bolt, no network.
 */
import type { InboundMessage } from '../../sdk/channels/index.js';
import { isRecord } from './config.js';

type AnyRecord = Record<string, unknown>;

export type ChannelVerdict = { allow: true; requireMention: boolean } | { allow: false; reason: string };

export function channelAccess(message: InboundMessage, config: Readonly<AnyRecord>): ChannelVerdict | undefined {
  const channels = config.channels;
  if (!isRecord(channels) || Object.keys(channels).length === 0) return undefined;
  const policy = config.groupPolicy ?? 'allowlist';
  if (policy === 'disabled') return { allow: false, reason: 'channel messages are disabled (groupPolicy "disabled")' };
  const name = message.peerName?.replace(/^#/, '').toLowerCase();
  const keys = [message.peer.id, name, name ? `#${name}` : undefined, '*'].filter((key): key is string => !!key);
  const entry = keys.map((key) => channels[key]).find(isRecord);
  if (!entry) {
    if (policy === 'open') return { allow: true, requireMention: true };
    return { allow: false, reason: `channel ${message.peer.id} is not listed in channels.slack.channels` };
  }
  if (entry.enabled === false || entry.allow === false)
    return { allow: false, reason: `channel ${message.peer.id} is disabled in channels.slack.channels` };
  const users = Array.isArray(entry.users) ? entry.users.map((user) => String(user).trim()) : undefined;
  if (
    users?.length &&
    !users.some((user) => user === '*' || user === message.sender.id || user === `slack:${message.sender.id}`)
  )
    return { allow: false, reason: `sender ${message.sender.id} is not in the channel's users` };
  return { allow: true, requireMention: entry.requireMention !== false };
}
