/**
 * Matrix's room rules, as OpenClaw configures them: `groupPolicy` (default "allowlist") with
 * a `groups` map (legacy `rooms`) keyed by room id or alias, whose entries carry `enabled`,
 * `requireMention`, `autoReply`, `users` and `account`; `groupAllowFrom` lists the people
 * whose room messages are taken (and, as elsewhere in claw, may list rooms). Pure.
 */
import type { InboundMessage } from '../../sdk/channels/index.js';
import { isRecord } from './config.js';

type AnyRecord = Record<string, unknown>;

export type RoomVerdict = { allow: true; requireMention: boolean } | { allow: false; reason: string };

const list = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string').map((item) => item.trim())
    : [];

const named = (entries: string[], id: string) =>
  entries.some((entry) => entry === '*' || entry === id || entry === `matrix:${id}`);

export function roomAccess(
  message: InboundMessage,
  config: Readonly<AnyRecord>,
  room: { alias?: string } = {},
): RoomVerdict {
  const roomId = message.peer.id;
  const policy = config.groupPolicy ?? 'allowlist';
  if (policy === 'disabled') return { allow: false, reason: 'room messages are disabled (groupPolicy "disabled")' };
  const groups = isRecord(config.groups) ? config.groups : isRecord(config.rooms) ? config.rooms : {};
  const keys = [roomId, room.alias].filter((key): key is string => !!key);
  const own = keys
    .map((key) => groups[key])
    .find(
      (entry): entry is AnyRecord =>
        isRecord(entry) && (entry.account === undefined || entry.account === message.accountId),
    );
  const wildcard = isRecord(groups['*']) ? (groups['*'] as AnyRecord) : undefined;
  if (own?.enabled === false) return { allow: false, reason: `room ${roomId} is disabled in groups` };
  const entry = own ?? wildcard;
  const users = list(entry?.users);
  if (users.length && !named(users, message.sender.id))
    return { allow: false, reason: `sender ${message.sender.id} is not in the room's users` };
  const requireMention =
    entry?.autoReply === true ? false : entry?.autoReply === false ? true : entry?.requireMention !== false;
  if (policy === 'open' || entry) return { allow: true, requireMention };
  const allowFrom = list(config.groupAllowFrom);
  if (named(allowFrom, message.sender.id) || keys.some((key) => allowFrom.includes(key)))
    return { allow: true, requireMention };
  return {
    allow: false,
    reason: `room ${roomId} is not in groups and ${message.sender.id} is not in groupAllowFrom (groupPolicy "allowlist")`,
  };
}
