/**
 * The agentLoop slot swaps only the turn. With a third-party loop of a few dozen lines
 * (test/fixtures/mini-loop) in the slot, everything around the turn still works: chat.send
 * and chat.history, sessions.list, slash commands and the OpenAI-compatible endpoint.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, runAgent, startAgent, until, type AgentHarness } from './agent-helpers.js';
import { REPO } from './helpers.js';

const MINI_LOOP = join(REPO, 'test', 'fixtures', 'mini-loop');
const TOKEN = 'swap-test-gateway-token';
let h: AgentHarness;

beforeAll(async () => {
  h = await startAgent({
    plugins: [MINI_LOOP],
    config: { plugins: { slots: { agentLoop: 'mini-loop' } } },
    gateway: { auth: { mode: 'token', token: TOKEN }, http: { endpoints: { chatCompletions: { enabled: true } } } },
  });
});
afterAll(() => h.stop());

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
    const sent: any = await h.client.request('chat.send', { sessionKey: 'main', message: 'via chat', idempotencyKey: idem() });
    expect(sent).toMatchObject({ runId: expect.any(String) });
    await until(() => h.events.some((frame) => frame.event === 'chat' && (frame.payload as any).runId === sent.runId && (frame.payload as any).state === 'final'), 5000, 'the final chat event');
    const final = h.events.find((frame) => frame.event === 'chat' && (frame.payload as any).runId === sent.runId && (frame.payload as any).state === 'final')!;
    expect(JSON.stringify(final.payload)).toContain('Answer through chat.send.');
    const history: any = await h.client.request('chat.history', { sessionKey: 'main' });
    const texts = history.messages.map((message: any) => `${message.role}:${typeof message.content === 'string' ? message.content : message.content.map((part: any) => part.text ?? '').join('')}`);
    expect(texts).toEqual(expect.arrayContaining(['user:hi there', 'user:via chat', 'assistant:Answer through chat.send.']));
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
});
