/**
 * Session keys: the stable name a conversation is stored under. A key is derived from
 * where a message came from (agent, channel, account, peer, thread) and the session
 * config, and it decides which conversations share context — so the formats here are
 * a compatibility surface (store files, tool parameters, send-policy prefixes) and must
 * stay exactly as OpenClaw writes them:
 *
 *   agent:<agentId>:<mainKey>                                  every DM, dmScope "main"
 *   agent:<agentId>:dm:<peerId>                                dmScope "per-peer"
 *   agent:<agentId>:<channel>:dm:<peerId>                      dmScope "per-channel-peer"
 *   agent:<agentId>:<channel>:<accountId>:dm:<peerId>          dmScope "per-account-channel-peer"
 *   agent:<agentId>:<channel>:group:<id>                       group chat
 *   agent:<agentId>:<channel>:channel:<id>                     room / channel
 *   <any of the above>:topic:<threadId>                        forum topic / thread
 *   cron:<jobId>   hook:<uuid>   node-<nodeId>                 background runs
 */
import { randomUUID } from 'node:crypto';

export const DEFAULT_AGENT_ID = 'main';
export const DEFAULT_MAIN_KEY = 'main';
export const DEFAULT_ACCOUNT_ID = 'default';

export type DmScope = 'main' | 'per-peer' | 'per-channel-peer' | 'per-account-channel-peer';
export const DM_SCOPES: readonly DmScope[] = ['main', 'per-peer', 'per-channel-peer', 'per-account-channel-peer'];

import type { PeerKind } from '../types/channels.js';

export type { PeerKind };

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
}

export type SessionKind = 'main' | 'direct' | 'group' | 'channel' | 'cron' | 'hook' | 'node' | 'other';

export interface ParsedSessionKey {
  agentId?: string;
  kind: SessionKind;
  channel?: string;
  accountId?: string;
  peerId?: string;
  /** The `<mainKey>` of an agent main key (`kind: "main"`). */
  mainKey?: string;
  /** Job, hook or node id of `cron:` / `hook:` / `node-` keys. */
  id?: string;
  threadId?: string;
  /** The key without its `agent:<agentId>:` prefix (the whole key when there is none). */
  rest: string;
}

export type SessionType = 'direct' | 'group' | 'thread';

const DM_TOKENS = new Set(['dm', 'direct']);
const ROOM_TOKENS = new Set(['group', 'channel']);
const THREAD_TOKENS = new Set(['topic', 'thread']);

/**
 * Key segments other than peer ids are reduced to a safe lowercase token: ":" would make
 * keys unparseable, and agent ids also become directory names.
 */
function normalizeToken(value: string | number | undefined | null, fallback: string): string {
  const cleaned = String(value ?? '')
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return cleaned || fallback;
}

/** Lowercase, `[a-z0-9_-]` only, at most 64 characters; empty or missing → "main". */
export function normalizeAgentId(id: string | undefined | null): string {
  return normalizeToken(id, DEFAULT_AGENT_ID);
}

export function normalizeMainKey(mainKey: string | undefined | null): string {
  return normalizeToken(mainKey, DEFAULT_MAIN_KEY);
}

export function normalizeChannelId(channel: string | undefined | null): string {
  return normalizeToken(channel, 'unknown');
}

