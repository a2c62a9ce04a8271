/**
 * `claw nodes …` and `claw qr` against a running gateway with fake nodes on OpenClaw's node wire:
 * status, list, pending, describe (by id prefix, name or IP), approve, rename, remove, the
 * refusals made before anything is sent (system.run through invoke, a notify with nothing to
 * say), `nodes run` without a gateway that runs tools for the CLI, and a setup code from `claw qr`
 * that pairs a node.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSetupCode } from '../plugins/gateway/setup-codes.js';
import { connectFakeNode, FakeNodeRefused, type FakeNode } from './fakes/node.js';
import { startGateway, TEST_TOKEN, type RunningGateway } from './gateway-helpers.js';
import { claw, tempDir } from './helpers.js';

const REMOTE = { 'x-forwarded-for': '203.0.113.9' };

let gw: RunningGateway;
let env: Record<string, string>;
let den: FakeNode;
let pendingRequestId: string;
/** The commands Kitchen Pi declared, waiting for an operator (its device was approved on loopback). */
let surfaceRequestId: string;
const open: FakeNode[] = [];

const run = (...args: string[]) => claw(args, env);
async function runJson(...args: string[]): Promise<any> {
  const result = await run(...args, '--json');
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

beforeAll(async () => {
  gw = await startGateway();
  const home = tempDir('claw-nodes-cli-');
  env = {
    OPENCLAW_STATE_DIR: join(home, 'state'),
    OPENCLAW_CONFIG_PATH: join(home, 'openclaw.json'),
    OPENCLAW_GATEWAY_URL: gw.url,
    OPENCLAW_GATEWAY_TOKEN: TEST_TOKEN,
  };
  // On loopback the device is approved at once; the remote one waits for an operator.
  den = await connectFakeNode({
    url: gw.url,
    displayName: 'Kitchen Pi',
    platform: 'windows',
    caps: ['system'],
    commands: ['device.info', 'system.notify'],
    auth: { token: TEST_TOKEN },
  });
  open.push(den);
  const refused = await connectFakeNode({
    url: gw.url,
    headers: REMOTE,
    displayName: 'Garage',
    auth: { token: TEST_TOKEN },
  }).catch((error: FakeNodeRefused) => error);
  pendingRequestId = (refused as FakeNodeRefused).error.details.requestId;
}, 60_000);

afterAll(async () => {
  await Promise.all(open.map((node) => node.close()));
  await gw?.stop();
});

describe('claw nodes', () => {
  it("status: OpenClaw's node.list JSON, filtered by --connected and --last-connected, and a table", async () => {
    const all = await runJson('nodes', 'status');
    expect(all).toMatchObject({ ts: expect.any(Number), nodes: expect.any(Array) });
    expect(all.nodes.map((n: any) => n.displayName).sort()).toEqual(['Garage', 'Kitchen Pi']);
    const connected = await runJson('nodes', 'status', '--connected');
    expect(connected.nodes).toEqual([
      expect.objectContaining({ nodeId: den.identity.deviceId, connected: true, paired: true }),
    ]);
    expect((await runJson('nodes', 'status', '--last-connected', '1h')).nodes).toHaveLength(1);

    const text = await run('nodes', 'status');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Known: 2 · Paired: 1 · Connected: 1');
    expect(text.stdout).toMatch(/NODE\s+ID\s+IP\s+PLATFORM\s+STATUS\s+CAPS\s+COMMANDS/);
    expect(text.stdout).toContain(`Approval pending for Garage`);
    expect(text.stdout).toContain(`claw nodes approve ${pendingRequestId}`);

    const bad = await run('nodes', 'status', '--last-connected', 'soon');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--last-connected must be a duration');
  });

  it('list and pending: the device request, the surface request and the paired node', async () => {
    const listed = await runJson('nodes', 'list');
    expect(listed.pending).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ requestId: pendingRequestId, displayName: 'Garage' }),
        expect.objectContaining({
          nodeId: den.identity.deviceId,
          commands: ['device.info', 'system.notify'],
          requiredApproveScopes: ['operator.pairing', 'operator.write'],
        }),
      ]),
    );
    expect(listed.pending).toHaveLength(2);
    surfaceRequestId = listed.pending.find((r: any) => r.nodeId === den.identity.deviceId).requestId;
    expect(listed.paired).toEqual([
      expect.objectContaining({ nodeId: den.identity.deviceId, displayName: 'Kitchen Pi', connected: true }),
    ]);
    expect(await runJson('nodes', 'pending')).toEqual(listed.pending);
    const text = await run('nodes', 'list');
    expect(text.stdout).toContain('Pending: 2 · Paired: 1');
    expect(text.stdout).toMatch(/REQUEST\s+NODE\s+ID\s+IP\s+COMMANDS\s+APPROVER NEEDS\s+ASKED/);
  });

  it('describe finds a node by id prefix or display name, and says when none matches', async () => {
    const byPrefix = await runJson('nodes', 'describe', '--node', den.identity.deviceId.slice(0, 10));
    expect(byPrefix).toMatchObject({ nodeId: den.identity.deviceId, caps: ['system'] });
    const byName = await run('nodes', 'describe', '--node', 'kitchen pi');
    expect(byName.code, byName.stderr).toBe(0);
    expect(byName.stdout).toMatch(/^Node\s+Kitchen Pi$/m);
    expect(byName.stdout).toMatch(/^Caps\s+system$/m);
    const missing = await run('nodes', 'describe', '--node', 'nowhere');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no node matches "nowhere"');
  });

  it('approve (a device request, then a surface request) and rename', async () => {
    const approved = await run('nodes', 'approve', pendingRequestId);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(new RegExp(`^Approved request ${pendingRequestId} \\(node \\w+\\)\\.`));
    expect(await runJson('nodes', 'approve', surfaceRequestId)).toMatchObject({ requestId: surfaceRequestId });
    expect((await runJson('nodes', 'describe', '--node', 'Kitchen Pi')).commands).toEqual([
      'device.info',
      'system.notify',
    ]);
    const renamed = await runJson('nodes', 'rename', '--node', 'Kitchen Pi', '--name', 'Den');
    expect(renamed).toEqual({ nodeId: den.identity.deviceId, displayName: 'Den' });
    expect((await runJson('nodes', 'describe', '--node', 'Den')).displayName).toBe('Den');
  });

  it('refuses before sending: system.run through invoke, bad params, a notify with nothing to say', async () => {
    const shell = await run('nodes', 'invoke', '--node', 'Den', '--command', 'system.run');
    expect(shell.code).toBe(2);
    expect(shell.stderr).toContain('reserved for shell execution: use claw nodes run');
    const params = await run('nodes', 'invoke', '--node', 'Den', '--command', 'device.info', '--params', '[1]');
    expect(params.code).toBe(2);
    expect(params.stderr).toContain('--params must be a JSON object');
    const notify = await run('nodes', 'notify', '--node', 'Den');
    expect(notify.code).toBe(2);
    expect(notify.stderr).toContain('needs --title or --body');
    const priority = await run('nodes', 'notify', '--node', 'Den', '--title', 'x', '--priority', 'loud');
    expect(priority.code).toBe(2);
    expect(priority.stderr).toContain('--priority must be passive, active, timeSensitive');
  });

  it('invoke and notify reach the node and bring back its answer', async () => {
    const invoked = await runJson(
      'nodes',
      'invoke',
      '--node',
      'Den',
      '--command',
      'device.info',
      '--params',
      '{"x":1}',
    );
    expect(invoked).toMatchObject({
      ok: true,
      nodeId: den.identity.deviceId,
      command: 'device.info',
      payload: { echo: { x: 1 } },
    });
    const notified = await run('nodes', 'notify', '--node', 'Den', '--title', 'Build', '--body', 'done');
    expect(notified.code, notified.stderr).toBe(0);
    expect(notified.stdout).toBe('notify ok\n');
    const sent = den.events.filter((e) => e.event === 'node.invoke.request').map((e) => e.payload);
    expect(sent.at(-1)).toMatchObject({ command: 'system.notify', timeoutMs: 15_000 });
    expect(JSON.parse(sent.at(-1).paramsJSON)).toEqual({ title: 'Build', body: 'done', delivery: 'system' });
    const refused = await run('nodes', 'invoke', '--node', 'Den', '--command', 'camera.snap');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('camera.snap');
  });

  it("run is the exec tool with host node, through the gateway's tools.invoke", async () => {
    // This gateway runs without the exec tool's plugin, so the tool path answers that it has none.
    const result = await run('nodes', 'run', '--node', 'Den', '--', 'uname', '-a');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('claw: no tool named "exec"\n');
    const json = await run('nodes', 'run', '--node', 'Den', '--json', '--', 'uname', '-a');
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      toolName: 'exec',
      error: { code: 'not_found', message: 'no tool named "exec"' },
    });
  });

  it('remove takes the pairing away and disconnects the node', async () => {
    const removed = await run('nodes', 'remove', '--node', den.identity.deviceId);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('Removed paired node Den');
    const left = await runJson('nodes', 'status');
    expect(left.nodes.find((n: any) => n.nodeId === den.identity.deviceId)).toBeUndefined();
  });
});

