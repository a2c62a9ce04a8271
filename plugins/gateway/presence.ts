/**
 * Who is connected: one entry per client instance, kept for 5 minutes after it was last
 * seen and capped at 200 entries (oldest dropped first). A version counter lets clients
 * tell a fresh snapshot from a stale one.
 */
export interface PresenceEntry {
  instanceId: string;
  connId?: string;
  deviceId?: string;
  clientId: string;
  mode?: string;
  platform?: string;
  version?: string;
  displayName?: string;
  roles: string[];
  scopes: string[];
  remoteAddress?: string;
  connected: boolean;
  reason: 'connect' | 'disconnect' | 'self';
  ts: number;
}

export const PRESENCE_TTL_MS = 5 * 60_000;
export const PRESENCE_MAX_ENTRIES = 200;

export class PresenceTracker {
  private readonly entries = new Map<string, PresenceEntry>();
  version = 0;

  constructor(private readonly now: () => number = Date.now) {}

  upsert(entry: Omit<PresenceEntry, 'ts'>): void {
    this.entries.delete(entry.instanceId);
    this.entries.set(entry.instanceId, { ...entry, ts: this.now() });
    while (this.entries.size > PRESENCE_MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    this.version++;
  }

  disconnect(instanceId: string, connId: string): void {
    const entry = this.entries.get(instanceId);
    // A newer connection of the same instance keeps the entry alive.
    if (!entry || entry.connId !== connId) return;
    this.upsert({ ...entry, connected: false, reason: 'disconnect', connId: undefined });
  }

  snapshot(): PresenceEntry[] {
    const cutoff = this.now() - PRESENCE_TTL_MS;
    let expired = false;
    for (const [id, entry] of this.entries) {
      if (!entry.connected && entry.ts < cutoff) {
        this.entries.delete(id);
        expired = true;
      }
    }
    if (expired) this.version++;
    return [...this.entries.values()].reverse();
  }
}
