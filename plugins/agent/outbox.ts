/**
 * Replies that are written but could not be sent. The channel's own retries (a few
 * attempts within seconds, honouring retry_after) were not enough — the platform is down,
 * rate-limits for a while, the network is gone — so the reply waits here, in the intake
 * journal (its messages stay open), and is tried again later: after 5 s, 30 s, 2 min,
 * 10 min, 30 min and 1 h (or the platform's retry_after, when longer), across restarts.
 * Then it is given up: the failure is written to the session's transcript and shown on the
 * channel's status (`channels.status`: undeliveredReplies, lastDeliveryError).
 */
import type { Logger } from '../../sdk/index.js';
import type { DeliveryStatus } from '../../sdk/agent/index.js';
import type { IntakeInput, UndeliveredReply } from './journal.js';

/** Waits after each failed delivery round; after the last, the reply is given up. */
export const DELIVERY_RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000] as const;

export interface OutboxEntry {
  agentId: string;
  /** The turn whose reply this is, and the messages it answers. */
  turn: string;
  ids: string[];
  input: IntakeInput;
  reply: UndeliveredReply['reply'];
  /** Failed rounds so far. */
  attempt: number;
  next: number;
  error?: string;
}

export type DeliveryOutcome =
  | { status: 'delivered' }
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; error: string; retryAfterMs?: number };

export interface OutboxDeps {
  logger: Logger;
  now: () => number;
  send(entry: OutboxEntry): Promise<DeliveryOutcome>;
  /** Keep the entry's new state (journal, fsync'd): retried after a restart too. */
  persist(entry: OutboxEntry): Promise<void>;
  /** Delivered, or skipped on purpose: its messages are done. */
  delivered(entry: OutboxEntry): void;
  /** Out of attempts: note it where the user and the operator will see it; its messages are done. */
  givenUp(entry: OutboxEntry): void;
}

/** When the next round may run: the schedule, or the platform's retry_after when that is longer. */
export function nextAttemptAt(now: number, attempt: number, retryAfterMs?: number): number | undefined {
  const delay = DELIVERY_RETRY_DELAYS_MS[attempt - 1];
  if (delay === undefined) return undefined;
  return now + Math.max(delay, retryAfterMs ?? 0);
}

export class Outbox {
  private readonly entries = new Map<string, OutboxEntry & { timer?: NodeJS.Timeout }>();
  private readonly stats = new Map<string, DeliveryStatus>();
  private closed = false;

  constructor(private readonly deps: OutboxDeps) {}

  /**
   * A delivery round failed (`error`): keep the reply for the next round, or give it up
   * when the rounds are used up. Resolves once the new state is on disk.
   */
  async failed(entry: OutboxEntry, error: string, retryAfterMs?: number): Promise<void> {
    const attempt = entry.attempt + 1;
    const stat = this.stat(entry);
    stat.lastError = error;
    stat.lastErrorAt = this.deps.now();
    const next = nextAttemptAt(this.deps.now(), attempt, retryAfterMs);
    if (next === undefined) {
      this.entries.delete(entry.turn);
      stat.failed++;
      this.deps.logger.error(
        `reply of run ${entry.turn} to ${where(entry)} given up after ${attempt} delivery rounds: ${error}`,
      );
      this.deps.givenUp({ ...entry, attempt, error });
      this.count();
      return;
    }
    const updated = { ...entry, attempt, next, error };
    this.deps.logger.warn(
      `reply of run ${entry.turn} to ${where(entry)} not delivered (${error}); trying again in ${Math.round((next - this.deps.now()) / 1000)} s (round ${attempt + 1} of ${DELIVERY_RETRY_DELAYS_MS.length + 1})`,
    );
    await this.deps.persist(updated);
    this.schedule(updated);
  }

  /** Try again at `entry.next` (a reply recovered from the journal, or one just failed). */
  schedule(entry: OutboxEntry): void {
    if (this.closed) return;
    clearTimeout(this.entries.get(entry.turn)?.timer);
    const held: OutboxEntry & { timer?: NodeJS.Timeout } = { ...entry };
    this.entries.set(entry.turn, held);
    this.count();
    held.timer = setTimeout(() => void this.round(held), Math.max(0, entry.next - this.deps.now()));
    held.timer.unref?.();
  }

  /** Per channel account: replies waiting and given up, and the last delivery error. */
  status(): DeliveryStatus[] {
    return [...this.stats.values()].map((stat) => ({ ...stat }));
  }

  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) clearTimeout(entry.timer);
    this.entries.clear();
  }

  private async round(entry: OutboxEntry): Promise<void> {
    if (this.closed || this.entries.get(entry.turn) !== entry) return;
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.deps.send(entry);
    } catch (error) {
      outcome = { status: 'failed', error: (error as Error)?.message ?? String(error) };
    }
    if (this.closed) return;
    if (outcome.status === 'failed') return this.failed(entry, outcome.error, outcome.retryAfterMs);
    this.entries.delete(entry.turn);
    this.count();
    if (outcome.status === 'delivered')
      this.deps.logger.info(`reply of run ${entry.turn} to ${where(entry)} delivered on round ${entry.attempt + 1}`);
    this.deps.delivered(entry);
  }

  private stat(entry: OutboxEntry): DeliveryStatus {
    const channel = entry.input.deliver?.channel ?? entry.input.channel ?? 'gateway';
    const accountId = entry.input.deliver?.accountId ?? entry.input.accountId ?? 'default';
    const key = `${channel}\u0000${accountId}`;
    let stat = this.stats.get(key);
    if (!stat) {
      stat = { channel, accountId, pending: 0, failed: 0 };
      this.stats.set(key, stat);
    }
    return stat;
  }

  private count(): void {
    for (const stat of this.stats.values()) stat.pending = 0;
    for (const entry of this.entries.values()) this.stat(entry).pending++;
  }
}

function where(entry: OutboxEntry): string {
  const target = entry.input.deliver;
  return target ? `${target.channel}:${target.to}` : entry.input.sessionKey;
}
