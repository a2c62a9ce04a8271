/**
 * Slash commands, directives and reset policy, driven through the agent loop's dispatch
 * (the path every channel uses) in a kernel without the gateway.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { definePlugin } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import type { AgentService } from '../sdk/agent/index.js';
import type { AgentRuntime } from '../plugins/agent/runtime.js';
import { useService } from '../sdk/services.js';
import type { DispatchInput, RunResult } from '../plugins/agent/runtime.js';
import { parseDirectives } from '../plugins/agent/directives.js';
import { AGENT_PLUGINS } from './agent-helpers.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());

const kernels: TestKernel[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const kernel of kernels.splice(0)) await kernel.dispose();
  fake.reset();
});

const sessionEvents: string[] = [];

async function boot(config: Record<string, any> = {}) {
  const recorder = definePlugin({
    id: 'test-session-hooks',
    register(api) {
      api.on('session_start', (event) => void sessionEvents.push(`start:${event.sessionId}`));
      api.on('session_end', (event) => void sessionEvents.push(`end:${event.sessionId}`));
      api.registerCommand({
        name: 'ping',
        description: 'test command',
        acceptsArgs: true,
        handler: (ctx) => ({ text: `pong ${ctx.args}`.trim() }),
      });
    },
  });
  const kernel = await createTestKernel({
    plugins: [...AGENT_PLUGINS, recorder],
    config: {
      agents: { defaults: { model: 'openai/gpt-4.1', models: { 'anthropic/claude-opus-4-1': { alias: 'opus' } } } },
      models: {
        providers: {
          openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'k' },
          anthropic: { baseUrl: fake.anthropicBaseUrl, apiKey: 'k2' },
        },
      },
      messages: { queue: { debounceMs: 10 } },
      ...config,
    },
  });
  kernels.push(kernel);
  const slot = (await useService<AgentService & { runtime: AgentRuntime }>(kernel, 'agent'))!;
  const send = async (
    message: string,
    extra: Partial<DispatchInput> = {},
  ): Promise<RunResult & { disposition: string }> => {
    const handle = await slot.dispatch({ message, ...extra });
    return { ...(await handle.done), disposition: handle.status };
  };
  const entry = async (key = 'agent:main:main') => slot.runtime.store('main').get(key);
  return { kernel, slot, send, entry };
}

function lastUserText(): string {
  const body = fake.requests.at(-1)!.body;
  const users = (body.messages as any[]).filter((message) => message.role === 'user');
  const content = users.at(-1).content;
  return typeof content === 'string' ? content : content.map((part: any) => part.text ?? '').join('');
}

describe('directives', () => {
  it('parses /think /verbose /reasoning /model /queue and leaves the rest', () => {
    expect(parseDirectives('/think high what is X')).toMatchObject({
      rest: 'what is X',
      thinking: 'high',
      found: ['think'],
    });
    expect(parseDirectives('/t:low hi')).toMatchObject({ rest: 'hi', thinking: 'low' });
    expect(parseDirectives('/think what is X')).toMatchObject({ rest: 'what is X', found: ['think'] });
    expect(parseDirectives('hello /verbose on and /reasoning stream')).toMatchObject({
      rest: 'hello and',
      verbose: 'on',
      reasoning: 'stream',
    });
    expect(parseDirectives('/model opus')).toMatchObject({ rest: '', model: 'opus' });
    expect(parseDirectives('/queue followup debounce:2s cap:25 drop:summarize')).toMatchObject({
      rest: '',
      queue: { mode: 'followup', debounceMs: 2000, cap: 25, drop: 'summarize' },
    });
    expect(parseDirectives('/queue reset')).toMatchObject({ queue: { reset: true } });
    expect(parseDirectives('see /tmp/file and a/think b')).toMatchObject({
      rest: 'see /tmp/file and a/think b',
      found: [],
    });
  });
});

describe('slash commands', () => {
  it('/think alone persists the session level without a model call; inline it applies to that message only', async () => {
    const { send, entry } = await boot({ agents: { defaults: { model: 'openai/o4-mini' } } });
    expect((await send('/think high')).text).toBe('🧠 Thinking: high');
    expect(fake.requests).toHaveLength(0);
    expect((await entry())!.thinkingLevel).toBe('high');
    fake.script({ text: 'answer' });
    await send('/think low what is X');
    expect(lastUserText()).toBe('what is X');
    expect(fake.requests[0]!.body.reasoning_effort).toBe('low');
    expect((await entry())!.thinkingLevel).toBe('high');
  });

  it('/status reports model, context, session settings and queue', async () => {
    const { send } = await boot();
    const { text } = await send('/status');
    expect(text).toMatch(/🤖 Model: openai\/gpt-4\.1/);
    expect(text).toMatch(/📚 Context: 0\/[\d,]+ tokens/);
    expect(text).toMatch(/📥 Queue: collect \(debounce 10ms, cap 20, drop summarize\)/);
    expect(fake.requests).toHaveLength(0);
  });

  it('an authorized "hey /status" gets the status and the model sees "hey"; an unauthorized one goes verbatim', async () => {
    const { kernel, send } = await boot();
    const delivered: string[] = [];
    fake.script({ text: 'hi!' });
    await send('hey /status', {
      deliver: { channel: 'test', to: 'u1', send: async (payload) => void delivered.push(payload.text) },
    });
    expect(delivered[0]).toMatch(/🤖 Model/);
    expect(delivered[1]).toBe('hi!');
    expect(lastUserText()).toBe('hey');
    fake.script({ text: 'hmm' });
    await send('hey /status', { authorized: false });
    expect(lastUserText()).toBe('hey /status');
    expect(kernel.logs.filter((record) => record.level === 'error')).toEqual([]);
  });

  it('/new starts a new session id with a greeting turn; /reset <text> passes the text through; /new <alias> sets the model', async () => {
    const { send, entry } = await boot();
    fake.script({ text: 'first' });
    await send('hello');
    const first = (await entry())!.sessionId;
    fake.script({ text: 'Hi again! What shall we do?' });
    const greeted = await send('/new');
    expect(greeted.text).toBe('Hi again! What shall we do?');
    expect(lastUserText()).toMatch(/new session was just started/);
    const second = (await entry())!.sessionId;
    expect(second).not.toBe(first);
    expect(sessionEvents).toContain(`end:${first}`);
    expect(sessionEvents).toContain(`start:${second}`);
    fake.script({ text: 'sure' });
    await send('/reset hello there');
    expect(lastUserText()).toBe('hello there');
    expect((await entry())!.sessionId).not.toBe(second);
    fake.script({ text: 'opus here' });
    await send('/new opus');
    expect((await entry())!.model).toBe('anthropic/claude-opus-4-1');
    expect(fake.requests.at(-1)!.api).toBe('anthropic');
    // Exact words only.
    fake.script({ text: 'not a reset' });
    const before = (await entry())!.sessionId;
    await send('/newfoo');
    expect((await entry())!.sessionId).toBe(before);
  });

  it('custom resetTriggers reset too', async () => {
    const { send, entry } = await boot({ session: { resetTriggers: ['/fresh'] } });
    fake.script({ text: 'a' }, { text: 'b' });
    await send('hello');
    const first = (await entry())!.sessionId;
    await send('/fresh');
    expect((await entry())!.sessionId).not.toBe(first);
  });

  it('/queue persists a per-session queue mode with options; /queue reset clears it', async () => {
    const { send, entry } = await boot();
    expect((await send('/queue followup debounce:2s cap:25 drop:old')).text).toBe(
      '📥 Queue: followup (debounce 2000ms, cap 25, drop old)',
    );
    expect((await entry())!.queue).toEqual({ mode: 'followup', debounceMs: 2000, cap: 25, drop: 'old' });
    expect((await send('/queue cap:0')).text).toMatch(/cap must be a whole number/);
    expect((await send('/queue reset')).text).toBe('📥 Queue reset to collect (debounce 10ms, cap 20, drop summarize)');
    expect((await entry())!.queue).toBeUndefined();
  });

  it('/model lists, switches (with @profile) and resets', async () => {
    const { send, entry } = await boot();
    const list = (await send('/model list')).text;
    expect(list).toMatch(/• openai\/gpt-4\.1/);
    expect(list).toMatch(/anthropic\/claude-opus-4-1 \(opus\)/);
    expect((await send('/model opus@anthropic:work')).text).toBe(
      '🤖 Model set to anthropic/claude-opus-4-1 (profile anthropic:work)',
    );
    expect(await entry()).toMatchObject({ model: 'anthropic/claude-opus-4-1', authProfileOverride: 'anthropic:work' });
    expect((await send('/model nonsense-model-xyz')).text).toMatch(/Unknown model/);
    expect((await send('/model default')).text).toBe('🤖 Model reset to openai/gpt-4.1');
    expect((await entry())!.model).toBeUndefined();
  });

  it('/verbose and /reasoning persist; verbose announces tool calls to the sender', async () => {
    const { send, entry } = await boot();
    expect((await send('/verbose on')).text).toBe('🔎 Verbose: on');
    expect((await send('/reasoning on')).text).toBe('💭 Reasoning: on');
    expect(await entry()).toMatchObject({ verboseLevel: 'on', reasoningLevel: 'on' });
    const delivered: string[] = [];
    fake.script(
      { thinking: 'Let me look.', toolCalls: [{ name: 'exec', arguments: { command: 'echo hi' } }] },
      { text: 'It said hi.' },
    );
    await send('run echo', {
      deliver: { channel: 'test', to: 'u', send: async (payload) => void delivered.push(payload.text) },
    });
    expect(delivered[0]).toMatch(/^🛠️ exec \{"command":"echo hi"\}/);
    expect(delivered).toContain('Reasoning:\nLet me look.');
    expect(delivered.at(-1)).toBe('It said hi.');
  });

  it('/context list shows the injected files and sizes; detail adds tool schemas', async () => {
    const { kernel, send } = await boot();
    mkdirSync(kernel.paths.workspaceDir, { recursive: true });
    writeFileSync(join(kernel.paths.workspaceDir, 'AGENTS.md'), 'Be helpful.\n');
    writeFileSync(join(kernel.paths.workspaceDir, 'TOOLS.md'), 'x'.repeat(25_000));
    const list = (await send('/context list')).text;
    expect(list).toMatch(/System prompt \(estimate\)/);
    expect(list).toMatch(/- AGENTS\.md: OK \| raw 12 chars \(~3 tok\)/);
    expect(list).toMatch(/- TOOLS\.md: TRUNCATED \| raw 25,000 chars/);
    expect(list).toMatch(/- SOUL\.md: MISSING/);
    expect(list).toMatch(/- MEMORY\.md: MISSING/);
    expect(list).toMatch(/Tool schemas \(JSON\): [\d,]+ chars/);
    fake.script({ text: 'ok' });
    await send('hi');
    const detail = (await send('/context detail')).text;
    expect(detail).toMatch(/System prompt \(run\)/);
    expect(detail).toMatch(/Top tools \(schema size\):\n- \w+: [\d,]+ chars/);
  });

  it('/help lists built-in and plugin commands; plugin commands run', async () => {
    const { send } = await boot();
    const help = (await send('/help')).text;
    expect(help).toMatch(/\/stop — abort/);
    expect(help).toMatch(/\/ping — from plugin test-session-hooks/);
    expect((await send('/ping a b')).text).toBe('pong a b');
  });

  it('an unauthorized /stop is just a message', async () => {
    const { send } = await boot();
    fake.script({ text: 'you said stop' });
    const result = await send('/stop', { authorized: false });
    expect(result.text).toBe('you said stop');
  });

  it('NO_REPLY is silent; reply directives are parsed', async () => {
    const { send } = await boot();
    const delivered: Array<{ text: string; replyTo?: string; media: string[] }> = [];
    const deliver = { channel: 'test', to: 'u', send: async (payload: any) => void delivered.push(payload) };
    fake.script({ text: 'NO_REPLY' }, { text: '[[reply:m42]] Here you go [[media:https://example.com/a.png]]' });
    expect((await send('quiet please', { deliver })).text).toBe('');
    expect(delivered).toHaveLength(0);
    await send('show me', { deliver });
    expect(delivered[0]).toMatchObject({ text: 'Here you go', replyTo: 'm42', media: ['https://example.com/a.png'] });
  });

  it('NO_REPLY never streams: not in agent events, chat deltas or the final, even in pieces', async () => {
    const { kernel, send } = await boot();
    const events: any[] = [];
    const protocol: any[] = [];
    const stop = kernel.protocol.onEmit((frame) => void protocol.push(frame));
    // Text before a tool call, then the token in pieces, slowly enough for chat deltas.
    fake.script(
      { text: 'Let me look.', toolCalls: [{ name: 'read', arguments: { path: 'nothing-here.txt' } }] },
      { text: 'NO_REPLY', chunkSize: 2, delayMs: 120 },
    );
    const result = await send('anything new?', { onEvent: (event) => void events.push(event) });
    stop();
    expect(result.status).toBe('ok');
    expect(result.text).toBe('');
    const streamed = events
      .filter((event) => event.kind === 'agent' && event.stream === 'assistant' && typeof event.data.delta === 'string')
      .map((event) => event.data.delta);
    expect(streamed.join('')).toBe('Let me look.');
    const chat = events.filter((event) => event.kind === 'chat');
    expect(chat.some((event) => event.state === 'delta')).toBe(true);
    for (const event of chat) {
      expect(`${event.text}${event.deltaText ?? ''}`).not.toMatch(/NO|_R|LY/);
    }
    expect(chat.at(-1)).toMatchObject({ state: 'final', text: '' });
    // Gateway clients (agent and chat events) get the same filtered stream.
    expect(
      protocol
        .filter((frame) => frame.event === 'agent' && frame.payload.data.delta)
        .map((frame) => frame.payload.data.delta)
        .join(''),
    ).toBe('Let me look.');
    expect(protocol.some((frame) => frame.event === 'chat' && frame.payload.state === 'delta')).toBe(true);
    expect(JSON.stringify([...events, ...protocol])).not.toMatch(/NO_|_REP|REPLY/);
  });

  it('chat deltas carry the current model message: text before a tool call is not glued to the answer', async () => {
    const { send } = await boot();
    const chat: any[] = [];
    fake.script(
      { text: 'Let me look.', toolCalls: [{ name: 'read', arguments: { path: 'nothing-here.txt' } }] },
      { text: 'It is not there.', chunkSize: 4, delayMs: 60 },
    );
    await send('is it there?', { onEvent: (event) => void (event.kind === 'chat' && chat.push(event)) });
    const deltas = chat.filter((event) => event.state === 'delta');
    expect(deltas[0]).toMatchObject({ text: 'Let me look.', deltaText: 'Let me look.' });
    expect(deltas.slice(1).every((event) => 'It is not there.'.startsWith(event.text))).toBe(true);
    expect(deltas.map((event) => event.deltaText).join('')).toBe('Let me look.It is not there.');
    expect(deltas.at(-1).text).toBe('It is not there.');
    expect(chat.at(-1)).toMatchObject({ state: 'final', text: 'It is not there.' });
  });

  it('block streaming sends a long answer in 800–1200 character blocks as it is written', async () => {
    const { send } = await boot({ agents: { defaults: { model: 'openai/gpt-4.1', blockStreamingDefault: 'on' } } });
    const paragraphs = Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(65 + i)}${'x'.repeat(448)}.`);
    const answer = paragraphs.join('\n\n');
    fake.script({ text: answer, chunkSize: 40 });
    const delivered: Array<{ text: string; at: number }> = [];
    const result = await send('write a lot', {
      deliver: {
        channel: 'test',
        to: 'u',
        send: async (payload) => void delivered.push({ text: payload.text, at: Date.now() }),
      },
    });
    expect(delivered.length).toBeGreaterThanOrEqual(3);
    expect(delivered.map((block) => block.text).join('\n\n')).toBe(answer);
    for (const block of delivered.slice(0, -1)) {
      expect(block.text.length).toBeGreaterThanOrEqual(800);
      expect(block.text.length).toBeLessThanOrEqual(1200);
    }
    expect(result.payloads).toHaveLength(delivered.length);
  });

  it('redelivered inbound messages (same message id) run once', async () => {
    const { send } = await boot();
    fake.script({ text: 'once' });
    const first = await send('hi', { channel: 'telegram', messageId: '77' });
    const again = await send('hi', { channel: 'telegram', messageId: '77' });
    expect(first.text).toBe('once');
    expect(again.disposition).toBe('duplicate');
    expect(fake.requests).toHaveLength(1);
  });
});

describe('reset policy, with a fake clock', () => {
  it('daily at 04:00 local: a session last used at 03:59 is replaced at 04:01; one used at 04:01 is kept', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(2026, 10, 21, 3, 59, 0));
    const { send, entry } = await boot();
    fake.script({ text: '1' }, { text: '2' }, { text: '3' });
    await send('before four');
    const first = (await entry())!.sessionId;
    vi.setSystemTime(new Date(2026, 10, 21, 4, 1, 0));
    await send('after four');
    const second = (await entry())!.sessionId;
    expect(second).not.toBe(first);
    vi.setSystemTime(new Date(2026, 10, 21, 23, 0, 0));
    await send('same day');
    expect((await entry())!.sessionId).toBe(second);
    expect(sessionEvents).toContain(`end:${first}`);
  });

  it('idle minutes per channel override the daily reset', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(2026, 10, 21, 10, 0, 0));
    const { send, entry } = await boot({ session: { resetByChannel: { discord: { mode: 'idle', idleMinutes: 30 } } } });
    fake.script({ text: '1' }, { text: '2' }, { text: '3' });
    const key = 'agent:main:discord:group:g1';
    await send('one', { sessionKey: key, channel: 'discord' });
    const first = (await entry(key))!.sessionId;
    vi.setSystemTime(new Date(2026, 10, 21, 10, 29, 0));
    await send('two', { sessionKey: key, channel: 'discord' });
    expect((await entry(key))!.sessionId).toBe(first);
    vi.setSystemTime(new Date(2026, 10, 21, 11, 0, 0));
    await send('three', { sessionKey: key, channel: 'discord' });
    expect((await entry(key))!.sessionId).not.toBe(first);
  });

  it('deleting the entry from sessions.json starts a new session on the next message', async () => {
    const { kernel, send, entry } = await boot();
    fake.script({ text: '1' }, { text: '2' });
    await send('one');
    const first = (await entry())!.sessionId;
    const file = join(kernel.paths.stateDir, 'agents', 'main', 'sessions', 'sessions.json');
    const store = JSON.parse(readFileSync(file, 'utf8'));
    delete store['agent:main:main'];
    writeFileSync(file, JSON.stringify(store));
    await send('two');
    expect((await entry())!.sessionId).not.toBe(first);
  });
});
