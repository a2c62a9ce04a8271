/**
 * Sessions stay usable: every request the model receives is valid (each tool call has its
 * result), whatever stopped the run before; steered messages are never lost; the memory
 * flush is a silent turn of its own that leaves no trace in the main request or the
 * transcript; and two processes never write one session at once. A real gateway (or real
 * `claw agent --local` processes) against the fake model on 127.0.0.1, which records the
 * exact requests it receives and rejects invalid tool pairing as the real APIs do.
 */
import { spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { agentEvents, runAgent, startAgent, until, type AgentHarness } from './agent-helpers.js';
import { startFakeLlm, type FakeLlm, type RecordedRequest } from './fakes/llm-server.js';
import { CLI, claw, tempDir } from './helpers.js';
import { ABORTED_TOOL_RESULT } from '../plugins/sessions/tool-pairing.js';

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const sessionsDir = (stateDir: string) => join(stateDir, 'agents', 'main', 'sessions');

function transcript(stateDir: string, key = 'agent:main:main'): any[] {
  const store = JSON.parse(readFileSync(join(sessionsDir(stateDir), 'sessions.json'), 'utf8'));
  return readFileSync(join(sessionsDir(stateDir), `${store[key].sessionId}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

const storedMessages = (stateDir: string) =>
  transcript(stateDir)
    .filter((entry) => entry.type === 'message')
    .map((entry) => entry.message);

function text(content: any): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: any) => part.text ?? '').join('');
}

/** The chat-completions messages of a request, without the system prompt. */
function chat(request: RecordedRequest): any[] {
  return request.body.messages.filter((message: any) => message.role !== 'system');
}

/** Every tool call of the request has exactly one result, straight after its assistant message. */
function expectPaired(request: RecordedRequest): void {
  const messages = chat(request);
  messages.forEach((message, index) => {
    if (message.role !== 'assistant' || !message.tool_calls) return;
    const results = [];
    for (let next = index + 1; next < messages.length && messages[next].role === 'tool'; next++)
      results.push(messages[next].tool_call_id);
    expect(results.sort()).toEqual(message.tool_calls.map((call: any) => call.id).sort());
  });
}

describe('steer never drops a message', () => {
  it('a message steered while the model streams a text-only answer becomes a follow-up run, and is saved', async () => {
    harness = await startAgent({ config: { messages: { queue: { mode: 'steer' } } } });
    const h = harness;
    h.fake.script(
      { text: `A long answer. ${'words '.repeat(60)}`, delayMs: 10, chunkSize: 6 },
      { text: 'Answer to the steered message.' },
    );
    const first = runAgent(h.client, { message: 'tell me a story' });
    await until(
      () => h.events.some((frame) => frame.event === 'agent' && (frame.payload as any).stream === 'assistant'),
      20_000,
      'streaming',
    );
    const second = runAgent(h.client, { message: 'and make it short' });
    const [a, b] = await Promise.all([first, second]);
    expect(b.ack.disposition).toBe('steered');
    expect(a.final).toMatchObject({ status: 'ok', summary: expect.stringContaining('A long answer.') });
    // Not injected (no tool boundary came), so it got a run of its own with its own answer.
    expect(b.final).toMatchObject({ status: 'ok', summary: 'Answer to the steered message.' });
    expect(b.final.runId).not.toBe(a.final.runId);
    expect(h.fake.requests).toHaveLength(2);
    const followup = chat(h.fake.requests[1]!);
    expect(followup.at(-1)).toMatchObject({ role: 'user', content: 'and make it short' });
    expect(text(followup.at(-2)?.content)).toContain('A long answer.');
    const stored = storedMessages(h.gw.stateDir).map((message) => [message.role, text(message.content).slice(0, 20)]);
    expect(stored).toEqual([
      ['user', 'tell me a story'],
      ['assistant', 'A long answer. words'],
      ['user', 'and make it short'],
      ['assistant', 'Answer to the steere'],
    ]);
    expect(agentEvents(h.events, a.ack.runId).some((event) => event.data.phase === 'steer-followup')).toBe(true);
  });

  it('/stop drops a steered message that was not taken yet, with the run', async () => {
    harness = await startAgent({ config: { messages: { queue: { mode: 'steer' } } } });
    const h = harness;
    h.fake.script({ text: 'x'.repeat(400), delayMs: 10, chunkSize: 4 });
    const first = runAgent(h.client, { message: 'talk' });
    await until(
      () => h.events.some((frame) => frame.event === 'agent' && (frame.payload as any).stream === 'assistant'),
      20_000,
      'streaming',
    );
    const steered = runAgent(h.client, { message: 'steered' });
    await until(
      () => h.events.some((frame) => frame.event === 'agent' && (frame.payload as any).data?.phase === 'steer-queued'),
      3000,
      'steer',
    );
    const stop = await runAgent(h.client, { message: '/stop' });
    expect(stop.final.summary).toBe('⏹️ Stopped 2 runs.');
    expect((await first).final.status).toBe('aborted');
    expect((await steered).final.status).toBe('aborted');
    // The next message is answered after anything still queued for the session, so by its answer
    // a steered message that survived the stop would have reached the model.
    h.fake.script({ text: 'fresh answer' });
    expect((await runAgent(h.client, { message: 'after the stop' })).final.summary).toBe('fresh answer');
    expect(h.fake.requests).toHaveLength(2);
    expect(JSON.stringify(h.fake.requests[1]!.body)).not.toContain('steered');
  });
});

describe('tool calls always have their results', () => {
  // Tool calls of one message run four at a time: four gates fill every slot, so the two
  // writes after them never start and must get synthetic results.
  const gates = ['call_gate1', 'call_gate2', 'call_gate3', 'call_gate4'];
  const threeCalls = {
    toolCalls: [
      ...gates.map((id) => ({ id, name: 'wait_gate', arguments: {} })),
      { id: 'call_two', name: 'write', arguments: { path: 'two.txt', content: '2' } },
      { id: 'call_three', name: 'write', arguments: { path: 'three.txt', content: '3' } },
    ],
  };

  for (const how of ['chat.abort', '/stop', 'timeout', 'interrupt'] as const) {
    it(`${how} in the middle of a multi-tool message, then a normal turn: the request is valid`, async () => {
      harness = await startAgent({ config: how === 'interrupt' ? { messages: { queue: { mode: 'interrupt' } } } : {} });
      const h = harness;
      h.fake.script(threeCalls);
      const first = runAgent(h.client, { message: 'three things', ...(how === 'timeout' ? { timeout: 1 } : {}) });
      await h.gate.entered;
      if (how === 'chat.abort') {
        const runId = (h.events.find((frame) => frame.event === 'agent')!.payload as any).runId;
        await h.client.request('chat.abort', { sessionKey: 'main', runId });
      } else if (how === '/stop') {
        await runAgent(h.client, { message: '/stop' });
      }
      let next: Promise<Awaited<ReturnType<typeof runAgent>>> | undefined;
      if (how === 'interrupt') {
        h.fake.script({ text: 'fresh answer' });
        next = runAgent(h.client, { message: 'something else' });
      }
      const a = await first;
      expect(a.final.status).toBe(how === 'timeout' ? 'timeout' : 'aborted');
      if (!next) {
        h.fake.script({ text: 'fresh answer' });
        next = runAgent(h.client, { message: 'something else' });
      }
      const b = await next;
      expect(b.final).toMatchObject({ status: 'ok', summary: 'fresh answer' });
      expect(h.fake.requests).toHaveLength(2);
      const request = h.fake.requests[1]!;
      expectPaired(request);
      const tools = chat(request).filter((message) => message.role === 'tool');
      expect(tools.map((message) => [message.tool_call_id, message.content])).toEqual([
        ...gates.map((id) => [id, 'gate aborted']),
        ['call_two', ABORTED_TOOL_RESULT],
        ['call_three', ABORTED_TOOL_RESULT],
      ]);
      expect(chat(request).at(-1)).toMatchObject({ role: 'user', content: 'something else' });
      // The synthetic results are in the transcript itself, before the next user message.
      const stored = storedMessages(h.gw.stateDir).map(
        (message) => message.role + (message.toolCallId ? `:${message.toolCallId}` : ''),
      );
      expect(stored).toEqual([
        'user',
        'assistant',
        ...gates.map((id) => `toolResult:${id}`),
        'toolResult:call_two',
        'toolResult:call_three',
        'user',
        'assistant',
      ]);
    });
  }

  it('anthropic: an abort mid-message leaves a history the Messages API accepts', async () => {
    harness = await startAgent({ provider: 'anthropic' });
    const h = harness;
    h.fake.script(threeCalls);
    const first = runAgent(h.client, { message: 'three things' });
    await h.gate.entered;
    await runAgent(h.client, { message: '/stop' });
    expect((await first).final.status).toBe('aborted');
    h.fake.script({ text: 'fresh answer' });
    const { final } = await runAgent(h.client, { message: 'something else' });
    expect(final).toMatchObject({ status: 'ok', summary: 'fresh answer' });
    const results = h.fake.requests[1]!.body.messages.flatMap((message: any) =>
      Array.isArray(message.content) ? message.content : [],
    ).filter((part: any) => part.type === 'tool_result');
    expect(results.map((part: any) => part.tool_use_id)).toEqual([...gates, 'call_two', 'call_three']);
  });

  it('repairs a damaged transcript on load: calls left open by a crash, a result out of place, an orphan result', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ text: 'first' });
    await runAgent(h.client, { message: 'hello' });
    const store = JSON.parse(readFileSync(join(sessionsDir(h.gw.stateDir), 'sessions.json'), 'utf8'));
    const file = join(sessionsDir(h.gw.stateDir), `${store['agent:main:main'].sessionId}.jsonl`);
    let parent = transcript(h.gw.stateDir).at(-1).id;
    const add = (message: Record<string, unknown>) => {
      const id = Math.random().toString(16).slice(2, 10);
      appendFileSync(
        file,
        `${JSON.stringify({ type: 'message', id, parentId: parent, timestamp: new Date().toISOString(), message })}\n`,
      );
      parent = id;
    };
    const call = (id: string) => ({ type: 'toolCall', id, name: 'read', arguments: { path: 'x' } });
    const result = (id: string, body: string) => ({
      role: 'toolResult',
      toolCallId: id,
      toolName: 'read',
      content: [{ type: 'text', text: body }],
    });
    // Two writers interleaved: a user message landed between a call and its result.
    add({ role: 'user', content: 'question one' });
    add({ role: 'assistant', content: [call('call_a'), call('call_b')] });
    add({ role: 'user', content: 'question two' });
    add(result('call_a', 'result a'));
    add(result('call_zzz', 'answers nothing'));
    add({ role: 'assistant', content: [{ type: 'text', text: 'answer two' }] });
    // Then a crash between a model's tool calls and their results.
    add({ role: 'user', content: 'question three' });
    add({ role: 'assistant', content: [call('call_c')] });
    h.fake.script({ text: 'back on track' });
    const { final } = await runAgent(h.client, { message: 'question four' });
    expect(final).toMatchObject({ status: 'ok', summary: 'back on track' });
    const request = h.fake.requests[1]!;
    expectPaired(request);
    const shape = chat(request).map((message) =>
      message.role === 'tool'
        ? `tool:${message.tool_call_id}:${message.content}`
        : `${message.role}:${text(message.content) || (message.tool_calls ?? []).map((c: any) => c.id).join(',')}`,
    );
    expect(shape).toEqual([
      'user:hello',
      'assistant:first',
      'user:question one',
      'assistant:call_a,call_b',
      'tool:call_a:result a',
      `tool:call_b:${ABORTED_TOOL_RESULT}`,
      'user:question two',
      'assistant:answer two',
      'user:question three',
      'assistant:call_c',
      `tool:call_c:${ABORTED_TOOL_RESULT}`,
      'user:question four',
    ]);
    // The open call at the end was answered in the file itself; older damage is mended in memory only.
    const stored = storedMessages(h.gw.stateDir).map(
      (message) => message.role + (message.toolCallId ? `:${message.toolCallId}` : ''),
    );
    expect(stored.slice(-4)).toEqual(['assistant', 'toolResult:call_c', 'user', 'assistant']);
  });
});

describe('memory flush: a silent turn of its own before compaction', () => {
  const windowConfig = {
    models: { providers: { openai: { models: [{ id: 'small', contextWindow: 40_000 }] } } },
    agents: { defaults: { model: 'openai/small' } },
  };
  const FLUSH = /Pre-compaction memory flush/;

  it('the exact requests: flush on history without the new question, then the summary, then the question last', async () => {
    harness = await startAgent({ config: windowConfig });
    const h = harness;
    // 40k window − 20k reserve − 4k soft threshold = 16k tokens ≈ 64k characters.
    h.fake.script({ text: 'noted A' });
    await runAgent(h.client, { message: `A${'a'.repeat(30_000)}` });
    h.fake.script(
      {
        toolCalls: [
          { id: 'call_mem', name: 'write', arguments: { path: 'memory/notes.md', content: '- the user sent A\n' } },
        ],
      },
      { text: 'NO_REPLY' },
      { text: 'SUMMARY-ONE' },
      { text: 'noted B' },
    );
    const question = `B${'b'.repeat(36_000)}`;
    const { final } = await runAgent(h.client, { message: question });
    expect(final).toMatchObject({ status: 'ok', summary: 'noted B' });
    expect(h.fake.requests).toHaveLength(5);
    const [, flush, flushTool, summary, answer] = h.fake.requests as [
      RecordedRequest,
      RecordedRequest,
      RecordedRequest,
      RecordedRequest,
      RecordedRequest,
    ];

    // 1. The flush: the stored history, then the flush prompt; the new question is not in it.
    expect(flush.body.messages[0].content).toContain('Session nearing compaction. Store durable memories now.');
    expect(chat(flush).map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(text(chat(flush)[0].content)).toMatch(/^Aaaa/);
    expect(text(chat(flush).at(-1).content)).toMatch(FLUSH);
    expect(JSON.stringify(flush.body)).not.toContain('bbbbbbbb');
    // 2. Its tool round stays in the flush's private copy.
    expect(chat(flushTool).map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool']);
    expect(readFileSync(join(h.workspace, 'memory', 'notes.md'), 'utf8')).toContain('the user sent A');
    // 3. The summariser sees the conversation, not the flush.
    expect(JSON.stringify(summary.body)).toContain('aaaaaaaa');
    expect(JSON.stringify(summary.body)).not.toMatch(FLUSH);
    // 4. The main request: summary, then the question, last. No flush prompt, no NO_REPLY.
    const main = chat(answer);
    expect(main.map((message) => message.role)).toEqual(['user', 'user']);
    expect(text(main[0].content)).toContain('SUMMARY-ONE');
    expect(main.at(-1)).toMatchObject({ role: 'user', content: question });
    expect(JSON.stringify(main)).not.toMatch(FLUSH);
    expect(JSON.stringify(main)).not.toContain('NO_REPLY');
    expect(answer.body.messages[0].content).not.toContain('Session nearing compaction');

    // Nothing of the flush is in the transcript.
    const stored = JSON.stringify(transcript(h.gw.stateDir));
    expect(stored).not.toMatch(FLUSH);
    expect(stored).not.toContain('NO_REPLY');
    expect(stored).not.toContain('call_mem');
  });

  it('at most once per compaction cycle; the next cycle may flush again', async () => {
    harness = await startAgent({ config: windowConfig });
    const h = harness;
    // A first message already over the threshold: flush, but nothing older to compact yet.
    h.fake.script({ text: 'NO_REPLY' }, { text: 'answer X' });
    expect((await runAgent(h.client, { message: `X${'x'.repeat(66_000)}` })).final.summary).toBe('answer X');
    expect(text(chat(h.fake.requests[0]!).at(-1).content)).toMatch(FLUSH);
    expect(chat(h.fake.requests[0]!)).toHaveLength(1); // the question is not in the flush request
    expect(chat(h.fake.requests[1]!).at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/^Xxxx/) });
    // Still over the threshold in the same cycle: no second flush, compaction only.
    h.fake.script({ text: 'SUMMARY-X' }, { text: 'answer Y' });
    expect((await runAgent(h.client, { message: 'Y?' })).final.summary).toBe('answer Y');
    expect(h.fake.requests).toHaveLength(4);
    for (const request of h.fake.requests.slice(2)) expect(JSON.stringify(request.body)).not.toMatch(FLUSH);
    const store = JSON.parse(readFileSync(join(sessionsDir(h.gw.stateDir), 'sessions.json'), 'utf8'))[
      'agent:main:main'
    ];
    expect(store).toMatchObject({ compactionCount: 1, memoryFlushCompactionCount: 0 });
    // A new cycle: over the threshold again, so one flush again.
    h.fake.script({ text: 'NO_REPLY' }, { text: 'SUMMARY-Z' }, { text: 'answer Z' });
    expect((await runAgent(h.client, { message: `Z${'z'.repeat(66_000)}` })).final.summary).toBe('answer Z');
    expect(text(chat(h.fake.requests[4]!).at(-1).content)).toMatch(FLUSH);
    expect(
      JSON.parse(readFileSync(join(sessionsDir(h.gw.stateDir), 'sessions.json'), 'utf8'))['agent:main:main'],
    ).toMatchObject({ memoryFlushCompactionCount: 1 });
    expect(JSON.stringify(transcript(h.gw.stateDir))).not.toMatch(FLUSH);
  });

  it('a failed flush is skipped: the question is still answered', async () => {
    harness = await startAgent({ config: windowConfig });
    const h = harness;
    h.fake.script({ error: { status: 400, message: 'flush refused' } }, { text: 'answered anyway' });
    const { final } = await runAgent(h.client, { message: `Q${'q'.repeat(66_000)}` });
    expect(final).toMatchObject({ status: 'ok', summary: 'answered anyway' });
    expect(
      h.events.some((frame) => frame.event === 'agent' && (frame.payload as any).data?.phase === 'memory-flush-failed'),
    ).toBe(true);
  });
});

describe('one writer per session across processes', () => {
  let fake: FakeLlm;
  afterAll(() => fake?.close());

  it('two `claw agent --local` runs on one session: the second waits (and says so), the transcript stays in order', async () => {
    fake = await startFakeLlm();
    const stateDir = tempDir('claw-lock-');
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({
        agents: { defaults: { model: 'openai/gpt-4.1' } },
        models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-test' } } },
      }),
    );
    const env = { OPENCLAW_STATE_DIR: stateDir };
    // The first run's model answers only once the second process has said it is waiting.
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let answered = 0;
    fake.respond(async () => (answered++ === 0 ? (await gate, { text: 'first answer' }) : { text: 'second answer' }));
    const one = claw(['agent', '--local', '--message', 'one'], env);
    await until(() => fake.requests.length === 1, 15_000, 'the first request');
    const child = spawn(process.execPath, [CLI, 'agent', '--local', '--message', 'two', '--json'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const two = new Promise<number>((resolve) => child.once('close', (code) => resolve(code ?? -1)));
    await until(() => stderr.includes('[waiting]'), 15_000, 'the second process to wait');
    expect(stderr).toMatch(/\[waiting\] the session is in use by another process \(pid \d+\)/);
    expect(fake.requests).toHaveLength(1);
    openGate();
    const first = await one;
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('first answer\n');
    expect(await two, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ status: 'ok', summary: 'second answer' });
    expect(fake.requests).toHaveLength(2);
    // The second saw the first's whole turn.
    expect(chat(fake.requests[1]!).map((message) => [message.role, text(message.content)])).toEqual([
      ['user', 'one'],
      ['assistant', 'first answer'],
      ['user', 'two'],
    ]);
    const entries = transcript(stateDir);
    expect(entries.filter((entry) => entry.type === 'session')).toHaveLength(1);
    expect(entries.filter((entry) => entry.type === 'message').map((entry) => text(entry.message.content))).toEqual([
      'one',
      'first answer',
      'two',
      'second answer',
    ]);
    // Each entry's parent is the one before it: one chain, no interleaving.
    for (let index = 2; index < entries.length; index++) expect(entries[index].parentId).toBe(entries[index - 1].id);
  });

  it('a run that cannot get the session before its timeout fails clearly, naming the holder', async () => {
    harness = await startAgent();
    const h = harness;
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => holder.once('spawn', resolve));
      const { sessionLockPath } = await import('../plugins/sessions/lock.js');
      const lock = sessionLockPath(sessionsDir(h.gw.stateDir), 'agent:main:main');
      mkdirSync(join(sessionsDir(h.gw.stateDir), 'locks'), { recursive: true });
      writeFileSync(
        lock,
        JSON.stringify({
          pid: holder.pid,
          hostname: hostname(),
          sessionKey: 'agent:main:main',
          acquiredAt: new Date().toISOString(),
          token: 'other',
        }),
      );
      const { ack, final } = await runAgent(h.client, { message: 'hello', timeout: 0.5 });
      expect(final).toMatchObject({
        status: 'timeout',
        error: expect.stringMatching(
          new RegExp(`session agent:main:main is in use by process ${holder.pid} \\(since .*\\); gave up waiting`),
        ),
      });
      expect(
        agentEvents(h.events, ack.runId).some(
          (event) => event.data.phase === 'waiting' && event.data.holderPid === holder.pid,
        ),
      ).toBe(true);
      expect(h.fake.requests).toHaveLength(0);
      expect(JSON.parse(readFileSync(lock, 'utf8')).token).toBe('other');
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a lock left by a dead process is taken over at once', async () => {
    fake.reset();
    const stateDir = tempDir('claw-lock-stale-');
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({
        agents: { defaults: { model: 'openai/gpt-4.1' } },
        models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-test' } } },
      }),
    );
    const { sessionLockPath } = await import('../plugins/sessions/lock.js');
    const lock = sessionLockPath(sessionsDir(stateDir), 'agent:main:main');
    mkdirSync(join(sessionsDir(stateDir), 'locks'), { recursive: true });
    // A pid that existed and is gone: a finished child's.
    const dead = spawnSync('true').pid;
    writeFileSync(
      lock,
      JSON.stringify({
        pid: dead,
        hostname: hostname(),
        sessionKey: 'agent:main:main',
        acquiredAt: new Date().toISOString(),
        token: 'old',
      }),
    );
    fake.script({ text: 'took over' });
    const started = Date.now();
    const result = await claw(['agent', '--local', '--message', 'hi', '--json'], { OPENCLAW_STATE_DIR: stateDir });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).summary).toBe('took over');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(() => readFileSync(lock)).toThrow(/ENOENT/);
  });
});
