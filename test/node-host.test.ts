/**
 * The node host's parts without a gateway: the idempotency journal, the dispatcher's
 * once-per-key rule, setup codes, and the system.* commands judged by the real exec-approvals
 * and tools-exec plugins in a test kernel (a marker file tells whether a command ran).
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { requireService } from '../sdk/services.js';
import type { ExecEnvService } from '../sdk/exec/index.js';
import { InvokeJournal } from '../plugins/node-host/journal.js';
import { Dispatcher, type InvokeRequest, type NodeCommands } from '../plugins/node-host/dispatcher.js';
import { GroupWatchdog } from '../plugins/node-host/group-watchdog.js';
import { NodeApprovals } from '../plugins/node-host/node-approvals.js';
import { systemCommands } from '../plugins/node-host/system-commands.js';
import { decodeSetupCode } from '../plugins/node-host/setup-code.js';
import { REPO, tempDir } from './helpers.js';

const PLUGINS = ['tools-exec', 'exec-approvals', 'models', 'sessions'].map((id) => join(REPO, 'plugins', id));
const kernels: TestKernel[] = [];
const watchdogs: GroupWatchdog[] = [];

afterAll(async () => {
  for (const watchdog of watchdogs) watchdog.close();
  for (const kernel of kernels) await kernel.dispose();
});

interface Sent {
  method: string;
  params: {
    id?: string;
    ok?: boolean;
    payloadJSON?: string;
    error?: { code: string; message: string };
    event?: string;
  };
}

function request(command: string, params: unknown, extra: Partial<InvokeRequest> = {}): InvokeRequest {
  return {
    id: `inv-${Math.random().toString(36).slice(2)}`,
    nodeId: 'node-1',
    command,
    paramsJSON: params === undefined ? null : JSON.stringify(params),
    timeoutMs: 30_000,
    idempotencyKey: null,
    ...extra,
  };
}

/** A dispatcher over `commands` whose transport records what would go to the gateway. */
function dispatcherFor(commands: NodeCommands, dir = tempDir('claw-node-journal-')) {
  const sent: Sent[] = [];
  const journal = new InvokeJournal(dir);
  const dispatcher = new Dispatcher(
    commands,
    journal,
    {
      request: async (method, params) => {
        sent.push({ method, params: params as Sent['params'] });
        return {};
      },
    },
    () => {},
  );
  const call = async (req: InvokeRequest) => {
    await dispatcher.invoke(req);
    const result = sent.filter((entry) => entry.method === 'node.invoke.result' && entry.params.id === req.id).at(-1);
    return result!.params;
  };
  return { dispatcher, journal, sent, call, dir };
}

async function systemNode(approvals?: unknown, config: Record<string, unknown> = {}) {
  const stateDir = tempDir('claw-node-state-');
  if (approvals) writeFileSync(join(stateDir, 'exec-approvals.json'), JSON.stringify(approvals), { mode: 0o600 });
  const kernel = await createTestKernel({ stateDir, plugins: PLUGINS, config });
  kernels.push(kernel);
  const services = kernel.plugins.kernelServices;
  const watchdog = new GroupWatchdog();
  watchdogs.push(watchdog);
  const commands = systemCommands({
    approvals: new NodeApprovals(services),
    execEnv: () => requireService<ExecEnvService>(services, 'exec-env', 'test'),
    watchdog,
  });
  return { ...dispatcherFor(commands), stateDir };
}

const payload = (result: Sent['params']) => JSON.parse(result.payloadJSON!) as Record<string, any>;

describe('the idempotency journal', () => {
  it('keeps outcomes across restarts and reports a key whose run was cut short', () => {
    const dir = tempDir('claw-journal-');
    const first = new InvokeJournal(dir);
    expect(first.claim('k-done', 'system.run')).toEqual({ state: 'new' });
    first.finish('k-done', { ok: true, payloadJSON: '{"exitCode":0}' });
    expect(first.claim('k-cut', 'system.run')).toEqual({ state: 'new' });
    first.close();
    expect(statSync(join(dir, 'invokes.jsonl')).mode & 0o777).toBe(0o600);

    const second = new InvokeJournal(dir);
    expect(second.claim('k-done', 'system.run')).toEqual({
      state: 'done',
      outcome: { ok: true, payloadJSON: '{"exitCode":0}' },
    });
    expect(second.claim('k-cut', 'system.run')).toMatchObject({ state: 'interrupted', command: 'system.run' });
    second.close();
  });

  it('skips a last line cut short by a crash', () => {
    const dir = tempDir('claw-journal-');
    const journal = new InvokeJournal(dir);
    journal.claim('whole', 'system.run');
    journal.close();
    writeFileSync(join(dir, 'invokes.jsonl'), `${readFileSync(join(dir, 'invokes.jsonl'), 'utf8')}{"t":"sta`);
    const reopened = new InvokeJournal(dir);
    expect(reopened.claim('whole', 'system.run').state).toBe('interrupted');
    reopened.close();
  });
});

