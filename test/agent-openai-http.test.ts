/** POST /v1/chat/completions on the gateway, called with the official `openai` npm client. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentHarness } from './agent-helpers.js';

const TOKEN = 'gateway-secret-token';
let h: AgentHarness;
let openai: OpenAI;

beforeAll(async () => {
  h = await startAgent({
    gateway: { auth: { mode: 'token', token: TOKEN }, http: { endpoints: { chatCompletions: { enabled: true } } } },
  });
  openai = new OpenAI({ baseURL: `http://127.0.0.1:${h.gw.port}/v1`, apiKey: TOKEN, maxRetries: 0 });
});
afterAll(() => h.stop());

describe('/v1/chat/completions', () => {
  it('answers a non-streaming request with an agent turn (tools included)', async () => {
    h.fake.script(
      { toolCalls: [{ name: 'write', arguments: { path: 'from-http.txt', content: 'via openai client' } }] },
      { text: 'Wrote it.' },
    );
    const completion = await openai.chat.completions.create({
      model: 'claw',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'write a file' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Wrote it.' });
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage!.total_tokens).toBeGreaterThan(0);
    // The system message reached the model as part of the system prompt.
    expect(JSON.stringify(h.fake.requests.at(-1)!.body)).toContain('Be brief.');
  });

  it('streams chunks as the model writes', async () => {
    h.fake.reset();
    h.fake.script({ text: 'Streaming through claw works.', chunkSize: 5 });
    const stream = await openai.chat.completions.create({
      model: 'claw:main',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.delta.content) pieces.push(choice.delta.content);
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    expect(pieces.join('')).toBe('Streaming through claw works.');
    expect(pieces.length).toBeGreaterThan(2);
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ total_tokens: expect.any(Number) });
  });

  async function streamedText(content: string): Promise<string> {
    const stream = await openai.chat.completions.create({
      model: 'claw',
      messages: [{ role: 'user', content }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    return text;
  }

  it('streams text written before a tool call once, and the answer once, a paragraph apart', async () => {
    h.fake.reset();
    h.fake.script(
      { text: 'Let me check.', toolCalls: [{ name: 'read', arguments: { path: 'missing.txt' } }] },
      { text: 'The answer is 42.', chunkSize: 4 },
    );
    expect(await streamedText('what is it?')).toBe('Let me check.\n\nThe answer is 42.');
  });

  it('never streams the silent token, not even its first characters', async () => {
    h.fake.reset();
    h.fake.script(
      { text: 'Looking.', toolCalls: [{ name: 'read', arguments: { path: 'missing.txt' } }] },
      { text: 'NO_REPLY', chunkSize: 3 },
    );
    expect(await streamedText('anything?')).toBe('Looking.');
    h.fake.script({ text: 'NO_REPLY', chunkSize: 2 });
    expect(await streamedText('quiet')).toBe('');
  });

  it('keeps a conversation per `user`, and gives a fresh session to requests without one', async () => {
    h.fake.reset();
    h.fake.script({ text: 'first' }, { text: 'second' });
    await openai.chat.completions.create({
      model: 'claw',
      user: 'ada',
      messages: [{ role: 'user', content: 'remember: blue' }],
    });
    await openai.chat.completions.create({
      model: 'claw',
      user: 'ada',
      messages: [{ role: 'user', content: 'what colour?' }],
    });
    expect(JSON.stringify(h.fake.requests[1]!.body)).toContain('remember: blue');
    const sessions: any = await h.client.request('sessions.list', {});
    expect(sessions.sessions.some((row: { key: string }) => row.key === 'agent:main:openai-user:ada')).toBe(true);
  });

  it('is behind gateway auth', async () => {
    const stranger = new OpenAI({ baseURL: `http://127.0.0.1:${h.gw.port}/v1`, apiKey: 'wrong', maxRetries: 0 });
    await expect(
      stranger.chat.completions.create({ model: 'claw', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('rejects bad requests with an OpenAI-shaped error that names the problem', async () => {
    await expect(openai.chat.completions.create({ model: 'claw', messages: [] })).rejects.toThrow(
      /messages must be a non-empty array/,
    );
    await expect(
      openai.chat.completions.create({ model: 'claw', messages: [{ role: 'assistant', content: 'hi' }] }),
    ).rejects.toThrow(/last message must have role "user"/);
    const raw = await fetch(`http://127.0.0.1:${h.gw.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as any).error.message).toMatch(/not valid JSON/);
  });

  it('refuses an agent that is not configured instead of creating it', async () => {
    h.fake.reset();
    await expect(
      openai.chat.completions.create({ model: 'claw:wrok', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toThrow(/unknown agent "wrok": the configured agent is main/);
    const raw = await fetch(`http://127.0.0.1:${h.gw.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-openclaw-agent-id': 'wrok' },
      body: JSON.stringify({ model: 'claw', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as any).error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringContaining('unknown agent "wrok"'),
    });
    expect(h.fake.requests).toHaveLength(0);
    expect(existsSync(join(h.gw.stateDir, 'agents', 'wrok'))).toBe(false);
  });

  it('reports a failed run as an error, not an empty answer', async () => {
    h.fake.reset();
    h.fake.script({ error: { status: 400, message: 'bad thing', type: 'invalid_request_error' } });
    await expect(
      openai.chat.completions.create({ model: 'claw', messages: [{ role: 'user', content: 'fail' }] }),
    ).rejects.toThrow(/bad thing/);
  });
});
