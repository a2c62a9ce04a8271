/**
 * A client for the gateway's WebSocket protocol (v3 and v4): waits for the server's
 * challenge, signs it with the device identity, sends `connect`, then correlates requests
 * and responses. Requests time out after 30 s by default; a dropped connection is
 * re-established with backoff (1 s doubling to 30 s) when `reconnect` is on.
 *
 *   const client = new GatewayClient({ url: 'ws://127.0.0.1:18789', token, identity });
 *   await client.connect();
 *   const health = await client.request('health');
 */
import { randomUUID } from 'node:crypto';
import { platform as osPlatform } from 'node:os';
import { createRequire } from 'node:module';
import type WsWebSocket from 'ws';
import { MIN_PROTOCOL_VERSION, PROTOCOL_VERSION } from '../../sdk/protocol/constants.js';
import type { ConnectParams, ErrorShape, EventFrame, HelloOk, ResponseFrame } from '../../sdk/generated/protocol.js';
import {
  deviceAuthPayload,
  rawPublicKey,
  base64UrlEncode,
  signPayload,
  type DeviceIdentity,
} from '../../sdk/device-auth.js';
import { GatewayRequestError } from '../../sdk/cli.js';

/** The error requests fail with, and the device identity a client signs with (generateDeviceIdentity, loadOrCreateDeviceIdentity). */
export { GatewayRequestError };
export * from '../../sdk/device-auth.js';

export interface GatewayClientOptions {
  /** ws://127.0.0.1:18789 (plain ws:// is refused for hosts other than loopback). */
  url: string;
  token?: string;
  password?: string;
  /** A device token from an earlier hello-ok. */
  deviceToken?: string;
  /** A setup code's single-use bootstrap token (a node pairing with `--pair`). */
  bootstrapToken?: string;
  /** Signs the connect challenge; without it the gateway only admits loopback clients. */
  identity?: DeviceIdentity;
  role?: 'operator' | 'node';
  scopes?: string[];
  client?: Partial<ConnectParams['client']>;
  caps?: string[];
  /** What a node offers to be sent (`node.invoke.request`). */
  commands?: string[];
  pathEnv?: string;
  /** wss:// only: trust exactly the certificate with this sha256 fingerprint (hex, colons optional). */
  tlsFingerprint?: string;
  minProtocol?: number;
  maxProtocol?: number;
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Re-connect after an unexpected close (default off). */
  reconnect?: boolean | { initialMs?: number; maxMs?: number };
  /** Extra HTTP headers on the upgrade request. */
  headers?: Record<string, string>;
  onEvent?: (frame: EventFrame) => void;
  onHello?: (hello: HelloOk) => void;
  onClose?: (info: { code: number; reason: string; willReconnect: boolean }) => void;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer?: NodeJS.Timeout;
  expectFinal: boolean;
  onAck?: (payload: unknown) => void;
}

export interface RequestOptions {
  timeoutMs?: number;
  /** Two-phase methods (`agent`): wait past the `{status:"accepted"}` response for the final one. */
  expectFinal?: boolean;
  onAck?: (payload: unknown) => void;
}

