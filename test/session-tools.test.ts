/**
 * The session tools (plugins/session-tools) on a real kernel with the agent stack and an
 * in-process scripted model: output shapes, visibility by setting and the sandbox clamp,
 * agent-to-agent gating, sessions_send waiting or not, the ping-pong limit, the announce,
 * send policy, and the tool policy in front of every call.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, type ModelRequest, type ToolResult } from '../sdk/index.js';
import {
  agentStackDirs,
  createTestKernel,
  lastUserText,
  scriptedModel,
  type ScriptedAnswer,
  type TestKernel,
} from '../sdk/testing.js';
import { useService } from '../sdk/services.js';
import { configuredToolPolicy } from '../host/tool-policy.js';
import type { AgentService, SessionPatch, SessionService } from '../sdk/agent/index.js';
import { REPO } from './helpers.js';
import { deepMerge, idem, runAgent, startAgent } from './agent-helpers.js';

const PLUGIN = join(REPO, 'plugins', 'session-tools');
const MAIN = 'agent:main:main';
const GROUP = 'agent:main:rec:group:g1';
const CHILD = 'agent:main:subagent:c1';
const GRANDCHILD = 'agent:main:subagent:c2';
const SIBLING = 'agent:main:subagent:x';
const WORK = 'agent:work:main';

interface Flow {
  turns: number;
  endedBy: string;
  announced: boolean;
  announceSkipped?: string;
}

interface Booted {
  kernel: TestKernel;
  agent: AgentService;
  sessions: SessionService;
  outbox: Array<{ to: string; text: string }>;
  flows: Array<Flow | { error: string }>;
  requests: ModelRequest[];
  tool(name: string, params: Record<string, unknown>, sessionKey?: string, agentId?: string): Promise<ToolResult>;
  seed(key: string, patch?: SessionPatch): Promise<void>;
}

let booted: Booted | undefined;
afterEach(async () => {
  await booted?.kernel.dispose();
  booted = undefined;
});

/** Primary answers echo the message; reply and announce turns answer per the test. */
type Responder = (
  request: ModelRequest,
  step: 'primary' | 'reply' | 'announce',
) => ScriptedAnswer | Promise<ScriptedAnswer>;

const echo: Responder = (request, step) =>
  step === 'announce'
    ? 'ANNOUNCE_SKIP'
    : step === 'reply'
      ? 'REPLY_SKIP'
      : `${request.model} got: ${lastUserText(request)}`;

async function boot(config: Record<string, any> = {}, respond: Responder = echo): Promise<Booted> {
  const outbox: Booted['outbox'] = [];
  const requests: ModelRequest[] = [];
  const channel = definePlugin({
    id: 'rec-channel',
    register(api) {
      api.registerChannel({
        id: 'rec',
        textLimit: 4000,
        async send(message) {
          outbox.push({ to: message.to, text: message.text ?? '' });
          return { messageId: `m${outbox.length}` };
        },
      });
    },
  });
  const model = scriptedModel((request) => {
    requests.push(request);
    const system = request.systemPrompt ?? '';
    const step = system.includes('Agent-to-agent announce turn')
      ? 'announce'
      : system.includes('Agent-to-agent exchange, reply turn')
        ? 'reply'
        : 'primary';
    return respond(request, step);
  });
  const kernel = await createTestKernel({
    plugins: [...agentStackDirs(), PLUGIN, channel, model],
    config: deepMerge(
      {
        agents: {
          defaults: { model: 'scripted/main' },
          list: [
            { id: 'main', default: true },
            { id: 'work', model: 'scripted/work' },
          ],
        },
        messages: { queue: { debounceMs: 0 } },
      },
      config,
    ),
  });
  await kernel.start();
  const agent = (await useService<AgentService>(kernel, 'agent'))!;
  const sessions = (await useService<SessionService>(kernel, 'sessions'))!;
  // Absent when a bad session config stops the sessions plugin, which the session tools require.
  const observer = await useService<{ onFlowDone?: (outcome: Flow | { error: string }) => void }>(
    kernel,
    'session-tools',
  );
  const flows: Booted['flows'] = [];
  if (observer) observer.onFlowDone = (outcome) => flows.push(outcome);
  const result: Booted = {
    kernel,
    agent,
    sessions,
    outbox,
    flows,
    requests,
    tool: (name, params, sessionKey = MAIN, agentId) =>
      kernel.runTool(name, params, { sessionKey, agentId: agentId ?? (sessionKey.split(':')[1] || 'main') }),
    async seed(key, patch = {}) {
      const agentId = key.startsWith('agent:') ? key.split(':')[1]! : 'main';
      await sessions.store(agentId).upsert(key, patch);
    },
  };
  booted = result;
  return result;
}

