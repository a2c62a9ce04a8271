/**
 * Nodes through a real gateway: fake nodes speaking OpenClaw's node wire with signed device
 * identities, operators calling node.* methods, and the "nodes" service in-process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODES_SERVICE, type NodeService } from '../sdk/index.js';
import { requireService } from '../sdk/services.js';
import { client, refusal, startGateway, TEST_TOKEN, type RunningGateway } from './gateway-helpers.js';
import { FakeNode, type FakeNodeOptions } from './node-fake.js';
import type { GatewayClient } from '../apps/cli/gateway-client.js';

let gw: RunningGateway;
let admin: GatewayClient;
const opened: FakeNode[] = [];

async function node(options: Partial<FakeNodeOptions> = {}): Promise<FakeNode> {
  const fake = new FakeNode({ url: gw.url, token: TEST_TOKEN, ...options });
  opened.push(fake);
  await fake.connect();
  return fake;
}

/** A connected node whose declared surface an admin approved. */
async function approvedNode(options: Partial<FakeNodeOptions> = {}): Promise<FakeNode> {
  const fake = await node(options);
  const pending = await admin.request<any>('node.pair.list', {});
  const request = pending.pending.find((r: any) => r.nodeId === fake.nodeId);
  if (request) await admin.request('node.pair.approve', { requestId: request.requestId });
  return fake;
}

const echo: FakeNodeOptions['onInvoke'] = (request) => ({
  payload: { command: request.command, params: request.paramsJSON ? JSON.parse(request.paramsJSON) : null },
});

let keys = 0;
const key = () => `k-${++keys}-${Date.now()}`;

beforeAll(async () => {
  gw = await startGateway();
  admin = await client(gw.url);
});

afterAll(async () => {
  await Promise.all(opened.map((n) => n.close()));
  admin?.close();
  await gw?.stop();
});

