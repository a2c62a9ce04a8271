/**
 * The gateway's WebSocket protocol, for the browser. The server speaks first with
 * `connect.challenge {nonce}`; we answer `connect` (client info, role and scopes, the
 * secret or device token, and — when the browser has one — a device signature over the
 * nonce) and get `hello-ok`. Then `{type:"req"}` frames are answered by `{type:"res"}`
 * frames with the same id, and events arrive on their own.
 *
 * The connection repairs itself: a dropped socket (or a silent one, no `tick` for two
 * intervals) reconnects with backoff. It stops trying only when retrying cannot help —
 * a refused secret ("signed-out") or a refusal the user must act on ("refused") — and
 * waits politely while an operator approves this device ("pairing").
 */
import type { ErrorShape, EventFrame, HelloOk } from '../../../sdk/generated/protocol.js';
import { randomId } from './dom.js';
import { deviceAuthPayload, INSTANCE_ID, type DeviceIdentity } from './device.js';
import type { Secret } from './storage.js';

export type { HelloOk };

export type Phase = 'connecting' | 'open' | 'reconnecting' | 'pairing' | 'signed-out' | 'refused';

export interface ConnectionState {
  phase: Phase;
  /** Why we are not connected, in words. */
  message?: string;
  /** When the next attempt starts (reconnecting, pairing). */
  retryAt?: number;
  /** Pairing request to approve (pairing). */
  requestId?: string;
  /** The gateway asks for a password rather than a token (signed-out). */
  wantsPassword?: boolean;
  hello?: HelloOk;
}

/** A refused request or handshake, with the gateway's error code and details. */
export class GatewayError extends Error {
  readonly code: string;
  readonly details: Record<string, unknown>;
  constructor(shape: ErrorShape) {
    super(shape.message);
    this.name = 'GatewayError';
    this.code = shape.code;
    this.details = (shape.details && typeof shape.details === 'object' ? shape.details : {}) as Record<string, unknown>;
  }
}

export interface GatewayOptions {
  url: string;
  scopes: string[];
  /** Read at every attempt: the user may sign in between attempts. */
  credentials(): { secret?: Secret; deviceToken?: string };
  identity?: DeviceIdentity;
  /** The gateway handed this device a token (first admission of a new device). */
  onDeviceToken?(token: string): void;
  /** Connect as a node (role "node", platform "web") offering these commands, instead of as an operator. */
  node?: { caps: string[]; commands: string[]; displayName: string };
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: number;
}

export const PROTOCOL = { min: 3, max: 4 };

