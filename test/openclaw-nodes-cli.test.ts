/**
 * OpenClaw's own CLI against claw's gateway for nodes: `openclaw nodes status|list|pending|
 * describe|approve|invoke` with fake nodes (OpenClaw's node wire, signed identities) connected,
 * and setup codes both ways — `openclaw qr --json` makes a code claw reads, and OpenClaw's node
 * host pairs with a code claw's gateway minted (`openclaw node run --pair`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { decodeSetupCode } from '../plugins/gateway/setup-codes.js';
import { connectFakeNode, FakeNodeRefused, type FakeNode } from './fakes/node.js';
import { client, startGateway, TEST_TOKEN, type RunningGateway } from './gateway-helpers.js';
import { tempDir, waitFor } from './helpers.js';
import { OPENCLAW, openclawNode, runOpenclaw } from './openclaw-cli.js';

const REMOTE = { 'x-forwarded-for': '203.0.113.11' };
/** OpenClaw in tests never reaches the internet. */
const OFFLINE = { models: { catalogRefresh: { enabled: false } }, update: { checkOnStart: false } };

let gw: RunningGateway;
let operator: GatewayClient;
let den: FakeNode;
let pendingRequestId: string;
const events: Array<{ event: string; payload: any }> = [];
const nodes: FakeNode[] = [];
let nodeHost: ChildProcess | undefined;

beforeAll(async () => {
  gw = await startGateway();
  operator = await client(gw.url, { onEvent: (frame) => events.push({ event: frame.event, payload: frame.payload }) });
  den = await connectFakeNode({
    url: gw.url,
    displayName: 'Den',
    platform: 'windows',
    caps: ['device'],
    commands: ['device.info'],
    auth: { token: TEST_TOKEN },
    handle: (command) => ({ command, model: 'fake-1' }),
  });
  nodes.push(den);
  const refused = await connectFakeNode({
    url: gw.url,
    headers: REMOTE,
    displayName: 'Garage',
    auth: { token: TEST_TOKEN },
  })
    .then(() => undefined)
    .catch((error: FakeNodeRefused) => error);
  pendingRequestId = refused!.error.details.requestId;
}, 60_000);

afterAll(async () => {
  if (nodeHost && nodeHost.exitCode === null) {
    const exited = new Promise((resolve) => nodeHost!.once('exit', resolve));
    nodeHost.kill('SIGTERM');
    await exited;
  }
  await Promise.all(nodes.map((node) => node.close()));
  await operator?.close();
  await gw?.stop();
});

/** `openclaw nodes …` against claw's gateway. */
async function openclawNodes(...args: string[]) {
  const result = await runOpenclaw(['nodes', ...args, '--url', gw.url, '--token', TEST_TOKEN], OFFLINE);
  return { ...result, json: () => JSON.parse(result.stdout) };
}

describe('openclaw nodes against claw', () => {
  it('status and list show the connected node and the pending one', async () => {
    const status = await openclawNodes('status', '--json');
    expect(status.code, status.stderr).toBe(0);
    const byName = Object.fromEntries(status.json().nodes.map((n: any) => [n.displayName, n]));
    expect(byName.Den).toMatchObject({ nodeId: den.identity.deviceId, connected: true, paired: true });
    expect(byName.Garage).toMatchObject({ connected: false, paired: false, pendingRequestId });

    const text = await openclawNodes('status');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Known: 2 · Paired: 1 · Connected: 1');

    const list = await openclawNodes('list', '--json');
    expect(list.code, list.stderr).toBe(0);
    // Garage's device asks to pair; Den (paired on loopback) asks for the commands it declared.
    expect(list.json().pending).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ requestId: pendingRequestId }),
        expect.objectContaining({ nodeId: den.identity.deviceId, commands: ['device.info'] }),
      ]),
    );
    expect(list.json().paired).toEqual([expect.objectContaining({ nodeId: den.identity.deviceId })]);
  }, 120_000);

  it('pending, describe and approve', async () => {
    const pending = await openclawNodes('pending', '--json');
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.json()).toHaveLength(2);
    expect(pending.json()).toContainEqual(
      expect.objectContaining({ requestId: pendingRequestId, displayName: 'Garage' }),
    );
    const surface = pending.json().find((r: any) => r.nodeId === den.identity.deviceId);

    const described = await openclawNodes('describe', '--node', 'Den', '--json');
    expect(described.code, described.stderr).toBe(0);
    expect(described.json()).toMatchObject({ nodeId: den.identity.deviceId, caps: ['device'] });

    for (const requestId of [pendingRequestId, surface.requestId]) {
      const approved = await openclawNodes('approve', requestId);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.json()).toMatchObject({ requestId });
    }
    const after: any = await operator.request('node.pair.list', {});
    expect(after.pending).toEqual([]);
  }, 120_000);

  it("invoke reaches the node and prints OpenClaw's result", async () => {
    const invoked = await openclawNodes('invoke', '--node', 'Den', '--command', 'device.info');
    expect(invoked.code, invoked.stderr).toBe(0);
    expect(invoked.json()).toMatchObject({
      ok: true,
      nodeId: den.identity.deviceId,
      command: 'device.info',
      payload: { command: 'device.info', model: 'fake-1' },
    });
    const shell = await openclawNodes('invoke', '--node', 'Den', '--command', 'system.run');
    expect(shell.code).not.toBe(0);
    expect(shell.stdout + shell.stderr).toContain('reserved for shell execution');
  }, 120_000);
});

describe('setup codes between OpenClaw and claw', () => {
  it("openclaw qr --json makes a code in the encoding claw's decoder reads", async () => {
    const config = { ...OFFLINE, gateway: { auth: { mode: 'token', token: TEST_TOKEN } } };
    const result = await runOpenclaw(['qr', '--json', '--url', 'ws://192.168.1.20:18789'], config);
    expect(result.code, result.stderr).toBe(0);
    const qr = JSON.parse(result.stdout);
    expect(qr).toMatchObject({ gatewayUrl: 'ws://192.168.1.20:18789', auth: 'token' });
    expect(decodeSetupCode(qr.setupCode)).toMatchObject({
      url: 'ws://192.168.1.20:18789',
      bootstrapToken: expect.any(String),
    });
  }, 120_000);

  it("OpenClaw's node host pairs with a setup code claw minted", async () => {
    const minted: any = await operator.request('device.pair.setupCode', { publicUrl: gw.url, includeQr: false });
    const home = tempDir('openclaw-node-');
    mkdirSync(join(home, '.openclaw'), { mode: 0o700 });
    let output = '';
    nodeHost = spawn(openclawNode(), [OPENCLAW, 'node', 'run', '--pair', minted.setupCode], {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        OPENCLAW_STATE_DIR: join(home, '.openclaw'),
        NO_COLOR: '1',
        TERM: 'dumb',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    nodeHost.stdout!.on('data', (chunk) => (output += chunk));
    nodeHost.stderr!.on('data', (chunk) => (output += chunk));
    const completed = await waitFor(
      () => events.find((e) => e.event === 'device.pair.setup.completed' && e.payload.setupId === minted.setupId),
      { what: "OpenClaw's node host to pair", timeoutMs: 60_000 },
    );
    const list: any = await operator.request('node.list', {});
    expect(list.nodes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ nodeId: completed.payload.deviceId, paired: true, connected: true }),
      ]),
    );
    expect(await operator.request('device.pair.setupStatus', { setupId: minted.setupId })).toEqual({
      completion: completed.payload,
    });
  }, 120_000);
});