describe('node invoke dispatch', () => {
  it('sends a command to the one node and returns its payload (operator → gateway → node → gateway → operator)', async () => {
    const target = await approvedNode({ commands: ['system.notify'], onInvoke: echo });
    const bystander = await approvedNode({ commands: ['system.notify'], onInvoke: echo });
    const answer = await admin.request<any>('node.invoke', {
      nodeId: target.nodeId,
      command: 'system.notify',
      params: { title: 'hi' },
      idempotencyKey: key(),
    });
    expect(answer).toMatchObject({
      ok: true,
      nodeId: target.nodeId,
      command: 'system.notify',
      payload: { command: 'system.notify', params: { title: 'hi' } },
    });
    expect(typeof answer.payloadJSON).toBe('string');
    expect(target.requests).toHaveLength(1);
    expect(target.requests[0]).toMatchObject({ nodeId: target.nodeId, command: 'system.notify', timeoutMs: 30_000 });
    expect(bystander.requests).toHaveLength(0);
  });

  it('takes a result only from the connection the command went to', async () => {
    const target = await approvedNode({ commands: ['system.notify'] });
    const other = await approvedNode({ commands: ['system.notify'] });
    const call = admin.request<any>('node.invoke', {
      nodeId: target.nodeId,
      command: 'system.notify',
      params: {},
      idempotencyKey: key(),
    });
    const request = (await target.nextEvent((e) => e.event === 'node.invoke.request')).payload;
    // Another node answering with its own id: not its invoke, ignored.
    expect(await other.result(request.id, { ok: true, payload: { forged: true } }, other.nodeId)).toEqual({
      ok: true,
      ignored: true,
    });
    // Another node claiming the target's id: refused.
    expect(await refusal(other.result(request.id, { ok: true, payload: { forged: true } }, target.nodeId))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'nodeId mismatch',
    });
    expect(await target.result(request.id, { ok: true, payload: { real: true } })).toEqual({ ok: true });
    expect((await call).payload).toEqual({ real: true });
  });

  it('times out, telling the node to cancel', async () => {
    const slow = await approvedNode({ commands: ['system.notify'] });
    const failed = await refusal(
      admin.request('node.invoke', {
        nodeId: slow.nodeId,
        command: 'system.notify',
        timeoutMs: 150,
        idempotencyKey: key(),
      }),
    );
    expect(failed.code).toBe('UNAVAILABLE');
    expect(failed.message).toMatch(/^TIMEOUT: node ".*" did not answer "system.notify" within 150 ms/);
    const cancel = await slow.nextEvent((e) => e.event === 'node.invoke.cancel');
    expect(cancel.payload).toEqual({ invokeId: slow.requests[0]!.id, nodeId: slow.nodeId });
  });

  it('fails at once with NODE_DISCONNECTED when the node goes away, and never sends it again', async () => {
    const first = await approvedNode({
      commands: ['system.notify'],
      onInvoke: (_request, self) => void self.kill(),
    });
    const idempotencyKey = key();
    const params = { nodeId: first.nodeId, command: 'system.notify', idempotencyKey, timeoutMs: 60_000 };
    const failed = await refusal(admin.request('node.invoke', params));
    expect(failed.code).toBe('UNAVAILABLE');
    expect(failed.message).toContain('NODE_DISCONNECTED');
    expect(failed.message).toContain('system.notify');
    expect(failed.message).toContain('was not retried');
    // The same node back on a new connection: the same key gets the same outcome, nothing is sent.
    const again = await node({ identity: first.identity, commands: ['system.notify'], onInvoke: echo });
    const retried = await refusal(admin.request('node.invoke', params));
    expect(retried.message).toContain('NODE_DISCONNECTED');
    expect(again.requests).toHaveLength(0);
    // A new key runs on the new connection.
    const fresh = await admin.request<any>('node.invoke', { ...params, idempotencyKey: key() });
    expect(fresh.ok).toBe(true);
    expect(again.requests).toHaveLength(1);
  });

  it('sends one command per idempotencyKey, however often it is asked', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const target = await approvedNode({
      commands: ['system.notify'],
      onInvoke: async (request) => {
        await gate;
        return { payload: { id: request.id } };
      },
    });
    const params = { nodeId: target.nodeId, command: 'system.notify', idempotencyKey: key() };
    const both = Promise.all([admin.request<any>('node.invoke', params), admin.request<any>('node.invoke', params)]);
    await target.nextEvent((e) => e.event === 'node.invoke.request');
    release();
    const [a, b] = await both;
    expect(a.payload).toEqual(b.payload);
    const later = await admin.request<any>('node.invoke', params);
    expect(later.payload).toEqual(a.payload);
    expect(target.requests).toHaveLength(1);
    expect(await refusal(admin.request('node.invoke', { ...params, command: 'system.which' }))).toMatchObject({
      code: 'INVALID_REQUEST',
    });
  });

  it('passes a node error on with its code', async () => {
    const target = await approvedNode({
      commands: ['system.notify'],
      onInvoke: () => ({ error: { code: 'NOTIFY_DENIED', message: 'notifications are off' } }),
    });
    const failed = await refusal(
      admin.request('node.invoke', { nodeId: target.nodeId, command: 'system.notify', idempotencyKey: key() }),
    );
    expect(failed).toEqual({ code: 'UNAVAILABLE', message: 'NOTIFY_DENIED: notifications are off' });
  });

  it('refuses system.run and system.run.prepare from operators (they go through the exec tool)', async () => {
    const host = await approvedNode({ commands: ['system.run', 'system.run.prepare'], onInvoke: echo });
    for (const command of ['system.run', 'system.run.prepare']) {
      const failed = await refusal(
        admin.request('node.invoke', { nodeId: host.nodeId, command, params: {}, idempotencyKey: key() }),
      );
      expect(failed.code).toBe('INVALID_REQUEST');
      expect(failed.message).toContain('exec tool');
    }
    expect(host.requests).toHaveLength(0);
  });

  it('serves the "nodes" service: list, resolve, invoke with ordered progress, abort', async () => {
    const nodes = await requireService<NodeService>({ capabilities: gw.kernel.capabilities }, NODES_SERVICE, 'test');
    const target = await approvedNode({
      displayName: 'build-box',
      commands: ['system.run', 'system.notify'],
      onInvoke: async (request, self) => {
        if (request.command !== 'system.run') return undefined;
        // Sent out of order: the caller must still see them in seq order.
        for (const seq of [1, 0, 2])
          await self.request('node.invoke.progress', {
            invokeId: request.id,
            nodeId: self.nodeId,
            seq,
            chunk: `c${seq}`,
          });
        return { payload: { exitCode: 0 } };
      },
    });
    const listed = (await nodes.list()).find((n) => n.nodeId === target.nodeId)!;
    expect(listed).toMatchObject({ connected: true, paired: true, displayName: 'build-box', platform: 'linux' });
    expect(listed.commands).toEqual(['system.notify', 'system.run']);
    expect((await nodes.resolve('build-box')).nodeId).toBe(target.nodeId);
    expect((await nodes.resolve(target.nodeId.slice(0, 10))).nodeId).toBe(target.nodeId);
    await expect(nodes.resolve('nowhere')).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const chunks: string[] = [];
    const payload = await nodes.invoke(
      target.nodeId,
      'system.run',
      { command: ['true'] },
      { onProgress: (c) => chunks.push(c) },
    );
    expect(payload).toEqual({ exitCode: 0 });
    expect(chunks).toEqual(['c0', 'c1', 'c2']);

    const controller = new AbortController();
    const aborted = nodes.invoke(target.nodeId, 'system.notify', {}, { signal: controller.signal });
    await target.nextEvent((e) => e.event === 'node.invoke.request' && e.payload.command === 'system.notify');
    controller.abort();
    // The plugin may load its own copy of the SDK: the error is known by name and code.
    await expect(aborted).rejects.toMatchObject({ name: 'NodeInvokeError', code: 'ABORTED' });
    const cancel = await target.nextEvent((e) => e.event === 'node.invoke.cancel');
    expect(cancel.payload.nodeId).toBe(target.nodeId);
  });
});

