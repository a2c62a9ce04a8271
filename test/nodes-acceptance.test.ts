/**
 * Issue 32's acceptance, with real processes only: a `claw gateway` and `claw node run` hosts,
 * each with its own state dir, driven by `claw devices` / `claw nodes` and the gateway's
 * tools.invoke (the exec tool with host "node", through the tool choke point):
 *  - "alpha" pairs with a setup code (`claw qr`); "beta" and "delta" (devices on this machine,
 *    paired as such) wait for their commands: `claw nodes approve` gives beta its commands,
 *    `claw nodes reject` leaves delta with none;
 *  - exec host=node runs on the node chosen (its environment, its working directory);
 *  - beta's own allowlist refuses a command the gateway's policy (full) would allow;
 *  - alpha killed with kill -9 mid-command: the call fails at once saying it was not re-run,
 *    the command dies, alpha reconnects with its saved device token, and nothing ran twice;
 *  - a node with a wrong gateway token, and alpha once its device token is revoked, are refused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../apps/cli/gateway-client.js';
import { spawnCliGateway, type CliGateway } from './cli-gateway.js';
import { CLI, claw, tempDir, waitFor } from './helpers.js';

const TOKEN = 'acceptance-gateway-token-0123456789';

interface NodeHost {
  name: string;
  state: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

let gateway: CliGateway;
let gatewayState: string;
let url: string;
let operator: GatewayClient;
const hosts: NodeHost[] = [];

function startNode(name: string, options: { args?: string[]; token?: string; state?: string } = {}): NodeHost {
  const home = tempDir(`claw-${name}-`);
  const state = options.state ?? join(home, '.claw');
  mkdirSync(state, { recursive: true, mode: 0o700 });
  const port = String(gateway.port);
  const child = spawn(
    process.execPath,
    [CLI, 'node', 'run', '--display-name', name, ...(options.args ?? ['--host', '127.0.0.1', '--port', port])],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        OPENCLAW_STATE_DIR: state,
        NODE_MARK: name,
        NO_COLOR: '1',
        ...(options.token ? { OPENCLAW_GATEWAY_TOKEN: options.token } : {}),
      },
      cwd: home,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const host = { name, state, child, output: () => output, exited };
  hosts.push(host);
  return host;
}

const cli = (...args: string[]) =>
  claw([...args], {
    OPENCLAW_STATE_DIR: gatewayState,
    OPENCLAW_GATEWAY_URL: url,
    OPENCLAW_GATEWAY_TOKEN: TOKEN,
    NO_COLOR: '1',
  });

async function cliJson<T>(...args: string[]): Promise<T> {
  const result = await cli(...args, '--json');
  expect(result.code, `claw ${args.join(' ')}: ${result.stderr}${result.stdout}`).toBe(0);
  return JSON.parse(result.stdout) as T;
}

const connected = (host: NodeHost, times = 1) =>
  waitFor(() => (host.output().match(/connected to ws:/g) ?? []).length >= times, {
    timeoutMs: 90_000,
    what: `node ${host.name} to connect:\n${host.output()}`,
  });

type NodeRow = { nodeId: string; displayName: string | null; connected: boolean; commands: string[] };
const nodeList = async () => (await operator.request<{ nodes: NodeRow[] }>('node.list', {})).nodes;

/** Run a shell command with exec host=node on one node, through tools.invoke (an owner's call). */
async function execOn(node: string, command: string, extra: Record<string, unknown> = {}) {
  const answer = await operator.request<{
    ok: boolean;
    error?: { code: string; message: string };
    output?: { content: Array<{ text?: string }> };
  }>('tools.invoke', { name: 'exec', args: { command, host: 'node', node, ...extra } }, { timeoutMs: 120_000 });
  const text = (answer.output?.content ?? []).map((part) => part.text ?? '').join('');
  return { ok: answer.ok, text, error: answer.error };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  const home = tempDir('claw-acceptance-gw-');
  gatewayState = join(home, '.claw');
  mkdirSync(gatewayState, { recursive: true, mode: 0o700 });
  writeFileSync(join(gatewayState, 'openclaw.json'), JSON.stringify({ gateway: { auth: { token: TOKEN } } }), {
    mode: 0o600,
  });
  gateway = await spawnCliGateway(CLI, { OPENCLAW_STATE_DIR: gatewayState, HOME: home });
  url = `ws://127.0.0.1:${gateway.port}`;
  // No device identity: an operator on this machine with the shared token (it would wait for pairing too).
  operator = new GatewayClient({
    url,
    token: TOKEN,
    scopes: ['operator.read', 'operator.write', 'operator.admin', 'operator.pairing', 'operator.approvals'],
  });
  await operator.connect();
}, 120_000);

