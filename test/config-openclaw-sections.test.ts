/**
 * OpenClaw config sections claw implements rather than refuses: `approvals.exec` (approval
 * requests forwarded to chats, answered with /approve), `bindings[].session.groupScope` and
 * `sandbox.backend` (which plugin holds the sandbox slot). The chat is an in-memory channel
 * plugin defined here; nothing leaves the process.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { definePlugin, type ChannelAccountContext } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import type { SessionService } from '../sdk/sessions/index.js';
import { useService } from '../sdk/services.js';
import { judged, snapshotOf } from '../kernel/config/store.js';
import { clawPolicy } from '../host/policy.js';
import { resolveAgentRoute } from '../plugins/channels/routing.js';
import { REPO, tempDir } from './helpers.js';

const plugin = (id: string) => join(REPO, 'plugins', id);
const kernels: TestKernel[] = [];

afterAll(async () => {
  for (const kernel of kernels) await kernel.stop();
});

/** A chat service's stand-in: the bot's sends land in `sent`, and each one wakes `next()`. */
function memoryChat() {
  const sent: Array<{ to: string; text: string }> = [];
  let waiting: ((message: { to: string; text: string }) => void) | undefined;
  const channel = definePlugin({
    id: 'memory-chat',
    register(api) {
      api.registerChannel({
        id: 'memory-chat',
        label: 'Memory chat',
        textLimit: 4000,
        async start(ctx: ChannelAccountContext) {
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
        },
        async send(message) {
          const item = { to: message.to, text: message.text ?? '' };
          sent.push(item);
          waiting?.(item);
          return { messageId: `out-${sent.length}` };
        },
        status: () => [{ accountId: 'default', connected: true }],
      });
    },
  });
  const next = () => new Promise<{ to: string; text: string }>((resolve) => (waiting = resolve));
  return { channel, sent, next };
}

async function kernelWith(config: Record<string, unknown>, extra: Array<ReturnType<typeof definePlugin>>) {
  const kernel = await createTestKernel({
    stateDir: tempDir('claw-oc-sections-'),
    plugins: ['tools-exec', 'exec-approvals', 'models', 'sessions', 'channels'].map(plugin).concat(extra as never[]),
    config,
  });
  kernels.push(kernel);
  return kernel;
}

function exec(kernel: TestKernel, command: string, workspace: string, sessionKey = 'agent:main:main') {
  return kernel.plugins.kernelServices.tools.invoke({
    name: 'exec',
    params: { command },
    toolCallId: `call-${command}`,
    context: { agentId: sessionKey.split(':')[1]!, sessionKey, workspaceDir: workspace },
  });
}

async function approve(kernel: TestKernel, args: string): Promise<string | undefined> {
  const command = await kernel.plugins.kernelServices.capabilities.get('command', 'approve');
  const answer = await command.handler({ args, sessionKey: 'agent:main:main' } as never);
  return answer ? answer.text : undefined;
}

const ASK = { tools: { exec: { security: 'allowlist', ask: 'always' } } };

