/**
 * Issue 12, part 5: exec refuses loader/interpreter env overrides, its output goes through
 * the redaction layer, and background commands die with the gateway — on a normal stop, on
 * SIGTERM and on kill -9 (a real `claw gateway` process, killed for real).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { connectOperator, writeConfig } from './bench/crash.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { REPO, sleep, startCliGateway, tempDir } from './helpers.js';

const PLUGIN = join(REPO, 'plugins', 'tools-exec');
// Host commands go through exec approvals (defaults: security full, ask off); without an approver they are refused.
const APPROVALS = join(REPO, 'plugins', 'exec-approvals');
const text = (result: { content: Array<{ type: string; text?: string }> }) =>
  result.content.map((part) => part.text ?? '').join('');

describe('exec env overrides', () => {
  let kernel: TestKernel;
  beforeAll(async () => {
    kernel = await createTestKernel({ plugins: [PLUGIN, APPROVALS] });
  });
  afterAll(() => kernel.dispose());

  it.each([
    ['PATH'],
    ['LD_PRELOAD'],
    ['LD_LIBRARY_PATH'],
    ['ld_audit'],
    ['DYLD_INSERT_LIBRARIES'],
    ['NODE_OPTIONS'],
    ['BASH_ENV'],
    ['PYTHONPATH'],
    ['PERL5OPT'],
  ])('refuses %s and runs nothing', async (name) => {
    const marker = join(tempDir(), 'ran');
    const result = await kernel.runTool('exec', { command: `touch ${marker}`, env: { [name]: '/tmp/evil' } });
    expect(result.isError).toBe(true);
    // The approver refuses it before anyone could be asked (exec itself would too: test/exec-env-policy.test.ts).
    expect(text(result)).toContain(`exec was not approved: env may not set ${name} (`);
    expect(existsSync(marker)).toBe(false);
  });

  it('passes ordinary variables through', async () => {
    const result = await kernel.runTool(
      'exec',
      { command: 'printf %s "$GREETING"', env: { GREETING: 'hello there' } },
      { workspaceDir: tempDir() },
    );
    expect(text(result)).toBe('hello there');
  });
});

describe('exec output and the redaction layer', () => {
  const ENV_SECRET = 'envsecret-7f3a9c2b1d4e6f80';
  const CONFIG_SECRET = 'configsecret-91b2c3d4e5f60718';
  let kernel: TestKernel;
  beforeAll(async () => {
    // exec inherits the gateway's environment; the kernel resolved its config against the same.
    process.env.CLAW_TEST_SERVICE_TOKEN = ENV_SECRET;
    kernel = await createTestKernel({
      plugins: [PLUGIN, APPROVALS],
      env: { CLAW_TEST_SERVICE_TOKEN: ENV_SECRET },
      config: { channels: { example: { botToken: CONFIG_SECRET } } },
    });
  });
  afterAll(async () => {
    delete process.env.CLAW_TEST_SERVICE_TOKEN;
    await kernel.dispose();
  });

  it('`env` and echoing a configured secret show neither secret', async () => {
    const result = await kernel.runTool(
      'exec',
      { command: `env; echo "config: ${CONFIG_SECRET}"` },
      { workspaceDir: tempDir() },
    );
    const output = text(result);
    expect(output).toContain('CLAW_TEST_SERVICE_TOKEN=***');
    expect(output).toContain('config: ***');
    expect(JSON.stringify(result)).not.toContain(ENV_SECRET);
    expect(JSON.stringify(result)).not.toContain(CONFIG_SECRET);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pids: number[], timeoutMs = 8000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (pids.every((pid) => !alive(pid))) return true;
    await sleep(50);
  }
  return false;
}

async function readPid(file: string): Promise<number> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const value = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : 0;
    if (value > 0) return value;
    await sleep(20);
  }
  throw new Error(`no pid in ${file}`);
}

describe('background commands end with the gateway', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(() => fake.close());

  // A background session (still running), and a command that returned at once but left a child behind.
  const RUNNING = 'sleep 300 & echo $! > running-child.pid; echo $$ > running-shell.pid; wait';
  const LEFT_BEHIND = 'sleep 300 > /dev/null 2>&1 & echo $! > left.pid';

  it.each([['SIGKILL' as const], ['SIGTERM' as const]])(
    '%s to the gateway kills every process group it started',
    async (signal) => {
      const stateDir = tempDir('claw-exec-reap-');
      writeConfig(stateDir, fake);
      const gw = await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
      const client = await connectOperator(gw.port);
      fake.reset();
      fake.script(
        { toolCalls: [{ name: 'exec', arguments: { command: RUNNING, background: true, timeout: 0 } }] },
        { toolCalls: [{ name: 'exec', arguments: { command: LEFT_BEHIND } }] },
        { text: 'started' },
      );
      const final = await client.request<{ status: string }>(
        'agent',
        { message: 'start things', idempotencyKey: `reap-${signal}` },
        { expectFinal: true, timeoutMs: 20_000 },
      );
      expect(final.status).toBe('ok');
      const workspace = join(stateDir, 'workspace');
      const pids = [
        await readPid(join(workspace, 'running-shell.pid')),
        await readPid(join(workspace, 'running-child.pid')),
        await readPid(join(workspace, 'left.pid')),
      ];
      expect(pids.every(alive)).toBe(true);
      await client.close();
      gw.child.kill(signal);
      await gw.exited;
      expect(await gone(pids), `still running after ${signal}: ${pids.filter(alive).join(', ')}`).toBe(true);
    },
    40_000,
  );
});
