/**
 * What a node may be sent: its command surface approved by an operator (with OpenClaw's approver
 * scopes), the command policy (platform defaults, dangerous opt-in, gateway.nodes.commands
 * allow/deny), first-time node pairing from trusted networks, and what a node reports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { client, refusal, startGateway, TEST_TOKEN, type RunningGateway } from './gateway-helpers.js';
import { FakeNode, type FakeNodeOptions } from './node-fake.js';

let gw: RunningGateway;
let admin: GatewayClient;
const opened: Array<{ close(): unknown }> = [];

const echo: FakeNodeOptions['onInvoke'] = (request) => ({ payload: { ran: request.command } });
let keys = 0;
const key = () => `p-${++keys}`;

async function node(options: Partial<FakeNodeOptions> = {}, url = gw.url): Promise<FakeNode> {
  const fake = new FakeNode({ url, token: TEST_TOKEN, onInvoke: echo, ...options });
  opened.push(fake);
  await fake.connect();
  return fake;
}

async function pendingFor(nodeId: string): Promise<any> {
  const list = await admin.request<any>('node.pair.list', {});
  return list.pending.find((r: any) => r.nodeId === nodeId);
}

async function approve(nodeId: string): Promise<void> {
  const request = await pendingFor(nodeId);
  await admin.request('node.pair.approve', { requestId: request.requestId });
}

const invoke = (nodeId: string, command: string, by: GatewayClient = admin) =>
  by.request<any>('node.invoke', { nodeId, command, params: {}, idempotencyKey: key() });

beforeAll(async () => {
  gw = await startGateway({
    gateway: { nodes: { commands: { allow: ['camera.snap', 'custom.cmd'], deny: ['camera.list'] } } },
  });
  admin = await client(gw.url);
  opened.push(admin);
});

afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()));
  await gw?.stop();
});

describe('command surface', () => {
  it('a new node has no effective commands until its surface is approved, then at once (no reconnect)', async () => {
    const watcher: any[] = [];
    const pairer = await client(gw.url, {
      scopes: ['operator.pairing'],
      onEvent: (frame) => watcher.push(frame),
    });
    opened.push(pairer);
    const fresh = await node({ commands: ['system.notify'], caps: ['notify'] });
    const request = await pendingFor(fresh.nodeId);
    expect(request).toMatchObject({
      nodeId: fresh.nodeId,
      commands: ['system.notify'],
      caps: ['notify'],
      requiredApproveScopes: ['operator.pairing', 'operator.write'],
    });
    expect(
      watcher.find((f) => f.event === 'node.pair.requested' && f.payload.requestId === request.requestId),
    ).toBeTruthy();
    expect(await admin.request<any>('node.describe', { nodeId: fresh.nodeId })).toMatchObject({
      approvalState: 'pending-approval',
      commands: [],
      declaredCommands: ['system.notify'],
      pendingRequestId: request.requestId,
      pendingDeclaredCommands: ['system.notify'],
    });
    const refused = await refusal(invoke(fresh.nodeId, 'system.notify'));
    expect(refused.code).toBe('INVALID_REQUEST');
    expect(refused.message).toContain('approved command surface');

    // operator.pairing alone may not approve commands.
    const forbidden = await refusal(pairer.request('node.pair.approve', { requestId: request.requestId }));
    expect(forbidden.code).toBe('FORBIDDEN');
    expect(forbidden.message).toContain('missing scope: operator.write');

    await admin.request('node.pair.approve', { requestId: request.requestId });
    const resolved = await fresh.nextEvent((e) => e.event === 'node.pair.resolved');
    expect(resolved.payload).toMatchObject({
      requestId: request.requestId,
      nodeId: fresh.nodeId,
      decision: 'approved',
    });
    expect((await invoke(fresh.nodeId, 'system.notify')).payload).toEqual({ ran: 'system.notify' });
    expect(await admin.request<any>('node.describe', { nodeId: fresh.nodeId })).toMatchObject({
      approvalState: 'approved',
      commands: ['system.notify'],
      pendingRequestId: null,
    });
  });

  it('approver scopes: commandless needs operator.pairing, host commands need operator.admin', async () => {
    const pairer = await client(gw.url, { scopes: ['operator.pairing'] });
    const writer = await client(gw.url, { scopes: ['operator.pairing', 'operator.write'] });
    opened.push(pairer, writer);
    const capsOnly = await node({ caps: ['canvas'] });
    const capsRequest = await pendingFor(capsOnly.nodeId);
    expect(capsRequest.requiredApproveScopes).toEqual(['operator.pairing']);
    await pairer.request('node.pair.approve', { requestId: capsRequest.requestId });

    const host = await node({ commands: ['system.which'] });
    const hostRequest = await pendingFor(host.nodeId);
    expect(hostRequest.requiredApproveScopes).toEqual(['operator.pairing', 'operator.admin']);
    const refused = await refusal(writer.request('node.pair.approve', { requestId: hostRequest.requestId }));
    expect(refused.code).toBe('FORBIDDEN');
    expect(refused.message).toContain('missing scope: operator.admin');
    await admin.request('node.pair.approve', { requestId: hostRequest.requestId });
    expect((await invoke(host.nodeId, 'system.which')).payload).toEqual({ ran: 'system.which' });
  });

  it('a rejected surface leaves the node without commands; the node hears of it', async () => {
    const fake = await node({ commands: ['system.notify'] });
    const request = await pendingFor(fake.nodeId);
    expect(await admin.request('node.pair.reject', { requestId: request.requestId })).toEqual({
      requestId: request.requestId,
      nodeId: fake.nodeId,
    });
    const resolved = await fake.nextEvent((e) => e.event === 'node.pair.resolved');
    expect(resolved.payload.decision).toBe('rejected');
    expect(await pendingFor(fake.nodeId)).toBeUndefined();
    expect((await admin.request<any>('node.describe', { nodeId: fake.nodeId })).commands).toEqual([]);
    expect((await refusal(invoke(fake.nodeId, 'system.notify'))).message).toContain('approved command surface');
  });

  it('a wider declaration waits for approval while the approved commands stay effective', async () => {
    const first = await node({ commands: ['system.notify'] });
    await approve(first.nodeId);
    await first.close();
    const wider = await node({ identity: first.identity, commands: ['system.notify', 'system.which'] });
    const described = await admin.request<any>('node.describe', { nodeId: wider.nodeId });
    expect(described).toMatchObject({
      approvalState: 'pending-reapproval',
      commands: ['system.notify'],
      pendingDeclaredCommands: ['system.notify', 'system.which'],
    });
    expect((await invoke(wider.nodeId, 'system.notify')).payload).toEqual({ ran: 'system.notify' });
    expect((await refusal(invoke(wider.nodeId, 'system.which'))).message).toContain('approved command surface');
    // The same declaration again keeps the same request.
    await wider.close();
    const again = await node({ identity: first.identity, commands: ['system.notify', 'system.which'] });
    expect((await pendingFor(again.nodeId)).requestId).toBe(described.pendingRequestId);
  });
});

describe('command policy', () => {
  const declared = [
    'system.notify',
    'system.which',
    'camera.snap',
    'camera.clip',
    'camera.list',
    'location.get',
    'custom.cmd',
  ];

  it('linux: platform defaults, approved host commands, dangerous only through allow, deny wins', async () => {
    const linux = await node({ platform: 'linux', commands: declared });
    await approve(linux.nodeId);
    const described = await admin.request<any>('node.describe', { nodeId: linux.nodeId });
    expect(described.commands).toEqual(['camera.snap', 'custom.cmd', 'system.notify', 'system.which']);
    const cases: Array<[string, string]> = [
      ['camera.clip', 'needs an explicit opt-in in gateway.nodes.commands.allow'],
      ['camera.list', 'blocked by gateway.nodes.commands.deny'],
      ['location.get', 'not allowed for platform "linux"'],
      ['sms.send', 'did not declare "sms.send"'],
    ];
    for (const [command, why] of cases) {
      const refused = await refusal(invoke(linux.nodeId, command));
      expect(refused.code, command).toBe('INVALID_REQUEST');
      expect(refused.message, command).toContain(why);
      expect(refused.message, command).toContain(linux.nodeId);
    }
    expect((await invoke(linux.nodeId, 'camera.snap')).payload).toEqual({ ran: 'camera.snap' });
    expect(linux.requests.map((r) => r.command)).toEqual(['camera.snap']);
  });

  it('an unknown platform gets no system.* host commands; ios gets its own defaults', async () => {
    const odd = await node({ platform: 'plan9', commands: declared });
    await approve(odd.nodeId);
    expect((await admin.request<any>('node.describe', { nodeId: odd.nodeId })).commands).toEqual([
      'camera.snap',
      'custom.cmd',
      'location.get',
      'system.notify',
    ]);
    expect((await refusal(invoke(odd.nodeId, 'system.which'))).message).toContain('not allowed for platform "unknown"');
    const phone = await node({ platform: 'iOS 18.1', commands: declared });
    await approve(phone.nodeId);
    expect((await admin.request<any>('node.describe', { nodeId: phone.nodeId })).commands).toEqual([
      'camera.snap',
      'custom.cmd',
      'location.get',
      'system.notify',
    ]);
  });

  it('operators need operator.admin for admin-only commands (fs.listDir, browser.proxy)', async () => {
    const writer = await client(gw.url, { scopes: ['operator.write'] });
    opened.push(writer);
    const host = await node({ commands: ['fs.listDir'] });
    await approve(host.nodeId);
    const refused = await refusal(invoke(host.nodeId, 'fs.listDir', writer));
    expect(refused).toMatchObject({ code: 'FORBIDDEN', message: 'missing scope: operator.admin' });
    expect((await invoke(host.nodeId, 'fs.listDir')).payload).toEqual({ ran: 'fs.listDir' });
  });
});

describe('a config change', () => {
  it('applies gateway.nodes.commands.deny to the next invoke, without a restart', async () => {
    const fake = await node({ commands: ['system.notify'] });
    await approve(fake.nodeId);
    expect((await invoke(fake.nodeId, 'system.notify')).payload).toEqual({ ran: 'system.notify' });
    const { hash } = await admin.request<any>('config.get', {});
    const patched = await admin.request<any>('config.patch', {
      patch: { gateway: { nodes: { commands: { deny: ['camera.list', 'system.notify'] } } } },
      baseHash: hash,
    });
    expect(patched.restartRequired).toBeFalsy();
    expect((await refusal(invoke(fake.nodeId, 'system.notify'))).message).toContain('gateway.nodes.commands.deny');
    expect((await admin.request<any>('node.describe', { nodeId: fake.nodeId })).commands).toEqual([]);
  });
});

describe('what a node reports', () => {
  it('node.host.stats is kept on the paired record, listed, and sent to operators as node.hostStats', async () => {
    const seen: any[] = [];
    const reader = await client(gw.url, { scopes: ['operator.read'], onEvent: (frame) => seen.push(frame) });
    opened.push(reader);
    const fake = await node({ commands: [] });
    // Declaring nothing asks for nothing: no surface request.
    expect(await pendingFor(fake.nodeId)).toBeUndefined();
    const stats = { cpuCount: 4, loadAverage: [0.5, 0.4, 0.3], memoryTotalBytes: 8000, memoryFreeBytes: 2000 };
    expect(await fake.request('node.event', { event: 'node.host.stats', payloadJSON: JSON.stringify(stats) })).toEqual({
      ok: true,
      event: 'node.host.stats',
      handled: true,
      reason: 'updated',
    });
    expect(
      await fake.request('node.event', { event: 'node.host.stats', payload: { ...stats, memoryFreeBytes: 9000 } }),
    ).toMatchObject({ handled: false, reason: 'invalid_payload' });
    expect(await fake.request('node.event', { event: 'voice.transcript', payload: { text: 'hi' } })).toEqual({
      ok: true,
    });
    const described = await admin.request<any>('node.describe', { nodeId: fake.nodeId });
    expect(described.hostStats).toMatchObject({ ...stats, updatedAtMs: expect.any(Number) });
    const paired = (await admin.request<any>('node.pair.list', {})).paired.find((n: any) => n.nodeId === fake.nodeId);
    expect(paired.lastHostStats).toMatchObject(stats);
    const event = seen.find((f) => f.event === 'node.hostStats' && f.payload.nodeId === fake.nodeId);
    expect(event?.payload.hostStats).toMatchObject(stats);
  });

  it('a connected node is in system-presence', async () => {
    const fake = await node({ displayName: 'presence-node' });
    const presence = await admin.request<any[]>('system-presence', {});
    expect(presence.find((p) => p.deviceId === fake.nodeId)).toMatchObject({ roles: ['node'], mode: 'node' });
  });
});

describe('gateway.nodes.pairing.autoApproveCidrs', () => {
  it('pairs a first-time node from a trusted range without an operator, but not its surface, and no operator', async () => {
    const trusting = await startGateway({
      gateway: { pairing: { autoApproveLoopback: false }, nodes: { pairing: { autoApproveCidrs: ['127.0.0.0/8'] } } },
    });
    const strict = await startGateway({ gateway: { pairing: { autoApproveLoopback: false } } });
    opened.push({ close: () => trusting.stop() }, { close: () => strict.stop() });
    const trusted = await node({ commands: ['system.notify'] }, trusting.url);
    expect(trusted.hello.auth.role).toBe('node');
    const store = JSON.parse(readFileSync(join(trusting.stateDir, 'devices', 'pairing.json'), 'utf8'));
    const record = store.paired[trusted.nodeId];
    expect(record).toMatchObject({ approvedBy: 'cidr', surfaceRequest: { commands: ['system.notify'] } });
    expect(record.surface).toBeUndefined();
    const operator = await refusal(client(trusting.url));
    expect(operator.message).toContain('pairing required');
    const elsewhere = await refusal(new FakeNode({ url: strict.url, token: TEST_TOKEN }).connect());
    expect(elsewhere.message).toContain('pairing required');
  });
});
