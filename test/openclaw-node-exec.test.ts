/**
 * exec host=node on OpenClaw's own node host: `openclaw node run` (npm openclaw in .cache)
 * connects to claw's gateway, its device and command surface are approved through claw's
 * methods, and `tools.invoke` runs exec with host=node through the tool choke point. The node
 * host answers system.run.prepare and system.run under its own exec policy (allowlist, ask
 * on-miss): a miss comes back "approval required", a person answers through claw's exec
 * approval flow, and the stored plan goes again with OpenClaw's approval fields, which the
 * node accepts; its allow-always is kept on the node, so the same command then runs unasked. A
 * node host killed mid-run is reported as gone, and the command is not sent again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { client, startGateway, TEST_TOKEN, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir, waitFor } from './helpers.js';

const OPENCLAW = join(REPO, '.cache', 'openclaw', 'node_modules', 'openclaw', 'openclaw.mjs');
const NODE_DIR = join(REPO, '.cache', 'qmd-node', 'node_modules');
const PLUGINS = ['tools-exec', 'exec-approvals', 'models', 'sessions'].map((id) => join(REPO, 'plugins', id));

function node24(): string {
  const dir = existsSync(NODE_DIR) ? readdirSync(NODE_DIR).find((name) => name.startsWith('node-')) : undefined;
  const binary = dir && join(NODE_DIR, dir, 'bin', 'node');
  if (!binary || !existsSync(binary) || !existsSync(OPENCLAW))
    throw new Error(
      'OpenClaw is not installed: run node scripts/install-qmd.mjs && node scripts/install-openclaw.mjs (npm test does)',
    );
  return binary;
}

let gw: RunningGateway;
let operator: GatewayClient;
let nodeHost: ChildProcess;
let nodeLog = '';
const requested: Array<{ id: string; request: Record<string, any> }> = [];

beforeAll(async () => {
  gw = await startGateway({ plugins: PLUGINS, config: { agents: { list: [{ id: 'main', default: true }] } } });
  operator = await client(gw.url, {
    onEvent: (frame) => {
      if (frame.event === 'exec.approval.requested') requested.push(frame.payload as never);
    },
  });
  const home = tempDir('openclaw-node-home-');
  const stateDir = join(home, '.openclaw');
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  // The node's own exec policy: allowlisted commands only, ask a person on a miss.
  writeFileSync(
    join(stateDir, 'openclaw.json'),
    JSON.stringify({
      tools: { exec: { security: 'allowlist', ask: 'on-miss' } },
      update: { checkOnStart: false },
      models: { catalogRefresh: { enabled: false } },
    }),
  );
  nodeHost = spawn(
    node24(),
    [
      OPENCLAW,
      'node',
      'run',
      '--host',
      '127.0.0.1',
      '--port',
      String(gw.port),
      '--no-tls',
      '--display-name',
      'oc-node',
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        OPENCLAW_STATE_DIR: stateDir,
        OPENCLAW_GATEWAY_TOKEN: TEST_TOKEN,
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  nodeHost.stdout!.on('data', (chunk) => (nodeLog += chunk));
  nodeHost.stderr!.on('data', (chunk) => (nodeLog += chunk));
}, 120_000);

/** Processes whose command line has every part (the command the node host was asked to run). */
function processesWith(...parts: string[]): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return parts.every((part) => argv.some((arg) => arg.includes(part)));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** What a node went away in the middle of: this test's own command, left behind by a killed node host. */
const LONG_RUN = 'sleep 4242';

afterAll(async () => {
  nodeHost?.kill('SIGKILL');
  for (const pid of processesWith('sleep', '4242')) process.kill(pid, 'SIGKILL');
  await operator?.close();
  await gw?.stop();
});

type NodeRow = { nodeId: string; displayName?: string; connected?: boolean; commands?: string[] };