describe('what OpenClaw node hosts publish for features claw lacks', () => {
  it('refuses skills, plugin tools and runner inventory as unavailable, and only from nodes', async () => {
    const fake = await node({ commands: [] });
    for (const [method, what] of [
      ['node.skills.update', 'node skills'],
      ['node.pluginTools.update', 'node plugin tools'],
      ['node.runnerInventory.update', 'node workers'],
    ] as const) {
      const refused = await refusal(fake.request(method, {}));
      expect(refused.code, method).toBe('UNAVAILABLE');
      expect(refused.message, method).toContain(`claw has no ${what}`);
      expect((await refusal(admin.request(method, {}))).code, method).toBe('FORBIDDEN');
    }
  });
});

describe('node identity and tokens', () => {
  it('refuses a node without a device identity', async () => {
    const anonymous = new FakeNode({ url: gw.url, token: TEST_TOKEN, identity: null });
    const failed = await refusal(anonymous.connect());
    expect(failed.code).toBe('NOT_PAIRED');
    expect(failed.message).toContain('device identity required for role "node"');
  });

  it('refuses a wrong or revoked device token', async () => {
    const first = await node({ commands: [] });
    const deviceToken = first.hello.auth.deviceToken as string;
    expect(deviceToken).toBeTruthy();
    await first.close();
    const wrong = new FakeNode({ url: gw.url, identity: first.identity, deviceToken: `${deviceToken}x` });
    expect((await refusal(wrong.connect())).message).toContain('unauthorized');
    const right = await node({ identity: first.identity, token: undefined, deviceToken });
    await right.close();
    await admin.request('device.token.revoke', { deviceId: first.nodeId, role: 'node' });
    const revoked = new FakeNode({ url: gw.url, identity: first.identity, deviceToken });
    expect((await refusal(revoked.connect())).message).toContain('unauthorized');
  });
});
