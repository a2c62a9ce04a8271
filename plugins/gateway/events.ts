/**
 * Frames on their way out: every response and event leaves through send(), masked, and is
 * where slow consumers are handled; one event to many connections is serialised once; and
 * presence, whose changes are coalesced into snapshots for the connections that show it.
 */
import type { EmittedEvent, KernelServices, Logger } from '../../sdk/index.js';
import { CloseCodes } from './close-codes.js';
import type { Connection } from './connection.js';
import { hasScope } from './handshake.js';
import { PresenceTracker } from './presence.js';
import type { GatewaySettings } from './settings.js';

export interface GatewayEventsOptions {
  connections: ReadonlyMap<string, Connection>;
  settings: GatewaySettings;
  redact: KernelServices['redact'];
  logger: Logger;
  /** The snapshot `health` events carry. */
  health(): unknown;
}

export class GatewayEvents {
  readonly presence = new PresenceTracker();
  private healthVersion = 0;
  private presenceTimer?: NodeJS.Timeout;
  private presenceSentAt = 0;
  private closed = false;

  constructor(private readonly options: GatewayEventsOptions) {}

  /** Every frame is masked on its way out: no secret leaves through a result, event or error. */
  send(conn: Connection, frame: object, droppable = false): boolean {
    if (!conn.writable) return false;
    return this.sendText(conn, JSON.stringify(this.options.redact.value(frame)), droppable);
  }

  sendEvent(conn: Connection, event: string, payload: unknown, droppable = false, stateVersion?: object): boolean {
    // seq counts every event meant for the connection, so a dropped one shows as a gap.
    const seq = ++conn.seq;
    return this.send(
      conn,
      { type: 'event', event, payload, seq, ...(stateVersion ? { stateVersion } : {}) },
      droppable,
    );
  }

  /** Events emitted by any plugin through the protocol registry. */
  /** How many clients got it: an approval nobody can see is answered by its fallback at once. */
  deliver(emitted: EmittedEvent): number {
    const { connections } = this.options;
    const targets = emitted.connIds
      ? emitted.connIds.map((id) => connections.get(id)).filter((c): c is Connection => !!c)
      : connections.values();
    const allowed = emitted.scope
      ? filter(targets, (conn) => conn.role === 'operator' && hasScope(conn.scopes, emitted.scope!))
      : targets;
    return this.fanOut(allowed, emitted.event, emitted.payload, emitted.droppable ?? false);
  }

  broadcast(event: string, payload: unknown, stateVersion?: object): void {
    void this.fanOut(this.options.connections.values(), event, payload, false, stateVersion);
  }

  publishHealth(): void {
    this.healthVersion++;
    this.broadcast('health', this.options.health(), this.stateVersion());
  }

  stateVersion() {
    return { presence: this.presence.version, health: this.healthVersion };
  }

  /** A connection asked for presence (system-presence): it gets presence events from now on. */
  wantPresence(connId: string): void {
    const conn = this.options.connections.get(connId);
    if (conn) conn.wantsPresence = true;
  }

  /**
   * Connects and disconnects are coalesced: at most one presence snapshot per
   * `presenceIntervalMs`, serialised once, sent only to connections that want presence.
   * A burst of a thousand connects costs a handful of snapshots, not a thousand squared.
   */
  presenceChanged(): void {
    if (this.presenceTimer || this.closed) return;
    const wait = Math.max(0, this.presenceSentAt + this.options.settings.presenceIntervalMs - Date.now());
    this.presenceTimer = setTimeout(() => {
      this.presenceTimer = undefined;
      this.presenceSentAt = Date.now();
      const targets = filter(this.options.connections.values(), (conn) => conn.wantsPresence);
      // Presence is a snapshot: one that cannot be delivered now is superseded by the next.
      this.fanOut(targets, 'presence', { presence: this.presence.snapshot() }, true, this.stateVersion());
    }, wait);
    this.presenceTimer.unref();
  }

  /** The gateway is stopping: presence changes from the connections it closes are not sent. */
  close(): void {
    this.closed = true;
    clearTimeout(this.presenceTimer);
  }

  /**
   * The one place frames leave. A droppable event is skipped while the socket's buffer is
   * above `dropEventsAboveBytes`; anything that would push it past `maxBufferedBytes`
   * closes the connection instead of buffering without bound.
   */
  private sendText(conn: Connection, text: string, droppable: boolean): boolean {
    const { settings, logger } = this.options;
    if (!conn.writable) return false;
    const buffered = conn.ws.bufferedAmount;
    if (droppable && buffered > settings.dropEventsAboveBytes) {
      conn.dropped++;
      return false;
    }
    if (buffered + Buffer.byteLength(text) > settings.maxBufferedBytes) {
      logger.warn(`closing slow consumer ${conn.id}: ${buffered} bytes waiting`, {
        conn: conn.id,
        dropped: conn.dropped,
      });
      void conn.close(
        CloseCodes.tryAgainLater,
        `slow consumer: over ${settings.maxBufferedBytes} bytes waiting to be read`,
      );
      return false;
    }
    conn.ws.send(text);
    return true;
  }

  /**
   * One event to many connections: the payload is serialised once and only the
   * per-connection sequence number is spliced in, so fan-out costs a string concat each.
   * Returns how many connections it was sent to.
   */
  private fanOut(
    targets: Iterable<Connection>,
    event: string,
    payload: unknown,
    droppable: boolean,
    stateVersion?: object,
  ): number {
    let head: string | undefined;
    let tail = '';
    let sent = 0;
    for (const conn of targets) {
      if (conn.state !== 'open') continue;
      sent++;
      if (head === undefined) {
        head = `{"type":"event","event":${JSON.stringify(event)},"payload":${JSON.stringify(this.options.redact.value(payload)) ?? 'null'},"seq":`;
        tail = stateVersion ? `,"stateVersion":${JSON.stringify(stateVersion)}}` : '}';
      }
      this.sendText(conn, `${head}${++conn.seq}${tail}`, droppable);
    }
    return sent;
  }
}

function* filter<T>(items: Iterable<T>, keep: (item: T) => boolean): Iterable<T> {
  for (const item of items) if (keep(item)) yield item;
}
