/**
 * OpenClaw's node.* and the rest of its device.* methods over claw's real pairing store and
 * connections: a node asks to pair, is listed pending, approved, connects and is listed with what
 * it declared, is renamed and removed (with OpenClaw's node.pair.* and device.pair.changed
 * events); node-role methods come only from nodes; a paired device renames itself and asks for
 * more scopes, which an operator approves or rejects while the device waits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayRequestError, generateDeviceIdentity, type GatewayClient } from '../apps/cli/gateway-client.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { waitFor } from './helpers.js';

/** Seen as a remote client, so pairing is not approved automatically as on loopback. */
const REMOTE = { 'x-forwarded-for': '203.0.113.7' };

let gw: RunningGateway;
let operator: GatewayClient;
const events: Array<{ event: string; payload: any }> = [];
const open: GatewayClient[] = [];

beforeAll(async () => {
  gw = await startGateway();
  operator = await client(gw.url, { onEvent: (frame) => events.push({ event: frame.event, payload: frame.payload }) });
}, 60_000);

afterAll(async () => {
  await Promise.all([operator, ...open].map((c) => c?.close()));
  await gw?.stop();
});

async function connect(options: Parameters<typeof client>[1]): Promise<GatewayClient> {
  const c = await client(gw.url, { headers: REMOTE, ...options });
  open.push(c);
  return c;
}

async function refusal(request: Promise<unknown>) {
  const error = await request.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected a refusal').toBeInstanceOf(GatewayRequestError);
  const { code, message, details } = error as GatewayRequestError;
  return { code, message, details: details as any };
}

const event = (name: string, test: (payload: any) => boolean = () => true) =>
  waitFor(() => events.find((e) => e.event === name && test(e.payload))?.payload, { what: `the ${name} event` });