const json = (result: ToolResult): any => result.details;
const text = (result: ToolResult): string =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
const keys = (result: ToolResult): string[] =>
  (json(result).sessions as Array<{ key: string }>).map((row) => row.key).sort();

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The spawn tree of the visibility tests: GROUP spawned CHILD, which spawned GRANDCHILD; MAIN spawned SIBLING. */
async function seedTree(b: Booted): Promise<void> {
  await b.seed(MAIN, { lastChannel: 'rec', lastTo: 'me' });
  await b.seed(GROUP, { channel: 'rec', chatType: 'group' });
  await b.seed(CHILD, { spawnedBy: GROUP, spawnDepth: 1 });
  await b.seed(GRANDCHILD, { spawnedBy: CHILD, spawnDepth: 2 });
  await b.seed(SIBLING, { spawnedBy: MAIN, spawnDepth: 1 });
  await b.seed('cron:nightly');
  await b.seed(WORK);
}

describe('session-tools plugin', () => {
  it('declares its four tools and sits in group:sessions', async () => {
    const b = await boot();
    expect(b.kernel.plugins.get('session-tools')!.manifest?.tools).toEqual([
      'sessions_list',
      'sessions_history',
      'sessions_send',
      'session_status',
    ]);
    const names = b.kernel.capabilities.list('tool').map((tool) => tool.name);
    for (const name of ['sessions_list', 'sessions_history', 'sessions_send', 'session_status'])
      expect(names).toContain(name);
  });
});

