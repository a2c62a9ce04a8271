/**
 * The session key grammar: the stable name a conversation is stored under, which decides
 * which conversations share context. The formats are OpenClaw's and a compatibility
 * surface (store files, tool parameters, send-policy prefixes); the channels plugin
 * derives keys from inbound routes, everyone else reads them with `parseSessionKey`:
 *
 *   agent:<agentId>:<mainKey>                                  an agent's main session
 *   agent:<agentId>:[<channel>:[<accountId>:]]dm:<peerId>      a direct chat
 *   agent:<agentId>:<channel>:group|channel:<id>               a group chat, a room
 *   <any of the above>:topic:<threadId>                        forum topic / thread
 *   cron:<jobId>   hook:<uuid>   node-<nodeId>                 background runs
 */
import type { PeerKind } from '../types/channels.js';

export type { PeerKind };

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
  return normalizeToken(id, 'main');
}

export function normalizeMainKey(mainKey: string | undefined | null): string {
  return normalizeToken(mainKey, 'main');
}

export function normalizeChannelId(channel: string | undefined | null): string {
  return normalizeToken(channel, 'unknown');
}

export function normalizeAccountId(accountId: string | undefined | null): string {
  return normalizeToken(accountId, 'default');
}

export function buildAgentMainSessionKey(agentId: string, mainKey: string = 'main'): string {
  return `agent:${normalizeAgentId(agentId)}:${normalizeMainKey(mainKey)}`;
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