export function normalizeAccountId(accountId: string | undefined | null): string {
  return normalizeToken(accountId, DEFAULT_ACCOUNT_ID);
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

export function buildAgentMainSessionKey(agentId: string, mainKey: string = DEFAULT_MAIN_KEY): string {
  return `agent:${normalizeAgentId(agentId)}:${normalizeMainKey(mainKey)}`;
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

export function cronSessionKey(jobId: string): string {
  return `cron:${jobId.trim()}`;
}

export function hookSessionKey(id: string = randomUUID()): string {
  return `hook:${id.trim()}`;
}

export function nodeSessionKey(nodeId: string): string {
  return `node-${nodeId.trim()}`;
}

/**
 * Older stores and some inbound contexts name groups without agent or channel
 * (`group:<id>`, or `<channel>:group:<id>`); the channel comes from the message's
 * provider. Anything else is returned unchanged.
 */
export function normalizeLegacyKey(key: string, agentId: string, channel: string): string {
  const trimmed = key.trim();
  const agent = normalizeAgentId(agentId);
  if (trimmed.startsWith('group:') && trimmed.length > 'group:'.length) {
    return `agent:${agent}:${normalizeChannelId(channel)}:${trimmed}`;
  }
  const prefixed = /^([a-z0-9_-]+):(group|channel):(.+)$/i.exec(trimmed);
  if (prefixed && !['agent', 'cron', 'hook'].includes(prefixed[1]!.toLowerCase())) {
    return `agent:${agent}:${normalizeChannelId(prefixed[1])}:${prefixed[2]!.toLowerCase()}:${prefixed[3]}`;
  }
  return trimmed;
}

function classify(parts: string[], agentScoped: boolean): Omit<ParsedSessionKey, 'agentId' | 'rest'> {
  const head = parts[0] ?? '';
  if ((head === 'cron' || head === 'hook') && parts.length > 1) return { kind: head, id: parts.slice(1).join(':') };
  if (!agentScoped && head.startsWith('node-') && head.length > 'node-'.length) {
    return { kind: 'node', id: parts.join(':').slice('node-'.length) };
  }

  let body = parts;
  let threadId: string | undefined;
  if (parts.length >= 3 && THREAD_TOKENS.has(parts[parts.length - 2]!) && parts[parts.length - 1]) {
    threadId = parts[parts.length - 1];
    body = parts.slice(0, -2);
  }
  const thread = threadId === undefined ? {} : { threadId };

  if (body.length === 1 && body[0]) {
    if (agentScoped) return { kind: 'main', mainKey: body[0], ...thread };
    // Tools accept the bare alias "main" for the current agent's main session.
    if (body[0] === 'main') return { kind: 'main', mainKey: 'main', ...thread };
    return { kind: 'other' };
  }
  const peerFrom = (index: number) => body.slice(index).join(':');
  if (body.length >= 2 && DM_TOKENS.has(body[0]!)) return { kind: 'direct', peerId: peerFrom(1), ...thread };
  if (body.length >= 2 && ROOM_TOKENS.has(body[0]!))
    return { kind: body[0] as PeerKind, peerId: peerFrom(1), ...thread };
  if (body.length >= 3 && (DM_TOKENS.has(body[1]!) || ROOM_TOKENS.has(body[1]!))) {
    const kind = DM_TOKENS.has(body[1]!) ? 'direct' : (body[1] as PeerKind);
    return { kind, channel: body[0], peerId: peerFrom(2), ...thread };
  }
  if (body.length >= 4 && DM_TOKENS.has(body[2]!)) {
    return { kind: 'direct', channel: body[0], accountId: body[1], peerId: peerFrom(3), ...thread };
  }
  // Any agent key may name a topic (a rebuilt store's `agent:<id>:recovered:<sessionId>:topic:<thread>` does).
  return { kind: 'other', ...thread };
}

/**
 * Splits a key into its parts. Both `dm` and `direct` are accepted as the DM token
 * (OpenClaw has written both). Peer ids may contain ":"; a trailing `:topic:<id>` or
 * `:thread:<id>` is the thread.
 */
export function parseSessionKey(key: string): ParsedSessionKey {
  const raw = key.trim();
  const parts = raw.split(':');
  if (parts[0] === 'agent') {
    if (parts.length < 3 || !parts[1]) return { kind: 'other', rest: raw };
    const restParts = parts.slice(2);
    return { agentId: parts[1], ...classify(restParts, true), rest: restParts.join(':') };
  }
  return { ...classify(parts, false), rest: raw };
}

/** Which `resetByType` bucket a key falls in. */
export function sessionTypeOf(key: string): SessionType {
  const parsed = parseSessionKey(key);
  if (parsed.threadId !== undefined) return 'thread';
  if (parsed.kind === 'group' || parsed.kind === 'channel') return 'group';
  return 'direct';
}
