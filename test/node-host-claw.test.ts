/**
 * `claw node run` (a real process with its own state dir) against claw's gateway: device
 * pairing with `claw devices approve`, the command surface approved by an admin, system.which
 * through node.invoke, the node's own allowlist refusing a command the gateway let through,
 * and `kill -9` of the node host while a command runs — the caller is told at once, the
 * command's process group dies with the node host, the restarted node host reconnects with
 * the same identity, and the command never runs a second time (a marker file counts runs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODES_SERVICE, type NodeInvokeError, type NodeService } from '../sdk/index.js';
import { requireService } from '../sdk/services.js';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { client, startGateway, TEST_TOKEN, type RunningGateway } from './gateway-helpers.js';
import { CLI, tempDir, waitFor } from './helpers.js';

const NAME = 'claw-node-e2e';

let gw: RunningGateway;
let admin: GatewayClient;
let nodes: NodeService;
let nodeHome: string;
let nodeState: string;
let host: { child: ChildProcess; output: () => string } | undefined;
let deviceId: string;

function startNodeHost(): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(
    process.execPath,
    [CLI, 'node', 'run', '--host', '127.0.0.1', '--port', String(gw.port), '--display-name', NAME],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: nodeHome,
        OPENCLAW_STATE_DIR: nodeState,
        OPENCLAW_GATEWAY_TOKEN: TEST_TOKEN,
        NO_COLOR: '1',
      },
      cwd: nodeHome,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

async function stopNodeHost(): Promise<void> {
  const child = host?.child;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

beforeAll(async () => {
  gw = await startGateway({ gateway: { pairing: { autoApproveLoopback: false } } });
  // Without a device identity: an operator on this machine, admitted without pairing (it would wait too).
  admin = await client(gw.url, { identity: undefined });
  nodes = await requireService<NodeService>(gw.kernel.plugins.kernelServices, NODES_SERVICE, 'test');
  nodeHome = tempDir('claw-node-home-');
  nodeState = join(nodeHome, '.claw');
  mkdirSync(nodeState, { recursive: true, mode: 0o700 });
  // The node's own policy: agent "locked" may run only /usr/bin/true; everyone else anything.
  writeFileSync(
    join(nodeState, 'exec-approvals.json'),
    JSON.stringify({
      version: 1,
      agents: { locked: { security: 'allowlist', allowlist: [{ pattern: '/usr/bin/true' }] } },
    }),
    { mode: 0o600 },
  );
  host = startNodeHost();
}, 120_000);

afterAll(async () => {
  await stopNodeHost();
  await admin?.close();
  await gw?.stop();
}, 60_000);

describe('claw node run against claw’s gateway', () => {
  it('waits for device pairing, naming the request to approve, and resumes by itself once approved', async () => {
    const hint = await waitFor(() => /claw devices approve (\S+)`/.exec(host!.output()), {
      timeoutMs: 90_000,
      what: `the pairing hint:\n${host!.output()}`,
    });
    // What `claw devices approve <requestId>` sends.
    await admin.request('device.pair.approve', { requestId: hint[1] });
    await waitFor(() => /connected to ws:/.test(host!.output()), {
      timeoutMs: 90_000,
      what: `the reconnect after approval:\n${host!.output()}`,
    });
    deviceId = /device ([0-9a-f]{64})/.exec(host!.output())![1]!;
  }, 200_000);

  it('offers its system commands; once an admin approves them, system.which answers through node.invoke', async () => {
    const listed = await admin.request<any>('node.pair.list', {});
    const request = listed.pending.find((entry: { nodeId: string }) => entry.nodeId === deviceId);
    expect(request, JSON.stringify(listed)).toBeDefined();
    await admin.request('node.pair.approve', { requestId: request.requestId });
    await waitFor(() => /approved this node's commands/.test(host!.output()), {
      timeoutMs: 30_000,
      what: 'node.pair.resolved on the node',
    });
    const answer = await admin.request<any>('node.invoke', {
      nodeId: deviceId,
      command: 'system.which',
      params: { bins: ['sh'] },
      idempotencyKey: 'which-1',
    });
    expect(answer).toMatchObject({ ok: true, nodeId: deviceId, command: 'system.which' });
    expect(answer.payload.bins.sh).toMatch(/\/sh$/);
  }, 120_000);

  it('the node’s allowlist refuses what its policy does not cover, whoever asked', async () => {
    const marker = join(tempDir('claw-node-marker-'), 'ran');
    const refused = await nodes
      .invoke(deviceId, 'system.run', { command: ['touch', marker], agentId: 'locked' }, { idempotencyKey: 'locked-1' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    // The gateway plugin's own NodeInvokeError (loaded apart from this file's SDK copy): same shape.
    expect(refused).toMatchObject({ name: 'NodeInvokeError', code: 'SYSTEM_RUN_DENIED' });
    expect((refused as NodeInvokeError).message).toMatch(/allowlist miss/);
    expect(existsSync(marker)).toBe(false);
  }, 60_000);

  it('kill -9 mid-command: the caller gets a clear error, the command dies, and it never runs twice', async () => {
    const dir = tempDir('claw-node-kill-');
    const runs = join(dir, 'runs');
    const script = `echo $$ >> ${runs}; sleep 120`;
    const params = { command: ['sh', '-c', script] };
    const first = nodes.invoke(deviceId, 'system.run', params, { idempotencyKey: 'kill-1', timeoutMs: 120_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    const pid = Number(
      await waitFor(() => readFileSync(runs, 'utf8').trim(), { timeoutMs: 60_000, what: 'the command to start' }),
    );
    const killed = new Promise((resolve) => host!.child.once('exit', resolve));
    host!.child.kill('SIGKILL');
    await killed;
    const error = (await first) as NodeInvokeError;
    expect(error).toMatchObject({ name: 'NodeInvokeError', code: 'NODE_DISCONNECTED' });
    expect(error.message).toMatch(/not retried/);
    // The node host's watchdog ends the command's process group.
    await waitFor(
      () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 30_000, what: `the orphaned command (pid ${pid}) to die: ${host!.output()}` },
    );

    host = startNodeHost();
    await waitFor(() => /connected to ws:/.test(host!.output()), {
      timeoutMs: 90_000,
      what: `the restarted node host to reconnect:\n${host!.output()}`,
    });
    expect(host.output()).toContain(`device ${deviceId}`);
    const again = await nodes
      .invoke(deviceId, 'system.run', params, { idempotencyKey: 'kill-1', timeoutMs: 60_000 })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(again).toMatchObject({ name: 'NodeInvokeError' });
    expect(readFileSync(runs, 'utf8').trim().split('\n')).toHaveLength(1);
  }, 300_000);
});
