/**
 * A small in-memory cache whose entries expire: web_fetch and web_search keep results for
 * `cacheTtlMinutes` so the same page or query within a turn or two costs nothing. Bounded by
 * entry count (oldest out first) so a long-running gateway does not grow without end.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; stored: number; expires: number }>();

  constructor(private readonly maxEntries = 100) {}

  /**
   * The value stored under key, if it has not expired and is younger than `ttlMs` (the
   * current setting: a shorter TTL limits reuse, a longer one does not extend an entry).
   */
  get(key: string, ttlMs: number, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return now - entry.stored < ttlMs ? entry.value : undefined;
  }

  set(key: string, value: V, ttlMs: number, now = Date.now()): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, stored: now, expires: now + ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  clear(): void {
    this.entries.clear();
  }
}
