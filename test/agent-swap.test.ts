/**
 * The agentLoop slot swaps only the turn. With a third-party loop of a few dozen lines
 * (test/fixtures/mini-loop) in the slot, everything around the turn still works: chat.send
 * and chat.history, sessions.list, slash commands and the OpenAI-compatible endpoint — and
 * every message-path hook fires, though the loop fires none itself, so heartbeat system
 * events reach its prompt.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, runAgent, startAgent, until, type AgentHarness } from './agent-helpers.js';
import { REPO } from './helpers.js';
import { MESSAGE_HOOKS } from '../kernel/index.js';

const MINI_LOOP = join(REPO, 'test', 'fixtures', 'mini-loop');
const TOKEN = 'swap-test-gateway-token';
let h: AgentHarness;

beforeAll(async () => {
  h = await startAgent({
    plugins: [MINI_LOOP, join(REPO, 'plugins', 'heartbeat')],
    config: { plugins: { slots: { agentLoop: 'mini-loop' } } },
    gateway: { auth: { mode: 'token', token: TOKEN }, http: { endpoints: { chatCompletions: { enabled: true } } } },
  });
});
afterAll(() => h.stop());

const lastUserText = (body: unknown) =>
  JSON.stringify(
    (body as { messages: Array<{ role: string; content: unknown }> }).messages
      .filter((message) => message.role === 'user')
      .at(-1)?.content,
  );
const toolResultsOf = (body: unknown) =>
  (body as { messages: Array<{ role: string; content: unknown }> }).messages
    .filter((message) => message.role === 'tool')
    .map((message) => String(message.content));

function systemPromptOf(body: unknown): string {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  return String(messages.find((message) => message.role === 'system')?.content ?? '');
}

describe('a swapped agent loop', () => {
  it('is a small plugin (≤ 60 lines), and it is the one that runs', async () => {
    expect(readFileSync(join(MINI_LOOP, 'index.ts'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(60);
    h.fake.script({ text: 'Hello from the model.' });
    const { final } = await runAgent(h.client, { message: 'hi there' });
    expect(final.summary ?? final.result?.text).toBeDefined();
    expect(systemPromptOf(h.fake.requests.at(-1)!.body)).toBe('You are mini-loop.');
    expect(h.gw.kernel.plugins.get('mini-loop')!.status).toBe('active');
    expect(h.gw.kernel.plugins.get('agent-loop')!.status).not.toBe('active');
  });

  it('keeps chat.send and chat.history', async () => {
    h.fake.script({ text: 'Answer through chat.send.' });
    const sent: any = await h.client.request('chat.send', {
      sessionKey: 'main',
      message: 'via chat',
      idempotencyKey: idem(),
    });
    expect(sent).toMatchObject({ runId: expect.any(String) });
    await until(
      () =>
        h.events.some(
          (frame) =>
            frame.event === 'chat' &&
            (frame.payload as any).runId === sent.runId &&
            (frame.payload as any).state === 'final',
        ),
      5000,
      'the final chat event',
    );
    const final = h.events.find(
      (frame) =>
        frame.event === 'chat' &&
        (frame.payload as any).runId === sent.runId &&
        (frame.payload as any).state === 'final',
    )!;
    expect(JSON.stringify(final.payload)).toContain('Answer through chat.send.');
    const history: any = await h.client.request('chat.history', { sessionKey: 'main' });
    const texts = history.messages.map(
      (message: any) =>
        `${message.role}:${typeof message.content === 'string' ? message.content : message.content.map((part: any) => part.text ?? '').join('')}`,
    );
    expect(texts).toEqual(
      expect.arrayContaining(['user:hi there', 'user:via chat', 'assistant:Answer through chat.send.']),
    );
    // The history the mini loop sent back to the model came from the session's transcript.
    expect(JSON.stringify(h.fake.requests.at(-1)!.body)).toContain('hi there');
  });

  it('keeps sessions.list and models.list', async () => {
    const listed: any = await h.client.request('sessions.list', {});
    expect(listed.sessions.map((session: any) => session.key)).toContain('agent:main:main');
    const models: any = await h.client.request('models.list', {});
    expect(models.default).toBe('openai/gpt-4.1');
  });

  it('keeps slash commands (answered without a model call)', async () => {
    const before = h.fake.requests.length;
    const { final } = await runAgent(h.client, { message: '/status' });
    expect(JSON.stringify(final)).toMatch(/Model/);
    const stop = await runAgent(h.client, { message: '/stop' });
    expect(JSON.stringify(stop.final)).toMatch(/Nothing is running|Stopped/);
    expect(h.fake.requests.length).toBe(before);
  });

  it('keeps /v1/chat/completions', async () => {
    h.fake.script({ text: 'Answer over HTTP.' });
    const response = await fetch(`http://127.0.0.1:${h.gw.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claw', messages: [{ role: 'user', content: 'over http' }] }),
    });
    expect(response.status).toBe(200);
    const body: any = await response.json();
    expect(body.choices[0].message.content).toBe('Answer over HTTP.');
    expect(systemPromptOf(h.fake.requests.at(-1)!.body)).toBe('You are mini-loop.');
  });

  it('keeps all 13 message-path hooks for a turn with a tool call', async () => {
    const from = h.hooks.length;
    h.fake.script(
      { toolCalls: [{ name: 'write', arguments: { path: 'swap/hooked.txt', content: 'written by mini-loop' } }] },
      { text: 'Wrote it.' },
    );
    const { final } = await runAgent(h.client, { message: 'write a file' });
    expect(final).toMatchObject({ status: 'ok', summary: 'Wrote it.' });
    expect(readFileSync(join(h.workspace, 'swap', 'hooked.txt'), 'utf8')).toBe('written by mini-loop');
    await until(() => h.hooks.slice(from).some((record) => record.hook === 'message_sent'), 5000, 'message_sent');
    const fired = new Set(h.hooks.slice(from).map((record) => record.hook));
    expect(MESSAGE_HOOKS.filter((hook) => !fired.has(hook))).toEqual([]);
    expect(MESSAGE_HOOKS).toHaveLength(13);
    // before_message_write ran for each append: the user message, both replies and the tool result.
    const writes = h.hooks
      .slice(from)
      .filter((record) => record.hook === 'before_message_write' && record.detail !== 'delivery');
    expect(writes.map((record) => record.detail)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
  });

  it('puts a queued system event into its prompt, and drains it once the turn ended well', async () => {
    const queued: any = await h.client.request('system-event', {
      idempotencyKey: idem(),
      text: 'Deploy 7 finished',
      mode: 'next-heartbeat',
    });
    expect(queued).toMatchObject({ ok: true, event: { sessionKey: 'agent:main:main' } });
    h.fake.script({ text: 'Noted.' }, { text: 'Nothing new.' });
    await runAgent(h.client, { message: 'anything new?' });
    expect(lastUserText(h.fake.requests.at(-1)!.body)).toMatch(
      /System: \[[^\]]+\] Deploy 7 finished[\s\S]*anything new\?/,
    );
    await until(
      () => !readFileSync(join(h.gw.stateDir, 'system-events', 'queue.json'), 'utf8').includes('Deploy 7'),
      5000,
      'the event drained',
    );
    await runAgent(h.client, { message: 'and now?' });
    expect(lastUserText(h.fake.requests.at(-1)!.body)).not.toContain('Deploy 7');
  });

  it('runs no tool call of a reply cut at the token limit: each gets an error result', async () => {
    h.fake.script(
      { toolCalls: [{ name: 'write', arguments: { path: 'swap/cut.txt', content: 'half' } }], stopReason: 'length' },
      { text: 'I will keep it shorter.' },
    );
    const { final } = await runAgent(h.client, { message: 'write a long file' });
    expect(final).toMatchObject({ status: 'ok', summary: 'I will keep it shorter.' });
    expect(existsSync(join(h.workspace, 'swap', 'cut.txt'))).toBe(false);
    // The model was told (the session's earlier tool result comes first in the history).
    expect(toolResultsOf(h.fake.requests.at(-1)!.body).at(-1)).toMatch(/cut off at the output token limit/);
  });
});
