/**
 * Setup codes: device.pair.setupCode mints a single-use bootstrap token (ten minutes, stored
 * hashed, owner-only) inside OpenClaw's setup code encoding; a node presenting it is paired for
 * role node with its first surface approved and gets a device token in hello-ok, the operator
 * hears device.pair.setup.completed, and the code never works twice. The URL rules follow
 * OpenClaw's: no code for a loopback-only gateway without a URL, no plaintext beyond a LAN.
 */
import { readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayRequestError, type GatewayClient } from '../apps/cli/gateway-client.js';
import {
  decodeSetupCode,
  encodeSetupCode,
  plaintextAllowed,
  SetupCodes,
  setupCodesFile,
  setupGatewayUrl,
} from '../plugins/gateway/setup-codes.js';
import { connectFakeNode, FakeNodeRefused, type FakeNode } from './fakes/node.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { tempDir, waitFor } from './helpers.js';

/** Seen as another machine, so loopback auto-approval does not pair the node. */
const REMOTE = { 'x-forwarded-for': '203.0.113.7' };

let gw: RunningGateway;
let operator: GatewayClient;
const events: Array<{ event: string; payload: any }> = [];
const nodes: FakeNode[] = [];

beforeAll(async () => {
  gw = await startGateway();
  operator = await client(gw.url, { onEvent: (frame) => events.push({ event: frame.event, payload: frame.payload }) });
}, 60_000);

afterAll(async () => {
  await Promise.all(nodes.map((node) => node.close()));
  await operator?.close();
  await gw?.stop();
});

async function refusal(request: Promise<unknown>) {
  const error = await request.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected a refusal').toBeInstanceOf(GatewayRequestError);
  const { code, message } = error as GatewayRequestError;
  return { code, message };
}

async function nodeRefusal(connecting: Promise<FakeNode>) {
  const error = await connecting.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected the node to be refused').toBeInstanceOf(FakeNodeRefused);
  return (error as FakeNodeRefused).error;
}

const setupCode = (params: Record<string, unknown> = { publicUrl: gw.url }) =>
  operator.request('device.pair.setupCode', params) as Promise<Record<string, any>>;

describe('device.pair.setupCode', () => {
  it("answers OpenClaw's shape: a node-only code for the URL given, with a PNG QR", async () => {
    const before = Date.now();
    const result = await setupCode();
    expect(result).toEqual({
      setupId: expect.any(String),
      expiresAtMs: expect.any(Number),
      setupCode: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      qrDataUrl: expect.stringMatching(/^data:image\/png;base64,/),
      gatewayUrl: gw.url,
      auth: 'token',
      urlSource: 'request.publicUrl',
      access: 'node',
    });
    expect(result.expiresAtMs - before).toBeGreaterThanOrEqual(10 * 60_000 - 1000);
    expect(result.expiresAtMs - before).toBeLessThanOrEqual(10 * 60_000 + 60_000);
    const payload = decodeSetupCode(result.setupCode);
    expect(payload).toEqual({ url: gw.url, bootstrapToken: expect.any(String), expiresAtMs: result.expiresAtMs });
    expect(decodeSetupCode(`oc-pair://${result.setupCode}`)).toEqual(payload);

    // Only a hash of the token is kept, owner-only.
    const file = setupCodesFile(gw.stateDir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain(payload.bootstrapToken);
    expect((await setupCode({ publicUrl: gw.url, includeQr: false })).qrDataUrl).toBeUndefined();
  });

  it('refuses what it cannot honour, naming it', async () => {
    expect(await refusal(setupCode({}))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('only bound to loopback'),
    });
    expect(await refusal(setupCode({ publicUrl: 'ws://203.0.113.5:18789' }))).toMatchObject({
      message: expect.stringContaining('in plaintext'),
    });
    expect(await refusal(setupCode({ bootstrapProfile: 'limited' }))).toMatchObject({
      message: expect.stringContaining('pair nodes only'),
    });
    expect(await refusal(setupCode({ publicUrl: gw.url, colour: 'blue' }))).toMatchObject({
      message: 'device.pair.setupCode: unknown params colour',
    });
    expect((await setupCode({ publicUrl: 'wss://gateway.example.com' })).gatewayUrl).toBe('wss://gateway.example.com');
  });
});

