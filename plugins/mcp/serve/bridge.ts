/**
 * The gateway side of `claw mcp serve`: one operator connection, the session index it
 * subscribed to, the live event queue and the approvals seen while connected.
 *
 * claw's gateway tells a `sessions.subscribe` connection that a session changed (after each
 * turn), not each message, so the bridge reads what is new from the session's history when
 * told: the messages of a turn reach the queue when the turn ends, in transcript order.
 * Only messages written after the bridge connected are queued (the transcript is the
 * durable history: messages_read).
 */
import { randomUUID } from 'node:crypto';
import {
  attachmentsOf,
  firstText,
  messageIdOf,
  messageSeqOf,
  toConversation,
  type Conversation,
} from './conversations.js';
import { EventQueue, type EventFilter } from './queue.js';

export type ClaudeChannelMode = 'on' | 'off' | 'auto';

export interface GatewayLink {
  request<T = unknown>(method: string, params?: unknown, options?: { timeoutMs?: number }): Promise<T>;
}

export interface Notification {
  method: string;
  params: Record<string, unknown>;
}

export interface BridgeOptions {
  claudeChannelMode: ClaudeChannelMode;
  /** The connection is gone (a request found it closed); the command reconnects. */
  onLost(): void;
  /** Sends an MCP notification to the client. */
  notify(notification: Notification): Promise<void>;
  /** One line for stderr (stdout is the MCP stream). */
  log(line: string): void;
  verbose: boolean;
  now?: () => number;
}

export interface OpenApproval {
  kind: 'exec' | 'plugin';
  id: string;
  request?: Record<string, unknown>;
  createdAtMs?: number;
  expiresAtMs?: number;
}

/** OpenClaw's limits for the tools' `limit` and `timeout_ms`. */
export const LIMITS = { conversations: 500, messages: 200, events: 200, waitMs: 300_000 } as const;

/** An approval with no expiry of its own is forgotten after this long (OpenClaw's default). */
const APPROVAL_TTL_MS = 30 * 60_000;
/** A Claude permission request is answerable from the chat for this long. */
const CLAUDE_PERMISSION_TTL_MS = 60 * 60_000;
/** `yes abcde` / `no abcde`: Claude Code's five-letter request ids never contain "l". */
const PERMISSION_REPLY = /^(yes|no)\s+([a-km-z]{5})$/i;
const HISTORY_PAGE = 200;

type Row = Record<string, unknown>;

interface SeenSession {
  sessionId?: string;
  lastSeq: number;
}

export class ChannelBridge {
  readonly queue = new EventQueue();
  private readonly approvals = new Map<string, { approval: OpenApproval; trackedAt: number }>();
  private readonly claudePermissions = new Map<string, number>();
  private readonly seen = new Map<string, SeenSession>();
  /** One history read at a time per session, so a turn's messages are queued once and in order. */
  private readonly reading = new Map<string, Promise<void>>();
  private readonly startedAt: number;
  private readonly now: () => number;
  private closed = false;
  private link?: GatewayLink;
  private lastHeardAt: number;

