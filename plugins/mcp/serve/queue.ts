/**
 * The bridge's live event queue: numbered by a cursor that only grows, bounded (the oldest
 * events go first), read without consuming, and long-polled by `events_wait`. A reader whose
 * cursor is older than what is kept is told so (`gap`), so it can read the transcript instead.
 */

/** Events kept; OpenClaw's bridge keeps the same number. */
export const QUEUE_LIMIT = 1000;

export interface QueuedEvent {
  cursor: number;
  type: string;
  sessionKey?: string;
  [field: string]: unknown;
}

export interface EventFilter {
  afterCursor: number;
  sessionKey?: string;
}

export interface CursorGap {
  requested_after_cursor: number;
  oldest_available_cursor: number;
}

interface Waiter {
  filter: EventFilter;
  settle(event: QueuedEvent | null): void;
}

function matches(event: QueuedEvent, filter: EventFilter): boolean {
  if (event.cursor <= filter.afterCursor) return false;
  return !filter.sessionKey || event.sessionKey === filter.sessionKey;
}

export class EventQueue {
  private readonly events: QueuedEvent[] = [];
  private readonly waiters = new Set<Waiter>();
  private cursor = 0;

  constructor(private readonly limit = QUEUE_LIMIT) {}

  push(event: Omit<QueuedEvent, 'cursor'>): QueuedEvent {
    const queued = { ...event, cursor: ++this.cursor } as QueuedEvent;
    this.events.push(queued);
    if (this.events.length > this.limit) this.events.splice(0, this.events.length - this.limit);
    for (const waiter of [...this.waiters]) {
      if (matches(queued, waiter.filter)) waiter.settle(queued);
      else if (this.gap(waiter.filter.afterCursor)) waiter.settle(null);
    }
    return queued;
  }

  /** Set when events after `afterCursor` were already dropped. */
  gap(afterCursor: number): CursorGap | undefined {
    const oldest = this.events[0]?.cursor;
    return oldest !== undefined && afterCursor < oldest - 1
      ? { requested_after_cursor: afterCursor, oldest_available_cursor: oldest }
      : undefined;
  }

  poll(filter: EventFilter, limit: number): { events: QueuedEvent[]; nextCursor: number; gap?: CursorGap } {
    const events = this.events.filter((event) => matches(event, filter)).slice(0, limit);
    const gap = this.gap(filter.afterCursor);
    const nextCursor = events.at(-1)?.cursor ?? (gap ? gap.oldest_available_cursor - 1 : filter.afterCursor);
    return { events, nextCursor, ...(gap ? { gap } : {}) };
  }

  /** The first matching event, waiting up to `timeoutMs` for one; null on timeout, abort or close. */
  wait(
    filter: EventFilter,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<{ event: QueuedEvent | null; gap?: CursorGap }> {
    const existing = this.events.find((event) => matches(event, filter));
    const gap = this.gap(filter.afterCursor);
    if (existing || gap || signal?.aborted)
      return Promise.resolve({ event: existing ?? null, ...(gap ? { gap } : {}) });
    return new Promise((resolve) => {
      const onAbort = () => waiter.settle(null);
      const waiter: Waiter = {
        filter,
        settle: (event) => {
          if (!this.waiters.delete(waiter)) return;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          const now = this.gap(filter.afterCursor);
          resolve({ event, ...(now ? { gap: now } : {}) });
        },
      };
      const timer = setTimeout(() => waiter.settle(null), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }

  /** Releases every waiter (shutdown must not hang on a long poll). */
  close(): void {
    for (const waiter of [...this.waiters]) waiter.settle(null);
  }
}
