/**
 * A session's follow-up queue: accepted messages that wait while the session is busy.
 * Many chats may share one session (DMs with `session.dmScope: "main"`, a group), so the
 * queue is one per session but every decision is made per route — the chat (channel,
 * account, recipient, thread) a reply goes to: a collected batch holds one route's messages,
 * and the summary of messages dropped from a full queue goes to their own chat's next
 * turn. A message is in the queue once, by id, whatever happens.
 */
import type { DispatchInput, RunResult } from '../../sdk/agent/index.js';
import type { QueueSettings } from './queue-settings.js';

/** An accepted message on its way to a turn. */
export interface Pending {
  /** The message's id: the runId its sender was given, and its key in the intake journal. */
  id: string;
  input: DispatchInput;
  acceptedAt: number;
  settle: { resolve: (result: RunResult) => void; reject: (error: unknown) => void };
  /** Accepted by an earlier process and resumed: it was within the cap then, so no cap drops it now. */
  resumed?: boolean;
}

/** Where a reply goes: messages of one route may share a turn, messages of different routes never do. */
export function routeOf(input: DispatchInput): string {
  const target = input.deliver;
  return [
    input.channel ?? '',
    target?.channel ?? '',
    target?.accountId ?? input.accountId ?? '',
    target?.to ?? '',
    String(target?.threadId ?? input.threadId ?? ''),
  ].join('\u0000');
}

/** The messages of one turn: answered in full (`members`), or only as a summary of what was dropped (`summarized`). */
export interface Batch {
  members: Pending[];
  summarized: Pending[];
}

export class FollowupQueue {
  items: Pending[] = [];
  /** Dropped from a full queue under `drop: "summarize"`: summarised into their route's next turn. */
  summarized: Pending[] = [];
  timer?: NodeJS.Timeout;
  draining = false;

  constructor(public settings: QueueSettings) {}

  get size(): number {
    return this.items.length;
  }

  has(id: string): boolean {
    return this.items.some((item) => item.id === id) || this.summarized.some((item) => item.id === id);
  }

  /**
   * Add a message. At the cap (`messages.queue.cap`, counted over the whole session) the
   * drop policy decides: "new" refuses it, "old" drops the oldest, "summarize" drops the
   * oldest into a summary. Returns the messages that leave without a turn of their own.
   */
  add(item: Pending): { refused?: Pending; dropped?: Pending } {
    if (this.has(item.id)) return {};
    if (!item.resumed && this.items.length >= this.settings.cap) {
      if (this.settings.drop === 'new') return { refused: item };
      const oldest = this.items.shift()!;
      this.items.push(item);
      if (this.settings.drop === 'summarize') {
        this.summarized.push(oldest);
        return {};
      }
      return { dropped: oldest };
    }
    this.items.push(item);
    return {};
  }

  /** Put messages back at the front (steered messages the turn did not take), oldest first. */
  unshift(items: Pending[]): void {
    this.items.unshift(...items.filter((item) => !this.has(item.id)));
  }

  remove(id: string): Pending | undefined {
    const index = this.items.findIndex((item) => item.id === id);
    return index < 0 ? undefined : this.items.splice(index, 1)[0];
  }

  /** Everything, emptied (the session is stopped). */
  clear(): Pending[] {
    const all = [...this.items, ...this.summarized];
    this.items = [];
    this.summarized = [];
    return all;
  }

  /**
   * The next turn's messages: in "collect" mode every queued message of the first route,
   * otherwise the first message alone; with the summaries dropped from that route. When
   * only summaries are left, one turn for the oldest summary's route.
   */
  next(mode: QueueSettings['mode']): Batch | undefined {
    const first = this.items[0] ?? this.summarized[0];
    if (!first) return undefined;
    const route = routeOf(first.input);
    const members =
      this.items.length === 0
        ? []
        : mode === 'collect'
          ? this.items.filter((item) => routeOf(item.input) === route)
          : [first];
    const summarized = this.summarized.filter((item) => routeOf(item.input) === route);
    this.items = this.items.filter((item) => !members.includes(item));
    this.summarized = this.summarized.filter((item) => !summarized.includes(item));
    return { members, summarized };
  }
}

/** The prompt for messages that queued while the agent was busy. */
export function collectPrompt(messages: readonly string[], dropped: readonly string[]): string {
  const parts = ['[Queued messages while agent was busy]'];
  if (dropped.length > 0) {
    parts.push(
      `[${dropped.length} earlier message${dropped.length === 1 ? ' was' : 's were'} dropped from a full queue:]\n${dropped.map((text) => `• ${text.replace(/\s+/g, ' ').slice(0, 160)}`).join('\n')}`,
    );
  }
  messages.forEach((text, index) => parts.push(`---\nQueued #${index + 1}\n${text}`));
  return parts.join('\n\n');
}