describe('output shapes', () => {
  it('sessions_list rows carry OpenClaw fields; kinds, activeMinutes and messageLimit filter', async () => {
    const b = await boot({}, (request, step) => {
      if (step !== 'primary') return echo(request, step);
      // First call in the group: use a tool, so the transcript has a tool result.
      const last = request.messages[request.messages.length - 1];
      if (lastUserText(request) === 'use a tool' && last?.role === 'user')
        return { toolCalls: [{ name: 'session_status', arguments: {} }] };
      return `answer to ${lastUserText(request)}`;
    });
    await seedTree(b);
    await b.agent.run({ sessionKey: GROUP, message: 'use a tool' });
    await b.agent.run({ sessionKey: GROUP, message: 'second' });
    await b.seed('cron:old', { updatedAt: Date.now() - 3 * 3600_000 });

    const all = await b.tool('sessions_list', {});
    expect(all.isError).toBeFalsy();
    expect(json(all).count).toBe(json(all).sessions.length);
    const group = json(all).sessions.find((row: any) => row.key === GROUP);
    expect(group).toMatchObject({
      key: GROUP,
      agentId: 'main',
      kind: 'group',
      channel: 'rec',
      model: 'scripted/main',
      systemSent: expect.any(Boolean),
      abortedLastRun: false,
    });
    expect(typeof group.sessionId).toBe('string');
    expect(typeof group.updatedAt).toBe('number');
    expect(group.transcriptPath).toMatch(new RegExp(`${group.sessionId}\\.jsonl$`));
    expect(group.messages).toBeUndefined();
    expect(json(all).sessions.find((row: any) => row.key === MAIN)).toMatchObject({ kind: 'main', channel: 'rec' });
    expect(json(all).sessions.find((row: any) => row.key === 'cron:nightly')).toMatchObject({
      kind: 'cron',
      channel: 'internal',
    });
    expect(json(all).sessions.find((row: any) => row.key === CHILD)).toMatchObject({
      kind: 'other',
      channel: 'unknown',
      spawnedBy: GROUP,
      spawnDepth: 1,
    });

    expect(keys(await b.tool('sessions_list', { kinds: ['cron'] }))).toEqual(['cron:nightly', 'cron:old']);
    expect(keys(await b.tool('sessions_list', { kinds: ['cron'], activeMinutes: 60 }))).toEqual(['cron:nightly']);
    expect(json(await b.tool('sessions_list', { limit: 2 })).count).toBe(2);

    const withMessages = json(await b.tool('sessions_list', { kinds: ['group'], messageLimit: 2 })).sessions[0];
    expect(withMessages.messages).toHaveLength(2);
    expect(withMessages.messages.every((message: any) => message.role !== 'toolResult')).toBe(true);

    const bad = await b.tool('sessions_list', { kinds: ['nope'] });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/Invalid arguments for sessions_list/);
  });

  it('sessions_history returns raw messages, tool results only with includeTools, by key or sessionId', async () => {
    const b = await boot({}, (request, step) => {
      if (step !== 'primary') return echo(request, step);
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'user') return { toolCalls: [{ name: 'session_status', arguments: {} }] };
      return 'done';
    });
    await b.agent.run({ sessionKey: GROUP, message: 'check status' });
    const plain = json(await b.tool('sessions_history', { sessionKey: GROUP }));
    expect(plain.sessionKey).toBe(GROUP);
    expect(plain.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'assistant']);
    const withTools = json(await b.tool('sessions_history', { sessionKey: GROUP, includeTools: true }));
    expect(withTools.messages.map((message: any) => message.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'assistant',
    ]);
    expect(withTools.messages[2]).toMatchObject({ role: 'toolResult', toolName: 'session_status' });
    const last = json(await b.tool('sessions_history', { sessionKey: GROUP, limit: 1 }));
    expect(last.messages).toHaveLength(1);
    const byId = json(await b.tool('sessions_history', { sessionKey: plain.sessionId }));
    expect(byId.sessionKey).toBe(GROUP);
    const unknown = await b.tool('sessions_history', { sessionKey: 'no-such-session-id' });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/no session "no-such-session-id"/);
  });

  it('session_status shows model, tokens, context use and time, and sets or clears a model override', async () => {
    const b = await boot({ agents: { defaults: { models: { 'scripted/other': { alias: 'other' } } } } });
    await b.seed(MAIN, {
      inputTokens: 1200,
      outputTokens: 300,
      totalTokens: 50_000,
      contextTokens: 200_000,
      compactionCount: 1,
    });
    const status = await b.tool('session_status', {});
    expect(status.isError).toBeFalsy();
    expect(text(status)).toMatch(/^Session: agent:main:main \(main, agent main\)/);
    expect(text(status)).toMatch(/Model: scripted\/main\n/);
    expect(text(status)).toMatch(/Tokens: 1\.2k in \/ 300 out/);
    expect(text(status)).toMatch(/Context: 50k\/200k \(25%\) · compactions 1/);
    expect(text(status)).toMatch(/\nTime: /);
    expect(json(status)).toMatchObject({
      sessionKey: MAIN,
      model: 'scripted/main',
      totalTokens: 50_000,
      contextTokens: 200_000,
      contextPercent: 25,
      active: false,
    });

    const set = await b.tool('session_status', { model: 'other' });
    expect(text(set)).toMatch(/^Model set to scripted\/other for agent:main:main\./);
    expect((await b.sessions.store('main').get(MAIN))!.model).toBe('scripted/other');
    expect(json(set)).toMatchObject({
      model: 'scripted/other',
      modelOverride: 'scripted/other',
      changedModel: 'scripted/other',
    });
    const cleared = await b.tool('session_status', { model: 'default' });
    expect(json(cleared)).toMatchObject({ model: 'scripted/main', changedModel: 'default' });
    expect((await b.sessions.store('main').get(MAIN))!.model).toBeUndefined();
    const bad = await b.tool('session_status', { model: 'nothing-like-this' });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/unknown model "nothing-like-this"/);
  });

  it('with session.scope "global" the one session shows as "main", never "global"', async () => {
    const b = await boot({ session: { scope: 'global' } });
    await b.seed('global');
    await b.seed('unknown');
    const list = await b.tool('sessions_list', {}, 'global');
    expect(keys(list)).toEqual(['main']);
    expect(json(await b.tool('session_status', { sessionKey: 'main' }, 'global')).sessionKey).toBe('main');
  });
});

