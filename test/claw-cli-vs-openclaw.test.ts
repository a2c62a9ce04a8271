/**
 * claw's CLI against OpenClaw's own gateway (npm openclaw under the private Node 24, as in
 * test/openclaw-cli.ts): `claw agent`, `sessions`, `status`, `health` and `logs` with
 * `--url … --token …`, the model faked on 127.0.0.1. OpenClaw keeps its own state dir and
 * log file here, so nothing another test's OpenClaw writes can show up in these answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { CLI, tempDir } from './helpers.js';
import { OPENCLAW, openclawNode } from './openclaw-cli.js';

const TOKEN = 'openclaw-gw-token-0123456789abcdef';
const REPLY = 'Hello from the fake model, via OpenClaw.';
const SESSION = 'agent:main:claw-cli';

let fake: FakeLlm;
let gateway: ChildProcess | undefined;
let gatewayOut = '';
let url: string;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  fake = await startFakeLlm();
  fake.respond(() => ({ text: REPLY }));
  const home = tempDir('openclaw-gw-home-');
  const stateDir = join(home, '.openclaw');
  mkdirSync(stateDir, { mode: 0o700 });
  chmodSync(stateDir, 0o700);
  const port = await freePort();
  url = `ws://127.0.0.1:${port}`;
  writeFileSync(
    join(stateDir, 'openclaw.json'),
    JSON.stringify({
      gateway: { mode: 'local', port, bind: 'loopback', auth: { mode: 'token', token: TOKEN } },
      logging: { file: join(home, 'openclaw.log') },
      // No test touches the internet: OpenClaw would fetch its remote model catalogue and check npm for updates.
      update: { checkOnStart: false },
      agents: { defaults: { model: 'openai/gpt-4.1' } },
      models: {
        catalogRefresh: { enabled: false },
        providers: {
          openai: {
            baseUrl: fake.openaiBaseUrl,
            apiKey: 'sk-openclaw-gw',
            api: 'openai-completions',
            models: [{ id: 'gpt-4.1', name: 'gpt-4.1' }],
          },
        },
      },
    }),
    { mode: 0o600 },
  );
  const child = spawn(openclawNode(), [OPENCLAW, 'gateway', 'run', '--port', String(port), '--allow-unconfigured'], {
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
  gateway = child;
  await new Promise<void>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      gatewayOut += chunk;
      // OpenClaw says "ready" once channels and sidecars are up, after it listens.
      if (/\[gateway\] ready/.test(gatewayOut)) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`openclaw gateway exited (${code}) before ready:\n${gatewayOut}`)));
  });
}, 240_000);

afterAll(async () => {
  if (gateway && gateway.exitCode === null) {
    const exited = new Promise((resolve) => gateway!.once('exit', resolve));
    gateway.kill('SIGTERM');
    await exited;
  }
  await fake?.close();
}, 60_000);

function claw(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const home = tempDir('claw-cli-home-');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args, '--url', url, '--token', TOKEN], {
      env: { PATH: process.env.PATH ?? '', HOME: home, OPENCLAW_STATE_DIR: join(home, '.openclaw'), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // A safety net for a hung client (what this suite guards against), not a wait.
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('claw CLI against OpenClaw’s gateway', () => {
  it('claw health reports the gateway and its agent', async () => {
    const { code, stdout, stderr } = await claw(['health']);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/Gateway ok/);
    expect(stdout).toMatch(/agents\s+main \(default\)/);
  }, 300_000);

  it('claw agent sends a message and prints the streamed reply, then exits', async () => {
    const { code, stdout, stderr } = await claw(['agent', '-m', 'hi', '--session', SESSION]);
    expect(code, `${stderr}\n${gatewayOut.slice(-2000)}`).toBe(0);
    expect(stdout.trim()).toBe(REPLY);
    expect(fake.requests.length).toBeGreaterThan(0);
  }, 300_000);

  it('claw agent --json prints OpenClaw’s final result', async () => {
    const { code, stdout, stderr } = await claw(['agent', '-m', 'again', '--session', SESSION, '--json']);
    expect(code, stderr).toBe(0);
    const result = JSON.parse(stdout) as { status: string; result: { payloads: Array<{ text: string }> } };
    expect(result.status).toBe('ok');
    expect(result.result.payloads[0]!.text).toBe(REPLY);
  }, 300_000);

  it('claw sessions lists the session the run used, with its model and tokens', async () => {
    const { code, stdout, stderr } = await claw(['sessions']);
    expect(code, stderr).toBe(0);
    const row = stdout.split('\n').find((line) => line.startsWith(`${SESSION} `));
    expect(row, stdout).toBeDefined();
    expect(row).toMatch(/ago\s+\d+ tok {2}gpt-4\.1$/);
    const json = await claw(['sessions', '--json', '--active', '60', '--agent', 'main']);
    expect(json.code, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout) as {
      count: number;
      activeMinutes: number;
      sessions: Array<{ key: string }>;
    };
    expect(listed.activeMinutes).toBe(60);
    expect(listed.sessions.map((session) => session.key)).toContain(SESSION);
    expect(listed.count).toBe(listed.sessions.length);
  }, 300_000);

  it('claw status names OpenClaw’s gateway and counts its sessions', async () => {
    const { code, stdout, stderr } = await claw(['status']);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/OpenClaw gateway \d{4}\.\d+\.\d+/);
    expect(stdout).toMatch(/agent\s+main \(default\)/);
    expect(stdout).toMatch(/sessions\s+[1-9]\d*/);
  }, 300_000);

  it('claw logs reads OpenClaw’s log lines as readable lines, and --json as they are', async () => {
    const { code, stdout, stderr } = await claw(['logs', '--limit', '200']);
    expect(code, stderr).toBe(0);
    // tslog records turned into claw's line: time, level, [subsystem], message.
    // Which subsystems have logged by now varies with timing; every one prints as [gateway/<part>].
    expect(stdout).toMatch(/^\d\d:\d\d:\d\d INFO {2}\[gateway\/[a-z-]+\] \S/m);
    expect(stdout).not.toMatch(/_meta|"logLevelName"/);
    const json = await claw(['logs', '--json', '--limit', '5']);
    expect(json.code, json.stderr).toBe(0);
    const lines = json.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines)
      expect((JSON.parse(line) as { _meta: { logLevelName: string } })._meta.logLevelName).toBeTruthy();
    const warnings = await claw(['logs', '--limit', '200', '--level', 'warn']);
    expect(warnings.code, warnings.stderr).toBe(0);
    expect(warnings.stdout).not.toMatch(/ INFO /);
  }, 300_000);
});