async function approveSurface(): Promise<NodeRow> {
  // Loopback devices are paired automatically; the command surface the node declares is
  // approved by an operator, as OpenClaw's `nodes approve` does.
  const pending = await waitFor(
    async () => {
      const list = (await operator.request('node.pair.list', {})) as {
        pending: Array<{ requestId: string; displayName?: string }>;
      };
      return list.pending.find((entry) => entry.displayName === 'oc-node');
    },
    { what: `the node's pending surface request (node log: ${nodeLog})`, timeoutMs: 240_000 },
  );
  await operator.request('node.pair.approve', { requestId: pending.requestId });
  return waitFor(
    async () => {
      const { nodes } = (await operator.request('node.list', {})) as { nodes: NodeRow[] };
      return nodes.find((n) => n.displayName === 'oc-node' && n.connected && n.commands?.includes('system.run'));
    },
    { what: 'the node connected with system.run approved', timeoutMs: 60_000 },
  );
}

const invokeExec = (args: Record<string, unknown>) =>
  operator.request(
    'tools.invoke',
    { name: 'exec', args, sessionKey: 'agent:main:main' },
    { timeoutMs: 120_000 },
  ) as Promise<{
    ok: boolean;
    output?: unknown;
    error?: { message: string };
  }>;

const outputText = (answer: { output?: unknown }) => JSON.stringify(answer.output ?? '');

describe("exec host=node on OpenClaw's node host", () => {
  it('prepare → a miss the node wants approved → a person allows always → the plan runs; then it runs unasked', async () => {
    const node = await approveSurface();
    const answerNext = (decision: string) =>
      waitFor(() => requested.at(-1), { what: 'an exec approval request', timeoutMs: 60_000 }).then((pending) =>
        operator.request('exec.approval.resolve', { id: pending.id, decision }),
      );
    const first = invokeExec({ command: 'echo hello-from-openclaw-node', host: 'node', node: 'oc-node' });
    await answerNext('allow-always');
    const ran = await first;
    expect(ran.ok, JSON.stringify(ran)).toBe(true);
    expect(outputText(ran)).toContain('hello-from-openclaw-node');
    expect(outputText(ran)).toContain(`Node: oc-node (${node.nodeId})`);
    expect(requested).toHaveLength(1);
    expect(requested[0]!.request).toMatchObject({ host: 'node', nodeId: node.nodeId });
    expect(requested[0]!.request.systemRunPlan.commandText).toContain('echo hello-from-openclaw-node');

    // The node remembered the allow-always in its own document (read from the node)...
    const onNode = (await operator.request('exec.approvals.node.get', { nodeId: node.nodeId })) as {
      file?: { agents?: Record<string, { allowlist?: Array<{ pattern: string; source?: string }> }> };
    };
    expect(JSON.stringify(onNode.file?.agents ?? {})).toContain('allow-always');
    // ...so the same command runs without a person.
    const again = await invokeExec({ command: 'echo hello-from-openclaw-node', host: 'node' });
    expect(outputText(again)).toContain('hello-from-openclaw-node');
    expect(requested).toHaveLength(1);

    // A denied miss never runs.
    const denied = invokeExec({ command: 'uname -n', host: 'node' });
    const second = await Promise.race([
      waitFor(() => requested[1], { what: 'a second approval request', timeoutMs: 60_000 }),
      denied.then((answer) => {
        throw new Error(`answered without asking: ${JSON.stringify(answer)}`);
      }),
    ]);
    await operator.request('exec.approval.resolve', { id: second.id, decision: 'deny' });
    const refused = await denied;
    expect(refused.ok).toBe(false);
    expect(JSON.stringify(refused)).toMatch(/an operator denied it/);
  }, 420_000);

  it('a node that goes away mid-run is a clear error, and the command is not sent again', async () => {
    const asked = requested.length;
    const running = invokeExec({ command: LONG_RUN, host: 'node' });
    const pending = await waitFor(() => requested[asked], { what: 'the approval request', timeoutMs: 60_000 });
    await operator.request('exec.approval.resolve', { id: pending.id, decision: 'allow-once' });
    await waitFor(() => processesWith('sleep', '4242').length > 0, {
      what: 'the command running on the node',
      timeoutMs: 60_000,
    });
    nodeHost.kill('SIGKILL');
    const lost = await running;
    expect(lost.ok).toBe(false);
    expect(lost.error?.message).toMatch(/node oc-node \(.+\) went away while running `sleep 4242`; it was not re-run/);
    expect(requested).toHaveLength(asked + 1);
  }, 240_000);
});