describe('pairing a node with a setup code', () => {
  let code: Record<string, any>;
  let bootstrapToken: string;
  let node: FakeNode;

  it('pairs the node for role node, with a device token in hello-ok and device.pair.setup.completed', async () => {
    code = await setupCode();
    bootstrapToken = decodeSetupCode(code.setupCode).bootstrapToken;
    expect(await operator.request('device.pair.setupStatus', { setupId: code.setupId })).toEqual({});
    node = await connectFakeNode({
      url: gw.url,
      headers: REMOTE,
      displayName: 'Kitchen Pi',
      caps: ['system'],
      commands: ['system.notify'],
      auth: { bootstrapToken },
    });
    nodes.push(node);
    expect(node.hello.auth).toMatchObject({ role: 'node', scopes: [], deviceToken: expect.any(String) });
    const nodeId = node.identity.deviceId;
    const completed = await waitFor(
      () => events.find((e) => e.event === 'device.pair.setup.completed' && e.payload.setupId === code.setupId),
      { what: 'device.pair.setup.completed' },
    );
    expect(completed.payload).toEqual({
      setupId: code.setupId,
      deviceId: nodeId,
      deviceName: 'Kitchen Pi',
      access: 'node',
      ts: expect.any(Number),
    });
    expect(await operator.request('device.pair.setupStatus', { setupId: code.setupId })).toEqual({
      completion: completed.payload,
    });
    const devices: any = await operator.request('device.pair.list', {});
    expect(devices.paired).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ deviceId: nodeId, roles: ['node'], approvedBy: 'setup-code' }),
      ]),
    );
    // The surface it declared came approved with the code: no request waits, the command is effective.
    const list: any = await operator.request('node.list', {});
    expect(list.nodes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          nodeId,
          paired: true,
          connected: true,
          approvalState: 'approved',
          pendingRequestId: null,
          commands: ['system.notify'],
        }),
      ]),
    );
    expect(((await operator.request('node.pair.list', {})) as any).pending).toEqual([]);
  });

  it('the device token admits the node from then on', async () => {
    await node.close();
    const again = await connectFakeNode({
      url: gw.url,
      headers: REMOTE,
      identity: node.identity,
      auth: { deviceToken: node.hello.auth.deviceToken },
    });
    nodes.push(again);
    expect(again.hello.auth.role).toBe('node');
  });

  it('a used, unknown or operator-role setup code admits nobody', async () => {
    expect(
      await nodeRefusal(connectFakeNode({ url: gw.url, headers: REMOTE, auth: { bootstrapToken } })),
    ).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('setup code invalid, expired or already used'),
      details: { code: 'AUTH_BOOTSTRAP_TOKEN_INVALID' },
    });
    const fresh = decodeSetupCode((await setupCode()).setupCode).bootstrapToken;
    const asOperator = connectFakeNode({
      url: gw.url,
      headers: REMOTE,
      role: 'operator',
      auth: { bootstrapToken: fresh },
    });
    expect(await nodeRefusal(asOperator)).toMatchObject({
      message: 'unauthorized: setup codes pair nodes only (connect with role "node")',
    });
    // Refusing the operator did not use the code up: a node may still pair with it.
    nodes.push(await connectFakeNode({ url: gw.url, headers: REMOTE, auth: { bootstrapToken: fresh } }));
  });
});

describe('setup code kit', () => {
  it('a token expires after ten minutes and is single-use', () => {
    let now = 1_000_000;
    const store = new SetupCodes(setupCodesFile(tempDir('claw-setup-')), { text: (s: string) => s }, () => now);
    const issued = store.issue();
    expect(store.valid(issued.token)).toBe(true);
    now += 10 * 60_000;
    expect(store.valid(issued.token)).toBe(false);
    expect(store.redeem(issued.token, 'device')).toBeUndefined();
    const second = store.issue();
    expect(store.redeem(second.token, 'device', 'Pi')).toMatchObject({ setupId: second.setupId, deviceId: 'device' });
    expect(store.redeem(second.token, 'other')).toBeUndefined();
  });

  it("reads OpenClaw's codes and refuses what is not one", () => {
    const code = encodeSetupCode({ url: 'wss://gw.example.com', bootstrapToken: 'abc' });
    expect(code).not.toMatch(/[+/=]/);
    expect(decodeSetupCode(code)).toEqual({ url: 'wss://gw.example.com', bootstrapToken: 'abc' });
    expect(() => decodeSetupCode('not a code!')).toThrow(/not a setup code/);
    expect(() =>
      decodeSetupCode(encodeSetupCode({ url: 'ws://10.0.0.2:1', bootstrapToken: 'x', expiresAtMs: 5 })),
    ).toThrow(/expired/);
  });

  it('chooses the URL as OpenClaw does', () => {
    expect(setupGatewayUrl({ bind: 'lan', host: '0.0.0.0', port: 18789, lan: () => '192.168.1.20' })).toEqual({
      url: 'ws://192.168.1.20:18789',
      source: 'gateway.bind=lan',
    });
    expect(setupGatewayUrl({ bind: 'custom', host: 'box.local', port: 1 })).toEqual({
      url: 'ws://box.local:1',
      source: 'gateway.bind=custom',
    });
    expect(() => setupGatewayUrl({ bind: 'custom', host: '198.51.100.4', port: 1 })).toThrow(/plaintext/);
    expect(setupGatewayUrl({ bind: 'loopback', host: '127.0.0.1', port: 1, publicUrl: 'nas.local:8443' })).toEqual({
      url: 'ws://nas.local:8443',
      source: 'request.publicUrl',
    });
    expect(plaintextAllowed('10.1.2.3')).toBe(true);
    expect(plaintextAllowed('fd00::1')).toBe(true);
    expect(plaintextAllowed('8.8.8.8')).toBe(false);
  });
});
