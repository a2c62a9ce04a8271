/**
 * Flood control: IRC servers disconnect ("Excess Flood") or throttle a client that sends
 * lines faster than a person types. A token bucket: a short burst goes at once, then one
 * line per interval — a 3,000-character reply (about ten lines) takes a few seconds.
 */
export const FLOOD_BURST = 4;
export const FLOOD_INTERVAL_MS = 700;

export class FloodGate {
  private tokens: number;
  private refilledAt = Date.now();
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly burst = FLOOD_BURST,
    private readonly intervalMs = FLOOD_INTERVAL_MS,
  ) {
    this.tokens = burst;
  }

  /** Resolves when one more line may go out; callers are served in order. */
  take(): Promise<void> {
    const turn = this.chain.then(() => this.wait());
    this.chain = turn.catch(() => {});
    return turn;
  }

  close(): void {
    this.closed = true;
  }

  private async wait(): Promise<void> {
    for (;;) {
      if (this.closed) throw new Error('the IRC connection is closing');
      const now = Date.now();
      const earned = Math.floor((now - this.refilledAt) / this.intervalMs);
      if (earned > 0) {
        this.tokens = Math.min(this.burst, this.tokens + earned);
        this.refilledAt += earned * this.intervalMs;
      }
      if (this.tokens >= this.burst) this.refilledAt = now;
      if (this.tokens > 0) {
        this.tokens--;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, this.refilledAt + this.intervalMs - now));
    }
  }
}