describe('approvals.exec: forwarding exec approval requests to chats', () => {
  it('targets: the request is posted to the listed chat with its id; /approve there lets the command run', async () => {
    const chat = memoryChat();
    const kernel = await kernelWith(
      {
        ...ASK,
        approvals: { exec: { enabled: true, mode: 'targets', targets: [{ channel: 'memory-chat', to: 'ops' }] } },
      },
      [chat.channel],
    );
    const ws = tempDir();
    const posted = chat.next();
    // No gateway client is connected: only the forwarded chat can answer, so the call waits for it.
    const running = exec(kernel, 'touch forwarded', ws);
    const message = await posted;
    expect(message.to).toBe('ops');
    expect(message.text).toContain('Command: touch forwarded');
    expect(message.text).toContain(`Directory: ${ws}`);
    const id = /Exec approval needed \(([^)]+)\)/.exec(message.text)![1]!;
    expect(message.text).toContain(`/approve ${id} allow-once | allow-always | deny`);
    expect(await approve(kernel, `${id} allow-once`)).toBe(`✅ Exec approval ${id}: allow-once.`);
    expect((await running).blocked).toBe(false);
    expect(existsSync(join(ws, 'forwarded'))).toBe(true);
    expect(await approve(kernel, `${id} deny`)).toMatch(/already resolved as allow-once/);
    expect(await approve(kernel, 'nonsense')).toBe('Usage: /approve <id> allow-once | allow-always | deny');
  }, 120_000);

  it('session: the request goes to the chat the session last talked to; deny from there refuses the command', async () => {
    const chat = memoryChat();
    const kernel = await kernelWith({ ...ASK, approvals: { exec: { enabled: true } } }, [chat.channel]);
    const sessions = (await useService<SessionService>(kernel.plugins.kernelServices, 'sessions'))!;
    await sessions.store('main').upsert('agent:main:main', { lastChannel: 'memory-chat', lastTo: 'alice' });
    const ws = tempDir();
    const posted = chat.next();
    const running = exec(kernel, 'touch denied', ws);
    const message = await posted;
    expect(message.to).toBe('alice');
    const id = /Exec approval needed \(([^)]+)\)/.exec(message.text)![1]!;
    expect(await approve(kernel, `${id} deny`)).toBe(`✅ Exec approval ${id}: deny.`);
    expect((await running).blocked).toBe(true);
    expect(existsSync(join(ws, 'denied'))).toBe(false);
  }, 120_000);

  it('filters: a request from another agent or session is not forwarded, so no one can answer and askFallback applies', async () => {
    const chat = memoryChat();
    const kernel = await kernelWith(
      {
        ...ASK,
        approvals: {
          exec: {
            enabled: true,
            mode: 'both',
            agentFilter: ['main'],
            sessionFilter: ['^agent:main:ops-'],
            targets: [{ channel: 'memory-chat', to: 'ops' }],
          },
        },
      },
      [chat.channel],
    );
    const ws = tempDir();
    const outcome = await exec(kernel, 'touch filtered', ws, 'agent:main:main');
    expect(JSON.stringify(outcome.message.content)).toMatch(/no approval client is connected to ask/);
    expect(chat.sent).toEqual([]);
    const posted = chat.next();
    const running = exec(kernel, 'touch matched', ws, 'agent:main:ops-1');
    expect((await posted).to).toBe('ops');
    const id = /\(([^)]+)\)/.exec(chat.sent[0]!.text)![1]!;
    await approve(kernel, `${id} allow-once`);
    expect((await running).blocked).toBe(false);
  }, 120_000);

  it('a bad approvals section is a config error naming the path, owned by exec-approvals', async () => {
    const errors = async (approvals: unknown) =>
      (await kernelWith({ approvals }, []))
        .issues()
        .filter((issue) => issue.level === 'error')
        .map((issue) => `${issue.path} (${issue.owner})`);
    expect(await errors({ exec: { enabled: true, mode: 'everywhere' } })).toEqual([
      'approvals.exec.mode (exec-approvals)',
    ]);
    expect((await errors({ exec: { targets: [{ channel: 'telegram' }] } }))[0]).toMatch(
      /^approvals\.exec\.targets\[0\]/,
    );
    expect(
      await errors({ exec: { enabled: true, mode: 'both', targets: [{ channel: 'telegram', to: '1' }] } }),
    ).toEqual([]);
  }, 120_000);
});