// ws is CommonJS: require() avoids the ESM wrapper's second parse (half the load time). Loaded
// on the first connect: every CLI command imports this module, few of them connect.
let wsClass: typeof WsWebSocket | undefined;
const loadWs = () => (wsClass ??= createRequire(import.meta.url)('ws') as typeof WsWebSocket);
type WebSocket = WsWebSocket;
/** WebSocket readyState values (RFC 6455 states as the WHATWG API numbers them). */
const OPEN = 1;
const CLOSED = 3;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export class GatewayClient {
  private ws?: WebSocket;
  private readonly pending = new Map<string, Pending>();
  private closedByUser = false;
  private backoffMs: number;
  private reconnectTimer?: NodeJS.Timeout;
  private watchdog?: NodeJS.Timeout;
  private lastFrameAt = 0;
  private helloPayload?: HelloOk;

  constructor(private readonly options: GatewayClientOptions) {
    const url = new URL(options.url);
    if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
      throw new Error(`gateway url must be ws:// or wss://, got ${options.url}`);
    if (url.protocol === 'ws:' && !LOOPBACK_HOSTS.has(url.hostname)) {
      throw new Error(
        `refusing plaintext ws:// to ${url.hostname}: use wss:// for a gateway that is not on this machine`,
      );
    }
    this.backoffMs = this.reconnectPolicy().initialMs;
  }

  get hello(): HelloOk | undefined {
    return this.helloPayload;
  }

  get connected(): boolean {
    return this.ws?.readyState === OPEN && this.helloPayload !== undefined;
  }

  /** Open the socket and complete the handshake; resolves with the hello-ok payload. */
  connect(): Promise<HelloOk> {
    this.closedByUser = false;
    return this.open();
  }

  request<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): Promise<T> {
    const ws = this.ws;
    if (!ws || ws.readyState !== OPEN || !this.helloPayload) {
      return Promise.reject(
        new GatewayRequestError({ code: 'UNAVAILABLE', message: 'not connected to the gateway', retryable: true }),
      );
    }
    const id = randomUUID();
    return new Promise<T>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs ?? 30_000;
      const entry: Pending = {
        resolve: resolve as (v: unknown) => void,
        reject,
        expectFinal: options.expectFinal ?? false,
        onAck: options.onAck,
      };
      if (timeoutMs > 0) {
        entry.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(
            new GatewayRequestError({
              code: 'UNAVAILABLE',
              message: `${method} timed out after ${timeoutMs} ms`,
              retryable: true,
            }),
          );
        }, timeoutMs);
      }
      this.pending.set(id, entry);
      ws.send(JSON.stringify({ type: 'req', id, method, ...(params === undefined ? {} : { params }) }), (error) => {
        if (error)
          this.settle(
            id,
            new GatewayRequestError({ code: 'UNAVAILABLE', message: `send failed: ${error.message}`, retryable: true }),
          );
      });
    });
  }

  /** Close for good (no reconnect). */
  async close(): Promise<void> {
    this.closedByUser = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.watchdog);
    const ws = this.ws;
    if (!ws || ws.readyState === CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close(1000, 'client closing');
      setTimeout(() => {
        ws.terminate();
        resolve();
      }, 1000).unref();
    });
  }

  private reconnectPolicy(): { initialMs: number; maxMs: number } {
    const option = this.options.reconnect;
    const custom = typeof option === 'object' ? option : {};
    return { initialMs: custom.initialMs ?? 1000, maxMs: custom.maxMs ?? 30_000 };
  }

  private open(): Promise<HelloOk> {
    return new Promise<HelloOk>((resolve, reject) => {
      const pinned = this.options.tlsFingerprint;
      const ws = new (loadWs())(this.options.url, {
        headers: this.options.headers,
        perMessageDeflate: false,
        // A pinned certificate replaces the CA check; it is compared at the upgrade, before any secret is sent.
        ...(pinned ? { rejectUnauthorized: false } : {}),
      });
      this.ws = ws;
      if (pinned) {
        ws.once('upgrade', (response) => {
          const socket = response.socket as import('node:tls').TLSSocket;
          const seen = socket.getPeerCertificate?.()?.fingerprint256;
          if (!seen || normalizeFingerprint(seen) !== normalizeFingerprint(pinned)) {
            fail(
              new GatewayRequestError({
                code: 'TLS_FINGERPRINT_MISMATCH',
                message: `the gateway's certificate (${seen ?? 'none'}) is not the pinned one`,
              }),
            );
            ws.terminate();
          }
        });
      }
      this.helloPayload = undefined;
      let settled = false;
      const connectId = randomUUID();
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      };
      const timer = setTimeout(() => {
        fail(new GatewayRequestError({ code: 'UNAVAILABLE', message: 'gateway handshake timed out', retryable: true }));
        ws.terminate();
      }, this.options.connectTimeoutMs ?? 15_000);

      ws.on('message', (data, isBinary) => {
        this.lastFrameAt = Date.now();
        if (isBinary) return;
        let frame: { type?: string; id?: string; event?: string } & Record<string, unknown>;
        try {
          frame = JSON.parse(data.toString());
        } catch {
          return;
        }
        if (!this.helloPayload) {
          if (frame.type === 'event' && frame.event === 'connect.challenge') {
            const { nonce, ts } = (frame.payload ?? {}) as { nonce?: string; ts?: number };
            ws.send(
              JSON.stringify({ type: 'req', id: connectId, method: 'connect', params: this.connectParams(nonce, ts) }),
            );
          } else if (frame.type === 'res' && frame.id === connectId) {
            const response = frame as unknown as ResponseFrame;
            if (response.ok) {
              this.helloPayload = response.payload as HelloOk;
              this.backoffMs = this.reconnectPolicy().initialMs;
              settled = true;
              clearTimeout(timer);
              this.startWatchdog();
              this.options.onHello?.(this.helloPayload);
              resolve(this.helloPayload);
            } else {
              fail(new GatewayRequestError(response.error ?? { code: 'UNAVAILABLE', message: 'connect failed' }));
            }
          } else if (frame.type === 'event' && frame.event === 'error') {
            fail(
              new GatewayRequestError(
                (frame.payload as ErrorShape) ?? { code: 'INVALID_REQUEST', message: 'rejected' },
              ),
            );
          }
          return;
        }
        if (frame.type === 'res' && typeof frame.id === 'string') this.onResponse(frame as unknown as ResponseFrame);
        else if (frame.type === 'event') this.options.onEvent?.(frame as unknown as EventFrame);
      });
      ws.on('error', (error) =>
        fail(new GatewayRequestError({ code: 'UNAVAILABLE', message: error.message, retryable: true })),
      );
      ws.on('close', (code, reasonBuffer) => {
        const reason = reasonBuffer.toString();
        clearInterval(this.watchdog);
        fail(
          new GatewayRequestError({
            code: 'UNAVAILABLE',
            message: `connection closed (${code}${reason ? `: ${reason}` : ''})`,
            retryable: true,
          }),
        );
        const wasOpen = this.helloPayload !== undefined;
        this.helloPayload = undefined;
        for (const id of [...this.pending.keys()]) {
          this.settle(
            id,
            new GatewayRequestError({ code: 'UNAVAILABLE', message: 'connection closed', retryable: true }),
          );
        }
        const willReconnect =
          wasOpen && !this.closedByUser && this.options.reconnect !== undefined && this.options.reconnect !== false;
        this.options.onClose?.({ code, reason, willReconnect });
        if (willReconnect) this.scheduleReconnect();
      });
    });
  }

  private scheduleReconnect(): void {
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.reconnectPolicy().maxMs);
    this.reconnectTimer = setTimeout(() => {
      this.open().catch(() => {
        if (!this.closedByUser) this.scheduleReconnect();
      });
    }, delay);
  }

  /** A silent gateway (no tick for two intervals) means a dead link: close, and reconnect if enabled. */
  private startWatchdog(): void {
    clearInterval(this.watchdog);
    const interval = this.helloPayload?.policy.tickIntervalMs ?? 30_000;
    this.watchdog = setInterval(() => {
      if (Date.now() - this.lastFrameAt > interval * 2) this.ws?.close(4000, 'tick timeout');
    }, interval);
    this.watchdog.unref();
  }

  private connectParams(nonce: string | undefined, ts: number | undefined): ConnectParams {
    const role = this.options.role ?? 'operator';
    const scopes = this.options.scopes ?? (role === 'operator' ? ['operator.read'] : []);
    const client = {
      id: 'claw-client',
      version: '0',
      platform: osPlatform(),
      mode: role === 'node' ? 'node' : 'cli',
      ...this.options.client,
    } as ConnectParams['client'];
    const auth: Record<string, string> = {};
    if (this.options.token) auth.token = this.options.token;
    if (this.options.password) auth.password = this.options.password;
    if (this.options.deviceToken) auth.deviceToken = this.options.deviceToken;
    if (this.options.bootstrapToken && !auth.token && !auth.password && !auth.deviceToken)
      auth.bootstrapToken = this.options.bootstrapToken;
    const params: ConnectParams = {
      minProtocol: this.options.minProtocol ?? MIN_PROTOCOL_VERSION,
      maxProtocol: this.options.maxProtocol ?? PROTOCOL_VERSION,
      client,
      role,
      scopes,
      caps: this.options.caps ?? [],
      ...(this.options.commands ? { commands: this.options.commands } : {}),
      ...(this.options.pathEnv ? { pathEnv: this.options.pathEnv } : {}),
      ...(Object.keys(auth).length ? { auth } : {}),
    };
    const identity = this.options.identity;
    if (identity && nonce) {
      const signedAt = typeof ts === 'number' ? ts : Date.now();
      const payload = deviceAuthPayload({
        deviceId: identity.deviceId,
        clientId: client.id,
        clientMode: client.mode ?? '',
        role,
        scopes,
        signedAtMs: signedAt,
        token: this.options.token ?? this.options.deviceToken ?? auth.bootstrapToken ?? null,
        nonce,
        platform: client.platform,
        deviceFamily: (client as { deviceFamily?: string }).deviceFamily,
      });
      params.device = {
        id: identity.deviceId,
        publicKey: base64UrlEncode(rawPublicKey(identity.publicKeyPem)),
        signature: signPayload(identity.privateKeyPem, payload),
        signedAt,
        nonce,
      };
    }
    return params;
  }

  private onResponse(frame: ResponseFrame): void {
    const entry = this.pending.get(frame.id);
    if (!entry) return;
    if (frame.ok) {
      const payload = frame.payload as { status?: string } | undefined;
      if (entry.expectFinal && payload?.status === 'accepted') {
        entry.onAck?.(payload);
        return;
      }
      this.settle(frame.id, undefined, frame.payload);
    } else {
      this.settle(frame.id, new GatewayRequestError(frame.error ?? { code: 'UNAVAILABLE', message: 'request failed' }));
    }
  }

  private settle(id: string, error?: Error, value?: unknown): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    clearTimeout(entry.timer);
    if (error) entry.reject(error);
    else entry.resolve(value);
  }
}

/** `sha256:AB:CD…`, `abcd…`: the same fingerprint. */
function normalizeFingerprint(value: string): string {
  return value
    .trim()
    .replace(/^sha-?256:?/i, '')
    .replace(/[^0-9a-f]/gi, '')
    .toLowerCase();
}