  constructor(private readonly options: BridgeOptions) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.lastHeardAt = this.startedAt;
  }

  /**
   * A gateway that died without its shutdown event leaves a closed socket nobody reports:
   * when the connection has been silent this long (ticks come every 30 s), ask it something,
   * so a dead one is found and reconnected to even while the client only waits for events.
   */
  async checkAlive(silentMs: number): Promise<void> {
    if (!this.link || this.now() - this.lastHeardAt < silentMs) return;
    try {
      await this.request('health', {});
      this.lastHeardAt = this.now();
    } catch {
      // A closed socket was reported by request(); any other answer means it is alive.
    }
  }

  /** Use this connection from now on: subscribe to the session index on it. */
  async attach(link: GatewayLink): Promise<void> {
    this.link = link;
    await this.request('sessions.subscribe', {});
  }

  /** Between connections, tools that need the gateway say so instead of hanging. */
  detach(): void {
    this.link = undefined;
  }

  private async request<T>(method: string, params: unknown): Promise<T> {
    const link = this.link;
    if (!link) throw new Error('not connected to the gateway (reconnecting)');
    try {
      return await link.request<T>(method, params);
    } catch (error) {
      // The client's own words for a socket that is gone, as opposed to a method failing.
      if (/^(connection closed|not connected to the gateway)/.test((error as Error).message) && this.link === link) {
        this.link = undefined;
        this.options.onLost();
      }
      throw error;
    }
  }

  close(): void {
    this.closed = true;
    this.queue.close();
  }

  async listConversations(params: {
    limit?: number;
    search?: string;
    channel?: string;
    includeDerivedTitles?: boolean;
    includeLastMessage?: boolean;
  }): Promise<Conversation[]> {
    const response = await this.request<{ sessions?: Row[] }>('sessions.list', {
      limit: params.limit ?? 50,
      ...(params.search ? { search: params.search } : {}),
      includeDerivedTitles: params.includeDerivedTitles ?? true,
      includeLastMessage: params.includeLastMessage ?? true,
    });
    const channel = params.channel?.trim().toLowerCase();
    return (response.sessions ?? [])
      .map(toConversation)
      .filter((item): item is Conversation => item !== null && (!channel || item.channel === channel));
  }

  private async describe(sessionKey: string): Promise<Row | null> {
    const key = sessionKey.trim();
    if (!key) return null;
    return (await this.request<{ session?: Row | null }>('sessions.describe', { key })).session ?? null;
  }

  async getConversation(sessionKey: string): Promise<Conversation | null> {
    const row = await this.describe(sessionKey);
    return row ? toConversation(row) : null;
  }

  async readMessages(sessionKey: string, limit: number): Promise<unknown[]> {
    const page = await this.request<{ messages?: unknown[] }>('chat.history', { sessionKey, limit });
    return page.messages ?? [];
  }

  /** One message of the recent history by the id messages_read shows for it. */
  async readMessage(sessionKey: string, messageId: string, limit: number): Promise<unknown | null> {
    const messages = await this.readMessages(sessionKey, limit);
    return messages.find((message) => messageIdOf(message) === messageId) ?? null;
  }

  attachments(message: unknown): unknown[] {
    return attachmentsOf(message);
  }

  /** Text out through the route stored on the session, as an agent reply would go. */
  async sendMessage(sessionKey: string, text: string): Promise<unknown> {
    const conversation = await this.getConversation(sessionKey);
    if (!conversation) throw new Error(`Conversation not found for session ${sessionKey}`);
    return this.request('send', {
      channel: conversation.channel,
      to: conversation.to,
      message: text,
      ...(conversation.accountId ? { accountId: conversation.accountId } : {}),
      ...(conversation.threadId !== undefined ? { threadId: String(conversation.threadId) } : {}),
      idempotencyKey: randomUUID(),
    });
  }

  listApprovals(): OpenApproval[] {
    this.sweep();
    return [...this.approvals.values()]
      .map((entry) => entry.approval)
      .sort((a, b) => (a.createdAtMs ?? 0) - (b.createdAtMs ?? 0));
  }

  async respondToApproval(kind: 'exec' | 'plugin', id: string, decision: string): Promise<unknown> {
    return this.request(`${kind}.approval.resolve`, { id, decision });
  }

  poll(filter: EventFilter, limit: number) {
    return this.queue.poll(filter, limit);
  }

  wait(filter: EventFilter, timeoutMs: number, signal?: AbortSignal) {
    return this.queue.wait(filter, timeoutMs, signal);
  }

  /** A Claude Code permission prompt: queued, and answerable with `yes <id>` / `no <id>` in a direct chat. */
  claudePermissionRequest(params: { requestId: string; toolName: string; description: string; inputPreview: string }) {
    if (this.closed) return;
    this.claudePermissions.set(params.requestId.toLowerCase(), this.now());
    this.queue.push({
      type: 'claude_permission_request',
      requestId: params.requestId,
      toolName: params.toolName,
      description: params.description,
      inputPreview: params.inputPreview,
    });
  }

  /** Every gateway event of the connection comes through here; a failure is reported, never thrown. */
  onGatewayEvent(event: { event: string; payload?: unknown }): void {
    if (this.closed) return;
    this.lastHeardAt = this.now();
    const payload = (event.payload && typeof event.payload === 'object' ? event.payload : {}) as Row;
    if (event.event === 'shutdown') {
      // Its pending approvals end with it; the command reconnects to whatever comes back.
      this.approvals.clear();
      this.link = undefined;
      this.options.onLost();
      return;
    }
    const approval = /^(exec|plugin)\.approval\.(requested|resolved)$/.exec(event.event);
    if (approval) {
      const kind = approval[1] as 'exec' | 'plugin';
      if (approval[2] === 'requested') this.trackApproval(kind, payload);
      else if (typeof payload.id === 'string') this.approvals.delete(payload.id);
      this.queue.push({ type: `${kind}_approval_${approval[2]}`, raw: payload });
      return;
    }
    if (event.event === 'sessions.changed' && typeof payload.sessionKey === 'string') {
      const key = payload.sessionKey;
      const next = (this.reading.get(key) ?? Promise.resolve())
        .then(() => this.readNewMessages(key))
        .catch((error: unknown) => {
          this.options.log(`claw mcp serve: reading session ${key} failed`);
          if (this.options.verbose) this.options.log(`claw mcp serve: ${String(error)}`);
        });
      this.reading.set(key, next);
      void next.then(() => {
        if (this.reading.get(key) === next) this.reading.delete(key);
      });
    }
  }

  private trackApproval(kind: 'exec' | 'plugin', payload: Row): void {
    const id = typeof payload.id === 'string' ? payload.id.trim() : '';
    if (!id) return;
    const approval: OpenApproval = { kind, id };
    if (payload.request && typeof payload.request === 'object') approval.request = payload.request as Row;
    if (typeof payload.createdAtMs === 'number') approval.createdAtMs = payload.createdAtMs;
    if (typeof payload.expiresAtMs === 'number') approval.expiresAtMs = payload.expiresAtMs;
    this.approvals.set(id, { approval, trackedAt: this.now() });
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, entry] of this.approvals)
      if (now >= (entry.approval.expiresAtMs ?? entry.trackedAt + APPROVAL_TTL_MS)) this.approvals.delete(id);
    for (const [id, at] of this.claudePermissions)
      if (now - at >= CLAUDE_PERMISSION_TTL_MS) this.claudePermissions.delete(id);
  }

  private async readNewMessages(sessionKey: string): Promise<void> {
    const row = await this.describe(sessionKey);
    if (!row || this.closed) return;
    const sessionId = typeof row.sessionId === 'string' ? row.sessionId : undefined;
    const page = await this.request<{ messages?: unknown[] }>('chat.history', {
      sessionKey,
      limit: HISTORY_PAGE,
    });
    const messages = page.messages ?? [];
    let seen = this.seen.get(sessionKey);
    if (!seen || seen.sessionId !== sessionId) {
      // First news of this transcript: what was written before the bridge connected is history.
      const before = seen
        ? 0
        : Math.max(
            0,
            ...messages
              .filter((message) => !(((message as Row).timestamp as number) >= this.startedAt))
              .map((message) => messageSeqOf(message) ?? 0),
          );
      seen = { sessionId, lastSeq: before };
      this.seen.set(sessionKey, seen);
    }
    const conversation = toConversation(row);
    const direct = row.chatType === 'direct';
    for (const message of messages) {
      const seq = messageSeqOf(message);
      if (seq === undefined || seq <= seen.lastSeq) continue;
      seen.lastSeq = seq;
      const role = (message as Row).role;
      if (role !== 'user' && role !== 'assistant') continue;
      await this.queueMessage(sessionKey, conversation, message, role, direct);
    }
  }

  private async queueMessage(
    sessionKey: string,
    conversation: Conversation | null,
    message: unknown,
    role: 'user' | 'assistant',
    direct: boolean,
  ): Promise<void> {
    const text = firstText(message);
    const reply = role === 'user' && direct && text ? PERMISSION_REPLY.exec(text.trim()) : null;
    const requestId = reply?.[2]?.toLowerCase();
    if (requestId && this.claudePermissions.has(requestId)) {
      // Only a direct chat answers: its sender passed the channel's DM policy; in a group anyone could type it.
      this.claudePermissions.delete(requestId);
      await this.send({
        method: 'notifications/claude/channel/permission',
        params: { request_id: requestId, behavior: reply![1]!.toLowerCase() === 'yes' ? 'allow' : 'deny' },
      });
      return;
    }
    const messageId = messageIdOf(message);
    const messageSeq = messageSeqOf(message);
    this.queue.push({
      type: 'message',
      sessionKey,
      ...(conversation ? { conversation } : {}),
      ...(messageId ? { messageId } : {}),
      ...(messageSeq !== undefined ? { messageSeq } : {}),
      role,
      ...(text !== undefined ? { text } : {}),
      raw: { sessionKey, message },
    });
    if (this.options.claudeChannelMode === 'off' || role !== 'user' || !conversation) return;
    await this.send({
      method: 'notifications/claude/channel',
      params: {
        content: text ?? '[non-text message]',
        meta: {
          session_key: sessionKey,
          channel: conversation.channel,
          to: conversation.to,
          account_id: conversation.accountId ?? '',
          thread_id: conversation.threadId === undefined ? '' : String(conversation.threadId),
          message_id: messageId ?? '',
        },
      },
    });
  }

  private async send(notification: Notification): Promise<void> {
    if (this.closed) return;
    try {
      await this.options.notify(notification);
    } catch (error) {
      this.options.log(`claw mcp serve: notification ${notification.method} failed`);
      if (this.options.verbose) this.options.log(`claw mcp serve: ${String(error)}`);
    }
  }
}