describe('visibility', () => {
  it('tools.sessions.visibility: self, tree, agent and all (the default)', async () => {
    const cases: Array<[string | undefined, string, string[]]> = [
      ['self', GROUP, [GROUP]],
      ['tree', GROUP, [CHILD, GRANDCHILD, GROUP].sort()],
      // From the agent's main session, tree covers the whole agent.
      ['tree', MAIN, [CHILD, GRANDCHILD, GROUP, MAIN, SIBLING, 'cron:nightly'].sort()],
      ['agent', GROUP, [CHILD, GRANDCHILD, GROUP, MAIN, SIBLING, 'cron:nightly'].sort()],
      // all: every session of this agent; other agents only through tools.agentToAgent (off).
      [undefined, GROUP, [CHILD, GRANDCHILD, GROUP, MAIN, SIBLING, 'cron:nightly'].sort()],
    ];
    for (const [visibility, requester, expected] of cases) {
      const b = await boot(visibility ? { tools: { sessions: { visibility } } } : {});
      await seedTree(b);
      expect(keys(await b.tool('sessions_list', {}, requester)), `${visibility} from ${requester}`).toEqual(expected);
      await b.kernel.dispose();
      booted = undefined;
    }
  });

  it('hidden sessions cannot be read, messaged or inspected either', async () => {
    const b = await boot({ tools: { sessions: { visibility: 'tree' } } });
    await seedTree(b);
    for (const [name, params] of [
      ['sessions_history', { sessionKey: SIBLING }],
      ['session_status', { sessionKey: SIBLING }],
    ] as const) {
      const result = await b.tool(name, params, GROUP);
      expect(result.isError, name).toBe(true);
      expect(text(result), name).toMatch(/^forbidden: .*tools\.sessions\.visibility is "tree"/);
    }
    const send = await b.tool('sessions_send', { sessionKey: SIBLING, message: 'hi', timeoutSeconds: 0 }, GROUP);
    expect(send.isError).toBe(true);
    expect(json(send)).toEqual({
      status: 'forbidden',
      sessionKey: SIBLING,
      error: expect.stringMatching(/tools\.sessions\.visibility is "tree"/),
    });
    expect(json(await b.tool('sessions_send', { sessionKey: 'agent:main:nowhere', message: 'hi' }, GROUP))).toEqual({
      status: 'error',
      sessionKey: 'agent:main:nowhere',
      error: expect.stringMatching(/no session "agent:main:nowhere"/),
    });
    expect((await b.tool('sessions_history', { sessionKey: GRANDCHILD }, GROUP)).isError).toBeFalsy();
  });

  it('a sandboxed session sees only itself and what it spawned, whatever the visibility', async () => {
    const b = await boot({
      tools: { sessions: { visibility: 'all' }, agentToAgent: { enabled: true } },
      agents: { defaults: { sandbox: { mode: 'all' } } },
    });
    await seedTree(b);
    expect(keys(await b.tool('sessions_list', {}, GROUP))).toEqual([CHILD, GRANDCHILD, GROUP].sort());
    expect(keys(await b.tool('sessions_list', {}, MAIN))).toEqual([MAIN, SIBLING]);
    const peek = await b.tool('sessions_history', { sessionKey: MAIN }, GROUP);
    expect(text(peek)).toMatch(/forbidden: a sandboxed session reaches only itself and the sessions it spawned/);
  });

  it('sandbox.sessionToolsVisibility "all" lifts the clamp; non-main mode leaves the main session free', async () => {
    const lifted = await boot({ agents: { defaults: { sandbox: { mode: 'all', sessionToolsVisibility: 'all' } } } });
    await seedTree(lifted);
    expect(keys(await lifted.tool('sessions_list', {}, GROUP))).toHaveLength(6);
    await lifted.kernel.dispose();
    const nonMain = await boot({ agents: { defaults: { sandbox: { mode: 'non-main' } } } });
    await seedTree(nonMain);
    expect(keys(await nonMain.tool('sessions_list', {}, MAIN))).toHaveLength(6);
    expect(keys(await nonMain.tool('sessions_list', {}, GROUP))).toEqual([CHILD, GRANDCHILD, GROUP].sort());
  });

  it('tools.agentToAgent gates other agents: off by default, enabled, allow list', async () => {
    const off = await boot();
    await seedTree(off);
    expect(keys(await off.tool('sessions_list', {}))).not.toContain(WORK);
    const denied = await off.tool('sessions_send', { sessionKey: WORK, message: 'hi' });
    expect(denied.isError).toBe(true);
    expect(json(denied)).toMatchObject({
      status: 'forbidden',
      error: expect.stringMatching(/^agent-to-agent access is off.*tools\.agentToAgent\.enabled/),
    });
    await off.kernel.dispose();

    const narrow = await boot({ tools: { agentToAgent: { enabled: true, allow: ['main'] } } });
    await seedTree(narrow);
    expect(text(await narrow.tool('sessions_history', { sessionKey: WORK }))).toMatch(
      /"main" and "work" is not in tools\.agentToAgent\.allow/,
    );
    await narrow.kernel.dispose();

    const open = await boot({ tools: { agentToAgent: { enabled: true, allow: ['main', 'w*'] } } });
    await seedTree(open);
    expect(keys(await open.tool('sessions_list', {}))).toContain(WORK);
    const sent = await open.tool('sessions_send', { sessionKey: WORK, message: 'hello work' });
    expect(json(sent)).toMatchObject({ status: 'ok', reply: 'work got: hello work', sessionKey: WORK });
  });
});