describe('bindings[].session.groupScope', () => {
  const room = (id: string) => ({ channel: 'slack', peer: { kind: 'channel' as const, id } });

  it('a binding with groupScope main routes its room into the agent main session; other rooms keep their own', () => {
    const config = {
      agents: { list: [{ id: 'main' }, { id: 'team' }] },
      bindings: [
        {
          agentId: 'team',
          match: { channel: 'slack', peer: { kind: 'channel', id: 'C-TEAM' } },
          session: { groupScope: 'main' },
        },
        { agentId: 'team', match: { channel: 'slack' } },
      ],
    };
    expect(resolveAgentRoute(config as never, room('C-TEAM')).sessionKey).toBe('agent:team:main');
    expect(resolveAgentRoute(config as never, room('C-OTHER')).sessionKey).toBe('agent:team:slack:channel:C-OTHER');
    // session.groupScope main for every room; a binding's per-group wins back for its own.
    const global = {
      ...config,
      session: { groupScope: 'main' },
      bindings: [{ ...config.bindings[0], session: { groupScope: 'per-group' } }],
    };
    expect(resolveAgentRoute(global as never, room('C-TEAM')).sessionKey).toBe('agent:team:slack:channel:C-TEAM');
    expect(resolveAgentRoute(global as never, room('C-OTHER')).sessionKey).toBe('agent:main:main');
  });

  it('the schema takes bindings[].session and refuses an unknown groupScope by path', () => {
    const issues = (config: Record<string, unknown>) =>
      judged(snapshotOf(config, '/x/openclaw.json'), clawPolicy).issues.filter((issue) => issue.level === 'error');
    const binding = { agentId: 'main', match: { channel: 'slack' } };
    expect(issues({ bindings: [{ ...binding, session: { groupScope: 'main' } }] })).toEqual([]);
    expect(issues({ bindings: [{ ...binding, session: { groupScope: 'everyone' } }] })[0]).toMatchObject({
      path: 'bindings[0].session.groupScope',
    });
  });
});

describe('sandbox.backend picks the sandbox slot', () => {
  const load = (config: Record<string, unknown>) => judged(snapshotOf(config, '/x/openclaw.json'), clawPolicy);
  const errors = (config: Record<string, unknown>) =>
    load(config)
      .issues.filter((issue) => issue.level === 'error')
      .map((issue) => `${issue.path}: ${issue.message}`);

  it('an OpenClaw backend name fills an unset plugins.slots.sandbox with its plugin', () => {
    const snapshot = load({ agents: { defaults: { sandbox: { mode: 'all', backend: 'bwrap' } } } });
    expect(snapshot.issues.filter((issue) => issue.level === 'error')).toEqual([]);
    expect(snapshot.resolved.plugins?.slots?.sandbox).toBe('sandbox-bwrap');
    expect(
      load({ agents: { list: [{ id: 'main', sandbox: { backend: 'docker' } }] } }).resolved.plugins?.slots?.sandbox,
    ).toBe('sandbox-docker');
  });

  it('an unknown backend, or backends that disagree with each other or the slot, are errors naming the value', () => {
    expect(errors({ agents: { defaults: { sandbox: { backend: 'ssh' } } } })).toEqual([
      expect.stringMatching(/^agents\.defaults\.sandbox\.backend: unknown sandbox backend "ssh"/),
    ]);
    expect(
      errors({
        agents: { defaults: { sandbox: { backend: 'bwrap' } }, list: [{ id: 'main', sandbox: { backend: 'docker' } }] },
      }),
    ).toEqual([
      expect.stringMatching(
        /^agents\.list\[0\]\.sandbox\.backend: sandbox backend "docker" is plugin sandbox-docker, but the sandbox slot is held by "sandbox-bwrap"/,
      ),
    ]);
    expect(
      errors({
        plugins: { slots: { sandbox: 'sandbox-docker' } },
        agents: { defaults: { sandbox: { backend: 'bwrap' } } },
      }),
    ).toEqual([
      expect.stringMatching(
        /backend "bwrap" is plugin sandbox-bwrap, but the sandbox slot is held by "sandbox-docker"/,
      ),
    ]);
  });

  it('a kernel booted with backend bwrap runs sandbox-bwrap and leaves sandbox-docker off', async () => {
    const kernel = await createTestKernel({
      stateDir: tempDir('claw-oc-backend-'),
      plugins: [plugin('sandbox-docker'), plugin('sandbox-bwrap')],
      config: { agents: { defaults: { sandbox: { backend: 'bwrap' } } } },
    });
    kernels.push(kernel);
    const records = kernel.plugins.list();
    expect(records.find((record) => record.id === 'sandbox-bwrap')).toMatchObject({ enabled: true });
    expect(records.find((record) => record.id === 'sandbox-docker')).toMatchObject({
      enabled: false,
      reason: 'the sandbox slot is held by "sandbox-bwrap"',
    });
  }, 120_000);
});
