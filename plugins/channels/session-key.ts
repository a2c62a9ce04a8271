/**
 * The session key an inbound message is stored under, from where it came from and the
 * `session.*` config: which conversations share context. The formats are OpenClaw's and a
 * compatibility surface (store files, tool parameters, send-policy prefixes); the SDK's
 * `parseSessionKey` reads every one of them back.
 *
 *   agent:<agentId>:<mainKey>                                  every DM, dmScope "main"
 *   agent:<agentId>:dm:<peerId>                                dmScope "per-peer"
 *   agent:<agentId>:<channel>:dm:<peerId>                      dmScope "per-channel-peer"
 *   agent:<agentId>:<channel>:<accountId>:dm:<peerId>          dmScope "per-account-channel-peer"
 *   agent:<agentId>:<channel>:group:<id>                       group chat
 *   agent:<agentId>:<channel>:channel:<id>                     room / channel
 *   agent:<agentId>:<mainKey>                                  group or room, groupScope "main"
 *   <any of the above>:topic:<threadId>                        forum topic / thread
 */
import {
  normalizeAccountId,
  normalizeAgentId,
  normalizeChannelId,
  normalizeMainKey,
  type PeerKind,
} from '../../sdk/index.js';

export type DmScope = 'main' | 'per-peer' | 'per-channel-peer' | 'per-account-channel-peer';
export const DM_SCOPES: readonly DmScope[] = ['main', 'per-peer', 'per-channel-peer', 'per-account-channel-peer'];

const ROOM_TOKENS = new Set(['group', 'channel']);

export interface SessionRoute {
  agentId: string;
  /** Channel id, e.g. "telegram", "discord", "whatsapp". */
  channel: string;
  /** Provider account (multi-account setups); only `per-account-channel-peer` keys use it. */
  accountId?: string;
  peer: { kind: PeerKind; id: string };
  /** Forum topic / thread; its presence gives the conversation its own session. */
  threadId?: string | number;
}

/** The part of `session.*` config that shapes keys. */
export interface SessionKeyConfig {
  mainKey?: string;
  dmScope?: DmScope;
  /** canonical name → provider-prefixed peer ids (`"telegram:123"`) of the same person. */
  identityLinks?: Record<string, string[]>;
  scope?: 'per-sender' | 'global';
  /** Groups and rooms: a session each (per-group, default) or the agent's main session (main). */
  groupScope?: 'per-group' | 'main';
}

/**
 * Peer ids keep their case and punctuation (Matrix "!room:server", WhatsApp "123@g.us"):
 * folding them could merge two different conversations into one session.
 */
function cleanPeerId(id: string | number | undefined | null): string {
  const trimmed = String(id ?? '').trim();
  return trimmed || 'unknown';
}

function threadSuffix(threadId: string | number | undefined): string {
  if (threadId === undefined || threadId === null) return '';
  const id = String(threadId).trim();
  return id ? `:topic:${id}` : '';
}

/** The canonical name `<channel>:<peerId>` is linked to, if any (case-insensitive). */
export function resolveLinkedPeerId(
  identityLinks: Record<string, string[]> | undefined,
  channel: string,
  peerId: string,
): string | undefined {
  if (!identityLinks) return undefined;
  const wanted = `${normalizeChannelId(channel)}:${peerId.trim()}`.toLowerCase();
  for (const [canonical, ids] of Object.entries(identityLinks)) {
    const name = canonical.trim();
    if (!name || !Array.isArray(ids)) continue;
    if (ids.some((id) => typeof id === 'string' && id.trim().toLowerCase() === wanted)) return name;
  }
  return undefined;
}

export function deriveSessionKey(route: SessionRoute, config: SessionKeyConfig = {}): string {
  const agentId = normalizeAgentId(route.agentId);
  const mainKey = normalizeMainKey(config.mainKey);
  // One shared conversation per agent: thread ids are deliberately ignored too.
  if (config.scope === 'global') return `agent:${agentId}:${mainKey}`;

  const channel = normalizeChannelId(route.channel);
  const peerId = cleanPeerId(route.peer.id);
  const suffix = threadSuffix(route.threadId);

  if (route.peer.kind !== 'direct') {
    if (!ROOM_TOKENS.has(route.peer.kind)) throw new TypeError(`unknown peer kind "${String(route.peer.kind)}"`);
    if (config.groupScope === 'main') return `agent:${agentId}:${mainKey}${suffix}`;
    return `agent:${agentId}:${channel}:${route.peer.kind}:${peerId}${suffix}`;
  }

  const dmScope = config.dmScope ?? 'main';
  // An unknown scope must not silently fall back to the shared session: that would leak
  // one sender's context to another.
  if (!DM_SCOPES.includes(dmScope)) throw new TypeError(`unknown session.dmScope "${String(dmScope)}"`);
  if (dmScope === 'main') return `agent:${agentId}:${mainKey}${suffix}`;

  const person = resolveLinkedPeerId(config.identityLinks, channel, peerId) ?? peerId;
  switch (dmScope) {
    case 'per-peer':
      return `agent:${agentId}:dm:${person}${suffix}`;
    case 'per-channel-peer':
      return `agent:${agentId}:${channel}:dm:${person}${suffix}`;
    case 'per-account-channel-peer':
      return `agent:${agentId}:${channel}:${normalizeAccountId(route.accountId)}:dm:${person}${suffix}`;
  }
}
