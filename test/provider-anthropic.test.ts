import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ChatMessage,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
  type SseEvent,
} from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { tokenPlan } from '../plugins/anthropic/models.js';
import { parseMessagesStream } from '../plugins/anthropic/stream.js';
import { fakeThinkingSignature, startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { REPO } from './helpers.js';
import { collectFrom, failure, joined, last, toolCalls } from './provider-helpers.js';

const PLUGIN = join(REPO, 'plugins', 'anthropic');
const MODEL = 'claude-sonnet-4-20250514';
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

let fake: FakeLlm;
let kernel: TestKernel;
let provider: ModelProvider;

beforeAll(async () => {
  fake = await startFakeLlm();
  kernel = await createTestKernel({ plugins: [PLUGIN] });
  provider = await kernel.capabilities.get('provider', 'anthropic');
});

afterAll(async () => {
  await kernel?.dispose();
  await fake?.close();
});

beforeEach(() => fake.reset());

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: MODEL,
    messages: [{ role: 'user', content: 'Hi' }],
    ...overrides,
    endpoint: { baseUrl: fake.anthropicBaseUrl, apiKey: 'sk-ant-test', ...overrides.endpoint },
  };
}

async function collect(req: ModelRequest, signal?: AbortSignal): Promise<ModelStreamEvent[]> {
  return collectFrom(provider.stream(req, { signal }));
}

const signatureOf = (events: ModelStreamEvent[]) =>
  events.flatMap((event) => (event.type === 'thinking_delta' && event.signature ? [event.signature] : [])).join('');

async function* sse(...payloads: Array<Record<string, unknown>>): AsyncGenerator<SseEvent> {
  for (const payload of payloads) yield { event: String(payload.type), data: JSON.stringify(payload) };
}