/** The WebSocket URL of the gateway that served this page. */
export function gatewayUrl(): string {
  const url = new URL('.', location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.hash = '';
  return url.href;
}
const BACKOFF = { initialMs: 1000, maxMs: 15_000 };
const PAIRING_RETRY_MS = 5000;
const CLIENT = { id: 'claw-web', mode: 'webchat', version: '0.1.0' };
const NODE_CLIENT = { id: 'claw-web', mode: 'node', version: '0.1.0' };

export class Gateway {
  state: ConnectionState = { phase: 'connecting' };
  private ws?: WebSocket;
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Map<string, Set<(payload: any, frame: EventFrame) => void>>();
  private readonly watchers = new Set<(state: ConnectionState) => void>();
  private backoffMs = BACKOFF.initialMs;
  private retryTimer?: number;
  private watchdog?: number;
  private lastFrameAt = 0;

  constructor(private readonly options: GatewayOptions) {}

  get hello(): HelloOk | undefined {
    return this.state.hello;
  }

  get scopes(): readonly string[] {
    return this.state.hello?.auth.scopes ?? [];
  }

  /** Same rule as the gateway: admin covers everything, write covers read. */
  can(scope: string): boolean {
    const scopes = this.scopes;
    return (
      scopes.includes(scope) ||
      scopes.includes('operator.admin') ||
      (scope === 'operator.read' && scopes.includes('operator.write'))
    );
  }

  start(): void {
    clearTimeout(this.retryTimer);
    this.open();
  }

  /** Try again now (the "Retry" button, or after signing in). */
  retryNow(): void {
    this.backoffMs = BACKOFF.initialMs;
    this.drop();
    this.start();
  }

  stop(message?: string): void {
    clearTimeout(this.retryTimer);
    this.drop();
    this.setState({ phase: 'signed-out', message });
  }

  /** Let go of the current socket; its close event is then ignored. */
  private drop(): void {
    const ws = this.ws;
    this.ws = undefined;
    clearInterval(this.watchdog);
    this.failPending();
    ws?.close(1000, 'client closing');
  }

  private failPending(): void {
    for (const [id, entry] of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(new GatewayError({ code: 'UNAVAILABLE', message: 'The connection to the gateway was lost' }));
      this.pending.delete(id);
    }
  }

  /** Call a method that only reads (or is safe to repeat). */
  call<T = unknown>(method: string, params?: unknown, timeoutMs = 30_000): Promise<T> {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || this.state.phase !== 'open') {
      return Promise.reject(new GatewayError({ code: 'UNAVAILABLE', message: 'Not connected to the gateway' }));
    }
    const id = randomId();
    return new Promise<T>((resolve, reject) => {
      const timer = window.setTimeout(() => {
        this.pending.delete(id);
        reject(
          new GatewayError({
            code: 'UNAVAILABLE',
            message: `${method} got no answer within ${Math.round(timeoutMs / 1000)} s`,
          }),
        );
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      ws.send(JSON.stringify({ type: 'req', id, method, ...(params === undefined ? {} : { params }) }));
    });
  }

  /**
   * Call a method that changes state. The gateway requires an idempotency key for these so
   * that a retried request (after a dropped connection) runs only once.
   */
  act<T = unknown>(method: string, params: Record<string, unknown> = {}, timeoutMs?: number): Promise<T> {
    return this.call<T>(method, { ...params, idempotencyKey: randomId(16) }, timeoutMs);
  }

  /** Listen to an event; returns the function that stops listening. */
  on<T = any>(event: string, listener: (payload: T, frame: EventFrame) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Follow the connection state (called at once with the current one). */
  watch(watcher: (state: ConnectionState) => void): () => void {
    this.watchers.add(watcher);
    watcher(this.state);
    return () => this.watchers.delete(watcher);
  }

  // ── Connection ─────────────────────────────────────────────────────────────────

  private setState(state: ConnectionState): void {
    this.state = state;
    for (const watcher of [...this.watchers]) watcher(state);
  }

  private open(): void {
    const ws = new WebSocket(this.options.url);
    this.ws = ws;
    if (this.state.phase !== 'reconnecting' && this.state.phase !== 'pairing') this.setState({ phase: 'connecting' });
    let connectId: string | undefined;
    let refused = false;

    ws.onmessage = (message) => {
      this.lastFrameAt = Date.now();
      let frame: { type?: string; id?: string; event?: string; ok?: boolean; payload?: unknown; error?: ErrorShape };
      try {
        frame = JSON.parse(String(message.data));
      } catch {
        return;
      }
      if (this.state.phase !== 'open') {
        if (frame.type === 'event' && frame.event === 'connect.challenge') {
          connectId = randomId();
          const { nonce } = (frame.payload ?? {}) as { nonce?: string };
          void this.connectParams(nonce).then((params) => {
            if (ws.readyState === WebSocket.OPEN)
              ws.send(JSON.stringify({ type: 'req', id: connectId, method: 'connect', params }));
          });
        } else if (frame.type === 'res' && frame.id === connectId) {
          if (frame.ok) this.opened(frame.payload as HelloOk);
          else {
            refused = true;
            this.refused(new GatewayError(frame.error ?? { code: 'UNAVAILABLE', message: 'connect failed' }));
          }
        }
        return;
      }
      if (frame.type === 'res' && frame.id) {
        const entry = this.pending.get(frame.id);
        if (!entry) return;
        this.pending.delete(frame.id);
        clearTimeout(entry.timer);
        if (frame.ok) entry.resolve(frame.payload);
        else entry.reject(new GatewayError(frame.error ?? { code: 'UNAVAILABLE', message: 'request failed' }));
      } else if (frame.type === 'event' && frame.event) {
        if (frame.event === 'shutdown') this.setState({ ...this.state, message: 'The gateway is restarting…' });
        for (const listener of [...(this.listeners.get(frame.event) ?? [])]) {
          try {
            listener(frame.payload, frame as EventFrame);
          } catch (error) {
            console.error(`listener for ${frame.event} failed`, error);
          }
        }
      }
    };

    ws.onclose = (event) => {
      if (this.ws !== ws) return; // Replaced by a newer socket, or stopped on purpose.
      clearInterval(this.watchdog);
      this.failPending();
      if (refused) return;
      const delay = this.backoffMs;
      this.backoffMs = Math.min(this.backoffMs * 2, BACKOFF.maxMs);
      const reason = event.reason ? ` (${event.reason})` : '';
      this.setState({
        phase: 'reconnecting',
        message: `Disconnected from the gateway${reason}`,
        retryAt: Date.now() + delay,
      });
      this.retryTimer = window.setTimeout(() => this.open(), delay);
    };
  }

  private async connectParams(nonce: string | undefined): Promise<Record<string, unknown>> {
    const { secret, deviceToken } = this.options.credentials();
    const identity = this.options.identity;
    const node = this.options.node;
    const role = node ? 'node' : 'operator';
    const scopes = node ? [] : this.options.scopes;
    const client = node ? NODE_CLIENT : CLIENT;
    const platform = node ? 'web' : navigator.platform || 'web';
    const auth: Record<string, string> = {};
    if (secret) auth[secret.kind] = secret.value;
    if (deviceToken && identity) auth.deviceToken = deviceToken;
    const params: Record<string, unknown> = {
      minProtocol: PROTOCOL.min,
      maxProtocol: PROTOCOL.max,
      client: {
        ...client,
        platform,
        displayName: node?.displayName ?? `WebChat (${browserName()})`,
        instanceId: node ? `${INSTANCE_ID}-node` : INSTANCE_ID,
      },
      role,
      scopes,
      caps: node?.caps ?? [],
      ...(node ? { commands: node.commands } : {}),
      locale: navigator.language,
      userAgent: navigator.userAgent,
      ...(Object.keys(auth).length ? { auth } : {}),
    };
    if (identity && nonce) {
      const signedAt = Date.now();
      const payload = deviceAuthPayload({
        deviceId: identity.deviceId,
        clientId: client.id,
        clientMode: client.mode,
        role,
        scopes,
        signedAtMs: signedAt,
        token: auth.token ?? auth.deviceToken ?? '',
        nonce,
        platform,
      });
      params.device = {
        id: identity.deviceId,
        publicKey: identity.publicKey,
        signature: await identity.sign(payload),
        signedAt,
        nonce,
      };
    }
    return params;
  }

  private opened(hello: HelloOk): void {
    this.backoffMs = BACKOFF.initialMs;
    if (hello.auth.deviceToken) this.options.onDeviceToken?.(hello.auth.deviceToken);
    this.setState({ phase: 'open', hello });
    clearInterval(this.watchdog);
    const interval = hello.policy.tickIntervalMs;
    this.watchdog = window.setInterval(
      () => {
        if (Date.now() - this.lastFrameAt > interval * 2) this.ws?.close(4000, 'no tick from the gateway');
      },
      Math.min(interval, 10_000),
    );
  }

  /** The gateway said no to `connect`: decide between asking the user, waiting, and giving up. */
  private refused(error: GatewayError): void {
    const detail = String(error.details.code ?? '');
    if (detail.startsWith('AUTH_')) {
      this.setState({
        phase: 'signed-out',
        wantsPassword: detail.includes('PASSWORD'),
        message: detail.endsWith('MISMATCH') ? 'The gateway did not accept that secret.' : undefined,
      });
      return;
    }
    if (detail === 'PAIRING_REQUIRED') {
      const requestId = String(error.details.requestId ?? '');
      this.setState({ phase: 'pairing', requestId, message: error.message, retryAt: Date.now() + PAIRING_RETRY_MS });
      this.retryTimer = window.setTimeout(() => this.open(), PAIRING_RETRY_MS);
      return;
    }
    const message =
      detail === 'DEVICE_IDENTITY_REQUIRED'
        ? 'The gateway only admits browsers on other machines that can sign in with a device key. This browser cannot here: open the page over https, or from the gateway machine itself.'
        : error.message;
    this.setState({ phase: 'refused', message });
  }
}

export function browserName(): string {
  const agent = navigator.userAgent;
  if (/Edg\//.test(agent)) return 'Edge';
  if (/Firefox\//.test(agent)) return 'Firefox';
  if (/Chrom(e|ium)\//.test(agent)) return 'Chrome';
  if (/Safari\//.test(agent)) return 'Safari';
  return 'browser';
}
