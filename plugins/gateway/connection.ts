/**
 * One client socket and what the gateway knows of it: where it is in the handshake, what it
 * was admitted as, its event sequence number and how many droppable events it missed.
 */
import { randomUUID } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import type { Admission } from './handshake.js';

// ws is bundled into this plugin's build (scripts/bundle-plugins.mjs): one file to load, not ten.
type WsSocket = WebSocket;

export class Connection {
  readonly id = randomUUID();
  readonly nonce = randomUUID();
  readonly challengeTs = Date.now();
  readonly abort = new AbortController();
  /** handshake → admitting (connect received, being decided) → open → closed. */
  state: 'handshake' | 'admitting' | 'open' | 'closed' = 'handshake';
  /** Frames that arrived while the connect was being decided; handled once open. */
  held: Array<{ data: RawData; isBinary: boolean }> = [];
  admission?: Admission;
  seq = 0;
  dropped = 0;
  connectedAt = 0;
  handshakeTimer?: NodeJS.Timeout;
  releasePreauth?: () => void;
  stopPreauthCount?: () => void;
  /** Bytes received before connect succeeded (the pre-auth limit is enforced as they arrive). */
  preauthBytes = 0;
  /** Wants `presence` events: a UI client, or one that asked for `system-presence`. */
  wantsPresence = false;

  constructor(
    readonly ws: WsSocket,
    readonly remoteAddress: string | undefined,
    /** On this machine and not forwarded by a proxy. */
    readonly local: boolean,
    /** Identifies the client to the failed-auth limiter; undefined when it is exempt. */
    readonly limiterKey: string | undefined,
  ) {}

  get role(): string | undefined {
    return this.admission?.role;
  }

  get scopes(): readonly string[] {
    return this.admission?.scopes ?? [];
  }

  get instanceId(): string {
    return this.admission?.params.client.instanceId ?? this.id;
  }

  /** The socket can take a frame now. */
  get writable(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  /** Close the socket, forcing it shut if the peer does not answer the close; `wait` resolves once it is closed. */
  close(code: number, reason: string, wait = false): Promise<void> {
    const ws = this.ws;
    if (ws.readyState === ws.CLOSED) return Promise.resolve();
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, closeReason(reason));
    setTimeout(() => ws.terminate(), 1000).unref();
    return wait ? closed : Promise.resolve();
  }
}

function closeReason(text: string): string {
  // The WebSocket protocol allows 123 bytes of close reason.
  const buffer = Buffer.from(text);
  return buffer.length <= 123 ? text : `${buffer.subarray(0, 120).toString('utf8')}...`;
}