describe('the dispatcher', () => {
  it('runs a `once` command one time per idempotencyKey and answers a repeat with the recorded outcome', async () => {
    let runs = 0;
    const { call, journal } = dispatcherFor({
      'test.count': { cap: 'test', once: true, run: async () => ({ ok: true, payload: { run: ++runs } }) },
    });
    const first = await call(request('test.count', {}, { idempotencyKey: 'same-key' }));
    const again = await call(request('test.count', {}, { idempotencyKey: 'same-key' }));
    expect(runs).toBe(1);
    expect(payload(first)).toEqual({ run: 1 });
    expect(payload(again)).toEqual({ run: 1 });
    await call(request('test.count', {}, { idempotencyKey: 'other-key' }));
    expect(runs).toBe(2);
    journal.close();
  });

  it('never runs again a command whose node host died while it ran', async () => {
    const dir = tempDir('claw-node-journal-');
    const crashed = new InvokeJournal(dir);
    crashed.claim('cut-key', 'test.count');
    crashed.close();
    let runs = 0;
    const { call, journal } = dispatcherFor(
      { 'test.count': { cap: 'test', once: true, run: async () => ({ ok: true, payload: { run: ++runs } }) } },
      dir,
    );
    const result = await call(request('test.count', {}, { idempotencyKey: 'cut-key' }));
    expect(runs).toBe(0);
    expect(result.ok).toBe(false);
    expect(result.error!.code).toBe('INTERRUPTED');
    expect(result.error!.message).toMatch(/was not run again/);
    journal.close();
  });

  it('answers unknown commands and malformed params in OpenClaw’s terms', async () => {
    const { call, journal } = dispatcherFor({
      'test.echo': { cap: 'test', run: async (params) => ({ ok: true, payload: params }) },
    });
    expect((await call(request('camera.snap', {}))).error).toEqual({
      code: 'UNAVAILABLE',
      message: 'command not supported',
    });
    const malformed = await call({ ...request('test.echo', undefined), paramsJSON: '{oops' });
    expect(malformed.error).toEqual({ code: 'INVALID_REQUEST', message: 'INVALID_REQUEST: paramsJSON malformed JSON' });
    journal.close();
  });
});

describe('setup codes', () => {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  it('reads OpenClaw’s encoding, with or without the oc-pair:// prefix', () => {
    const code = encode({ url: 'wss://gw.example:18789', bootstrapToken: 'boot-1', expiresAtMs: Date.now() + 60_000 });
    expect(decodeSetupCode(code)).toMatchObject({ url: 'wss://gw.example:18789', bootstrapToken: 'boot-1' });
    expect(decodeSetupCode(`oc-pair://${code}`).bootstrapToken).toBe('boot-1');
  });

  it('refuses an expired or malformed code, naming the problem', () => {
    expect(() => decodeSetupCode(encode({ url: 'ws://127.0.0.1:1', bootstrapToken: 'b', expiresAtMs: 1 }))).toThrow(
      /expired/,
    );
    expect(() => decodeSetupCode('not a code!')).toThrow(/not a setup code/);
    expect(() => decodeSetupCode(encode({ url: 'http://x', bootstrapToken: 'b' }))).toThrow(/no gateway URL/);
  });
});

