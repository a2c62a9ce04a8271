/**
 * The durable system-event queue: `<stateDir>/system-events/queue.json`, rewritten atomically
 * (temp + fsync + rename, 0600) under a lock file, so the gateway and a `claw agent --local`
 * beside it never lose each other's writes. An event is on disk before enqueue resolves and
 * leaves only after a turn that saw it has ended (see index.ts), so a crash between the two
 * shows it again rather than losing it.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicAsync, withFileLock, type EnqueueSystemEvent, type SystemEvent } from '../../sdk/index.js';

/** Longest event text: these are one-line notices, not documents. */
export const MAX_EVENT_CHARS = 2000;
/** Events one session may hold before enqueue refuses more (nothing is dropped silently). */
export const MAX_EVENTS_PER_SESSION = 100;

interface QueueFile {
  version: 1;
  events: SystemEvent[];
}

export class SystemEventQueueFullError extends Error {}

export class SystemEventStore {
  readonly file: string;
  private readonly lockFile: string;

  constructor(
    stateDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = join(stateDir, 'system-events', 'queue.json');
    this.lockFile = `${this.file}.lock`;
  }

  /** Everything queued, oldest first (read from disk each time: another process may have written). */
  all(): SystemEvent[] {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    let parsed: QueueFile;
    try {
      parsed = JSON.parse(text) as QueueFile;
    } catch (error) {
      throw new Error(`${this.file} is damaged (${(error as Error).message}); move it aside to start an empty queue`);
    }
    if (!parsed || !Array.isArray(parsed.events))
      throw new Error(`${this.file} is not a system-event queue (no "events" array)`);
    return parsed.events;
  }

  pending(sessionKey: string): SystemEvent[] {
    return this.all().filter((event) => event.sessionKey === sessionKey);
  }

  /**
   * Queue one event. The same contextKey in the same session replaces the older event; the
   * same text as the newest pending event (no contextKey) is not queued twice.
   */
  async enqueue(
    event: Required<Pick<EnqueueSystemEvent, 'text' | 'source'>> & {
      agentId: string;
      sessionKey: string;
      contextKey?: string;
    },
  ): Promise<SystemEvent> {
    const text = event.text.trim();
    if (!text) throw new Error('a system event needs text');
    if (text.length > MAX_EVENT_CHARS)
      throw new Error(`a system event is at most ${MAX_EVENT_CHARS} characters (got ${text.length})`);
    return this.update((events) => {
      const session = events.filter((item) => item.sessionKey === event.sessionKey);
      if (!event.contextKey) {
        const last = session[session.length - 1];
        if (last && !last.contextKey && last.text === text) return { events, result: last };
      }
      const kept = event.contextKey
        ? events.filter((item) => !(item.sessionKey === event.sessionKey && item.contextKey === event.contextKey))
        : events;
      if (kept.filter((item) => item.sessionKey === event.sessionKey).length >= MAX_EVENTS_PER_SESSION) {
        throw new SystemEventQueueFullError(
          `session ${event.sessionKey} already has ${MAX_EVENTS_PER_SESSION} pending system events; the next turn in it will take them`,
        );
      }
      const created: SystemEvent = {
        id: randomUUID(),
        agentId: event.agentId,
        sessionKey: event.sessionKey,
        text,
        source: event.source,
        ...(event.contextKey ? { contextKey: event.contextKey } : {}),
        enqueuedAt: this.now(),
      };
      return { events: [...kept, created], result: created };
    });
  }

  /** Remove events by id (a turn that saw them has ended). Returns how many were removed. */
  async remove(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const gone = new Set(ids);
    return this.update((events) => {
      const kept = events.filter((event) => !gone.has(event.id));
      return { events: kept, result: events.length - kept.length };
    });
  }

  private update<T>(change: (events: SystemEvent[]) => { events: SystemEvent[]; result: T }): Promise<T> {
    return withFileLock(
      this.lockFile,
      async () => {
        const before = this.all();
        const { events, result } = change(before);
        if (events !== before)
          await writeFileAtomicAsync(
            this.file,
            `${JSON.stringify({ version: 1, events } satisfies QueueFile, null, 1)}\n`,
          );
        return result;
      },
      { purpose: 'system-events', timeoutMs: 10_000 },
    );
  }
}

/** How a turn shows pending events: one `System:` line each, with when it was queued. */
export function formatSystemEvents(events: readonly SystemEvent[], timeZone?: string): string {
  return events
    .map((event) => `System: [${stamp(event.enqueuedAt, timeZone)}] ${event.text.replace(/\s*\n\s*/g, ' ')}`)
    .join('\n');
}

function stamp(at: number, timeZone: string | undefined): string {
  try {
    const parts = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    }).formatToParts(new Date(at));
    const get = (type: string) => parts.find((part) => part.type === type)?.value ?? '';
    return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')} ${get('timeZoneName')}`.trim();
  } catch {
    return new Date(at).toISOString();
  }
}
