/**
 * Slack `message` / `app_mention` events → the kernel's InboundMessage. Pure: no Bolt, no
 * network; fields are read defensively from the wire JSON.
 *
 * Conversations: a DM (`channel_type: "im"`) is the user (peer `direct:<userId>`, as
 * allowFrom names senders); a channel or private channel is `channel:<channelId>`; a group
 * DM is `group:<channelId>`. A thread reply carries `threadId` = the root's `ts`, so it gets
 * its own session and replies go into it. The message id is the event's `ts` — unique per
 * conversation and the same on every redelivery of the event (a retried `event_id`, and
 * the `message` + `app_mention` pair Slack sends for one mention), so the pipeline's
 * persistent dedupe drops repeats.
 */
import type { InboundMessage } from '../../sdk/channels/index.js';
import { unescapeMrkdwn } from './format.js';

type Json = any;

export interface SlackFile {
  id: string;
  url: string;
  fileName: string;
  mimeType?: string;
  size?: number;
}

export interface ParsedMessage {
  inbound: Omit<InboundMessage, 'accountId'>;
  files: SlackFile[];
  /** The Slack conversation (the DM's D… id for a direct message). */
  channelId: string;
}

/** Subtypes a person writes; edits, joins and bot posts are not messages to answer. */
const PERSON_SUBTYPES = new Set([undefined, 'file_share', 'thread_broadcast']);

export function parseEvent(event: Json, botUserId: string, teamId?: string): ParsedMessage | undefined {
  if (event?.type !== 'message' && event?.type !== 'app_mention') return undefined;
  if (!PERSON_SUBTYPES.has(event.subtype) || event.bot_id || !event.user || !event.ts || !event.channel)
    return undefined;
  if (String(event.user) === botUserId) return undefined;
  const channelId = String(event.channel);
  const kind = event.channel_type === 'im' ? 'direct' : event.channel_type === 'mpim' ? 'group' : 'channel';
  const mention = new RegExp(`<@${botUserId}(\\|[^>]*)?>`, 'g');
  const raw = String(event.text ?? '');
  const files: SlackFile[] = (Array.isArray(event.files) ? event.files : [])
    .filter((file: Json) => file?.url_private)
    .map((file: Json) => ({
      id: String(file.id),
      url: String(file.url_private),
      fileName: String(file.name ?? 'file'),
      ...(file.mimetype ? { mimeType: String(file.mimetype) } : {}),
      ...(typeof file.size === 'number' ? { size: file.size } : {}),
    }));
  const text = unescapeMrkdwn(raw.replace(mention, ' '))
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
  if (!text && files.length === 0) return undefined;
  const ts = String(event.ts);
  const thread = event.thread_ts && String(event.thread_ts) !== ts ? String(event.thread_ts) : undefined;
  const team = event.team ?? teamId;
  const seconds = Number(ts);
  return {
    channelId,
    files,
    inbound: {
      peer: { kind, id: kind === 'direct' ? String(event.user) : channelId },
      sender: { id: String(event.user) },
      text,
      messageId: ts,
      mentioned: kind === 'direct' || event.type === 'app_mention' || new RegExp(`<@${botUserId}[|>]`).test(raw),
      ...(thread ? { threadId: thread } : {}),
      ...(team ? { teamId: String(team) } : {}),
      ...(Number.isFinite(seconds) ? { timestamp: Math.round(seconds * 1000) } : {}),
    },
  };
}
