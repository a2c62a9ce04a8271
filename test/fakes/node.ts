/**
 * A small node for tests, speaking OpenClaw's node wire: it signs the connect challenge with its
 * own device identity (as OpenClaw's node host does, signing the bootstrap token when it pairs
 * with a setup code), declares caps and commands, answers `node.invoke.request` events with
 * `node.invoke.result`, and records every event it is sent.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import {
  base64UrlEncode,
  deviceAuthPayload,
  generateDeviceIdentity,
  rawPublicKey,
  signPayload,
  type DeviceIdentity,
} from '../../sdk/device-auth.js';
import { MIN_PROTOCOL_VERSION, PROTOCOL_VERSION } from '../../sdk/protocol/constants.js';

export interface FakeNodeOptions {
  url: string;
  identity?: DeviceIdentity;
  displayName?: string;
  platform?: string;
  caps?: string[];
  commands?: string[];
  auth?: { token?: string; deviceToken?: string; bootstrapToken?: string };
  headers?: Record<string, string>;
  /** Connect as something other than a node (to test what only nodes may do). */
  role?: 'node' | 'operator';
  /** The payload for a command (default: echo the params back); throwing answers an error. */
  handle?: (command: string, params: unknown) => unknown;
}

export interface FakeNode {
  identity: DeviceIdentity;
  hello: Record<string, any>;
  events: Array<{ event: string; payload: any }>;
  close(): Promise<void>;
}

export class FakeNodeRefused extends Error {
  constructor(readonly error: { code: string; message: string; details?: any }) {
    super(error.message);
  }
}

export function connectFakeNode(options: FakeNodeOptions): Promise<FakeNode> {
  const identity = options.identity ?? generateDeviceIdentity();
  const ws = new WebSocket(options.url, { headers: options.headers });
  const events: FakeNode['events'] = [];
  const client = {
    id: 'node-host',
    version: '2026.9.6',
    platform: options.platform ?? 'linux',
    mode: 'node',
    displayName: options.displayName ?? 'Fake node',
  };
  const send = (frame: unknown) => ws.send(JSON.stringify(frame));
  const answer = (invoke: any) => {
    let result: Record<string, unknown>;
    try {
      const params = invoke.paramsJSON ? JSON.parse(invoke.paramsJSON) : undefined;
      const payload = options.handle ? options.handle(invoke.command, params) : { echo: params };
      result = { id: invoke.id, nodeId: identity.deviceId, ok: true, payloadJSON: JSON.stringify(payload) };
    } catch (error) {
      const { code = 'FAILED', message } = error as Error & { code?: string };
      result = { id: invoke.id, nodeId: identity.deviceId, ok: false, error: { code, message } };
    }
    send({ type: 'req', id: randomUUID(), method: 'node.invoke.result', params: result });
  };
  return new Promise((resolve, reject) => {
    ws.on('error', reject);
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type === 'event' && frame.event === 'connect.challenge') {
        const signatureToken = options.auth?.token ?? options.auth?.deviceToken ?? options.auth?.bootstrapToken;
        const signedAt = Date.now();
        const payload = deviceAuthPayload({
          deviceId: identity.deviceId,
          clientId: client.id,
          clientMode: client.mode,
          role: options.role ?? 'node',
          scopes: [],
          signedAtMs: signedAt,
          token: signatureToken ?? null,
          nonce: frame.payload.nonce,
          platform: client.platform,
        });
        send({
          type: 'req',
          id: 'connect',
          method: 'connect',
          params: {
            minProtocol: MIN_PROTOCOL_VERSION,
            maxProtocol: PROTOCOL_VERSION,
            client,
            role: options.role ?? 'node',
            scopes: [],
            caps: options.caps ?? [],
            commands: options.commands ?? [],
            ...(options.auth ? { auth: options.auth } : {}),
            device: {
              id: identity.deviceId,
              publicKey: base64UrlEncode(rawPublicKey(identity.publicKeyPem)),
              signature: signPayload(identity.privateKeyPem, payload),
              signedAt,
              nonce: frame.payload.nonce,
            },
          },
        });
        return;
      }
      if (frame.type === 'res' && frame.id === 'connect') {
        if (!frame.ok) {
          reject(new FakeNodeRefused(frame.error));
          ws.close();
          return;
        }
        resolve({
          identity,
          hello: frame.payload,
          events,
          close: () =>
            new Promise<void>((done) => {
              if (ws.readyState === WebSocket.CLOSED) return done();
              ws.once('close', () => done());
              ws.close();
            }),
        });
        return;
      }
      if (frame.type === 'event') {
        events.push({ event: frame.event, payload: frame.payload });
        if (frame.event === 'node.invoke.request') answer(frame.payload);
      }
    });
  });
}
