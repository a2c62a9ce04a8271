/**
 * `claw node run` against OpenClaw's own gateway (npm openclaw under the private Node 24, no
 * internet): the node pairs as a device of role node, its command surface is approved with
 * `openclaw nodes approve`, then OpenClaw's CLI invokes system.which and reads the node's
 * exec approvals, and OpenClaw's agent (its model faked on 127.0.0.1) runs a command on the
 * node with exec host=node — system.run.prepare, then system.run — which leaves a marker file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { CLI, freePort, tempDir, waitFor } from './helpers.js';
import { OPENCLAW, openclawNode } from './openclaw-cli.js';

const TOKEN = 'openclaw-node-token-0123456789abcdef';
const NODE_NAME = 'claw-node-under-test';

let fake: FakeLlm;
let gateway: ChildProcess | undefined;
let node: ChildProcess | undefined;
let gatewayOut = '';
let nodeOut = '';
let home: string;
let stateDir: string;
let nodeState: string;
let port: number;

function openclaw(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(openclawNode(), [OPENCLAW, ...args], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        OPENCLAW_STATE_DIR: stateDir,
        NO_COLOR: '1',
        TERM: 'dumb',
        npm_config_offline: 'true',
        npm_config_cache: join(home, '.npm'),
      },
      cwd: home,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // A safety net for a hung client, not a wait.
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function openclawJson<T>(args: string[]): Promise<T> {
  const { code, stdout, stderr } = await openclaw([...args, '--json']);
  expect(code, `${args.join(' ')}: ${stderr}`).toBe(0);
  return JSON.parse(stdout.slice(stdout.search(/[[{]/))) as T;
}

beforeAll(async () => {
  fake = await startFakeLlm();
  home = tempDir('openclaw-node-gw-');
  stateDir = join(home, '.openclaw');
  mkdirSync(stateDir, { mode: 0o700 });
  chmodSync(stateDir, 0o700);
  port = await freePort();
  writeFileSync(
    join(stateDir, 'openclaw.json'),
    JSON.stringify({
      gateway: { mode: 'local', port, bind: 'loopback', auth: { mode: 'token', token: TOKEN } },
      logging: { file: join(home, 'openclaw.log') },
      update: { checkOnStart: false },
      agents: { defaults: { model: 'openai/gpt-4.1' } },
      // The gateway's own policy lets the agent's command through to the node, whose policy then decides.
      tools: { exec: { host: 'node', node: NODE_NAME, security: 'full', ask: 'off' } },
      models: {
        catalogRefresh: { enabled: false },
        providers: {
          openai: {
            baseUrl: fake.openaiBaseUrl,
            apiKey: 'sk-openclaw-node',
            api: 'openai-completions',
            models: [{ id: 'gpt-4.1', name: 'gpt-4.1' }],
          },
        },
      },
    }),
    { mode: 0o600 },
  );
  gateway = spawn(openclawNode(), [OPENCLAW, 'gateway', 'run', '--port', String(port), '--allow-unconfigured'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      OPENCLAW_STATE_DIR: stateDir,
      NO_COLOR: '1',
      TERM: 'dumb',
      npm_config_offline: 'true',
      npm_config_cache: join(home, '.npm'),
    },
    cwd: home,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      gatewayOut += chunk;
      if (/\[gateway\] ready/.test(gatewayOut)) resolve();
    };
    gateway!.stdout!.on('data', seen);
    gateway!.stderr!.on('data', seen);
    gateway!.once('exit', (code) =>
      reject(new Error(`openclaw gateway exited (${code}) before ready:\n${gatewayOut}`)),
    );
  });

  const nodeHome = tempDir('claw-node-host-');
  nodeState = join(nodeHome, '.claw');
  // This node offers its system commands only (a Chromium here would add browser.proxy).
  mkdirSync(nodeState, { recursive: true, mode: 0o700 });
  writeFileSync(join(nodeState, 'openclaw.json'), JSON.stringify({ nodeHost: { browserProxy: { enabled: false } } }));
  node = spawn(
    process.execPath,
    [CLI, 'node', 'run', '--host', '127.0.0.1', '--port', String(port), '--display-name', NODE_NAME],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: nodeHome,
        OPENCLAW_STATE_DIR: nodeState,
        OPENCLAW_GATEWAY_TOKEN: TOKEN,
        NO_COLOR: '1',
      },
      cwd: nodeHome,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  node.stdout!.on('data', (chunk) => (nodeOut += chunk));
  node.stderr!.on('data', (chunk) => (nodeOut += chunk));
  await waitFor(() => /connected to ws:\/\/127\.0\.0\.1/.test(nodeOut) || /pairing required/.test(nodeOut), {
    timeoutMs: 120_000,
    what: `the node host to reach the gateway:\n${nodeOut}`,
  });
}, 300_000);

afterAll(async () => {
  for (const child of [node, gateway]) {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }
  await fake?.close();
}, 60_000);

const deviceId = () => /device ([0-9a-f]{64})/.exec(nodeOut)?.[1];

describe('claw node run against OpenClaw’s gateway', () => {
  it('keeps its identity and settings owner-only under <stateDir>/node', () => {
    const dir = join(nodeState, 'node');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const file of ['device.json', 'node.json']) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
    const config = JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({ displayName: NODE_NAME, gateway: { host: '127.0.0.1', port, tls: false } });
  });

  it('is a paired device of role node with OpenClaw’s node-host client id', async () => {
    const id = deviceId();
    expect(id, nodeOut).toBeDefined();
    type Devices = { pending: Array<{ requestId: string; deviceId: string }>; paired: Array<Record<string, unknown>> };
    let devices = await openclawJson<Devices>(['devices', 'list']);
    // OpenClaw admits a loopback device that presents the gateway token by itself; otherwise an operator approves it.
    const pending = devices.pending.find((request) => request.deviceId === id);
    if (pending) {
      const approved = await openclaw(['devices', 'approve', pending.requestId]);
      expect(approved.code, approved.stderr).toBe(0);
      await waitFor(() => /connected to ws:/.test(nodeOut), {
        timeoutMs: 90_000,
        what: 'the reconnect after approval',
      });
      devices = await openclawJson<Devices>(['devices', 'list']);
    }
    expect(devices.paired.find((device) => device.deviceId === id)).toMatchObject({
      role: 'node',
      clientId: 'node-host',
      clientMode: 'node',
      displayName: NODE_NAME,
    });
  }, 300_000);

  it('declares its commands; `openclaw nodes approve` approves them on the live connection', async () => {
    const pending = await openclawJson<
      Array<{ requestId: string; nodeId: string; caps: string[]; commands: string[] }>
    >(['nodes', 'pending']);
    const request = pending.find((entry) => entry.nodeId === deviceId());
    expect(request, JSON.stringify(pending)).toBeDefined();
    expect(request!.caps).toEqual(['system']);
    expect(request!.commands).toEqual([
      'system.execApprovals.get',
      'system.execApprovals.set',
      'system.run',
      'system.run.prepare',
      'system.which',
    ]);
    const approved = await openclaw(['nodes', 'approve', request!.requestId]);
    expect(approved.code, approved.stderr).toBe(0);
    await waitFor(() => /the gateway approved this node's commands/.test(nodeOut), {
      timeoutMs: 60_000,
      what: `node.pair.resolved on the node:\n${nodeOut}`,
    });
  }, 300_000);

  it('answers system.which through `openclaw nodes invoke`', async () => {
    const result = await openclawJson<{ ok: boolean; payload: { bins: Record<string, string> } }>([
      'nodes',
      'invoke',
      '--node',
      NODE_NAME,
      '--command',
      'system.which',
      '--params',
      JSON.stringify({ bins: ['sh', 'no-such-program-here'] }),
    ]);
    expect(result.ok).toBe(true);
    expect(Object.keys(result.payload.bins)).toEqual(['sh']);
    expect(result.payload.bins.sh).toMatch(/\/sh$/);
  }, 300_000);

  it('shows its own exec approvals to `openclaw approvals get --node`', async () => {
    const view = await openclawJson<{ path: string; exists: boolean; file: { version: number } }>([
      'approvals',
      'get',
      '--node',
      NODE_NAME,
    ]);
    expect(view.path).toBe(join(nodeState, 'exec-approvals.json'));
    expect(view.file.version).toBe(1);
  }, 300_000);

  it('runs OpenClaw’s exec host=node: system.run.prepare, then system.run, once', async () => {
    const marker = join(tempDir('claw-node-marker-'), 'ran.txt');
    const command = `echo ran >> ${marker}`;
    // OpenClaw may ask the model other things first: the exec call answers only a turn that offers the tool.
    // Chat Completions (`messages`, role "tool") or Responses (`input`, function_call_output).
    const items = (request: { body?: any }) =>
      (request.body?.messages ?? request.body?.input ?? []) as Array<{ role?: string; type?: string }>;
    const isToolResult = (item?: { role?: string; type?: string }) =>
      item?.role === 'tool' || item?.type === 'function_call_output';
    fake.respond((request) => {
      if (items(request).some(isToolResult)) return { text: 'done on the node' };
      const offersExec = JSON.stringify(request.body?.tools ?? []).includes('"exec"');
      // OpenClaw appends context of its own after the user's words.
      const asked = JSON.stringify(items(request)).includes('run it on the node');
      if (offersExec && asked)
        return {
          toolCalls: [{ id: 'call_node_exec', name: 'exec', arguments: { command, host: 'node', node: NODE_NAME } }],
        };
      return { text: 'ok' };
    });
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          CLI,
          'agent',
          '-m',
          'run it on the node',
          '--session',
          'agent:main:node-exec',
          '--url',
          `ws://127.0.0.1:${port}`,
          '--token',
          TOKEN,
        ],
        {
          env: { PATH: process.env.PATH ?? '', HOME: home, OPENCLAW_STATE_DIR: join(home, '.claw-cli'), NO_COLOR: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(run.code, `${run.stderr}\n${nodeOut}\n${gatewayOut.slice(-3000)}`).toBe(0);
    const seen = fake.requests.map((request) => ({
      tools: (request.body?.tools ?? []).map((tool: any) => tool.function?.name ?? tool.name),
      last: String(JSON.stringify(items(request).at(-1))).slice(0, 300),
    }));
    expect(run.stdout.trim(), JSON.stringify(seen)).toBe('done on the node');
    const toolResult = fake.requests.map((request) => items(request).find(isToolResult)).find(Boolean);
    expect(existsSync(marker), JSON.stringify(toolResult)).toBe(true);
    expect(readFileSync(marker, 'utf8')).toBe('ran\n');
    expect(JSON.stringify(toolResult)).not.toMatch(/SYSTEM_RUN_DENIED/);
  }, 300_000);
});
