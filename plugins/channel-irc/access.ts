/**
 * Who may talk to the bot in an IRC channel. Nicks are not owned on IRC (anyone may take a
 * free one), so allowlists name senders by `nick!user@host` masks, with `*` and `?` globs;
 * a bare nick counts only with `dangerouslyAllowNameMatching`, as in OpenClaw. Channel names
 * are case-insensitive and may be written without their `#`.
 */
import type { InboundMessage } from '../../sdk/channels/index.js';

type AnyRecord = Record<string, unknown>;

const CHANNEL_PREFIX = /^[#&+!]/;

/** IRC's case mapping (rfc1459): `[]\~` are the upper case of `{}|^`. */
export function ircLower(value: string): string {
  return value.toLowerCase().replace(/[[\]\\~]/g, (char) => ({ '[': '{', ']': '}', '\\': '|', '~': '^' })[char]!);
}

function glob(pattern: string): RegExp {
  const body = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

export interface IrcSender {
  nick: string;
  /** `nick!user@host` as the server reported it. */
  mask: string;
}

/** Does an allowlist entry name this sender? `*`, a mask (glob), or a bare nick when name matching is allowed. */
export function senderMatches(entry: string, sender: IrcSender, allowNames: boolean): boolean {
  const item = ircLower(entry.trim().replace(/^irc:/i, ''));
  if (item === '*') return true;
  if (/[!@*?]/.test(item)) return glob(item).test(ircLower(sender.mask));
  return allowNames && item === ircLower(sender.nick);
}

const sameChannel = (entry: string, channel: string) =>
  ircLower(CHANNEL_PREFIX.test(entry) ? entry : `#${entry}`) === ircLower(channel);

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/**
 * The channel-message verdict the pipeline asks channels for: groupPolicy, `groups` (by
 * channel name or `*`, each with enabled / requireMention / allowFrom) and groupAllowFrom
 * (channel names or sender masks). Mention gating stays the pipeline's.
 */
export function ircGroupAccess(
  message: InboundMessage,
  config: Readonly<AnyRecord>,
): { allow: true; requireMention: boolean } | { allow: false; reason: string } | undefined {
  if (message.peer.kind === 'direct') return undefined;
  const channel = message.peer.id;
  const sender: IrcSender = { nick: message.sender.name ?? message.sender.id, mask: senderMask(message) };
  const allowNames = config.dangerouslyAllowNameMatching === true;
  const groups = (config.groups && typeof config.groups === 'object' ? config.groups : {}) as Record<string, AnyRecord>;
  const key = Object.keys(groups).find((name) => name !== '*' && sameChannel(name, channel));
  const group = key ? groups[key] : undefined;
  const wildcard = groups['*'];
  const policy = ['open', 'allowlist', 'disabled'].includes(config.groupPolicy as string)
    ? (config.groupPolicy as string)
    : 'allowlist';
  if (policy === 'disabled' || group?.enabled === false)
    return { allow: false, reason: `channel messages are disabled for ${channel}` };
  const requireMention = (group?.requireMention ?? wildcard?.requireMention ?? true) !== false;
  const groupAllowFrom = strings(config.groupAllowFrom);
  const channelListed =
    group !== undefined || groupAllowFrom.some((entry) => entry !== '*' && sameChannel(entry, channel));
  if (policy === 'allowlist' && !channelListed && !groupAllowFrom.includes('*'))
    return { allow: false, reason: `channel ${channel} is not in groups or groupAllowFrom (groupPolicy "allowlist")` };
  // Who may speak: the channel's own allowFrom, else the wildcard group's, else groupAllowFrom's
  // sender entries; none of them: anyone in an admitted channel.
  const senders = group?.allowFrom ?? wildcard?.allowFrom;
  const list = senders !== undefined ? strings(senders) : groupAllowFrom.filter((entry) => /[!@*?]/.test(entry));
  if (list.length > 0 && !list.some((entry) => senderMatches(entry, sender, allowNames)))
    return { allow: false, reason: `sender ${sender.mask} is not allowed in ${channel}` };
  return { allow: true, requireMention };
}

/** The sender's full mask, which the channel passes as `username` when names may not match. */
function senderMask(message: InboundMessage): string {
  const { id, username } = message.sender;
  return id.includes('!') ? id : (username ?? id);
}
