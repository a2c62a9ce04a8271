/**
 * A small node client for tests and benches: OpenClaw's node wire (role "node", a signed device
 * identity, declared caps and commands; node.invoke.request in, node.invoke.result out) with the
 * answers a test scripts. Nothing is answered unless a handler says so.
 */
import { createRequire } from 'node:module';
import type { WebSocket as WsSocket } from 'ws';
import {
  base64UrlEncode,
  deviceAuthPayload,
  generateDeviceIdentity,
  rawPublicKey,
  signPayload,
  type DeviceIdentity,
} from '../sdk/device-auth.js';

const WebSocket = createRequire(import.meta.url)('ws') as typeof WsSocket;

export interface InvokeRequest {
  id: string;
  nodeId: string;
  command: string;
  paramsJSON: string | null;
  timeoutMs: number;
  idempotencyKey: string;
  sessionKey?: string;
}

/** What a handler answers: a payload, an error, or nothing (the test answers later, or never). */
export type InvokeHandler = (
  request: InvokeRequest,
  node: FakeNode,
) => { payload: unknown } | { error: { code: string; message: string } } | undefined | Promise<unknown>;

export interface FakeNodeOptions {
  url: string;
  token?: string;
  deviceToken?: string;
  /** Sign the challenge with this identity; `null` connects without one. */
  identity?: DeviceIdentity | null;
  platform?: string;
  displayName?: string;
  caps?: string[];
  commands?: string[];
  onInvoke?: InvokeHandler;
}

export class FakeNode {
  readonly identity: DeviceIdentity | null;
  readonly requests: InvokeRequest[] = [];
  readonly events: Array<{ event: string; payload: any }> = [];
  hello?: any;
  private ws?: WsSocket;
  private nextId = 0;
  private readonly waiting = new Map<string, { resolve(v: any): void; reject(e: Error): void }>();
  private readonly listeners: Array<() => void> = [];
  closed?: Promise<{ code: number; reason: string }>;

  constructor(readonly options: FakeNodeOptions) {
    this.identity = options.identity === null ? null : (options.identity ?? generateDeviceIdentity());
  }

  get nodeId(): string {
    return this.identity!.deviceId;
  }

  /** Connect and complete the handshake: resolves with hello-ok, rejects with the gateway's error. */
  connect(): Promise<any> {
    const ws = new WebSocket(this.options.url, { perMessageDeflate: false });
    this.ws = ws;
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    return new Promise((resolve, reject) => {
      ws.once('error', reject);
      ws.on('close', (code, reason) => reject(new Error(`closed ${code} ${reason.toString()}`)));
      ws.on('message', (data) => {
        const frame = JSON.parse(data.toString());
        if (frame.type === 'event' && frame.event === 'connect.challenge') {
          this.send({ type: 'req', id: 'connect', method: 'connect', params: this.connectParams(frame.payload.nonce) });
          return;
        }
        if (frame.type === 'res' && frame.id === 'connect') {
          if (frame.ok) {
            this.hello = frame.payload;
            resolve(frame.payload);
          } else reject(Object.assign(new Error(frame.error.message), frame.error));
          return;
        }
        this.onFrame(frame);
      });
    });
  }

  private connectParams(nonce: string) {
    const client = {
      id: 'node-host',
      version: '0',
      platform: this.options.platform ?? 'linux',
      mode: 'node',
      ...(this.options.displayName ? { displayName: this.options.displayName } : {}),
    };
    const auth: Record<string, string> = {};
    if (this.options.token) auth.token = this.options.token;
    if (this.options.deviceToken) auth.deviceToken = this.options.deviceToken;
    const params: Record<string, unknown> = {
      minProtocol: 3,
      maxProtocol: 4,
      client,
      role: 'node',
      scopes: [],
      caps: this.options.caps ?? [],
      commands: this.options.commands ?? [],
      auth,
    };
    const identity = this.identity;
    if (identity) {
      const signedAt = Date.now();
      const payload = deviceAuthPayload({
        deviceId: identity.deviceId,
        clientId: client.id,
        clientMode: client.mode,
        role: 'node',
        scopes: [],
        signedAtMs: signedAt,
        token: this.options.token ?? this.options.deviceToken ?? null,
        nonce,
        platform: client.platform,
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

  private onFrame(frame: any): void {
    if (frame.type === 'res') {
      const waiter = this.waiting.get(frame.id);
      this.waiting.delete(frame.id);
      if (frame.ok) waiter?.resolve(frame.payload);
      else waiter?.reject(Object.assign(new Error(frame.error.message), frame.error));
      return;
    }
    if (frame.type !== 'event') return;
    this.events.push({ event: frame.event, payload: frame.payload });
    if (frame.event === 'node.invoke.request') {
      const request = frame.payload as InvokeRequest;
      this.requests.push(request);
      void this.answerWith(request);
    }
    for (const listener of this.listeners.splice(0)) listener();
  }

  private async answerWith(request: InvokeRequest): Promise<void> {
    const answer = (await this.options.onInvoke?.(request, this)) as
      { payload: unknown } | { error: { code: string; message: string } } | undefined;
    if (!answer) return;
    if ('error' in answer) await this.result(request.id, { ok: false, error: answer.error });
    else await this.result(request.id, { ok: true, payloadJSON: JSON.stringify(answer.payload) });
  }

  /** Answer an invoke (from any connection: tests send results from the wrong one on purpose). */
  result(id: string, fields: Record<string, unknown>, nodeId = this.nodeId): Promise<any> {
    return this.request('node.invoke.result', { id, nodeId, ...fields });
  }

  request(method: string, params: unknown): Promise<any> {
    const id = `r${++this.nextId}`;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.send({ type: 'req', id, method, params });
    });
  }

  /** Resolves with the first event (already received or still to come) that passes `test`. */
  async nextEvent(test: (e: { event: string; payload: any }) => boolean): Promise<{ event: string; payload: any }> {
    for (;;) {
      const found = this.events.find(test);
      if (found) return found;
      await new Promise<void>((resolve) => this.listeners.push(resolve));
    }
  }

  private send(frame: unknown): void {
    this.ws?.send(JSON.stringify(frame));
  }

  /** Drop the connection at once (no close handshake): a node that went away. */
  kill(): void {
    this.ws?.terminate();
  }

  async close(): Promise<void> {
    if (!this.ws || this.ws.readyState === WebSocket.CLOSED) return;
    this.ws.close();
    await this.closed;
  }
}