describe('claw qr', () => {
  it('needs a URL a node can reach when the gateway listens on loopback only', async () => {
    const result = await run('qr');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('only bound to loopback');
  });

  it('--json gives a setup code that pairs a node once', async () => {
    const code = await runJson('qr', '--url', gw.url);
    expect(code).toEqual({
      setupCode: expect.any(String),
      gatewayUrl: gw.url,
      auth: 'token',
      urlSource: 'request.publicUrl',
      access: 'node',
      setupId: expect.any(String),
      expiresAtMs: expect.any(Number),
    });
    const { bootstrapToken } = decodeSetupCode(code.setupCode);
    const node = await connectFakeNode({
      url: gw.url,
      headers: REMOTE,
      displayName: 'Porch',
      auth: { bootstrapToken },
    });
    open.push(node);
    expect(node.hello.auth.deviceToken).toEqual(expect.any(String));
    // hello-ok comes after the connection is registered, so the node is listed by now.
    expect((await runJson('nodes', 'status', '--connected')).nodes).toEqual([
      expect.objectContaining({ nodeId: node.identity.deviceId, displayName: 'Porch', paired: true }),
    ]);
  });

  it('prints the code with a terminal QR', async () => {
    const result = await run('qr', '--url', gw.url);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Setup code: [A-Za-z0-9_-]+$/m);
    expect(result.stdout).toContain(`Gateway:    ${gw.url}`);
    expect(result.stdout).toMatch(/[▀▄█]/);
    const only = await run('qr', '--url', gw.url, '--setup-code-only');
    expect(only.stdout.trim()).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});