describe('sessions_send', () => {
  it('waits for the reply, or returns accepted at once with timeoutSeconds 0', async () => {
    const b = await boot();
    await seedTree(b);
    const waited = await b.tool('sessions_send', { sessionKey: GROUP, message: 'ping' });
    expect(waited.isError).toBeFalsy();
    expect(json(waited)).toMatchObject({
      status: 'ok',
      reply: 'main got: ping',
      sessionKey: GROUP,
      runId: expect.any(String),
      delivery: { status: 'pending' },
    });
    // The target saw it as another agent's message, with slash commands off.
    const primary = b.requests.find((request) => lastUserText(request) === 'ping')!;
    expect(primary.systemPrompt).toMatch(/Agent-to-agent message: .*sent by another agent/);

    const started = Date.now();
    const fired = await b.tool('sessions_send', { sessionKey: CHILD, message: 'later', timeoutSeconds: 0 });
    expect(json(fired)).toEqual({
      status: 'accepted',
      runId: expect.any(String),
      sessionKey: CHILD,
      delivery: { status: 'pending' },
    });
    expect(Date.now() - started).toBeLessThan(2000);
    await until(() => b.flows.length === 2, 'both agent-to-agent flows');
    const history = json(await b.tool('sessions_history', { sessionKey: CHILD }));
    expect(history.messages.map((message: any) => message.role)).toContain('assistant');

    const byLabel = await (async () => {
      await b.seed(SIBLING, { spawnedBy: MAIN, label: 'helper' });
      return b.tool('sessions_send', { label: 'helper', message: 'by label' });
    })();
    expect(json(byLabel)).toMatchObject({ status: 'ok', sessionKey: SIBLING, reply: 'main got: by label' });
    expect(text(await b.tool('sessions_send', { message: 'x' }))).toMatch(/needs sessionKey or label/);
    expect(text(await b.tool('sessions_send', { sessionKey: MAIN, message: 'x' }))).toMatch(/cannot send to itself/);
  });

  it('a slow reply times out while the run goes on; a failing run is an error', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const b = await boot({}, async (request, step) => {
      if (step === 'primary' && lastUserText(request) === 'slow') await gate;
      if (step === 'primary' && lastUserText(request) === 'fail') throw new Error('model exploded');
      return echo(request, step);
    });
    await seedTree(b);
    const slow = await b.tool('sessions_send', { sessionKey: GROUP, message: 'slow', timeoutSeconds: 1 });
    expect(json(slow)).toMatchObject({
      status: 'timeout',
      error: expect.stringMatching(/no reply within 1s; the run goes on/),
    });
    release();
    await until(() => b.flows.length === 1, 'the slow run to finish');
    const messages = json(await b.tool('sessions_history', { sessionKey: GROUP })).messages;
    expect(messages[messages.length - 1]).toMatchObject({ role: 'assistant' });

    const failed = await b.tool('sessions_send', { sessionKey: CHILD, message: 'fail', timeoutSeconds: 20 });
    expect(failed.isError).toBe(true);
    expect(json(failed)).toMatchObject({ status: 'error', error: expect.stringMatching(/model exploded/) });
  });

  it('the ping-pong stops at session.agentToAgent.maxPingPongTurns, then the target announces to its chat', async () => {
    const turns: string[] = [];
    const b = await boot(
      { tools: { agentToAgent: { enabled: true } }, session: { agentToAgent: { maxPingPongTurns: 3 } } },
      (request, step) => {
        if (step === 'reply') {
          const turn = /reply turn (\d+) of at most (\d+)/.exec(request.systemPrompt ?? '')!;
          turns.push(`${request.model}:${turn[1]}/${turn[2]}`);
          return `${request.model} says more (${turn[1]})`;
        }
        if (step === 'announce')
          return `summary: ${/The latest reply in the exchange was:\n(.*)/.exec(request.systemPrompt ?? '')![1]}`;
        return echo(request, step);
      },
    );
    await seedTree(b);
    await b.seed(WORK, {
      deliveryContext: { channel: 'rec', to: 'work-chat' },
      lastChannel: 'rec',
      lastTo: 'work-chat',
    });
    const sent = await b.tool('sessions_send', { sessionKey: WORK, message: 'plan the trip' });
    expect(json(sent)).toMatchObject({ status: 'ok', reply: 'work got: plan the trip' });
    await until(() => b.flows.length === 1, 'the agent-to-agent flow');
    // Requester and target alternate, starting with the requester, and stop at the limit.
    expect(turns).toEqual(['main:1/3', 'work:2/3', 'main:3/3']);
    expect(b.flows[0]).toEqual({ turns: 3, endedBy: 'limit', announced: true });
    expect(b.outbox).toEqual([{ to: 'work-chat', text: 'summary: main says more (3)' }]);
  });

  it('REPLY_SKIP ends the exchange early, ANNOUNCE_SKIP posts nothing, and the default limit is 5', async () => {
    let replies = 0;
    const b = await boot({ tools: { agentToAgent: { enabled: true } } }, (request, step) => {
      if (step === 'reply') return ++replies === 2 ? 'REPLY_SKIP' : 'go on';
      return echo(request, step);
    });
    await seedTree(b);
    await b.seed(WORK, { deliveryContext: { channel: 'rec', to: 'work-chat' } });
    await b.tool('sessions_send', { sessionKey: WORK, message: 'one', timeoutSeconds: 0 });
    await until(() => b.flows.length === 1, 'the first flow');
    expect(b.flows[0]).toEqual({ turns: 2, endedBy: 'skip', announced: false, announceSkipped: 'skip' });
    expect(b.outbox).toEqual([]);
    await b.kernel.dispose();

    let count = 0;
    const unbounded = await boot({ tools: { agentToAgent: { enabled: true } } }, (request, step) =>
      step === 'reply' ? `turn ${++count}` : echo(request, step),
    );
    await seedTree(unbounded);
    await unbounded.tool('sessions_send', { sessionKey: WORK, message: 'two', timeoutSeconds: 0 });
    await until(() => unbounded.flows.length === 1, 'the second flow');
    expect(unbounded.flows[0]).toMatchObject({ turns: 5, endedBy: 'limit' });
    expect(count).toBe(5);
  });

  it('maxPingPongTurns 0 skips the exchange; values outside 0-5 and unknown settings are config errors', async () => {
    const b = await boot({ session: { agentToAgent: { maxPingPongTurns: 0 } } });
    await seedTree(b);
    await b.tool('sessions_send', { sessionKey: GROUP, message: 'once' });
    await until(() => b.flows.length === 1, 'the flow');
    expect(b.flows[0]).toMatchObject({ turns: 0 });
    expect(b.requests.some((request) => (request.systemPrompt ?? '').includes('reply turn'))).toBe(false);
    await b.kernel.dispose();
    booted = undefined;
    const bad = await boot({
      session: { agentToAgent: { maxPingPongTurns: 6 }, sendPolicy: { rules: [{ action: 'maybe' }] } },
    });
    const paths = bad.kernel
      .issues()
      .filter((issue) => issue.level === 'error')
      .map((issue) => issue.path)
      .sort();
    expect(paths).toEqual(['session.agentToAgent.maxPingPongTurns', 'session.sendPolicy.rules[0].action']);
    await bad.kernel.dispose();
    booted = undefined;
    // Kernel keys: a bad value stops the start.
    await expect(boot({ tools: { sessions: { visibility: 'everyone' } } })).rejects.toThrow(
      /tools\.sessions\.visibility/,
    );
    await expect(boot({ tools: { agentToAgent: { enabled: 'yes' } } })).rejects.toThrow(/tools\.agentToAgent\.enabled/);
    await expect(boot({ agents: { defaults: { sandbox: { sessionToolsVisibility: 'some' } } } })).rejects.toThrow(
      /sessionToolsVisibility/,
    );
  });
});