describe('provider-anthropic', () => {
  it('registers the anthropic provider with its keys and a model list', async () => {
    expect(provider.id).toBe('anthropic');
    expect(provider.envKeys).toEqual(['ANTHROPIC_API_KEY']);
    expect(provider.requiresKey).toBe(true);
    const models = await provider.models!();
    for (const prefix of ['claude-sonnet-4-2', 'claude-opus-4-2', 'claude-3-5-haiku']) {
      const model = models.find((info) => info.id.startsWith(prefix));
      expect(model?.contextWindow).toBe(200_000);
      expect(model?.maxTokens).toBeGreaterThan(0);
    }
    expect(models.find((info) => info.id.startsWith('claude-3-5-haiku'))?.reasoning).toBe(false);
  });

  it('streams text and reports usage with cache reads and writes', async () => {
    fake.script({
      text: 'Hello from Claude, in pieces.',
      chunkSize: 5,
      usage: { input: 20, output: 9, cacheRead: 300, cacheWrite: 40 },
    });
    const events = await collect(request({ systemPrompt: 'You are terse.' }));
    expect(events.filter((event) => event.type === 'text_delta').length).toBeGreaterThan(3);
    expect(joined(events, 'text_delta')).toBe('Hello from Claude, in pieces.');
    expect(last(events)).toEqual({
      type: 'done',
      stopReason: 'stop',
      usage: { input: 20, output: 9, cacheRead: 300, cacheWrite: 40 },
    });

    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toMatchObject({ model: MODEL, stream: true, max_tokens: 8192 });
    expect(sent.body.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }]);
    expect(sent.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
    ]);
    expect(sent.body.thinking).toBeUndefined();
  });

  it('assembles a tool_use input streamed as partial JSON into one tool_call', async () => {
    const args = { city: 'Paris', detail: 'long enough that the JSON is split into many fragments' };
    fake.script({
      text: 'Checking.',
      toolCalls: [{ id: 'toolu_01abc', name: 'get_weather', arguments: args }],
      chunkSize: 3,
    });
    const events = await collect(request({ tools: [WEATHER_TOOL] }));
    expect(toolCalls(events)).toEqual([{ type: 'tool_call', id: 'toolu_01abc', name: 'get_weather', arguments: args }]);
    expect(last(events)).toMatchObject({ type: 'done', stopReason: 'toolUse' });
    expect(fake.requests[0]!.body.tools).toEqual([
      { name: 'get_weather', description: WEATHER_TOOL.description, input_schema: WEATHER_TOOL.parameters },
    ]);
  });

  it('emits two tool calls from one turn, in order', async () => {
    fake.script({
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'get_weather', arguments: { city: 'Lima' } },
      ],
    });
    const calls = toolCalls(await collect(request({ tools: [WEATHER_TOOL] })));
    expect(calls.map((call) => call.arguments)).toEqual([{ city: 'Paris' }, { city: 'Lima' }]);
    expect(calls.every((call) => call.id.startsWith('toolu_'))).toBe(true);
    expect(calls[0]!.id).not.toBe(calls[1]!.id);
  });

  it('enables thinking with a budget by level, streams it, and passes the signature on', async () => {
    fake.script({ thinking: 'Weigh the options first.', text: 'Option B.' });
    const events = await collect(request({ thinking: 'high', temperature: 0.5 }));
    expect(joined(events, 'thinking_delta')).toBe('Weigh the options first.');
    expect(joined(events, 'text_delta')).toBe('Option B.');
    expect(signatureOf(events)).toBe(fakeThinkingSignature('Weigh the options first.'));
    const body = fake.requests[0]!.body;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 32_000 });
    expect(body.max_tokens).toBeGreaterThan(32_000);
    // Thinking only runs at the default temperature.
    expect(body.temperature).toBeUndefined();
  });

  it('keeps the budget below max_tokens and within the model output limit', () => {
    expect(tokenPlan(MODEL, undefined, 'minimal').budget).toBe(1024);
    expect(tokenPlan(MODEL, undefined, 'low').budget).toBe(4096);
    expect(tokenPlan(MODEL, undefined, 'medium').budget).toBe(10_000);
    for (const level of ['minimal', 'low', 'medium', 'high'] as const) {
      for (const model of [MODEL, 'claude-opus-4-20250514', 'claude-opus-4-1', 'claude-future-9']) {
        const plan = tokenPlan(model, undefined, level);
        expect(plan.budget).toBeGreaterThanOrEqual(1024);
        expect(plan.budget!).toBeLessThan(plan.maxTokens);
      }
    }
    expect(tokenPlan('claude-opus-4-20250514', undefined, 'high').maxTokens).toBe(32_000);
    const tight = tokenPlan(MODEL, 2000, 'high');
    expect(tight.maxTokens).toBe(2000);
    expect(tight.budget).toBeLessThan(2000);
    expect(tokenPlan(MODEL, 1000, 'high').budget).toBeUndefined();
    expect(tokenPlan('claude-3-5-haiku-latest', undefined, 'high')).toEqual({ maxTokens: 8192 });
    expect(tokenPlan(MODEL, 1234, undefined)).toEqual({ maxTokens: 1234 });
  });

  it('sends a thinking + tool_use turn back with its signature, and the result in a user message', async () => {
    fake.script(
      { thinking: 'I need the weather tool.', toolCalls: [{ name: 'get_weather', arguments: { city: 'Rome' } }] },
      { text: 'Sunny in Rome.' },
    );
    const first = await collect(request({ thinking: 'low', tools: [WEATHER_TOOL] }));
    const [call] = toolCalls(first);
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Weather in Rome?' },
      {
        role: 'assistant',
        provider: 'anthropic',
        content: [
          { type: 'thinking', thinking: joined(first, 'thinking_delta'), signature: signatureOf(first) },
          { type: 'toolCall', id: call!.id, name: call!.name, arguments: call!.arguments },
        ],
      },
      { role: 'toolResult', toolCallId: call!.id, toolName: 'get_weather', content: [{ type: 'text', text: '24°C' }] },
    ];
    // The fake checks the signature and that the continued turn opens with its thinking.
    const second = await collect(request({ thinking: 'low', tools: [WEATHER_TOOL], messages }));
    expect(joined(second, 'text_delta')).toBe('Sunny in Rome.');
    const body = fake.requests[1]!.body;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Rome?' }] },
      {
        role: 'assistant',
        content: [
          {
            type: 'thinking',
            thinking: 'I need the weather tool.',
            signature: fakeThinkingSignature('I need the weather tool.'),
          },
          { type: 'tool_use', id: call!.id, name: 'get_weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: call!.id,
            content: [{ type: 'text', text: '24°C' }],
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ]);
  });

  it('continues a tool cycle without thinking when the turn kept no signed thinking', async () => {
    fake.script({ text: 'Done.' });
    const messages: ChatMessage[] = [
      { role: 'user', content: 'List files' },
      {
        role: 'assistant',
        provider: 'openai',
        content: [
          { type: 'thinking', thinking: 'from another provider', signature: 'not-anthropic' },
          { type: 'text', text: 'Listing.' },
          { type: 'toolCall', id: 'call_x', name: 'ls', arguments: {} },
        ],
      },
      { role: 'toolResult', toolCallId: 'call_x', toolName: 'ls', content: [{ type: 'text', text: 'a.txt' }] },
    ];
    const events = await collect(request({ thinking: 'medium', messages }));
    expect(joined(events, 'text_delta')).toBe('Done.');
    const body = fake.requests[0]!.body;
    expect(body.thinking).toBeUndefined();
    expect(body.messages[1].content).toEqual([
      { type: 'text', text: 'Listing.' },
      { type: 'tool_use', id: 'call_x', name: 'ls', input: {} },
    ]);
  });

  it('merges consecutive results (and a following user note) into one user message', async () => {
    fake.script({ text: 'ok' });
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Two things' },
      {
        role: 'assistant',
        content: [
          { type: 'toolCall', id: 'toolu_a', name: 'screenshot', arguments: {} },
          { type: 'toolCall', id: 'toolu_b', name: 'ls', arguments: { path: '/' } },
        ],
      },
      {
        role: 'toolResult',
        toolCallId: 'toolu_a',
        toolName: 'screenshot',
        content: [{ type: 'image', data: PIXEL, mimeType: 'image/png' }],
      },
      {
        role: 'toolResult',
        toolCallId: 'toolu_b',
        toolName: 'ls',
        content: [{ type: 'text', text: 'permission denied' }],
        isError: true,
      },
      { role: 'user', content: 'Also, hurry.' },
    ];
    await collect(request({ messages }));
    const body = fake.requests[0]!.body;
    expect(body.messages).toHaveLength(3);
    expect(body.messages[2]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_a',
          content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL } }],
        },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_b',
          content: [{ type: 'text', text: 'permission denied' }],
          is_error: true,
        },
        { type: 'text', text: 'Also, hurry.', cache_control: { type: 'ephemeral' } },
      ],
    });
  });

  it('sends user images as base64 image blocks', async () => {
    fake.script({ text: 'A pixel.' });
    await collect(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', data: PIXEL, mimeType: 'image/png' },
              { type: 'text', text: 'What is it?' },
            ],
          },
        ],
      }),
    );
    expect(fake.requests[0]!.body.messages[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL } },
      { type: 'text', text: 'What is it?', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('rewrites foreign tool ids to the characters Anthropic accepts, on both call and result', async () => {
    fake.script({ text: 'ok' });
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'toolCall', id: 'functions.ls:0', name: 'ls', arguments: {} }] },
      { role: 'toolResult', toolCallId: 'functions.ls:0', toolName: 'ls', content: [{ type: 'text', text: 'x' }] },
    ];
    await collect(request({ messages }));
    const body = fake.requests[0]!.body;
    expect(body.messages[1].content[0].id).toBe('functions_ls_0');
    expect(body.messages[2].content[0].tool_use_id).toBe('functions_ls_0');
  });

  it('maps max_tokens to stopReason length and passes maxTokens through', async () => {
    fake.script({ text: 'cut', stopReason: 'length' });
    const events = await collect(request({ maxTokens: 5 }));
    expect(last(events)).toMatchObject({ type: 'done', stopReason: 'length' });
    expect(fake.requests[0]!.body.max_tokens).toBe(5);
  });

  it.each([
    [{ status: 401 }, 'auth'],
    [{ status: 403 }, 'auth'],
    [{ status: 402 }, 'billing'],
    [{ status: 400, message: 'Your credit balance is too low to access the Anthropic API.' }, 'billing'],
    [{ status: 429 }, 'rate_limit'],
    [{ status: 500 }, 'overloaded'],
    [{ status: 529 }, 'overloaded'],
    [{ status: 400, message: 'messages.0: bad' }, 'invalid_request'],
  ])('maps HTTP error %j to kind %s', async (error, kind) => {
    fake.script({ error });
    const caught = await failure(collect(request()));
    expect(caught.kind).toBe(kind);
    expect(caught.status).toBe(error.status);
    expect(caught.provider).toBe('anthropic');
  });

  it('carries retry-after on a rate limit', async () => {
    fake.script({ error: { status: 429, retryAfterSeconds: 30 } });
    const caught = await failure(collect(request()));
    expect(caught.kind).toBe('rate_limit');
    expect(caught.retryAfterMs).toBe(30_000);
  });

  it('maps "prompt is too long" to context_overflow', async () => {
    fake.script({ contextOverflow: true });
    expect((await failure(collect(request()))).kind).toBe('context_overflow');
  });

  it('maps an error event inside the stream', async () => {
    fake.script({ text: 'so far', streamError: { type: 'overloaded_error', message: 'Overloaded' } });
    const events: ModelStreamEvent[] = [];
    const caught = await failure(
      (async () => {
        for await (const event of provider.stream(request(), {})) events.push(event);
      })(),
    );
    expect(caught.kind).toBe('overloaded');
    expect(joined(events, 'text_delta')).toBe('so far');
  });

  it('times out a hung stream after endpoint.timeoutMs', async () => {
    fake.script({ hang: true });
    const started = Date.now();
    const caught = await failure(collect(request({ endpoint: { timeoutMs: 200 } })));
    expect(caught.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reports a caller abort as aborted', async () => {
    fake.script({ hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect((await failure(collect(request({ endpoint: { timeoutMs: 10_000 } }), controller.signal))).kind).toBe(
      'aborted',
    );
  });

  it('accepts a base URL that already ends in /v1 and adds configured headers', async () => {
    fake.script({ text: 'ok' });
    await collect(
      request({
        endpoint: {
          baseUrl: `${fake.anthropicBaseUrl}/v1/`,
          headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
        },
      }),
    );
    expect(fake.requests[0]!.path).toBe('/v1/messages');
    expect(fake.requests[0]!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(fake.unhandled).toEqual([]);
  });

  describe('stream parsing (cases the fake does not produce)', () => {
    const start = { type: 'message_start', message: { usage: { input_tokens: 3, output_tokens: 1 } } };

    it('turns malformed tool input JSON into an invalid_request error', async () => {
      const events = sse(
        start,
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 'toolu_1', name: 'ls', input: {} },
        },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"path": "/tm' } },
        { type: 'content_block_stop', index: 0 },
      );
      const caught = await failure(collectFrom(parseMessagesStream(events, 'anthropic')));
      expect(caught.kind).toBe('invalid_request');
    });

    it('uses the start block input when no JSON is streamed, and later usage counts win', async () => {
      const events = await collectFrom(
        parseMessagesStream(
          sse(
            start,
            {
              type: 'content_block_start',
              index: 0,
              content_block: { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
            },
            { type: 'content_block_stop', index: 0 },
            {
              type: 'message_delta',
              delta: { stop_reason: 'tool_use' },
              usage: { input_tokens: 4, output_tokens: 12, cache_read_input_tokens: 0 },
            },
            { type: 'message_stop' },
          ),
          'anthropic',
        ),
      );
      expect(events).toEqual([
        { type: 'tool_call', id: 'toolu_2', name: 'now', arguments: {} },
        { type: 'done', stopReason: 'toolUse', usage: { input: 4, output: 12 } },
      ]);
    });

    it('fails when the stream ends before the message does (a transport failure, retried like a timeout)', async () => {
      const events = sse(start, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      expect((await failure(collectFrom(parseMessagesStream(events, 'anthropic')))).kind).toBe('timeout');
    });
  });
});