describe('system commands under the node’s own exec approvals', () => {
  it('system.which finds programs on the node’s PATH', async () => {
    const { call } = await systemNode();
    const result = await call(request('system.which', { bins: ['sh', 'no-such-program-xyz'] }));
    expect(payload(result).bins).toEqual({ sh: expect.stringMatching(/\/sh$/) });
    expect((await call(request('system.which', {}))).error!.message).toBe('INVALID_REQUEST: bins required');
  });

  it('system.run runs an argv and answers OpenClaw’s payload, then reports exec.finished', async () => {
    const { call, sent } = await systemNode();
    const cwd = tempDir('claw-node-cwd-');
    const result = await call(request('system.run', { command: ['sh', '-c', 'echo out; echo err >&2; exit 3'], cwd }));
    expect(payload(result)).toEqual({
      exitCode: 3,
      timedOut: false,
      success: false,
      stdout: 'out\n',
      stderr: 'err\n',
      error: null,
    });
    expect(sent.some((entry) => entry.method === 'node.event' && entry.params.event === 'exec.finished')).toBe(true);
  });

  it('the allowlist refuses a command it does not cover, and it does not run', async () => {
    const { call } = await systemNode({
      version: 1,
      defaults: { security: 'allowlist' },
      agents: { '*': { allowlist: [{ pattern: '/usr/bin/true' }] } },
    });
    const marker = join(tempDir('claw-node-marker-'), 'ran');
    const result = await call(request('system.run', { command: ['touch', marker] }));
    expect(result.error!.code).toBe('SYSTEM_RUN_DENIED');
    expect(result.error!.message).toMatch(/^SYSTEM_RUN_DENIED: allowlist miss/);
    expect(existsSync(marker)).toBe(false);
  });

  it('ask: answers "approval required"; the prepared plan with a person’s decision then runs', async () => {
    const { call } = await systemNode({ version: 1, defaults: { ask: 'always' } });
    const marker = join(tempDir('claw-node-marker-'), 'ran');
    const asked = await call(request('system.run', { command: ['touch', marker] }));
    expect(asked.error).toEqual({ code: 'SYSTEM_RUN_DENIED', message: 'SYSTEM_RUN_DENIED: approval required' });
    expect(existsSync(marker)).toBe(false);

    const prepared = payload(await call(request('system.run.prepare', { command: ['touch', marker] })));
    expect(prepared.execPolicy).toEqual({ security: 'full', ask: 'always' });
    const plan = prepared.plan as { argv: string[]; cwd: string; commandText: string };
    expect(plan.argv[0]).toMatch(/^\/.*\/touch$/);
    expect(plan.cwd).toBe(process.cwd());

    const mismatched = await call(
      request('system.run', { command: ['touch', `${marker}.other`], systemRunPlan: plan, approved: true }),
    );
    expect(mismatched.error).toEqual({
      code: 'INVALID_REQUEST',
      message: 'explicit approval requires matching systemRunPlan',
    });

    const approved = await call(
      request('system.run', {
        command: plan.argv,
        rawCommand: plan.commandText,
        cwd: plan.cwd,
        systemRunPlan: plan,
        approvalDecision: 'allow-once',
      }),
    );
    expect(payload(approved).success, JSON.stringify(approved)).toBe(true);
    expect(existsSync(marker)).toBe(true);
  });

  it('security deny refuses everything; a refused env name is named', async () => {
    const denied = await systemNode({ version: 1, defaults: { security: 'deny' } });
    expect((await denied.call(request('system.run', { command: ['true'] }))).error).toEqual({
      code: 'SYSTEM_RUN_DENIED',
      message: 'SYSTEM_RUN_DISABLED: security=deny',
    });
    const open = await systemNode();
    const env = await open.call(request('system.run', { command: ['true'], env: { LD_PRELOAD: '/tmp/x.so' } }));
    expect(env.error!.code).toBe('INVALID_REQUEST');
    expect(env.error!.message).toMatch(/^SYSTEM_RUN_DENIED: environment override rejected \(.*LD_PRELOAD/);
  });

  it('system.execApprovals.get/set read and replace the node’s document, guarded by its hash', async () => {
    const { call, stateDir } = await systemNode();
    const first = payload(await call(request('system.execApprovals.get', { includeResolvedDefaults: true })));
    expect(first).toMatchObject({ path: join(stateDir, 'exec-approvals.json'), exists: false, file: { version: 1 } });
    expect(first.resolvedDefaults).toEqual({ security: 'full', ask: 'off', askFallback: 'deny' });
    const file = { version: 1, defaults: { security: 'allowlist' } };
    const written = payload(await call(request('system.execApprovals.set', { file, baseHash: first.hash })));
    expect(written).toMatchObject({ exists: true, file });
    const stale = await call(request('system.execApprovals.set', { file, baseHash: first.hash }));
    expect(stale.error!.message).toBe('INVALID_REQUEST: exec approvals changed; reload and retry');
    const missing = await call(request('system.execApprovals.set', { file }));
    expect(missing.error!.message).toBe('INVALID_REQUEST: exec approvals base hash required; reload and retry');
  });
});