describe('nodes', () => {
  const identity = generateDeviceIdentity();
  const nodeId = identity.deviceId;
  const asNode = {
    identity,
    role: 'node' as const,
    client: { id: 'node-host', displayName: 'Build box', platform: 'linux', version: '1.2.3', mode: 'node' },
    caps: ['system', 'canvas'],
  };
  let requestId: string;

  it('a node asking to pair is listed pending, with node.pair.requested', async () => {
    const first = await refusal(connect(asNode));
    expect(first.code).toBe('NOT_PAIRED');
    requestId = first.details.requestId;
    expect(await event('node.pair.requested', (p) => p.requestId === requestId)).toMatchObject({
      requestId,
      nodeId,
      clientId: 'node-host',
      displayName: 'Build box',
      platform: 'linux',
      caps: [],
      commands: [],
      requiredApproveScopes: ['operator.pairing'],
      remoteIp: '127.0.0.1',
      ts: expect.any(Number),
    });

    const pairs: any = await operator.request('node.pair.list', {});
    expect(pairs.paired).toEqual([]);
    expect(pairs.pending).toEqual([expect.objectContaining({ requestId, nodeId, displayName: 'Build box' })]);

    const list: any = await operator.request('node.list', {});
    expect(list).toEqual({ ts: expect.any(Number), activeNodeId: null, nodes: [expect.any(Object)] });
    expect(list.nodes[0]).toMatchObject({
      nodeId,
      displayName: 'Build box',
      approvalState: 'pending-approval',
      pendingRequestId: requestId,
      paired: false,
      connected: false,
      caps: [],
      commands: [],
      connectedAtMs: null,
    });
  });

  it('approved, it connects and is listed with what it declared', async () => {
    const approved: any = await operator.request('node.pair.approve', { requestId });
    expect(approved).toEqual({
      requestId,
      node: expect.objectContaining({
        nodeId,
        clientId: 'node-host',
        displayName: 'Build box',
        approvedAtMs: expect.any(Number),
        caps: [],
        bins: [],
        lastHostStats: null,
      }),
    });
    expect(await event('node.pair.resolved', (p) => p.requestId === requestId)).toMatchObject({
      nodeId,
      decision: 'approved',
    });
    expect(await refusal(operator.request('node.pair.approve', { requestId }))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'unknown requestId',
    });

    const node = await connect(asNode);
    // The device is paired; the caps it declares are a command surface waiting for an operator.
    const waiting: any = await operator.request('node.describe', { nodeId });
    expect(waiting).toMatchObject({ approvalState: 'pending-approval', pendingDeclaredCaps: ['canvas', 'system'] });
    await operator.request('node.pair.approve', { requestId: waiting.pendingRequestId });
    const described: any = await operator.request('node.describe', { nodeId });
    expect(described).toMatchObject({
      ts: expect.any(Number),
      nodeId,
      displayName: 'Build box',
      platform: 'linux',
      version: '1.2.3',
      clientId: 'node-host',
      clientMode: 'node',
      remoteIp: '127.0.0.1',
      caps: ['canvas', 'system'],
      approvalState: 'approved',
      pendingRequestId: null,
      paired: true,
      connected: true,
      connectedAtMs: expect.any(Number),
      approvedAtMs: expect.any(Number),
    });
    // Every field of OpenClaw's node entry is there, empty where claw records nothing.
    for (const key of ['coreVersion', 'uiVersion', 'deviceFamily', 'modelIdentifier', 'lastActiveAtMs'])
      expect(described[key], key).toBeNull();
    expect(await refusal(operator.request('node.describe', { nodeId: 'nope' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'unknown nodeId',
    });

    // What only a node sends: an answer to nothing it was sent is ignored; refused to operators.
    expect(await node.request('node.invoke.result', { id: 'inv-1', nodeId, ok: true })).toEqual({
      ok: true,
      ignored: true,
    });
    expect(await node.request('node.invoke.progress', { invokeId: 'inv-1', nodeId, seq: 0, chunk: 'x' })).toEqual({
      ok: true,
      ignored: true,
    });
    expect(await node.request('node.event', { event: 'presence.alive', payload: {} })).toEqual({ ok: true });
    expect(await refusal(node.request('node.invoke.result', { id: 'inv-1', nodeId: 'other', ok: true }))).toMatchObject(
      { code: 'INVALID_REQUEST', message: 'nodeId mismatch' },
    );
    expect(await refusal(operator.request('node.event', { event: 'x' }))).toMatchObject({
      code: 'FORBIDDEN',
      message: 'node.event is for node connections (role "node")',
    });
    expect(
      await refusal(operator.request('node.invoke', { nodeId, command: 'system.run', idempotencyKey: 'k1' })),
    ).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('exec tool') });
    // A command it did not declare is refused by the policy, naming the gate.
    expect(
      await refusal(operator.request('node.invoke', { nodeId, command: 'camera.snap', idempotencyKey: 'k2' })),
    ).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('did not declare "camera.snap"') });
  });

  it('renamed, then removed: its connection closes and it is no longer listed', async () => {
    events.length = 0;
    expect(await operator.request('node.rename', { nodeId, displayName: 'CI box' })).toEqual({
      nodeId,
      displayName: 'CI box',
    });
    await event('device.pair.changed');
    const paired: any = await operator.request('node.pair.list', {});
    expect(paired.paired.map((n: any) => n.displayName)).toEqual(['CI box']);

    expect(await operator.request('node.pair.remove', { nodeId })).toEqual({ nodeId });
    expect(await event('node.pair.resolved', (p) => p.decision === 'removed')).toMatchObject({ requestId: '', nodeId });
    await waitFor(async () => ((await operator.request('node.list', {})) as any).nodes.length === 0, {
      what: 'the removed node to leave node.list',
    });
    expect(await refusal(operator.request('node.rename', { nodeId, displayName: 'x' }))).toMatchObject({
      message: 'unknown nodeId',
    });
  });

  it('a rejected node request is gone from the list', async () => {
    const other = generateDeviceIdentity();
    const first = await refusal(connect({ ...asNode, identity: other }));
    const id = first.details.requestId;
    expect(await operator.request('node.pair.reject', { requestId: id })).toEqual({
      requestId: id,
      nodeId: other.deviceId,
    });
    expect(await event('node.pair.resolved', (p) => p.requestId === id)).toMatchObject({ decision: 'rejected' });
    expect(((await operator.request('node.pair.list', {})) as any).pending).toEqual([]);
  });
});