describe('send policy', () => {
  it('session.sendPolicy rules block sessions_send and reply delivery; a session override wins', async () => {
    const b = await boot({
      session: {
        sendPolicy: { default: 'allow', rules: [{ action: 'deny', match: { channel: 'rec', chatType: 'group' } }] },
      },
    });
    await seedTree(b);
    const blocked = await b.tool('sessions_send', { sessionKey: GROUP, message: 'hi' });
    expect(blocked.isError).toBe(true);
    expect(json(blocked)).toMatchObject({
      status: 'forbidden',
      error: expect.stringMatching(/blocked by its send policy/),
    });
    await b.agent.run({ sessionKey: GROUP, message: 'reply please', deliver: { channel: 'rec', to: 'g1' } });
    expect(b.outbox).toEqual([]);

    await b.seed(GROUP, { sendPolicy: 'allow' });
    expect(json(await b.tool('sessions_send', { sessionKey: GROUP, message: 'hi again' })).status).toBe('ok');
    await b.agent.run({ sessionKey: GROUP, message: 'reply now', deliver: { channel: 'rec', to: 'g1' } });
    expect(b.outbox).toEqual([{ to: 'g1', text: 'main got: reply now' }]);
    // A direct chat on the same channel was never covered by the rule.
    expect(json(await b.tool('sessions_send', { sessionKey: CHILD, message: 'fine' })).status).toBe('ok');
  });

  it('a session override "deny" blocks even when the config allows everything', async () => {
    const b = await boot({
      session: {
        sendPolicy: { default: 'deny', rules: [{ action: 'allow', match: { keyPrefix: 'agent:main:subagent:' } }] },
      },
    });
    await seedTree(b);
    expect(json(await b.tool('sessions_send', { sessionKey: CHILD, message: 'ok' })).status).toBe('ok');
    expect(json(await b.tool('sessions_send', { sessionKey: GROUP, message: 'no' })).status).toBe('forbidden');
    await b.seed(CHILD, { sendPolicy: 'deny' });
    expect(json(await b.tool('sessions_send', { sessionKey: CHILD, message: 'no' })).status).toBe('forbidden');
  });
});

