/**
 * Which gateway sessions are MCP conversations: those with a stored reply route (a channel
 * and a recipient), read the way OpenClaw's bridge reads a sessions.list row — the delivery
 * context first, then the last route a run used, then the session's origin. A session
 * without one (a `claw agent` run with no --deliver, a Control UI chat) is not listed:
 * `messages_send` could not answer it, and the bridge never invents a route.
 */

export interface Conversation {
  sessionKey: string;
  channel: string;
  to: string;
  accountId?: string;
  threadId?: string | number;
  label?: string;
  displayName?: string;
  derivedTitle?: string;
  lastMessagePreview?: string;
  updatedAt: number | null;
}

type Row = Record<string, unknown>;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

function record(value: unknown): Row {
  return value && typeof value === 'object' ? (value as Row) : {};
}

function threadOf(value: unknown): string | number | undefined {
  return typeof value === 'number' || (typeof value === 'string' && value) ? value : undefined;
}

/** The conversation a session row describes, or null when it has no reply route. */
export function toConversation(row: Row): Conversation | null {
  const delivery = record(row.deliveryContext);
  const origin = record(row.origin);
  const channel = (
    text(delivery.channel) ??
    text(row.lastChannel) ??
    text(row.channel) ??
    text(origin.provider)
  )?.toLowerCase();
  const to = text(delivery.to) ?? text(row.lastTo);
  const sessionKey = text(row.key);
  if (!channel || !to || !sessionKey) return null;
  const conversation: Conversation = {
    sessionKey,
    channel,
    to,
    updatedAt: typeof row.updatedAt === 'number' ? row.updatedAt : null,
  };
  const accountId = text(delivery.accountId) ?? text(row.lastAccountId) ?? text(origin.accountId);
  const threadId = threadOf(delivery.threadId) ?? threadOf(row.lastThreadId) ?? threadOf(origin.threadId);
  if (accountId) conversation.accountId = accountId;
  if (threadId !== undefined) conversation.threadId = threadId;
  for (const field of ['label', 'displayName', 'derivedTitle', 'lastMessagePreview'] as const) {
    const value = text(row[field]);
    if (value) conversation[field] = value;
  }
  return conversation;
}

/** A transcript message's text: the string content, or its first text block. */
export function firstText(message: unknown): string | undefined {
  const content = record(message).content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content) {
    const part = record(block);
    if (part.type === 'text' && typeof part.text === 'string') return part.text;
  }
  return undefined;
}

/** What a message carries besides text (images, files, tool calls…), as attachments_fetch lists it. */
export function attachmentsOf(message: unknown): unknown[] {
  const content = record(message).content;
  if (!Array.isArray(content)) return [];
  return content.filter((block) => block && typeof block === 'object' && (block as Row).type !== 'text');
}

/**
 * The id a client names a message by: its own `id`, OpenClaw's `__openclaw.id`, or (claw's
 * chat.history numbers messages but gives them no ids) its `__openclaw.seq` as a string.
 */
export function messageIdOf(message: unknown): string | undefined {
  const row = record(message);
  const meta = record(row.__openclaw);
  if (text(row.id)) return text(row.id);
  if (text(meta.id)) return text(meta.id);
  return typeof meta.seq === 'number' ? String(meta.seq) : undefined;
}

export function messageSeqOf(message: unknown): number | undefined {
  const seq = record(record(message).__openclaw).seq;
  return typeof seq === 'number' ? seq : undefined;
}
