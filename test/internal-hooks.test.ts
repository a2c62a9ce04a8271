/**
 * Internal hooks (plugin hooks): HOOK.md discovery, precedence and gating; the runner's
 * isolation of throwing, hanging and lazily loaded handlers; and on a real gateway with the
 * agent and a scripted fake model, every event firing (command:new/reset/stop,
 * agent:bootstrap, gateway:startup, message:received/sent) and the bundled session-memory,
 * command-logger and boot-md doing their work.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type KernelServices, type LogRecord } from '../sdk/index.js';
import { runAgent, startAgent, until, type AgentHarness } from './agent-helpers.js';
import { claw, REPO, startCliGateway, tempDir } from './helpers.js';
import { createTestKernel } from '../sdk/testing.js';
import { BUNDLED_HOOKS_DIR } from '../plugins/hooks/index.js';
import { hookInventory, InternalHookRunner } from '../plugins/hooks/runner.js';
import { parseFrontmatter } from '../plugins/hooks/discovery.js';

const HOOKS_DIR = join(REPO, 'plugins', 'hooks');

function writeHook(root: string, name: string, frontmatter: string, handler: string, file = 'handler.js'): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'HOOK.md'), `---\n${frontmatter}\n---\n\n# ${name}\n`);
  writeFileSync(join(dir, file), handler);
  return dir;
}

function fakeKernel(stateDir: string, config: Record<string, unknown>, env: Record<string, string> = {}) {
  return {
    config: () => config,
    paths: { stateDir, workspaceDir: join(stateDir, 'workspace'), configPath: join(stateDir, 'openclaw.json') },
    env,
  } as unknown as KernelServices;
}

describe('discovery, precedence and gating', () => {
  it('reads HOOK.md frontmatter (YAML with an inline JSON metadata object)', () => {
    const front = parseFrontmatter(
      '---\nname: x\ndescription: "d"\nmetadata:\n  { "openclaw": { "events": ["command:new"], "requires": { "bins": ["node"] } } }\n---\nbody',
    );
    expect(front).toMatchObject({
      name: 'x',
      metadata: { openclaw: { events: ['command:new'], requires: { bins: ['node'] } } },
    });
    expect(() => parseFrontmatter('# no frontmatter')).toThrow(/no YAML frontmatter/);
  });

  it('bundled hooks are found and ready; managed beats bundled; the workspace adds names but never replaces one', () => {
    const stateDir = tempDir('claw-hooks-');
    const workspace = join(stateDir, 'workspace');
    writeHook(
      join(stateDir, 'hooks'),
      'command-logger',
      'name: command-logger\ndescription: mine\nmetadata: { "openclaw": { "events": ["command"] } }',
      'export default () => {}',
    );
    writeHook(
      join(workspace, 'hooks'),
      'session-memory',
      'name: session-memory\nmetadata: { "openclaw": { "events": ["command:new"] } }',
      'export default () => {}',
    );
    writeHook(
      join(workspace, 'hooks'),
      'local',
      'name: local\nmetadata: { "openclaw": { "events": ["message:received"] } }',
      'export default () => {}',
    );
    const inventory = hookInventory(fakeKernel(stateDir, {}), BUNDLED_HOOKS_DIR);
    const byName = Object.fromEntries(inventory.statuses.map((hook) => [hook.name, hook]));
    expect(Object.keys(byName).sort()).toEqual(['boot-md', 'command-logger', 'local', 'session-memory']);
    expect(byName['boot-md']).toMatchObject({ source: 'bundled', loadable: true, events: ['gateway:startup'] });
    expect(byName['command-logger']).toMatchObject({ source: 'managed', description: 'mine' });
    expect(byName['command-logger']!.shadowed![0]).toMatch(/^bundled:/);
    expect(byName['session-memory']).toMatchObject({ source: 'bundled' });
    expect(byName['session-memory']!.shadowed![0]).toMatch(/^workspace:/);
    expect(byName.local).toMatchObject({
      source: 'workspace',
      loadable: false,
      blockedReason: 'workspace hook (disabled by default)',
    });
    // Nothing is selected until hooks.internal asks.
    expect(inventory.selected).toEqual([]);
  });

  it('extra directories replace bundled hooks, later ones win, the managed folder wins over all; a dir may be one hook itself', () => {
    const stateDir = tempDir('claw-hooks-');
    const first = join(stateDir, 'lib1');
    const second = join(stateDir, 'lib2');
    const hook = (description: string) =>
      `name: boot-md\ndescription: ${description}\nmetadata: { "openclaw": { "events": ["gateway:startup"] } }`;
    writeHook(first, 'boot-md', hook('from lib1'), 'export default () => {}');
    writeHook(second, 'boot-md', hook('from lib2'), 'export default () => {}');
    const single = writeHook(
      join(stateDir, 'single'),
      'solo',
      'name: solo\nmetadata: { "openclaw": { "events": ["command"] } }',
      'export default () => {}',
    );
    const config = { hooks: { internal: { load: { extraDirs: [first, second, single] } } } };
    let byName = Object.fromEntries(
      hookInventory(fakeKernel(stateDir, config), BUNDLED_HOOKS_DIR).statuses.map((status) => [status.name, status]),
    );
    expect(byName['boot-md']).toMatchObject({ source: 'extra', description: 'from lib2' });
    expect(byName.solo).toMatchObject({ source: 'extra', loadable: true });
    writeHook(join(stateDir, 'hooks'), 'boot-md', hook('managed'), 'export default () => {}');
    const inventory = hookInventory(fakeKernel(stateDir, config), BUNDLED_HOOKS_DIR);
    byName = Object.fromEntries(inventory.statuses.map((status) => [status.name, status]));
    expect(byName['boot-md']).toMatchObject({ source: 'managed', description: 'managed' });
    // Extra directories open discovery: every loadable hook is selected.
    expect(inventory.selected.map((status) => status.name)).toEqual([
      'boot-md',
      'command-logger',
      'session-memory',
      'solo',
    ]);
  });

  it("the bundled hooks' options are checked: an unknown one is a config error", async () => {
    const kernel = await createTestKernel({
      plugins: [HOOKS_DIR],
      config: { hooks: { internal: { entries: { 'session-memory': { llmSlug: true }, mine: { anything: 1 } } } } },
    });
    const errors = kernel
      .issues()
      .filter((issue) => issue.level === 'error')
      .map((issue) => issue.path);
    expect(errors).toEqual(['hooks.internal.entries.session-memory.llmSlug']);
    await kernel.dispose();
  });

  it('each ineligible hook says why: requirements, events, config, a broken HOOK.md', () => {
    const stateDir = tempDir('claw-hooks-');
    const managed = join(stateDir, 'hooks');
    writeHook(
      managed,
      'needs-bin',
      'metadata: { "openclaw": { "events": ["command"], "requires": { "bins": ["definitely-not-a-binary-xyz"] } } }',
      'export default () => {}',
    );
    writeHook(
      managed,
      'needs-env',
      'metadata: { "openclaw": { "events": ["command"], "requires": { "env": ["HOOK_TEST_KEY"], "config": ["tools.special"] } } }',
      'export default () => {}',
    );
    writeHook(
      managed,
      'other-os',
      'metadata: { "openclaw": { "events": ["command"], "os": ["plan9"] } }',
      'export default () => {}',
    );
    writeHook(managed, 'no-events', 'description: nothing', 'export default () => {}');
    writeHook(managed, 'off', 'metadata: { "openclaw": { "events": ["command"] } }', 'export default () => {}');
    mkdirSync(join(managed, 'broken'));
    writeFileSync(join(managed, 'broken', 'HOOK.md'), 'no frontmatter');
    const config = {
      hooks: {
        internal: { enabled: true, entries: { off: { enabled: false }, 'needs-env': { env: { HOOK_TEST_KEY: 'x' } } } },
      },
      tools: { special: true },
    };
    const inventory = hookInventory(fakeKernel(stateDir, config, { PATH: process.env.PATH ?? '' }), BUNDLED_HOOKS_DIR);
    const reason = (name: string) => inventory.statuses.find((hook) => hook.name === name)?.blockedReason;
    expect(reason('needs-bin')).toBe('missing requirements: bins definitely-not-a-binary-xyz');
    expect(reason('needs-env')).toBeUndefined();
    expect(reason('other-os')).toMatch(/^missing requirements: os plan9/);
    expect(reason('no-events')).toBe('no events defined');
    expect(reason('off')).toBe('disabled in config');
    expect(reason('broken')).toMatch(/frontmatter/);
    // Named entries form an allowlist: only needs-env (named, eligible) is selected.
    expect(inventory.selected.map((hook) => hook.name)).toEqual(['needs-env']);
    // Without the entry's env, the requirement is missing.
    const bare = hookInventory(
      fakeKernel(stateDir, { hooks: { internal: { enabled: true } }, tools: { special: true } }),
      BUNDLED_HOOKS_DIR,
    );
    expect(bare.statuses.find((hook) => hook.name === 'needs-env')!.blockedReason).toBe(
      'missing requirements: env HOOK_TEST_KEY',
    );
    // The master switch alone selects every loadable hook (the bundled ones here).
    expect(bare.selected.map((hook) => hook.name)).toEqual(['boot-md', 'command-logger', 'off', 'session-memory']);
    expect(
      hookInventory(
        fakeKernel(stateDir, { hooks: { internal: { enabled: false, entries: { 'boot-md': {} } } } }),
        BUNDLED_HOOKS_DIR,
      ).selected,
    ).toEqual([]);
  });
});

describe('the runner', () => {
  it('loads a handler only when its event fires; a throwing or hanging handler is logged and the others still run', async () => {
    const stateDir = tempDir('claw-hooks-');
    const managed = join(stateDir, 'hooks');
    const marks = join(stateDir, 'marks');
    mkdirSync(marks);
    writeHook(
      managed,
      'a-throws',
      'metadata: { "openclaw": { "events": ["command"] } }',
      `throw new Error('module is broken');`,
    );
    writeHook(
      managed,
      'b-hangs',
      'metadata: { "openclaw": { "events": ["command:new"] } }',
      `export default () => new Promise(() => {});`,
    );
    writeHook(
      managed,
      'c-records',
      'metadata: { "openclaw": { "events": ["command:new"] } }',
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(join(marks, 'loaded'))}, '1');\nexport default (event: { action: string; messages: string[] }) => { event.messages.push('ran ' + event.action); };`,
      'handler.ts',
    );
    const logs: LogRecord[] = [];
    const kernel = fakeKernel(stateDir, {
      hooks: { internal: { enabled: true, entries: { 'a-throws': {}, 'b-hangs': {}, 'c-records': {} } } },
    });
    const runner = new InternalHookRunner(
      kernel,
      createLogger({ level: 'debug', sink: (record) => logs.push(record) }),
      BUNDLED_HOOKS_DIR,
      200,
    );
    expect(runner.wants('command', 'new')).toBe(true);
    expect(runner.wants('message', 'received')).toBe(false);
    expect(existsSync(join(marks, 'loaded'))).toBe(false);
    const started = Date.now();
    const event = await runner.emit('command', 'new', 'agent:main:main', {});
    expect(Date.now() - started).toBeLessThan(2000);
    expect(event.messages).toEqual(['ran new']);
    expect(existsSync(join(marks, 'loaded'))).toBe(true);
    const errors = logs.filter((record) => record.level === 'error').map((record) => record.message);
    expect(errors.some((message) => /hook a-throws .*module is broken/.test(message))).toBe(true);
    expect(errors.some((message) => /hook b-hangs .*did not finish within 200 ms/.test(message))).toBe(true);
  });
});

describe('internal hooks on a running gateway', () => {
  let h: AgentHarness;
  let stateDir: string;
  let workspace: string;
  const probeLog = () =>
    existsSync(join(stateDir, 'probe.log')) ? readFileSync(join(stateDir, 'probe.log'), 'utf8').trim().split('\n') : [];

  beforeAll(async () => {
    stateDir = tempDir('claw-hooks-gw-');
    workspace = join(stateDir, 'workspace');
    const hooks = join(workspace, 'hooks');
    writeHook(
      hooks,
      'probe',
      'name: probe\ndescription: records every event\nmetadata: { "openclaw": { "events": ["command", "agent:bootstrap", "gateway:startup", "message:received", "message:sent"] } }',
      `import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
export default function probe(event) {
  appendFileSync(join(event.context.stateDir, 'probe.log'), event.type + ':' + event.action + ' ' + event.sessionKey + '\\n');
  if (event.type === 'agent') event.context.bootstrapFiles.push({ name: 'EXTRA.md', path: join(event.context.workspaceDir, 'EXTRA.md'), missing: false, content: 'PROBE-BOOTSTRAP-MARKER' });
  if (event.type === 'command' && event.action === 'new') event.messages.push('Reset hook ran.');
}`,
    );
    writeHook(
      hooks,
      'boom',
      'name: boom\nmetadata: { "openclaw": { "events": ["message:received", "command:new", "agent:bootstrap"] } }',
      `export default () => { throw new Error('boom goes the hook'); };`,
    );
    writeFileSync(join(workspace, 'BOOT.md'), 'Check the BOOT-MARKER inbox.\n');
    h = await startAgent({
      stateDir,
      plugins: [HOOKS_DIR],
      config: {
        hooks: {
          internal: {
            enabled: true,
            entries: {
              probe: { enabled: true },
              boom: { enabled: true },
              'session-memory': { enabled: true, messages: 2 },
              'command-logger': { enabled: true },
              'boot-md': { enabled: true },
            },
          },
        },
      },
    });
    // boot-md: BOOT.md ran through the agent at start.
    await until(
      () => h.fake.requests.some((request) => JSON.stringify(request.body).includes('BOOT-MARKER')),
      10_000,
      'the BOOT.md run',
    );
  }, 30_000);
  afterAll(async () => {
    await h?.stop();
  });

  it("hooks.status reports every hook in OpenClaw's shape, with what the gateway runs", async () => {
    type Report = {
      workspaceDir: string;
      managedHooksDir: string;
      hooks: Array<{
        name: string;
        hookKey: string;
        source: string;
        loadable: boolean;
        enabledByConfig: boolean;
        selected: boolean;
        managedByPlugin: boolean;
        missing: Record<string, string[]>;
        events: string[];
      }>;
    };
    const report = await h.client.request<Report>('hooks.status', {});
    expect(report).toMatchObject({ workspaceDir: workspace, managedHooksDir: join(stateDir, 'hooks') });
    const probe = report.hooks.find((hook) => hook.name === 'probe')!;
    expect(probe).toMatchObject({
      source: 'workspace',
      loadable: true,
      enabledByConfig: true,
      selected: true,
      managedByPlugin: false,
      missing: { bins: [], anyBins: [], env: [], config: [], os: [] },
    });
    expect(probe.events).toContain('gateway:startup');
    expect(report.hooks.find((hook) => hook.name === 'session-memory')).toMatchObject({
      loadable: true,
      selected: true,
    });
    await expect(h.client.request('hooks.status', { agentId: 'ghost' })).rejects.toThrow(/ghost/);
  });

  it('gateway:startup fired and boot-md ran BOOT.md in its own boot session', () => {
    expect(probeLog()).toContain('gateway:startup gateway');
    const boot = h.fake.requests.find((request) => JSON.stringify(request.body).includes('BOOT-MARKER'))!;
    expect(JSON.stringify(boot.body)).toContain('startup checklist');
    // Its own temporary session: removed from the store afterwards, the transcript kept.
    expect(probeLog().some((line) => /^message:received agent:main:boot:[0-9a-f-]+$/.test(line))).toBe(true);
    const sessions = JSON.parse(readFileSync(join(stateDir, 'agents', 'main', 'sessions', 'sessions.json'), 'utf8'));
    expect(Object.keys(sessions).some((key) => /^agent:main:boot:/.test(key))).toBe(false);
  });

  it('message:received and agent:bootstrap fire on a message; a throwing hook does not break it; bootstrap files can be added', async () => {
    h.fake.script({ text: 'Hello Ada.' });
    const { final } = await runAgent(h.client, { message: 'My name is Ada.', sessionKey: 'agent:main:main' });
    expect(final.status).toBe('ok');
    expect(probeLog()).toContain('message:received agent:main:main');
    expect(probeLog()).toContain('agent:bootstrap agent:main:main');
    const request = h.fake.requests.at(-1)!;
    expect(JSON.stringify(request.body)).toContain('PROBE-BOOTSTRAP-MARKER');
    await until(
      () => h.gw.kernel.logs.some((record) => /hook boom .*boom goes the hook/.test(record.message)),
      5000,
      'the boom log',
    );
  });

  it('message:sent is bridged from the kernel hook bus', async () => {
    await h.gw.kernel.hooks.runVoid(
      'message_sent',
      { channel: 'telegram', to: '42', content: 'hi', success: true },
      { sessionKey: 'agent:main:telegram:dm:42' },
    );
    expect(probeLog()).toContain('message:sent agent:main:telegram:dm:42');
  });

  it('/new fires command:new: session-memory saves the ended session, command-logger logs it, hook messages reach the sender', async () => {
    h.fake.script({ text: 'Noted: you like tea.' });
    await runAgent(h.client, { message: 'I like green tea.', sessionKey: 'agent:main:main' });
    h.fake.script({ text: 'Hi again!' });
    await runAgent(h.client, { message: '/new', sessionKey: 'agent:main:main' });
    // The command's reply (to the sender, here the operator's chat events) carries the hook's message.
    const replies = h.events
      .filter((frame) => frame.event === 'chat' && (frame.payload as { state?: string }).state === 'final')
      .map((frame) => JSON.stringify(frame.payload));
    expect(replies.some((reply) => reply.includes('Reset hook ran.'))).toBe(true);
    expect(probeLog()).toContain('command:new agent:main:main');

    const memoryDir = join(workspace, 'memory');
    const files = readdirSync(memoryDir).filter((name) => /^\d{4}-\d{2}-\d{2}-\d{4}(-\d+)?\.md$/.test(name));
    expect(files).toHaveLength(1);
    const saved = readFileSync(join(memoryDir, files[0]!), 'utf8');
    expect(saved).toContain('- Session key: agent:main:main');
    expect(saved).toContain('**User:** I like green tea.');
    expect(saved).toContain('**Assistant:** Noted: you like tea.');
    // `messages: 2` keeps the last exchange only.
    expect(saved).not.toContain('My name is Ada.');
    expect(statSync(join(memoryDir, files[0]!)).mode & 0o777).toBe(0o600);

    const log = join(stateDir, 'logs', 'commands.log');
    const line = JSON.parse(readFileSync(log, 'utf8').trim().split('\n').at(-1)!);
    expect(line).toMatchObject({
      action: 'new',
      sessionKey: 'agent:main:main',
      source: expect.any(String),
      senderId: expect.any(String),
    });
    expect(statSync(log).mode & 0o777).toBe(0o600);
  });

  it('sessions.reset (gateway) fires command:reset with its source', async () => {
    await h.client.request('sessions.reset', { key: 'agent:main:main' });
    expect(probeLog()).toContain('command:reset agent:main:main');
    const line = JSON.parse(
      readFileSync(join(stateDir, 'logs', 'commands.log'), 'utf8')
        .trim()
        .split('\n')
        .at(-1)!,
    );
    expect(line).toMatchObject({ action: 'reset', source: 'gateway:sessions.reset', senderId: 'unknown' });
  });

  it('/reset and /stop fire their events too', async () => {
    h.fake.script({ text: 'fresh' });
    await runAgent(h.client, { message: '/reset', sessionKey: 'agent:main:main' });
    await runAgent(h.client, { message: '/stop', sessionKey: 'agent:main:main' });
    expect(probeLog()).toContain('command:reset agent:main:main');
    expect(probeLog()).toContain('command:stop agent:main:main');
    const actions = readFileSync(join(stateDir, 'logs', 'commands.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).action);
    expect(actions).toEqual(['new', 'reset', 'reset', 'stop']);
  });
});

describe('claw hooks (CLI)', () => {
  it('list, info, check, enable and disable', async () => {
    const stateDir = tempDir('claw-hooks-cli-');
    const env = { OPENCLAW_STATE_DIR: stateDir, OPENCLAW_CONFIG_PATH: join(stateDir, 'openclaw.json') };
    writeFileSync(env.OPENCLAW_CONFIG_PATH, '{}');
    const list = await claw(['hooks', 'list', '--json'], env);
    expect(list.code).toBe(0);
    const names = JSON.parse(list.stdout).hooks.map((hook: { name: string }) => hook.name);
    expect(names).toEqual(['boot-md', 'command-logger', 'session-memory']);
    const table = await claw(['hooks'], env);
    // Ready is not on: nothing runs until hooks.internal selects it.
    expect(table.stdout).toMatch(/Hooks \(3\/3 ready, 0 on\)/);
    expect(table.stdout).toMatch(/○ ready\s+\S+ command-logger/);
    const info = await claw(['hooks', 'info', 'session-memory', '--json'], env);
    expect(JSON.parse(info.stdout)).toMatchObject({
      name: 'session-memory',
      source: 'bundled',
      events: ['command:new', 'command:reset'],
      loadable: true,
    });
    expect((await claw(['hooks', 'info', 'nope'], env)).stderr).toMatch(/no hook named "nope"/);
    const check = JSON.parse((await claw(['hooks', 'check', '--json'], env)).stdout);
    expect(check).toMatchObject({ total: 3, eligible: 3, notEligible: 0 });

    const enable = await claw(['hooks', 'enable', 'command-logger'], env);
    expect(enable.code).toBe(0);
    expect(enable.stdout).toMatch(/Enabled hook command-logger/);
    const after = (await claw(['hooks'], env)).stdout;
    expect(after).toMatch(/Hooks \(3\/3 ready, 1 on\)/);
    expect(after).toMatch(/✓ on\s+\S+ command-logger/);
    expect(after).toMatch(/○ ready\s+\S+ session-memory/);
    let config = JSON.parse(readFileSync(env.OPENCLAW_CONFIG_PATH, 'utf8'));
    expect(config.hooks.internal).toEqual({ enabled: true, entries: { 'command-logger': { enabled: true } } });
    await claw(['hooks', 'disable', 'command-logger'], env);
    config = JSON.parse(readFileSync(env.OPENCLAW_CONFIG_PATH, 'utf8'));
    expect(config.hooks.internal.entries['command-logger']).toEqual({ enabled: false });
    const disabled = JSON.parse((await claw(['hooks', 'list', '--json'], env)).stdout).hooks.find(
      (hook: { name: string }) => hook.name === 'command-logger',
    );
    expect(disabled).toMatchObject({ enabledByConfig: false, blockedReason: 'disabled in config' });
  }, 60_000);

  it('enable goes through a running gateway, which applies it without a restart', async () => {
    const stateDir = tempDir('claw-hooks-cli-gw-');
    const env = { OPENCLAW_STATE_DIR: stateDir };
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({ gateway: { auth: { token: 'cli-gateway-token-0123456789abcdef' } } }),
    );
    await startCliGateway(env);
    const enable = await claw(['hooks', 'enable', 'session-memory'], env);
    expect(enable.code, enable.stderr).toBe(0);
    expect(enable.stdout).toMatch(/Enabled hook session-memory: .*live in the running gateway/);
    expect(JSON.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8')).hooks.internal).toEqual({
      enabled: true,
      entries: { 'session-memory': { enabled: true } },
    });
  }, 60_000);
});