describe('/send and the gateway', () => {
  it('/send off|on|inherit sets the session override for authorized senders only', async () => {
    const b = await boot();
    await seedTree(b);
    const off = await b.agent.run({ sessionKey: GROUP, message: '/send off' });
    expect(off.text).toBe('📤 Send policy for this session: deny.');
    expect((await b.sessions.store('main').get(GROUP))!.sendPolicy).toBe('deny');
    expect(json(await b.tool('sessions_send', { sessionKey: GROUP, message: 'x' })).status).toBe('forbidden');
    expect((await b.agent.run({ sessionKey: GROUP, message: '/send' })).text).toMatch(
      /^📤 Send policy: deny \(set for this session\)/,
    );
    expect((await b.agent.run({ sessionKey: GROUP, message: '/send inherit' })).text).toMatch(
      /follows session\.sendPolicy again \(now allow\)/,
    );
    expect((await b.sessions.store('main').get(GROUP))!.sendPolicy).toBeUndefined();
    expect((await b.agent.run({ sessionKey: GROUP, message: '/send maybe' })).text).toMatch(/takes on, off or inherit/);
    // Someone not allowed to run commands: the text goes to the model, the policy stays.
    const stranger = await b.agent.run({ sessionKey: GROUP, message: '/send off', authorized: false });
    expect(stranger.text).toBe('main got: /send off');
    expect((await b.sessions.store('main').get(GROUP))!.sendPolicy).toBeUndefined();
  });
});

describe('send policy at the gateway', () => {
  it('chat.send and agent refuse a session the send policy denies; sessions.patch lifts it', async () => {
    const harness = await startAgent({
      config: { session: { sendPolicy: { rules: [{ action: 'deny', match: { keyPrefix: 'agent:main:main' } }] } } },
    });
    try {
      harness.fake.script({ text: 'hello back' });
      await expect(
        harness.client.request('chat.send', { sessionKey: MAIN, message: 'hi', idempotencyKey: idem() }),
      ).rejects.toThrow(/send blocked by session policy: agent:main:main/);
      await expect(runAgent(harness.client, { message: 'hi' })).rejects.toThrow(/send blocked by session policy/);
      await harness.client.request('sessions.patch', { key: MAIN, sendPolicy: 'allow' });
      const { final } = await runAgent(harness.client, { message: 'hi' });
      expect(final).toMatchObject({ status: 'ok' });
    } finally {
      await harness.stop();
    }
  });
});

