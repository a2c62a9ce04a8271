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
}

export class DedupeCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Run `work` once per key within the window; returns the outcome and whether it was replayed. */
  async run(key: string, work: () => Promise<Outcome>): Promise<{ outcome: Outcome; replayed: boolean }> {
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) return { outcome: await hit.outcome, replayed: true };
    const outcome = work();
    this.entries.set(key, { outcome, expiresAt: now + this.windowMs });
    this.evict(now);
    return { outcome: await outcome, replayed: false };
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