afterAll(async () => {
  await operator?.close();
  for (const host of hosts) if (host.child.exitCode === null && host.child.signalCode === null) host.child.kill();
  await Promise.all(hosts.map((host) => host.exited));
  gateway?.child.kill();
  await gateway?.exited;
}, 60_000);

describe('nodes across real processes', () => {
  let alpha: NodeHost;
  let beta: NodeHost;
  let alphaId: string;

  it('alpha pairs with a setup code from `claw qr`: device and first command surface at once', async () => {
    const qr = await cliJson<{ setupCode: string }>('qr', '--url', url);
    expect(qr.setupCode).toMatch(/^[A-Za-z0-9_-]+$/);
    alpha = startNode('alpha', { args: ['--pair', qr.setupCode] });
    await connected(alpha);
    alphaId = /device ([0-9a-f]{64})/.exec(alpha.output())![1]!;
    const row = await waitFor(async () => (await nodeList()).find((n) => n.nodeId === alphaId && n.connected), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'alpha in node.list',
    });
    expect(row.commands).toEqual(expect.arrayContaining(['system.run', 'system.run.prepare', 'system.which']));
    // The setup code is spent: it pairs nothing else.
    const again = startNode('alpha-copy', { args: ['--pair', qr.setupCode] });
    expect(await again.exited).not.toBe(0);
    expect(again.output()).toMatch(/bootstrap|setup code/i);
  }, 180_000);

  /** A node's pending command-surface request, as `claw nodes pending` lists it. */
  const surfaceRequest = (host: NodeHost) =>
    waitFor(
      async () => {
        const nodeId = /device ([0-9a-f]{64})/.exec(host.output())?.[1];
        const rows = await cliJson<Array<{ requestId: string; nodeId: string }>>('nodes', 'pending');
        return rows.find((request) => request.nodeId === nodeId);
      },
      { timeoutMs: 60_000, intervalMs: 300, what: `${host.name}'s surface request` },
    );

  it('beta is paired as a device but runs nothing until `claw nodes approve` approves its commands', async () => {
    const home = tempDir('claw-beta-state-');
    const state = join(home, '.claw');
    mkdirSync(state, { recursive: true, mode: 0o700 });
    // Beta's own policy: only echo may run, whoever asks.
    writeFileSync(
      join(state, 'exec-approvals.json'),
      JSON.stringify({
        version: 1,
        defaults: { security: 'allowlist', ask: 'off' },
        agents: { '*': { allowlist: ['/usr/bin/echo', '/bin/echo'].map((pattern) => ({ pattern })) } },
      }),
      { mode: 0o600 },
    );
    beta = startNode('beta', { token: TOKEN, state });
    await connected(beta);
    const pending = await surfaceRequest(beta);
    expect((await nodeList()).find((n) => n.nodeId === pending.nodeId)?.commands).toEqual([]);
    const refused = await execOn('beta', 'echo too early');
    expect(refused.ok).toBe(false);
    const approved = await cli('nodes', 'approve', pending.requestId);
    expect(approved.code, approved.stderr + approved.stdout).toBe(0);
    await waitFor(
      async () => (await nodeList()).find((n) => n.nodeId === pending.nodeId)?.commands.includes('system.run'),
      { timeoutMs: 30_000, intervalMs: 200, what: "beta's approved commands" },
    );
  }, 240_000);

  it('delta, whose commands are rejected, is sent nothing', async () => {
    const delta = startNode('delta', { token: TOKEN });
    await connected(delta);
    const pending = await surfaceRequest(delta);
    const rejected = await cli('nodes', 'reject', pending.requestId);
    expect(rejected.code, rejected.stderr + rejected.stdout).toBe(0);
    expect((await nodeList()).find((n) => n.nodeId === pending.nodeId)?.commands).toEqual([]);
    const marker = join(tempDir('claw-delta-marker-'), 'ran');
    const refused = await execOn('delta', `touch ${marker}`);
    expect(refused.ok).toBe(false);
    expect(refused.text).toMatch(/delta/);
    expect(() => readFileSync(marker)).toThrow();
    delta.child.kill();
  }, 240_000);

  it('exec host=node runs on the node chosen, in its working directory', async () => {
    const onAlpha = await execOn('alpha', 'echo "ran on $NODE_MARK"');
    expect(onAlpha, onAlpha.text).toMatchObject({ ok: true });
    expect(onAlpha.text).toContain('ran on alpha');
    // Beta's allowlist takes echo (plain words: its policy judges expansions as misses).
    const onBeta = await execOn('beta', 'echo allowed-on-beta');
    expect(onBeta, onBeta.text).toMatchObject({ ok: true });
    expect(onBeta.text).toContain('allowed-on-beta');
    const dir = realpathSync(tempDir('claw-alpha-work-'));
    const inDir = await execOn('alpha', 'pwd', { workdir: dir });
    expect(inDir, inDir.text).toMatchObject({ ok: true });
    expect(inDir.text.trim().split('\n')).toContain(dir);
  }, 120_000);

  it("beta's own allowlist refuses what the gateway (security full) would run", async () => {
    const marker = join(tempDir('claw-beta-marker-'), 'ran');
    const refused = await execOn('beta', `touch ${marker}`);
    expect(refused.ok).toBe(false);
    expect(refused.text + (refused.error?.message ?? '')).toMatch(/allowlist|denied|approval/i);
    expect(() => readFileSync(marker)).toThrow();
    // The same command runs on alpha, whose policy allows it: the refusal was beta's.
    expect((await execOn('alpha', `touch ${marker}`)).ok).toBe(true);
  }, 120_000);

  it('kill -9 of alpha mid-command: a clear error, the command dies, alpha comes back, nothing ran twice', async () => {
    const runs = join(tempDir('claw-alpha-runs-'), 'runs');
    const running = execOn('alpha', `echo $$ >> ${runs}; sleep 120`, { timeout: 300 });
    const pid = Number(
      await waitFor(() => readFileSync(runs, 'utf8').trim() || undefined, {
        timeoutMs: 60_000,
        what: 'the command to start on alpha',
      }).catch(() => '0'),
    );
    expect(pid).toBeGreaterThan(0);
    alpha.child.kill('SIGKILL');
    await alpha.exited;
    const outcome = await running;
    expect(outcome.ok).toBe(false);
    expect(outcome.text + (outcome.error?.message ?? '')).toMatch(/went away|disconnect/i);
    expect(outcome.text + (outcome.error?.message ?? '')).toMatch(/not re-?run|not retried/i);
    await waitFor(() => !alive(pid), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: `the orphaned command ${pid} to die`,
    });

    // Restarted with its state dir (no setup code now): its saved device token admits it.
    const state = alpha.state;
    alpha = startNode('alpha', { state });
    await connected(alpha);
    expect(alpha.output()).toContain(`device ${alphaId}`);
    await waitFor(async () => (await nodeList()).find((n) => n.nodeId === alphaId)?.connected, {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'alpha connected again',
    });
    expect(readFileSync(runs, 'utf8').trim().split('\n')).toEqual([String(pid)]);
  }, 300_000);

  it('a wrong gateway token is refused, and so is alpha once its device token is revoked', async () => {
    const wrong = startNode('gamma', { token: 'not-the-gateway-token-000000000000' });
    expect(await wrong.exited).not.toBe(0);
    expect(wrong.output()).toMatch(/token/i);

    const revoked = await operator.request<{ revoked: boolean }>('device.token.revoke', {
      deviceId: alphaId,
      role: 'node',
    });
    expect(revoked).toMatchObject({ revoked: true });
    expect(await alpha.exited).not.toBe(0);
    expect(alpha.output()).toMatch(/revoked|token/i);
    expect((await nodeList()).find((n) => n.nodeId === alphaId)?.connected).toBe(false);
  }, 180_000);
});
