/**
 * What the session tools show of a session: the `sessions_list` row (OpenClaw's fields),
 * its kind and channel, and transcript messages trimmed for the model.
 */
import { existsSync } from 'node:fs';
import type { ChatMessage } from '../../sdk/index.js';
import { parseSessionKey, type SessionService } from '../../sdk/agent/index.js';
import type { SessionRecord } from './access.js';

export const SESSION_KINDS = ['main', 'group', 'cron', 'hook', 'node', 'other'] as const;
export type ListKind = (typeof SESSION_KINDS)[number];

/** Keys no tool shows: `global` is shown as "main", `unknown` not at all. */
export const RESERVED_KEYS = new Set(['global', 'unknown']);

/** Longest text block returned; the rest is cut with a note. */
const MAX_BLOCK_CHARS = 4000;

export function kindOf(key: string): ListKind {
  if (key === 'global') return 'main';
  const kind = parseSessionKey(key).kind;
  if (kind === 'main' || kind === 'cron' || kind === 'hook' || kind === 'node') return kind;
  if (kind === 'group' || kind === 'channel') return 'group';
  return 'other';
}

/** The chat network a session talks on: cron, hook and node sessions are internal. */
export function channelOf(record: SessionRecord): string {
  const kind = kindOf(record.key);
  if (kind === 'cron' || kind === 'hook' || kind === 'node') return 'internal';
  const { entry } = record;
  const channel =
    kind === 'group'
      ? (entry.channel ?? parseSessionKey(record.key).channel ?? entry.lastChannel)
      : (entry.lastChannel ?? entry.channel);
  return channel ?? 'unknown';
}

/** The key a tool shows: with `session.scope = "global"` the one session is "main". */
export function shownKey(key: string): string {
  return key === 'global' ? 'main' : key;
}

export function transcriptFile(sessions: SessionService, record: SessionRecord): string {
  return sessions.store(record.agentId).transcriptPath(record.entry.sessionId, parseSessionKey(record.key).threadId);
}

export function readMessages(sessions: SessionService, record: SessionRecord): ChatMessage[] {
  const file = transcriptFile(sessions, record);
  return existsSync(file) ? sessions.transcript(file).messages() : [];
}

/** Long text blocks cut to MAX_BLOCK_CHARS; image bytes left out (they only cost context). */
export function trimMessage(message: ChatMessage): ChatMessage {
  if (!Array.isArray(message.content)) {
    return typeof message.content === 'string' && (message.content as string).length > MAX_BLOCK_CHARS
      ? ({ ...message, content: cut(message.content) } as ChatMessage)
      : message;
  }
  const content = (message.content as Array<Record<string, unknown>>).map((part) => {
    if (part.type === 'text' && typeof part.text === 'string' && part.text.length > MAX_BLOCK_CHARS)
      return { ...part, text: cut(part.text) };
    if (part.type === 'image') return { type: 'text', text: '[image omitted]' };
    return part;
  });
  return { ...message, content } as ChatMessage;
}

function cut(text: string): string {
  return `${text.slice(0, MAX_BLOCK_CHARS)}\n[… ${text.length - MAX_BLOCK_CHARS} more characters]`;
}

export function listRow(
  sessions: SessionService,
  record: SessionRecord,
  messages?: ChatMessage[],
): Record<string, unknown> {
  const { entry } = record;
  const row: Record<string, unknown> = {
    key: shownKey(record.key),
    agentId: record.agentId,
    kind: kindOf(record.key),
    channel: channelOf(record),
    ...(entry.label ? { label: entry.label } : {}),
    ...(entry.displayName ? { displayName: entry.displayName } : {}),
    updatedAt: entry.updatedAt,
    sessionId: entry.sessionId,
    ...((entry.model ?? entry.lastModel) ? { model: entry.model ?? entry.lastModel } : {}),
    contextTokens: entry.contextTokens,
    totalTokens: entry.totalTokens,
    ...(entry.thinkingLevel ? { thinkingLevel: entry.thinkingLevel } : {}),
    ...(entry.verboseLevel ? { verboseLevel: entry.verboseLevel } : {}),
    systemSent: entry.systemSent === true,
    abortedLastRun: entry.abortedLastRun === true,
    ...(entry.sendPolicy ? { sendPolicy: entry.sendPolicy } : {}),
    ...(entry.lastChannel ? { lastChannel: entry.lastChannel } : {}),
    ...(entry.lastTo ? { lastTo: entry.lastTo } : {}),
    ...(entry.deliveryContext?.channel
      ? {
          deliveryContext: {
            channel: entry.deliveryContext.channel,
            to: entry.deliveryContext.to,
            accountId: entry.deliveryContext.accountId,
          },
        }
      : {}),
    ...(entry.spawnedBy ? { spawnedBy: shownKey(entry.spawnedBy), spawnDepth: entry.spawnDepth } : {}),
    transcriptPath: transcriptFile(sessions, record),
  };
  if (messages) row.messages = messages;
  return row;
}
