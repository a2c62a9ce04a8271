/**
 * Several agents on one gateway (issue 15 parts 1 and 2): per-agent workspace, state folder
 * and model used by real runs; agents.list / agent.identity.get; `claw agents`; an unknown
 * agent refused on every path without creating folders; routing bindings with OpenClaw's
 * precedence, as a table and through the channel pipeline.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { judged, snapshotOf } from '../kernel/config/store.js';
import { clawPolicy } from '../host/policy.js';
import { resolveAgentRoute, type RouteInput } from '../plugins/channels/routing.js';
import type { Binding } from '../sdk/channels/index.js';
import { definePlugin, type InboundMessage } from '../sdk/index.js';
import { agentStackDirs, createTestKernel, scriptedModel, type TestKernel } from '../sdk/testing.js';
import { idem, runAgent, startAgent, type AgentHarness } from './agent-helpers.js';
import { claw, REPO, startCliGateway, tempDir } from './helpers.js';
import { parseJson5 } from '../kernel/util/json5.js';

const AGENTS = {
  list: [
    { id: 'main', default: true },
    { id: 'home' },
    { id: 'work' },
    { id: 'team' },
    { id: 'guild' },
    { id: 'mods' },
    { id: 'alex' },
  ],
};

describe('resolveAgentRoute: most specific binding wins, whatever the list order', () => {
  const bindings: Binding[] = [
    { agentId: 'home', match: { channel: 'chat' } },
    { agentId: 'work', match: { channel: 'chat', accountId: 'biz' } },
    { agentId: 'team', match: { channel: 'slack', teamId: 'T1' } },
    { agentId: 'guild', match: { channel: 'discord', guildId: 'G1' } },
    { agentId: 'mods', match: { channel: 'discord', guildId: 'G1', roles: ['moderator'] } },
    { agentId: 'alex', match: { channel: 'chat', peer: { kind: 'direct', id: '+1555' } } },
    { agentId: 'alex', match: { channel: 'discord', peer: { kind: 'channel', id: 'C9' } } },
    { agentId: 'work', match: { channel: 'discord', accountId: 'bot2' } },
    { agentId: 'home', match: { channel: 'slack', accountId: '*' } },
  ];
  const config = { agents: AGENTS, bindings } as never;
  const direct = (id: string) => ({ kind: 'direct' as const, id });
  const cases: Array<[string, RouteInput, string, string]> = [
    ['peer beats channel-wide (listed later)', { channel: 'chat', peer: direct('+1555') }, 'alex', 'binding.peer'],
    ['peer beats account', { channel: 'chat', accountId: 'biz', peer: direct('+1555') }, 'alex', 'binding.peer'],
    [
      'account beats channel-wide',
      { channel: 'chat', accountId: 'biz', peer: direct('+2') },
      'work',
      'binding.account',
    ],
    [
      'channel-wide catches the rest of the channel',
      { channel: 'chat', accountId: 'other', peer: direct('+2') },
      'home',
      'binding.channel',
    ],
    ['peer kind must match', { channel: 'chat', peer: { kind: 'group', id: '+1555' } }, 'home', 'binding.channel'],
    [
      'guild + roles beats guild',
      { channel: 'discord', guildId: 'G1', memberRoleIds: ['x', 'moderator'], peer: { kind: 'channel', id: 'C1' } },
      'mods',
      'binding.guild+roles',
    ],
    [
      'guild without the role',
      { channel: 'discord', guildId: 'G1', memberRoleIds: ['x'], peer: { kind: 'channel', id: 'C1' } },
      'guild',
      'binding.guild',
    ],
    [
      'guild beats account',
      { channel: 'discord', accountId: 'bot2', guildId: 'G1', peer: { kind: 'channel', id: 'C1' } },
      'guild',
      'binding.guild',
    ],
    [
      'peer beats guild',
      { channel: 'discord', guildId: 'G1', memberRoleIds: ['moderator'], peer: { kind: 'channel', id: 'C9' } },
      'alex',
      'binding.peer',
    ],
    [
      'account when the guild matches nothing',
      { channel: 'discord', accountId: 'bot2', guildId: 'G2', peer: { kind: 'channel', id: 'C1' } },
      'work',
      'binding.account',
    ],
    [
      'team beats the "*" account binding',
      { channel: 'slack', teamId: 'T1', peer: { kind: 'channel', id: 'C1' } },
      'team',
      'binding.team',
    ],
    [
      '"*" account binding for another team',
      { channel: 'slack', teamId: 'T2', accountId: 'a', peer: { kind: 'channel', id: 'C1' } },
      'home',
      'binding.channel',
    ],
    ['no binding: the default agent', { channel: 'telegram', peer: direct('7') }, 'main', 'default'],
  ];
  it.each(cases)('%s', (_name, input, agentId, matchedBy) => {
    expect(resolveAgentRoute(config, input)).toMatchObject({ agentId, matchedBy });
  });

  it('falls back to default:true, else the first listed, else main; builds OpenClaw session keys', () => {
    const peer = { kind: 'direct' as const, id: '42' };
    expect(
      resolveAgentRoute({ agents: { list: [{ id: 'a' }, { id: 'b', default: true }] } } as never, {
        channel: 'x',
        peer,
      }).agentId,
    ).toBe('b');
    expect(
      resolveAgentRoute({ agents: { list: [{ id: 'a' }, { id: 'b' }] } } as never, { channel: 'x', peer }).agentId,
    ).toBe('a');
    expect(resolveAgentRoute({} as never, { channel: 'x', peer })).toMatchObject({
      agentId: 'main',
      sessionKey: 'agent:main:main',
      mainSessionKey: 'agent:main:main',
    });
    const scoped = { agents: AGENTS, bindings, session: { dmScope: 'per-account-channel-peer' } } as never;
    expect(resolveAgentRoute(scoped, { channel: 'chat', accountId: 'biz', peer }).sessionKey).toBe(
      'agent:work:chat:biz:dm:42',
    );
    expect(
      resolveAgentRoute(scoped, {
        channel: 'discord',
        guildId: 'G1',
        peer: { kind: 'channel', id: 'C1' },
        threadId: 't5',
      }).sessionKey,
    ).toBe('agent:guild:discord:channel:C1:topic:t5');
  });
});

describe('agent ids the config schema cannot cross-check', () => {
  const issues = (config: Record<string, unknown>) =>
    judged(snapshotOf(config, '/x/openclaw.json'), clawPolicy).issues.map((issue) => `${issue.path}: ${issue.message}`);
  it('a binding naming an unknown agent and a duplicate id are config errors; the implicit main is known', () => {
    expect(issues({ bindings: [{ agentId: 'main', match: { channel: 'chat' } }] })).toEqual([]);
    expect(issues({ bindings: [{ agentId: 'ghost', match: { channel: 'chat' } }] })).toEqual([
      'bindings[0].agentId: names agent "ghost", which is not configured (agents: main; add it to agents.list)',
    ]);
    expect(issues({ agents: { list: [{ id: 'Work' }] } })[0]).toMatch(/agents\.list.*0.*id.*pattern/);
    expect(
      issues({
        agents: { list: [{ id: 'work' }, { id: 'work' }] },
        bindings: [{ agentId: 'main', match: { channel: 'chat' } }],
      }),
    ).toEqual([
      'agents.list[1].id: "work" is already the id of agents.list[0]',
      'bindings[0].agentId: names agent "main", which is not configured (agents: work; add it to agents.list)',
    ]);
    expect(issues({ agents: { list: [{ name: 'no id' }] } })[0]).toMatch(/agents\.list\/0|agents\.list\[0\]/);
  });
});

describe('bindings through the channel pipeline', () => {
  let kernel: TestKernel | undefined;
  afterEach(async () => {
    await kernel?.dispose();
    kernel = undefined;
  });

  it('routes by peer, guild, account and channel to each agent, with its own model; an unknown channel agentId is refused without folders', async () => {
    const inbox = new Map<string, (message: InboundMessage) => Promise<any>>();
    const models: string[] = [];
    const channel = definePlugin({
      id: 'fake-chat',
      register(api) {
        api.registerChannel({
          id: 'chat',
          textLimit: 1000,
          async start(ctx) {
            inbox.set(ctx.accountId, (message) => ctx.receive(message) as Promise<any>);
          },
          async send() {
            return {};
          },
        });
      },
    });
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), channel, scriptedModel((request) => (models.push(request.model), 'ok'))],
      config: {
        agents: {
          defaults: { model: 'scripted/default' },
          list: [
            { id: 'main', default: true },
            { id: 'work', model: 'scripted/work-model' },
            { id: 'alex' },
            { id: 'guild' },
          ],
        },
        channels: {
          chat: {
            dmPolicy: 'open',
            allowFrom: ['*'],
            groupPolicy: 'open',
            groups: { 'lost-room': { agentId: 'nope' } },
            accounts: { default: {}, home: {} },
          },
        },
        session: { dmScope: 'per-peer' },
        messages: { queue: { debounceMs: 0 } },
        bindings: [
          { agentId: 'work', match: { channel: 'chat' } },
          { agentId: 'guild', match: { channel: 'chat', guildId: 'G1' } },
          { agentId: 'main', match: { channel: 'chat', accountId: 'home' } },
          { agentId: 'alex', match: { channel: 'chat', peer: { kind: 'direct', id: 'alex' } } },
        ],
      },
    });
    await kernel.start();
    const receive = (message: Partial<InboundMessage> & { peer: InboundMessage['peer'] }) =>
      inbox.get(message.accountId ?? 'default')!({
        accountId: 'default',
        sender: { id: message.peer.id },
        text: 'hi',
        messageId: `${Math.random()}`,
        mentioned: true,
        ...message,
      });
    const keyOf = async (message: Parameters<typeof receive>[0]) => (await receive(message)).sessionKey;

    expect(await keyOf({ peer: { kind: 'direct', id: 'alex' }, guildId: 'G1', accountId: 'home' })).toBe(
      'agent:alex:dm:alex',
    );
    expect(await keyOf({ peer: { kind: 'group', id: 'room' }, guildId: 'G1', accountId: 'home' })).toBe(
      'agent:guild:chat:group:room',
    );
    expect(await keyOf({ peer: { kind: 'direct', id: 'bob' }, accountId: 'home' })).toBe('agent:main:dm:bob');
    expect(await keyOf({ peer: { kind: 'direct', id: 'carol' } })).toBe('agent:work:dm:carol');

    const loop = (await kernel.capabilities.find('service', 'agent'))!.api as {
      runtime: { store(agent: string): { list(): Promise<Array<{ key: string }>> } };
    };
    for (let i = 0; i < 100 && models.length < 4; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(models.sort()).toEqual(['default', 'default', 'default', 'work-model']);
    expect((await loop.runtime.store('work').list()).map((entry) => entry.key)).toEqual(['agent:work:dm:carol']);

    // A group's own agentId (claw's channel key, ranked right after peer bindings) names no agent: refused, nothing created.
    const lost = await receive({ peer: { kind: 'group', id: 'lost-room' } });
    expect(lost).toEqual({ status: 'blocked', reason: expect.stringMatching(/^unknown agent "nope"/) });
    expect(existsSync(join(kernel.stateDir, 'agents', 'nope'))).toBe(false);
    expect(existsSync(join(kernel.stateDir, 'workspace-nope'))).toBe(false);
  });
});

describe('agents on a gateway', () => {
  let h: AgentHarness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("runs each agent in its own workspace with its own model and agentDir keys; agents.list and agent.identity.get in OpenClaw's shape; unknown agents are errors", async () => {
    const stateDir = tempDir();
    const root = tempDir();
    const workWorkspace = join(root, 'ws-work');
    const workAgentDir = join(root, 'work-agent');
    mkdirSync(workWorkspace, { recursive: true });
    writeFileSync(join(workWorkspace, 'AGENTS.md'), 'WORK-WORKSPACE-MARKER\n');
    writeFileSync(join(workWorkspace, 'IDENTITY.md'), '- Name: Filed Name\n- Emoji: 🛠️\n- Avatar: (pick one)\n');
    const profiles = (key: string) =>
      JSON.stringify({ version: 1, profiles: { 'openai:k': { provider: 'openai', key } } });
    mkdirSync(workAgentDir, { recursive: true });
    writeFileSync(join(workAgentDir, 'auth-profiles.json'), profiles('sk-work'));
    mkdirSync(join(stateDir, 'agents', 'main', 'agent'), { recursive: true });
    writeFileSync(join(stateDir, 'agents', 'main', 'agent', 'auth-profiles.json'), profiles('sk-main'));

    h = await startAgent({
      stateDir,
      noConfigKey: true,
      fake: { apiKeys: ['sk-main', 'sk-work'] },
      config: {
        agents: {
          list: [
            {
              id: 'main',
              default: true,
              identity: { name: 'Molty', emoji: '🦞', avatar: 'https://example.test/molty.png', theme: 'calm' },
            },
            {
              id: 'work',
              name: 'Work',
              workspace: workWorkspace,
              agentDir: workAgentDir,
              model: 'openai/gpt-4.1-mini',
            },
          ],
        },
      },
    });
    h.fake.respond(() => ({ text: 'done' }));

    const work = await runAgent(h.client, { agentId: 'work', message: 'hello work' });
    expect(work.final).toMatchObject({ status: 'ok', sessionKey: 'agent:work:main' });
    const main = await runAgent(h.client, { message: 'hello main' });
    expect(main.final).toMatchObject({ status: 'ok', sessionKey: 'agent:main:main' });
    const [workRequest, mainRequest] = h.fake.requests;
    expect(workRequest).toMatchObject({ apiKey: 'sk-work', body: { model: 'gpt-4.1-mini' } });
    expect(JSON.stringify(workRequest!.body)).toContain('WORK-WORKSPACE-MARKER');
    expect(mainRequest).toMatchObject({ apiKey: 'sk-main', body: { model: 'gpt-4.1' } });
    expect(JSON.stringify(mainRequest!.body)).not.toContain('WORK-WORKSPACE-MARKER');
    expect(existsSync(join(stateDir, 'workspace-work'))).toBe(false);

    // OpenClaw's per-agent extras claw answers the same for every agent.
    const extras = {
      workspaceGit: null,
      agentRuntime: { id: 'claw', source: 'implicit' },
      thinkingLevels: ['off', 'minimal', 'low', 'medium', 'high'].map((id) => ({ id, label: id })),
      thinkingOptions: ['off', 'minimal', 'low', 'medium', 'high'],
      thinkingDefault: 'off',
      defaultPermissionMode: 'full',
    };
    expect(await h.client.request('agents.list', {})).toEqual({
      defaultId: 'main',
      ownership: 'sole',
      selectionRequired: false,
      mainKey: 'main',
      scope: 'per-sender',
      agents: [
        {
          id: 'main',
          identity: {
            name: 'Molty',
            emoji: '🦞',
            avatar: 'https://example.test/molty.png',
            avatarUrl: 'https://example.test/molty.png',
            theme: 'calm',
          },
          model: { primary: 'openai/gpt-4.1', fallbacks: [] },
          workspace: join(stateDir, 'workspace'),
          ...extras,
        },
        {
          id: 'work',
          name: 'Work',
          identity: { name: 'Work', emoji: '🛠️' },
          model: { primary: 'openai/gpt-4.1-mini', fallbacks: [] },
          workspace: workWorkspace,
          ...extras,
        },
      ],
    });
    expect(await h.client.request('agent.identity.get', {})).toEqual({
      agentId: 'main',
      name: 'Molty',
      nameSource: 'config',
      avatar: 'https://example.test/molty.png',
      emoji: '🦞',
    });
    expect(await h.client.request('agent.identity.get', { sessionKey: 'agent:work:telegram:dm:1' })).toEqual({
      agentId: 'work',
      name: 'Work',
      nameSource: 'config',
      avatar: '🛠️',
      emoji: '🛠️',
    });
    await expect(
      h.client.request('agent.identity.get', { agentId: 'main', sessionKey: 'agent:work:main' }),
    ).rejects.toThrow(/does not match/);

    // Unknown agents: every way in is refused with the configured ids, and nothing is created.
    const before = readdirSync(join(stateDir, 'agents')).sort();
    await expect(h.client.request('agent.identity.get', { agentId: 'nope' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/unknown agent "nope": the configured agents are main, work/),
    });
    await expect(
      h.client.request('chat.send', { sessionKey: 'agent:nope:main', message: 'hi', idempotencyKey: idem() }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(/unknown agent "nope"/) });
    await expect(runAgent(h.client, { agentId: 'nope', message: 'hi' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
    await expect(runAgent(h.client, { sessionKey: 'agent:nope:main', message: 'hi' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/unknown agent "nope"/),
    });
    await expect(h.client.request('sessions.patch', { key: 'agent:nope:main', label: 'x' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/unknown agent "nope"/),
    });
    await expect(h.client.request('sessions.reset', { key: 'agent:nope:main' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/unknown agent "nope"/),
    });
    expect(readdirSync(join(stateDir, 'agents')).sort()).toEqual(before);
    expect(existsSync(join(stateDir, 'workspace-nope'))).toBe(false);
    expect(h.fake.requests).toHaveLength(2);
  });
});

describe('claw agents (real processes)', () => {
  it('adds, lists and deletes agents in the file and through a running gateway; bad bindings and unknown agents are refused', async () => {
    const stateDir = tempDir();
    const env = { OPENCLAW_STATE_DIR: stateDir, HOME: tempDir() };
    const config = () => JSON.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8'));

    const empty = await claw(['agents', 'list', '--json'], env);
    expect(JSON.parse(empty.stdout)).toEqual([
      expect.objectContaining({
        id: 'main',
        isDefault: true,
        bindings: 0,
        workspace: join(stateDir, 'workspace'),
        agentDir: join(stateDir, 'agents', 'main', 'agent'),
      }),
    ]);

    const added = await claw(
      [
        'agents',
        'add',
        'work',
        '--model',
        'openai/gpt-4.1-mini',
        '--bind',
        'telegram:ops',
        '--bind',
        'webchat',
        '--json',
      ],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      ok: true,
      agentId: 'work',
      via: 'file',
      workspace: join(stateDir, 'workspace-work'),
      seeded: expect.arrayContaining(['AGENTS.md']),
    });
    expect(config().agents.list).toEqual([{ id: 'main' }, { id: 'work', model: 'openai/gpt-4.1-mini' }]);
    expect(config().bindings).toEqual([
      { agentId: 'work', match: { channel: 'telegram', accountId: 'ops' } },
      { agentId: 'work', match: { channel: 'webchat' } },
    ]);
    expect(existsSync(join(stateDir, 'workspace-work', 'AGENTS.md'))).toBe(true);
    expect(existsSync(join(stateDir, 'agents', 'work', 'agent'))).toBe(true);

    const listed = await claw(['agents', 'list', '--bindings'], env);
    expect(listed.stdout).toMatch(/main \(default\)/);
    expect(listed.stdout).toMatch(/work\s+openai\/gpt-4\.1-mini\s+\S+workspace-work\s+2/);
    expect(listed.stdout).toContain('work ← telegram account ops (account)');

    expect(await claw(['agents', 'add', 'work'], env)).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/agent "work" already exists/),
    });
    expect(await claw(['agents', 'add', 'x y'], env)).toMatchObject({ code: 2 });
    expect(await claw(['agents', 'add', 'other', '--bind', 'telegram:ops'], env)).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/already routes to agent "work"/),
    });
    const ghost = await claw(['config', 'set', 'bindings[2]', '{agentId: "ghost", match: {channel: "x"}}'], env);
    expect(ghost).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/bindings\[2\]\.agentId: names agent "ghost", which is not configured/),
    });

    // claw agent --agent <unknown>: an error naming the agents, no folders.
    const unknown = await claw(['agent', '--agent', 'nope', '--local', '--message', 'hi'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/unknown agent "nope"/);
    expect(existsSync(join(stateDir, 'agents', 'nope'))).toBe(false);
    expect(existsSync(join(stateDir, 'workspace-nope'))).toBe(false);

    expect(await claw(['agents', 'delete', 'work'], env)).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/has 2 bindings.*--force/),
    });
    await startCliGateway(env);
    const deleted = await claw(['agents', 'delete', 'work', '--force', '--json'], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(JSON.parse(deleted.stdout)).toMatchObject({
      ok: true,
      agentId: 'work',
      via: 'gateway',
      removedBindings: 2,
      kept: expect.arrayContaining([join(stateDir, 'workspace-work')]),
    });
    expect(config().bindings).toBeUndefined();
    expect(config().agents.list).toEqual([{ id: 'main' }]);
    expect(existsSync(join(stateDir, 'workspace-work', 'AGENTS.md'))).toBe(true);
    expect(await claw(['agents', 'delete', 'nope'], env)).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/unknown agent "nope"/),
    });
  }, 90_000);
});

describe('README: two agents and a binding', () => {
  it('validates as written and routes the bound account to "work"', async () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const text = /```json5\n(\/\/ ~\/\.openclaw\/openclaw\.json: two agents[\s\S]*?)```/.exec(readme)![1]!;
    const dir = tempDir();
    writeFileSync(join(dir, 'openclaw.json'), text);
    const result = await claw(['config', 'validate'], { OPENCLAW_STATE_DIR: dir, OPENAI_API_KEY: 'sk-test' });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const config = snapshotOf(parseJson5(text, 'README') as Record<string, unknown>, 'README').resolved;
    expect(
      resolveAgentRoute(config, { channel: 'telegram', accountId: 'work', peer: { kind: 'direct', id: '1' } }).agentId,
    ).toBe('work');
    expect(resolveAgentRoute(config, { channel: 'telegram', peer: { kind: 'direct', id: '1' } }).agentId).toBe('home');
  });
});
