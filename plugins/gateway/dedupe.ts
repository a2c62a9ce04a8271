/**
 * Idempotency for side-effecting methods: the first call with a given key runs; a repeat
 * inside the window gets the first call's outcome (or waits for it, if it is still
 * running) without running again. Bounded in size, oldest entries evicted first.
 */
export interface Outcome {
  ok: boolean;
  payload?: unknown;
  error?: { code: string; message: string; details?: unknown; retryable?: boolean; retryAfterMs?: number };
}

interface Entry {
  outcome: Promise<Outcome>;
  expiresAt: number;
  /** Interim responses (two-phase methods) the first call sent, replayed to repeats. */
  acks: unknown[];
  ackListeners: Set<(payload: unknown) => void>;
}

export class DedupeCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Run `work` once per key within the window; returns the outcome and whether it was
   * replayed. `work` gets a function to record interim acks; a repeat receives the acks
   * already sent, and later ones as they happen, through `onAck` before the outcome.
   */
  async run(
    key: string,
    work: (recordAck: (payload: unknown) => void) => Promise<Outcome>,
    onAck?: (payload: unknown) => void,
  ): Promise<{ outcome: Outcome; replayed: boolean }> {
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) {
      if (onAck) {
        for (const payload of hit.acks) onAck(payload);
        hit.ackListeners.add(onAck);
      }
      try {
        return { outcome: await hit.outcome, replayed: true };
      } finally {
        if (onAck) hit.ackListeners.delete(onAck);
      }
    }
    const entry: Entry = { outcome: Promise.resolve({ ok: false }), expiresAt: now + this.windowMs, acks: [], ackListeners: new Set() };
    entry.outcome = work((payload) => {
      entry.acks.push(payload);
      for (const listener of entry.ackListeners) listener(payload);
    });
    this.entries.set(key, entry);
    this.evict(now);
    return { outcome: await entry.outcome, replayed: false };
  }

  get size(): number {
    return this.entries.size;
  }

  private evict(now: number): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && entry.expiresAt > now) break;
      this.entries.delete(key);
    }
  }
}
