/**
 * The agent loop end to end: a real gateway, the agent-loop plugin, the openai/anthropic
 * provider plugins and the core tools, against the fake LLM server on 127.0.0.1.
 */
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MESSAGE_HOOKS } from '../kernel/index.js';
import { agentEvents, idem, MODELS, runAgent, startAgent, until, type AgentHarness } from './agent-helpers.js';
import { client } from './gateway-helpers.js';
import { REPO } from './helpers.js';

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

function sessionsFile(h: AgentHarness, agent = 'main') {
  return JSON.parse(readFileSync(join(h.gw.stateDir, 'agents', agent, 'sessions', 'sessions.json'), 'utf8'));
}

function transcriptLines(h: AgentHarness, key = 'agent:main:main'): any[] {
  const entry = sessionsFile(h)[key];
  return readFileSync(join(h.gw.stateDir, 'agents', 'main', 'sessions', `${entry.sessionId}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

/**
 * The 13 message-path hooks in the order DESIGN.md (§ Hook bus) lists them. When the design
 * document is beside the checkout (../shared/DESIGN.md), the list is read from it, so the
 * test also fails if the document and this copy drift apart.
 */
const DESIGN_HOOK_ORDER = [
  'message_received',
  'before_model_resolve',
  'before_prompt_build',
  'before_agent_start',
  'llm_input',
  'before_tool_call',
  'tool_result_persist',
  'after_tool_call',
  'llm_output',
  'agent_end',
  'message_sending',
  'before_message_write',
  'message_sent',
];

function designHookOrder(): string[] {
  const file = join(REPO, '..', 'shared', 'DESIGN.md');
  if (!existsSync(file)) return DESIGN_HOOK_ORDER;
  const design = readFileSync(file, 'utf8');
  const section = design.slice(design.indexOf('The 13 message-path hooks'), design.indexOf('The numbers give'));
  const listed = [...section.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!);
  expect(listed).toEqual(DESIGN_HOOK_ORDER);
  return listed;
}

/** Text of the last user message in a recorded model request (all three wire formats). */
function lastUserText(body: any): string {
  if (Array.isArray(body.input)) {
    const users = body.input.filter((item: any) => item.role === 'user');
    const content = users[users.length - 1]?.content;
    return typeof content === 'string' ? content : content.map((part: any) => part.text ?? '').join('');
  }
  const users = body.messages.filter((message: any) => message.role === 'user');
  const content = users[users.length - 1]?.content;
  if (typeof content === 'string') return content;
  return content
    .filter((part: any) => part.type === 'text')
    .map((part: any) => part.text)
    .join('');
}

describe.each(['openai', 'anthropic'] as const)('a turn through the gateway (%s)', (provider) => {
  it('user message → tool call that writes a file → tool result → final answer, hooks in the designed order', async () => {
    harness = await startAgent({ provider });
    const h = harness;
    h.fake.script(
      {
        thinking: 'The user wants a file.',
        toolCalls: [{ name: 'write', arguments: { path: 'notes/hello.txt', content: 'hi there' } }],
      },
      { text: 'Done: I wrote notes/hello.txt.' },
    );
    const { ack, final } = await runAgent(h.client, { message: 'please write hello' });

    // Two-phase: the ack, then the final result on the same request.
    expect(ack).toMatchObject({ status: 'accepted', runId: expect.any(String), acceptedAt: expect.any(Number) });
    expect(final).toMatchObject({
      runId: ack.runId,
      status: 'ok',
      summary: 'Done: I wrote notes/hello.txt.',
      result: { provider, model: MODELS[provider].split('/')[1] },
    });
    expect(readFileSync(join(h.workspace, 'notes', 'hello.txt'), 'utf8')).toBe('hi there');

    // The second model request carried the tool result back.
    expect(h.fake.requests).toHaveLength(2);
    expect(h.fake.requests.map((request) => request.api)).toEqual(
      provider === 'openai' ? ['openai-chat', 'openai-chat'] : ['anthropic', 'anthropic'],
    );
    expect(JSON.stringify(h.fake.requests[1]!.body)).toContain('notes/hello.txt');

    // Hook order: DESIGN.md's message path, with the model step repeated once per model call
    // and before_message_write before every transcript append and the delivered reply.
    const trace = h.hooks
      .filter((record) => (MESSAGE_HOOKS as readonly string[]).includes(record.hook))
      .map((record) => (record.detail ? `${record.hook}:${record.detail}` : record.hook));
    expect(trace).toEqual([
      'message_received',
      'before_model_resolve',
      'before_prompt_build',
      'before_agent_start',
      'before_message_write:user',
      'llm_input',
      'llm_output',
      'before_message_write:assistant',
      'before_tool_call',
      'tool_result_persist',
      'after_tool_call',
      'before_message_write:toolResult',
      'llm_input',
      'llm_output',
      'before_message_write:assistant',
      'agent_end',
      'message_sending',
      'before_message_write:delivery',
      'message_sent',
    ]);
    // Every hook DESIGN.md names fired, and first fired in its listed order except where the
    // design itself says the model step repeats (llm_output follows each model call) and
    // before_message_write precedes each append.
    const design = designHookOrder();
    expect(design).toEqual([...MESSAGE_HOOKS]);
    const firsts = [...new Set(trace.map((entry) => entry.split(':')[0]!))];
    const reorder = (list: string[]) => list.filter((name) => name !== 'llm_output' && name !== 'before_message_write');
    expect(reorder(firsts)).toEqual(reorder(design));
    expect(h.hooks.some((record) => record.hook === 'session_start')).toBe(true);

    // Streamed events: one lifecycle start, assistant deltas, tool start/result, one lifecycle end.
    const events = agentEvents(h.events, ack.runId);
    expect(events.filter((event) => event.stream === 'lifecycle' && event.data.phase === 'start')).toHaveLength(1);
    expect(
      events.filter((event) => event.stream === 'lifecycle' && ['end', 'error'].includes(event.data.phase)),
    ).toHaveLength(1);
    expect(events.filter((event) => event.stream === 'tool').map((event) => event.data.phase)).toEqual([
      'start',
      'result',
    ]);
    expect(
      events
        .filter((event) => event.stream === 'assistant' && event.data.delta)
        .map((event) => event.data.delta)
        .join(''),
    ).toBe('Done: I wrote notes/hello.txt.');
    const seqs = events.map((event) => event.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    await until(
      () => h.events.some((frame) => frame.event === 'chat' && (frame.payload as any).state === 'final'),
      2000,
      'chat final',
    );

    // Persisted: the session entry with token counts and a transcript of whole, linked entries.
    const entry = sessionsFile(h)['agent:main:main'];
    expect(entry).toMatchObject({
      sessionId: expect.any(String),
      inputTokens: expect.any(Number),
      outputTokens: expect.any(Number),
      totalTokens: expect.any(Number),
    });
    expect(entry.totalTokens).toBeGreaterThan(0);
    const lines = transcriptLines(h);
    expect(lines[0]).toMatchObject({ type: 'session' });
    const messages = lines.filter((line) => line.type === 'message');
    expect(messages.map((line) => line.message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    for (let i = 1; i < messages.length; i++) expect(messages[i].parentId).toBe(messages[i - 1].id);
    expect(messages[1].message.content.some((part: any) => part.type === 'thinking')).toBe(true);

    // chat.history shows the same conversation.
    const history: any = await h.client.request('chat.history', { sessionKey: 'main' });
    expect(history.messages.map((message: any) => message.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'assistant',
    ]);
  });

  it('keeps the conversation: the second turn sends the first one back to the model', async () => {
    harness = await startAgent({ provider });
    harness.fake.script({ text: 'Nice to meet you, Ada.' }, { text: 'Your name is Ada.' });
    await runAgent(harness.client, { message: 'My name is Ada.' });
    const { final } = await runAgent(harness.client, { message: 'What is my name?' });
    expect(final.summary).toBe('Your name is Ada.');
    expect(JSON.stringify(harness.fake.requests[1]!.body)).toContain('My name is Ada.');
  });

  it('a reply cut at the token limit runs none of its tool calls; each is answered with an error the model sees', async () => {
    harness = await startAgent({ provider });
    const h = harness;
    h.fake.script(
      {
        toolCalls: [
          { name: 'write', arguments: { path: 'cut/a.txt', content: 'half' } },
          { name: 'write', arguments: { path: 'cut/b.txt', content: 'ha' } },
        ],
        stopReason: 'length',
      },
      { text: 'That was too long; here is the short version.' },
    );
    const { final } = await runAgent(h.client, { message: 'write two long files' });
    expect(final).toMatchObject({ status: 'ok', summary: 'That was too long; here is the short version.' });
    expect(existsSync(join(h.workspace, 'cut'))).toBe(false);
    expect(h.hooks.filter((record) => record.hook === 'before_tool_call')).toEqual([]);
    // The transcript keeps every call paired with its result.
    const messages = transcriptLines(h)
      .filter((line) => line.type === 'message')
      .map((line) => line.message);
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'toolResult',
      'assistant',
    ]);
    expect(messages[1].stopReason).toBe('length');
    for (const result of messages.slice(2, 4))
      expect(result).toMatchObject({
        isError: true,
        content: [{ type: 'text', text: expect.stringMatching(/cut off at the output token limit/) }],
      });
    expect(JSON.stringify(h.fake.requests[1]!.body)).toContain('cut off at the output token limit');
    // A model that keeps overrunning is stopped rather than asked forever.
    const cut = {
      toolCalls: [{ name: 'write', arguments: { path: 'cut/c.txt', content: 'x' } }],
      stopReason: 'length' as const,
    };
    h.fake.script(cut, cut, cut, cut);
    const stopped = await runAgent(h.client, { message: 'write it anyway' });
    expect(stopped.final).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/cut off at the output token limit 4 times in a row/),
    });
    expect(h.fake.requests).toHaveLength(6);
    expect(existsSync(join(h.workspace, 'cut'))).toBe(false);
  });
});

describe('queue modes for messages that arrive during a run', () => {
  it('steer: tool calls not yet launched are skipped and the message goes to the model next', async () => {
    harness = await startAgent({ config: { messages: { queue: { mode: 'steer' } } } });
    const h = harness;
    // The first four calls launch together (the parallel bound); the fifth waits for a free
    // slot, and by then the steering message is there.
    const gates = [1, 2, 3, 4].map((n) => ({ id: `call_gate${n}`, name: 'wait_gate', arguments: {} }));
    h.fake.script(
      { toolCalls: [...gates, { id: 'call_write', name: 'write', arguments: { path: 'skipped.txt', content: 'x' } }] },
      { text: 'Changing course as you asked.' },
    );
    const first = runAgent(h.client, { message: 'do two things' });
    await h.gate.entered;
    const second = runAgent(h.client, { message: 'stop, do something else' });
    await until(
      () => h.events.some((frame) => frame.event === 'agent' && (frame.payload as any).data?.phase === 'steer-queued'),
      3000,
      'steer',
    );
    h.gate.open();
    const [a, b] = await Promise.all([first, second]);
    expect(a.final).toMatchObject({ status: 'ok', summary: 'Changing course as you asked.' });
    expect(b.ack.disposition).toBe('steered');
    expect(b.final.runId).toBe(a.final.runId);
    expect(existsSync(join(h.workspace, 'skipped.txt'))).toBe(false);
    const body = JSON.stringify(h.fake.requests[1]!.body);
    expect(body).toMatch(/Skipped: a new user message arrived/);
    expect(lastUserText(h.fake.requests[1]!.body)).toBe('stop, do something else');
    expect(h.fake.requests).toHaveLength(2);
  });

  it('followup: the message waits for the run, then gets a run of its own', async () => {
    harness = await startAgent({ config: { messages: { queue: { mode: 'followup' } } } });
    const h = harness;
    h.fake.script(
      { toolCalls: [{ name: 'wait_gate', arguments: {} }] },
      { text: 'first done' },
      { text: 'second done' },
    );
    const first = runAgent(h.client, { message: 'first' });
    await h.gate.entered;
    let acked = false;
    // Accepted means on disk (the intake journal): the gate opens once the second is queued.
    const second = runAgent(h.client, { message: 'second' }, () => (acked = true));
    await until(() => acked && h.fake.requests.length === 1, 2000, 'the second message accepted');
    h.gate.open();
    const [a, b] = await Promise.all([first, second]);
    expect(b.ack.disposition).toBe('queued');
    expect(a.final.summary).toBe('first done');
    expect(b.final).toMatchObject({ status: 'ok', summary: 'second done' });
    expect(b.final.runId).not.toBe(a.final.runId);
    expect(lastUserText(h.fake.requests[2]!.body)).toBe('second');
  });

  it('collect (the default): messages queued during a run become one follow-up turn', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script(
      { toolCalls: [{ name: 'wait_gate', arguments: {} }] },
      { text: 'first done' },
      { text: 'answering all three' },
    );
    const first = runAgent(h.client, { message: 'first' });
    await h.gate.entered;
    // Each ack says how the gateway took the message; all three must be queued before the gate opens.
    const acks: string[] = [];
    const onAck = (ack: { disposition?: string }) => void acks.push(ack.disposition ?? 'none');
    const queued = [
      runAgent(h.client, { message: 'one' }, onAck),
      runAgent(h.client, { message: 'two' }, onAck),
      runAgent(h.client, { message: 'three' }, onAck),
    ];
    await until(() => acks.length === 3, 5000, 'the three acks');
    expect(acks).toEqual(['queued', 'queued', 'queued']);
    h.gate.open();
    const [a, ...rest] = await Promise.all([first, ...queued]);
    expect(a.final.summary).toBe('first done');
    for (const item of rest) expect(item.final).toMatchObject({ status: 'ok', summary: 'answering all three' });
    expect(h.fake.requests).toHaveLength(3);
    const prompt = lastUserText(h.fake.requests[2]!.body);
    expect(prompt).toContain('[Queued messages while agent was busy]');
    expect(prompt.indexOf('one')).toBeLessThan(prompt.indexOf('two'));
    expect(prompt.indexOf('two')).toBeLessThan(prompt.indexOf('three'));
  });

  it('interrupt: the running turn is aborted and the new message runs', async () => {
    harness = await startAgent({ config: { messages: { queue: { mode: 'interrupt' } } } });
    const h = harness;
    h.fake.script({ toolCalls: [{ name: 'wait_gate', arguments: {} }] }, { text: 'the new answer' });
    const first = runAgent(h.client, { message: 'long task' });
    await h.gate.entered;
    const second = await runAgent(h.client, { message: 'never mind, this instead' });
    const a = await first;
    expect(a.final.status).toBe('aborted');
    expect(second.final).toMatchObject({ status: 'ok', summary: 'the new answer' });
    expect(lastUserText(h.fake.requests[1]!.body)).toBe('never mind, this instead');
    const events = agentEvents(h.events, a.ack.runId);
    expect(events.filter((event) => event.stream === 'lifecycle' && event.data.phase === 'error')).toHaveLength(1);
  });

  it('per-message queueMode overrides the configured mode', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ toolCalls: [{ name: 'wait_gate', arguments: {} }] }, { text: 'first' }, { text: 'second' });
    const first = runAgent(h.client, { message: 'first' });
    await h.gate.entered;
    let disposition: string | undefined;
    const second = runAgent(
      h.client,
      { message: 'second', queueMode: 'followup' },
      (ack) => (disposition = ack.disposition ?? 'none'),
    );
    await until(() => disposition !== undefined, 5000, 'the ack');
    h.gate.open();
    expect(disposition).toBe('queued');
    expect((await second).ack.disposition).toBe('queued');
    expect((await first).final.summary).toBe('first');
  });
});

describe('idempotency, timeout and abort', () => {
  it('a retried agent request (same idempotencyKey) gets the same ack and result and runs once', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ text: 'once only', delayMs: 20 });
    const key = idem();
    const acks: any[] = [];
    const call = () =>
      h.client.request(
        'agent',
        { message: 'hello', idempotencyKey: key },
        { expectFinal: true, onAck: (ack) => acks.push(ack) },
      );
    const [a, b] = await Promise.all([call(), call()]);
    const c = await call();
    expect(a).toEqual(b);
    expect(c).toEqual(a);
    expect(acks).toHaveLength(3);
    expect(new Set(acks.map((ack) => ack.runId)).size).toBe(1);
    expect(h.fake.requests).toHaveLength(1);
  });

  it('a run past its timeout ends cleanly with status timeout; agent.wait reports it', async () => {
    harness = await startAgent();
    const h = harness;
    // A first turn loads the agent's plugins, so the timed turn below spends its 0.4 s waiting
    // on the model (a cold start under load can take longer than that before the request).
    h.fake.script({ text: 'warm' });
    await runAgent(h.client, { message: 'warm up' });
    h.fake.script({ hang: true });
    const { ack, final } = await runAgent(h.client, { message: 'hang', timeout: 0.4 });
    expect(h.fake.requests).toHaveLength(2);
    expect(final).toMatchObject({ status: 'timeout', error: expect.stringMatching(/timed out/) });
    const waited: any = await h.client.request('agent.wait', { runId: ack.runId });
    expect(waited.status).toBe('timeout');
    const events = agentEvents(h.events, ack.runId);
    expect(events.filter((event) => event.stream === 'lifecycle').map((event) => event.data.phase)).toEqual([
      'start',
      'error',
    ]);
    // The session is free again.
    h.fake.script({ text: 'back' });
    expect((await runAgent(h.client, { message: 'again' })).final.summary).toBe('back');
  });

  it('agent.wait waits (default 30 s), times out without stopping the run, and knows unknown runs', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ text: 'slow answer', delayMs: 40, chunkSize: 4 });
    const ack: any = await new Promise((resolve) => {
      void h.client.request('agent', { message: 'go', idempotencyKey: idem() }, { expectFinal: true, onAck: resolve });
    });
    const early: any = await h.client.request('agent.wait', { runId: ack.runId, timeoutMs: 10 });
    expect(early).toMatchObject({ runId: ack.runId, status: 'timeout' });
    const done: any = await h.client.request('agent.wait', { runId: ack.runId });
    expect(done).toMatchObject({
      runId: ack.runId,
      status: 'ok',
      summary: 'slow answer',
      startedAt: expect.any(Number),
      endedAt: expect.any(Number),
    });
    await expect(h.client.request('agent.wait', { runId: 'nope' })).rejects.toThrow(/unknown runId/);
    const { AGENT_WAIT_DEFAULT_MS } = await import('../plugins/agent/methods.js');
    expect(AGENT_WAIT_DEFAULT_MS).toBe(30_000);
  });

  it('chat.send streams chat events; chat.abort ends the run with an aborted event', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ text: 'a'.repeat(400), delayMs: 15, chunkSize: 4 });
    const sent: any = await h.client.request('chat.send', {
      sessionKey: 'main',
      message: 'talk',
      idempotencyKey: idem(),
    });
    expect(sent).toMatchObject({ runId: expect.any(String), status: 'started' });
    await until(
      () => h.events.some((frame) => frame.event === 'chat' && (frame.payload as any).state === 'delta'),
      5000,
      'a delta',
    );
    const aborted: any = await h.client.request('chat.abort', { sessionKey: 'main', runId: sent.runId });
    expect(aborted).toMatchObject({ ok: true, aborted: true });
    await until(
      () => h.events.some((frame) => frame.event === 'chat' && (frame.payload as any).state === 'aborted'),
      3000,
      'aborted event',
    );
    const waited: any = await h.client.request('agent.wait', { runId: sent.runId });
    expect(waited.status).toBe('aborted');
    // Deltas were coalesced (≤ one per 150 ms), not one per token.
    const deltas = h.events.filter((frame) => frame.event === 'chat' && (frame.payload as any).state === 'delta');
    const tokens = h.events.filter((frame) => frame.event === 'agent' && (frame.payload as any).stream === 'assistant');
    expect(deltas.length).toBeLessThan(tokens.length);
  });

  it('/stop aborts the running turn and replies with the count', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ toolCalls: [{ name: 'wait_gate', arguments: {} }] });
    const first = runAgent(h.client, { message: 'long job' });
    await h.gate.entered;
    const stop = await runAgent(h.client, { message: '/stop' });
    expect(stop.final.summary).toBe('⏹️ Stopped 1 run.');
    expect((await first).final.status).toBe('aborted');
    expect(h.fake.requests).toHaveLength(1);
  });
});

describe('compaction', () => {
  const windowConfig = (contextWindow: number) => ({
    models: { providers: { openai: { models: [{ id: 'small', contextWindow }] } } },
    agents: { defaults: { model: 'openai/small' } },
  });

  it('near the window: one silent memory-flush turn, then older turns are summarised and kept as a summary entry', async () => {
    harness = await startAgent({ config: windowConfig(40_000) });
    const h = harness;
    // 40k window − 20k reserve − 4k soft threshold = 16k tokens ≈ 64k characters.
    h.fake.script({ text: 'noted A' });
    await runAgent(h.client, { message: `A${'a'.repeat(30_000)}` });
    h.fake.script(
      {
        toolCalls: [
          {
            name: 'write',
            arguments: { path: 'memory/2026-11-21.md', content: '- the user sent a long A and a long B\n' },
          },
        ],
      },
      { text: 'NO_REPLY' },
      { text: 'SUMMARY-ONE: the user sent a long A.' },
      { text: 'noted B' },
    );
    const { final } = await runAgent(h.client, { message: `B${'b'.repeat(36_000)}` });
    expect(final).toMatchObject({ status: 'ok', summary: 'noted B' });
    // Memory flush first (silent: its NO_REPLY was not delivered), then the summary call, then the answer.
    expect(readFileSync(join(h.workspace, 'memory', '2026-11-21.md'), 'utf8')).toContain('long A');
    expect(lastUserText(h.fake.requests[1]!.body)).toMatch(/Pre-compaction memory flush/);
    expect(JSON.stringify(h.fake.requests[3]!.body)).toContain('aaaaaaaa');
    const answerRequest = JSON.stringify(h.fake.requests[4]!.body);
    expect(answerRequest).toContain('SUMMARY-ONE');
    expect(answerRequest).not.toContain('a'.repeat(1000));
    const entry = sessionsFile(h)['agent:main:main'];
    expect(entry).toMatchObject({ compactionCount: 1, memoryFlushCompactionCount: 0 });
    const compaction = transcriptLines(h).find((line) => line.type === 'compaction');
    expect(compaction).toMatchObject({
      summary: 'SUMMARY-ONE: the user sent a long A.',
      firstKeptEntryId: expect.any(String),
      tokensBefore: expect.any(Number),
    });
    expect(h.hooks.map((record) => record.hook).filter((hook) => hook.endsWith('_compaction'))).toEqual([
      'before_compaction',
      'after_compaction',
    ]);
    const compactionEvents = h.events
      .filter((frame) => frame.event === 'agent' && (frame.payload as any).stream === 'compaction')
      .map((frame) => (frame.payload as any).data.phase);
    expect(compactionEvents).toEqual(['memory-flush', 'start', 'end']);
  });

  it('a context-overflow error compacts once and retries', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ text: 'first answer' }, { text: 'second answer' });
    await runAgent(h.client, { message: 'one' });
    await runAgent(h.client, { message: 'two' });
    h.fake.script({ contextOverflow: true }, { text: 'SUMMARY after overflow' }, { text: 'third answer' });
    const { final } = await runAgent(h.client, { message: 'three' });
    expect(final).toMatchObject({ status: 'ok', summary: 'third answer' });
    expect(sessionsFile(h)['agent:main:main'].compactionCount).toBe(1);
    expect(JSON.stringify(h.fake.requests[4]!.body)).toContain('SUMMARY after overflow');
  });

  it('/compact summarises on demand; sessions.compact too', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ text: 'r1' }, { text: 'r2' }, { text: 'r3' });
    for (const message of ['m1', 'm2', 'm3']) await runAgent(h.client, { message: `${message} ${'x'.repeat(40_000)}` });
    h.fake.script({ text: 'MANUAL SUMMARY' });
    const { final } = await runAgent(h.client, { message: '/compact keep the numbers' });
    expect(final.summary).toMatch(/^🧹 Compacted: \d+ older messages? summarized; compactions: 1\.$/);
    expect(lastUserText(h.fake.requests[3]!.body)).toContain('keep the numbers');
    h.fake.script({ text: 'SECOND SUMMARY' });
    const result: any = await h.client.request('sessions.compact', { key: 'main' });
    expect(result).toMatchObject({ ok: true, compacted: expect.any(Boolean) });
  });
});

describe('auth profiles and failover', () => {
  function writeProfiles(h: AgentHarness, profiles: Record<string, unknown>, order?: Record<string, string[]>) {
    const dir = join(h.gw.stateDir, 'agents', 'main', 'agent');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'auth-profiles.json'),
      JSON.stringify({ version: 1, profiles, ...(order ? { order } : {}) }),
    );
  }

  it('a rate limit rotates at once to the next free profile; the (profile, model) cools down 1 min and the next run skips it', async () => {
    harness = await startAgent({ noConfigKey: true, fake: { apiKeys: ['key-a', 'key-b'] } });
    const h = harness;
    writeProfiles(
      h,
      { 'openai:a': { provider: 'openai', key: 'key-a' }, 'openai:b': { provider: 'openai', key: 'key-b' } },
      { openai: ['openai:a', 'openai:b'] },
    );
    h.fake.scriptForKey('key-a', { error: { status: 429, message: 'Rate limit reached', type: 'rate_limit_error' } });
    h.fake.script({ text: 'answered by b' }, { text: 'b again' });
    const before = Date.now();
    const { final } = await runAgent(h.client, { message: 'hi' });
    expect(final).toMatchObject({ status: 'ok', summary: 'answered by b' });
    expect(h.fake.requests.map((request) => request.apiKey)).toEqual(['key-a', 'key-b']);
    const stored = JSON.parse(
      readFileSync(join(h.gw.stateDir, 'agents', 'main', 'agent', 'auth-profiles.json'), 'utf8'),
    );
    // The cooldown is the (profile, model) pair's: another model on key-a is still free.
    const cooled = stored.usageStats['openai:a'].models['gpt-4.1'];
    expect(cooled).toMatchObject({ lastFailureKind: 'rate_limit', errorCount: 1 });
    expect(stored.usageStats['openai:a'].cooldownUntil).toBeUndefined();
    expect(cooled.cooldownUntil - before).toBeGreaterThanOrEqual(60_000);
    expect(cooled.cooldownUntil - Date.now()).toBeLessThanOrEqual(60_000);
    await runAgent(h.client, { message: 'again' });
    expect(h.fake.requests.map((request) => request.apiKey)).toEqual(['key-a', 'key-b', 'key-b']);
  });

  it('when every key of the primary fails, the fallback model answers', async () => {
    harness = await startAgent({
      noConfigKey: true,
      config: {
        agents: { defaults: { model: { primary: 'openai/gpt-4.1', fallbacks: ['anthropic/claude-sonnet-4-5'] } } },
        models: { providers: { openai: { apiKey: 'wrong-key' }, anthropic: { apiKey: 'sk-ant-good' } } },
      },
      fake: { apiKeys: ['sk-ant-good'] },
    });
    const h = harness;
    h.fake.script({ text: 'anthropic to the rescue' });
    const { final } = await runAgent(h.client, { message: 'hi' });
    expect(final).toMatchObject({
      status: 'ok',
      summary: 'anthropic to the rescue',
      result: { provider: 'anthropic' },
    });
    expect(h.fake.requests.map((request) => request.api)).toEqual(['openai-chat', 'anthropic']);
  });

  it('no usable model gives an error that names what was tried', async () => {
    harness = await startAgent({ provider: 'anthropic', noConfigKey: true });
    const { final } = await runAgent(harness.client, { message: 'hi' });
    expect(final.status).toBe('error');
    expect(final.error).toMatch(
      /no API key for anthropic: set ANTHROPIC_API_KEY, models.providers.anthropic.apiKey, or add a profile to agents\/main\/agent\/auth-profiles.json/,
    );
    expect(harness.fake.requests).toHaveLength(0);
  });

  it('an OpenAI-compatible local server (custom baseUrl) needs no key', async () => {
    harness = await startAgent({ noConfigKey: true });
    harness.fake.script({ text: 'hello from a local model' });
    const { final } = await runAgent(harness.client, { message: 'hi' });
    expect(final).toMatchObject({ status: 'ok', summary: 'hello from a local model' });
    expect(harness.fake.requests[0]!.headers.authorization).toBeUndefined();
  });
});

describe('sessions methods', () => {
  it("sessions.patch needs OpenClaw's scopes; archive hides a session from lists until restored", async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ text: 'one' }, { text: 'two' });
    await runAgent(h.client, { message: 'hello', sessionKey: 'agent:main:scratch' });
    await runAgent(h.client, { message: 'hello', sessionKey: 'agent:main:main' });
    const writer = await client(h.gw.url, { scopes: ['operator.read', 'operator.write'] });
    try {
      // Organising a session is write; queue and delivery overrides stay admin.
      expect(
        await writer.request<any>('sessions.patch', { key: 'agent:main:scratch', label: 'Scratch' }),
      ).toMatchObject({
        entry: { label: 'Scratch' },
      });
      await expect(writer.request('sessions.patch', { key: 'agent:main:scratch', sendPolicy: 'deny' })).rejects.toThrow(
        'missing scope: operator.admin (to set sendPolicy)',
      );
      const [row] = (await writer.request<any>('sessions.list', { search: 'scratch' })).sessions;
      expect(row).toMatchObject({ key: 'agent:main:scratch', archived: false });
      await expect(
        writer.request('sessions.patch', { key: 'agent:main:scratch', archived: true, expectedSessionId: 'other' }),
      ).rejects.toThrow(/was reset since it was listed\); nothing changed/);
      const archived = await writer.request<any>('sessions.patch', {
        key: 'agent:main:scratch',
        archived: true,
        expectedSessionId: row.sessionId,
      });
      expect(archived.entry.archivedAt).toEqual(expect.any(Number));
      await expect(writer.request('sessions.patch', { key: 'agent:main:main', archived: true })).rejects.toThrow(
        /cannot archive agent:main:main: it is agent "main"'s main session/,
      );
      const keys = async (params: Record<string, unknown>) =>
        (await writer.request<any>('sessions.list', params)).sessions.map((s: { key: string }) => s.key).sort();
      expect(await keys({})).toEqual(['agent:main:main']);
      expect(await keys({ archived: true })).toEqual(['agent:main:scratch']);
      expect(await keys({ archived: 'all' })).toEqual(['agent:main:main', 'agent:main:scratch']);
      await writer.request('sessions.patch', { key: 'agent:main:scratch', archived: false });
      expect(await keys({})).toEqual(['agent:main:main', 'agent:main:scratch']);
      await writer.request('sessions.patch', { key: 'agent:main:scratch', archived: true });
      expect(
        await h.client.request('sessions.delete', { key: 'agent:main:scratch', archivedOnly: true }),
      ).toMatchObject({ deleted: true });
      expect(await keys({ archived: 'all' })).toEqual(['agent:main:main']);
    } finally {
      await writer.close();
    }
  }, 60_000);

  it('list, preview, patch, reset, delete', async () => {
    harness = await startAgent();
    const h = harness;
    h.fake.script({ text: 'hello back' });
    await runAgent(h.client, { message: 'hello there' });
    const listed: any = await h.client.request('sessions.list', {});
    expect(listed.sessions).toHaveLength(1);
    expect(listed.sessions[0]).toMatchObject({
      key: 'agent:main:main',
      agentId: 'main',
      inputTokens: expect.any(Number),
      outputTokens: expect.any(Number),
      totalTokens: expect.any(Number),
      contextTokens: expect.any(Number),
      hasActiveRun: false,
    });
    const preview: any = await h.client.request('sessions.preview', { keys: ['agent:main:main', 'agent:main:nope'] });
    expect(preview.previews[0]).toMatchObject({
      key: 'agent:main:main',
      status: 'ok',
      items: [
        { role: 'user', text: 'hello there' },
        { role: 'assistant', text: 'hello back' },
      ],
    });
    expect(preview.previews[1]).toMatchObject({ status: 'missing' });
    const patched: any = await h.client.request('sessions.patch', {
      key: 'main',
      thinkingLevel: 'high',
      label: 'Home',
      queueMode: 'steer',
    });
    expect(patched.entry).toMatchObject({ thinkingLevel: 'high', label: 'Home', queue: { mode: 'steer' } });
    await expect(h.client.request('sessions.patch', { key: 'main', thinkingLevel: 'extreme' })).rejects.toThrow(
      /thinkingLevel/,
    );
    const oldId = patched.entry.sessionId;
    const reset: any = await h.client.request('sessions.reset', { key: 'main' });
    expect(reset.entry.sessionId).not.toBe(oldId);
    expect(reset.entry).toMatchObject({ thinkingLevel: 'high', label: 'Home' });
    expect(h.hooks.filter((record) => record.hook === 'session_end')).toHaveLength(1);
    // OpenClaw's guards: the listed session id must still be current, the agent must be the key's.
    await expect(
      h.client.request('sessions.delete', { key: 'agent:main:main', expectedSessionId: oldId }),
    ).rejects.toThrow(/was reset since it was listed\); nothing deleted/);
    await expect(h.client.request('sessions.delete', { key: 'agent:main:main', agentId: 'work' })).rejects.toThrow(
      /belongs to agent "main"/,
    );
    await expect(h.client.request('sessions.delete', { key: 'agent:main:main', archivedOnly: true })).rejects.toThrow(
      /is not archived; archive it first/,
    );
    const deleted: any = await h.client.request('sessions.delete', {
      key: 'agent:main:main',
      agentId: 'main',
      expectedSessionId: reset.entry.sessionId,
      deleteTranscript: true,
    });
    expect(deleted).toMatchObject({ ok: true, deleted: true, archived: [] });
    expect((await h.client.request<any>('sessions.list', {})).sessions).toHaveLength(0);
    const models: any = await h.client.request('models.list', {});
    expect(models.default).toBe('openai/gpt-4.1');
  });
});