describe('from a real turn (HTTP fake model)', () => {
  it('a model calls sessions_send mid-turn: the other agent answers in the nested lane, then the exchange follows the turn', async () => {
    const harness = await startAgent({
      plugins: [PLUGIN],
      config: {
        agents: {
          list: [
            { id: 'main', default: true },
            { id: 'work', model: 'openai/gpt-4o' },
          ],
        },
        tools: { agentToAgent: { enabled: true, allow: ['main', 'work'] } },
        session: { agentToAgent: { maxPingPongTurns: 1 } },
      },
    });
    try {
      const observer = (await useService<{ onFlowDone?: (outcome: unknown) => void }>(
        harness.gw.kernel,
        'session-tools',
      ))!;
      const flows: unknown[] = [];
      observer.onFlowDone = (outcome) => flows.push(outcome);
      let mainTurns = 0;
      const seen: string[] = [];
      harness.fake.respond((request) => {
        const body = JSON.stringify(request.body);
        if (body.includes('Agent-to-agent announce turn')) return (seen.push('announce'), { text: 'ANNOUNCE_SKIP' });
        if (body.includes('Agent-to-agent exchange, reply turn'))
          return (seen.push(`reply:${request.body.model}`), { text: 'REPLY_SKIP' });
        if (request.body.model === 'gpt-4o') return (seen.push('work'), { text: 'it is 4' });
        seen.push('main');
        return ++mainTurns === 1
          ? {
              toolCalls: [
                { name: 'sessions_send', arguments: { sessionKey: WORK, message: 'what is 2+2?', timeoutSeconds: 20 } },
              ],
            }
          : { text: 'work says 4' };
      });
      const { final } = await runAgent(harness.client, { message: 'ask work' });
      expect(final).toMatchObject({ status: 'ok' });
      expect(JSON.stringify(final)).toContain('work says 4');
      await until(() => flows.length === 1, 'the agent-to-agent flow');
      expect(seen).toEqual(['main', 'work', 'main', 'reply:gpt-4.1', 'announce']);
      expect(flows[0]).toEqual({ turns: 1, endedBy: 'skip', announced: false, announceSkipped: 'skip' });
      const history = await harness.client.request('chat.history', { sessionKey: MAIN });
      const toolResult = (history as { messages: Array<{ role: string; content: unknown }> }).messages.find(
        (message) => message.role === 'toolResult',
      );
      expect(JSON.stringify(toolResult?.content)).toMatch(/\\"status\\": \\"ok\\"[\s\S]*it is 4/);
    } finally {
      await harness.stop();
    }
  });
});

describe('tool policy', () => {
  it('the minimal profile offers session_status; messaging and coding offer the session tools', async () => {
    const config = (profile: string) => ({ tools: { profile } });
    const minimal = configuredToolPolicy(config('minimal'), {});
    expect(['session_status', 'sessions_list', 'sessions_send', 'read'].filter(minimal)).toEqual(['session_status']);
    const messaging = configuredToolPolicy(config('messaging'), {});
    expect(
      ['sessions_list', 'sessions_history', 'sessions_send', 'session_status', 'message', 'exec'].filter(messaging),
    ).toEqual(['sessions_list', 'sessions_history', 'sessions_send', 'session_status', 'message']);

    const b = await boot({ tools: { profile: 'minimal' } });
    await seedTree(b);
    expect((await b.tool('session_status', {})).isError).toBeFalsy();
    const blocked = await b.tool('sessions_list', {});
    expect(blocked.isError).toBe(true);
    expect(text(blocked)).toMatch(/Tool "sessions_list" is not allowed by the tool policy/);
    // What the model is offered in a turn follows the same policy.
    await b.agent.run({ sessionKey: MAIN, message: 'hello' });
    const offered = b.requests[b.requests.length - 1]!.tools!.map((tool) => tool.name);
    expect(offered).toEqual(['session_status']);
  });

  it('a deny list blocks the session tools for every caller, the model included', async () => {
    const b = await boot({ tools: { deny: ['sessions_*'] } }, (request, step) => {
      if (step === 'primary' && request.messages[request.messages.length - 1]?.role === 'user')
        return { toolCalls: [{ name: 'sessions_send', arguments: { sessionKey: GROUP, message: 'sneak' } }] };
      return step === 'primary' ? 'done' : echo(request, step);
    });
    await seedTree(b);
    expect(text(await b.tool('sessions_send', { sessionKey: GROUP, message: 'x' }))).toMatch(
      /not allowed by the tool policy/,
    );
    await b.agent.run({ sessionKey: MAIN, message: 'try it' });
    expect(b.requests[0]!.tools!.map((tool) => tool.name).filter((name) => name.startsWith('session'))).toEqual([
      'session_status',
    ]);
    const entry = (await b.sessions.store('main').get(MAIN))!;
    const results = b.sessions
      .transcript(b.sessions.store('main').transcriptPath(entry.sessionId))
      .messages()
      .filter((message) => message.role === 'toolResult');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolName: 'sessions_send', isError: true });
    expect(JSON.stringify(results[0]!.content)).toMatch(/not allowed by the tool policy/);
    expect(b.requests.some((request) => lastUserText(request) === 'sneak')).toBe(false);
  });
});