describe('devices', () => {
  it('device.pair.rename renames a paired device', async () => {
    const identity = generateDeviceIdentity();
    const first = await refusal(connect({ identity, scopes: ['operator.read'] }));
    await operator.request('device.pair.approve', { requestId: first.details.requestId });
    events.length = 0;
    expect(
      await operator.request('device.pair.rename', { deviceId: identity.deviceId, label: '  Ada laptop ' }),
    ).toEqual({ deviceId: identity.deviceId, label: 'Ada laptop' });
    await event('device.pair.changed');
    const listed: any = await operator.request('device.pair.list', {});
    expect(listed.paired.find((d: any) => d.deviceId === identity.deviceId).displayName).toBe('Ada laptop');
    expect(await refusal(operator.request('device.pair.rename', { deviceId: 'nope', label: 'x' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'no paired device "nope"',
    });
    expect(await refusal(operator.request('device.pair.rename', { deviceId: identity.deviceId }))).toMatchObject({
      message: 'label required',
    });
  });

  it('a device asks for more scopes; approved, it gets a token carrying them', async () => {
    const identity = generateDeviceIdentity();
    const first = await refusal(connect({ identity, scopes: ['operator.read'] }));
    await operator.request('device.pair.approve', { requestId: first.details.requestId });
    const device = await connect({ identity, scopes: ['operator.read'] });
    expect(await refusal(device.request('device.scopes.requestUpgrade', { scopes: ['operator.write'] }))).toMatchObject(
      { code: 'INVALID_REQUEST', message: "requested scopes must include the connection's current scopes" },
    );
    expect(
      await refusal(device.request('device.scopes.requestUpgrade', { scopes: ['operator.read', 'operator.root'] })),
    ).toMatchObject({ message: expect.stringContaining('unknown operator scope: operator.root') });

    const { requestId } = (await device.request('device.scopes.requestUpgrade', {
      scopes: ['operator.read', 'operator.write'],
    })) as { requestId: string };
    expect(await event('device.pair.requested', (p) => p.requestId === requestId)).toMatchObject({
      deviceId: identity.deviceId,
      role: 'operator',
      scopes: ['operator.read', 'operator.write'],
    });
    const waiting = device.request('device.scopes.waitUpgrade', { requestId });
    await operator.request('device.pair.approve', { requestId });
    const result = (await waiting) as { status: string; deviceToken: string; scopes: string[] };
    expect(result).toEqual({
      status: 'approved',
      requestId,
      deviceToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      scopes: ['operator.read', 'operator.write'],
    });
    const upgraded = await connect({
      identity,
      token: undefined,
      deviceToken: result.deviceToken,
      scopes: ['operator.read', 'operator.write'],
    });
    expect(await upgraded.request('worktrees.list', {})).toEqual({ worktrees: [] });
    expect(await refusal(upgraded.request('device.scopes.waitUpgrade', { requestId }))).toMatchObject({
      message: 'scope upgrade expired or not found',
    });
  });

  it('a rejected upgrade answers rejected', async () => {
    const identity = generateDeviceIdentity();
    const first = await refusal(connect({ identity, scopes: ['operator.read'] }));
    await operator.request('device.pair.approve', { requestId: first.details.requestId });
    const device = await connect({ identity, scopes: ['operator.read'] });
    const { requestId } = (await device.request('device.scopes.requestUpgrade', {
      scopes: ['operator.read', 'operator.admin'],
    })) as { requestId: string };
    const waiting = device.request('device.scopes.waitUpgrade', { requestId });
    await operator.request('device.pair.reject', { requestId });
    expect(await waiting).toEqual({ status: 'rejected', requestId });
  });

  it('setupStatus of a setup code never used answers {}', async () => {
    expect(await operator.request('device.pair.setupStatus', { setupId: 's1' })).toEqual({});
  });
});
