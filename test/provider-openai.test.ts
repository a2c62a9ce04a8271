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
import { chatBody } from '../plugins/openai/chat-request.js';
import { parseChatStream } from '../plugins/openai/chat-stream.js';
import { parseResponsesStream } from '../plugins/openai/responses-stream.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { REPO } from './helpers.js';
import { collectFrom, failure, joined, last, toolCalls } from './provider-helpers.js';

const PLUGIN = join(REPO, 'plugins', 'openai');
const APIS = ['chat', 'responses'] as const;
type Api = (typeof APIS)[number];

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string' } },
    required: ['city'],
  },
};

let fake: FakeLlm;
let kernel: TestKernel;
let provider: ModelProvider;

beforeAll(async () => {
  fake = await startFakeLlm();
  kernel = await createTestKernel({ plugins: [PLUGIN] });
  provider = await kernel.capabilities.get('provider', 'openai');
});

afterAll(async () => {
  await kernel?.dispose();
  await fake?.close();
});

beforeEach(() => fake.reset());

function request(api: Api, overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'gpt-4.1',
    messages: [{ role: 'user', content: 'Hi' }],
    ...overrides,
    endpoint: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-test', api, ...overrides.endpoint },
  };
}

async function collect(req: ModelRequest, signal?: AbortSignal): Promise<ModelStreamEvent[]> {
  return collectFrom(provider.stream(req, { signal }));
}

async function* sse(...payloads: unknown[]): AsyncGenerator<SseEvent> {
  for (const payload of payloads) yield { data: typeof payload === 'string' ? payload : JSON.stringify(payload) };
}

describe('provider-openai', () => {
  it('registers the openai provider with its keys and a model list', async () => {
    expect(provider.id).toBe('openai');
    expect(provider.envKeys).toEqual(['OPENAI_API_KEY']);
    expect(provider.requiresKey).toBe(true);
    const models = await provider.models!();
    for (const id of ['gpt-4.1', 'gpt-4o', 'o4-mini']) {
      const model = models.find((info) => info.id === id);
      expect(model?.contextWindow).toBeGreaterThan(0);
      expect(model?.maxTokens).toBeGreaterThan(0);
    }
    expect(models.find((info) => info.id === 'o4-mini')?.reasoning).toBe(true);
    expect(models.find((info) => info.id === 'gpt-4o')?.reasoning).toBe(false);
  });

  describe.each(APIS)('%s API', (api) => {
    it('streams text in deltas and finishes with usage', async () => {
      fake.script({ text: 'Hello there, general Kenobi.', chunkSize: 4, usage: { input: 12, output: 7 } });
      const events = await collect(request(api, { systemPrompt: 'Be brief.' }));
      const deltas = events.filter((event) => event.type === 'text_delta');
      expect(deltas.length).toBeGreaterThan(3);
      expect(joined(events, 'text_delta')).toBe('Hello there, general Kenobi.');
      expect(last(events)).toEqual({ type: 'done', stopReason: 'stop', usage: { input: 12, output: 7 } });
      expect(events.filter((event) => event.type === 'done')).toHaveLength(1);

      const [sent] = fake.requests;
      expect(sent!.headers.authorization).toBe('Bearer sk-test');
      expect(sent!.body.stream).toBe(true);
      if (api === 'chat') {
        expect(sent!.path).toBe('/v1/chat/completions');
        expect(sent!.body.stream_options).toEqual({ include_usage: true });
        expect(sent!.body.messages).toEqual([
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ]);
      } else {
        expect(sent!.path).toBe('/v1/responses');
        expect(sent!.body.instructions).toBe('Be brief.');
        expect(sent!.body.store).toBe(false);
        expect(sent!.body.input).toEqual([{ type: 'message', role: 'user', content: 'Hi' }]);
      }
    });

    it('reports cached prompt tokens as cacheRead, separate from input', async () => {
      fake.script({ text: 'ok', usage: { input: 100, output: 3, cacheRead: 60 } });
      const events = await collect(request(api));
      expect(last(events)).toEqual({
        type: 'done',
        stopReason: 'stop',
        usage: { input: 40, output: 3, cacheRead: 60 },
      });
    });

    it('assembles a tool call streamed in many pieces into one tool_call event', async () => {
      const args = { city: 'Paris', unit: 'celsius', note: 'a longer value so the JSON is split many times' };
      fake.script({
        text: 'Let me check.',
        toolCalls: [{ id: 'call_weather_1', name: 'get_weather', arguments: args }],
        chunkSize: 3,
      });
      const events = await collect(request(api, { tools: [WEATHER_TOOL] }));
      expect(toolCalls(events)).toEqual([
        { type: 'tool_call', id: 'call_weather_1', name: 'get_weather', arguments: args },
      ]);
      expect(joined(events, 'text_delta')).toBe('Let me check.');
      expect(last(events)).toMatchObject({ type: 'done', stopReason: 'toolUse' });
      // The call comes after the text it follows, and before done.
      const order = events.map((event) => event.type);
      expect(order.lastIndexOf('text_delta')).toBeLessThan(order.indexOf('tool_call'));

      const tools = fake.requests[0]!.body.tools;
      if (api === 'chat') {
        expect(tools).toEqual([
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: WEATHER_TOOL.description,
              parameters: WEATHER_TOOL.parameters,
            },
          },
        ]);
      } else {
        expect(tools).toEqual([
          {
            type: 'function',
            name: 'get_weather',
            description: WEATHER_TOOL.description,
            parameters: WEATHER_TOOL.parameters,
            strict: false,
          },
        ]);
      }
    });

    it('emits two tool calls from one turn, in order', async () => {
      fake.script({
        toolCalls: [
          { name: 'get_weather', arguments: { city: 'Paris' } },
          { name: 'get_weather', arguments: { city: 'Tokyo' } },
        ],
        chunkSize: 5,
      });
      const events = await collect(request(api, { tools: [WEATHER_TOOL] }));
      const calls = toolCalls(events);
      expect(calls).toMatchObject([
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'get_weather', arguments: { city: 'Tokyo' } },
      ]);
      const ids = calls.map((call) => (call as { id: string }).id);
      expect(ids[0]).toMatch(/^call_/);
      expect(new Set(ids).size).toBe(2);
      expect(last(events)).toMatchObject({ type: 'done', stopReason: 'toolUse' });
    });

    it('streams reasoning as thinking and asks reasoning models for an effort', async () => {
      fake.script({ thinking: 'The user greets me; greet back.', text: 'Hello!' });
      const events = await collect(request(api, { model: 'o4-mini', thinking: 'high', temperature: 0.3 }));
      expect(joined(events, 'thinking_delta')).toBe('The user greets me; greet back.');
      expect(joined(events, 'text_delta')).toBe('Hello!');
      const order = events.map((event) => event.type);
      expect(order.lastIndexOf('thinking_delta')).toBeLessThan(order.indexOf('text_delta'));
      const body = fake.requests[0]!.body;
      if (api === 'chat') expect(body.reasoning_effort).toBe('high');
      else expect(body.reasoning).toEqual({ effort: 'high', summary: 'auto' });
      // Reasoning models refuse a temperature.
      expect(body.temperature).toBeUndefined();
    });

    it('sends no reasoning effort to a model known not to reason, nor when thinking is off', async () => {
      fake.script({ text: 'a' }, { text: 'b' });
      await collect(request(api, { model: 'gpt-4o', thinking: 'high', temperature: 0.2 }));
      await collect(request(api, { model: 'o3', thinking: 'off' }));
      for (const sent of fake.requests) {
        expect(sent.body.reasoning_effort).toBeUndefined();
        expect(sent.body.reasoning).toBeUndefined();
      }
      expect(fake.requests[0]!.body.temperature).toBe(0.2);
    });

    it('sends an earlier tool call and its result back in the wire shape of the API', async () => {
      fake.script({ text: 'It is 18°C in Paris.' });
      const messages: ChatMessage[] = [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Need the tool.' },
            { type: 'text', text: 'Checking.' },
            { type: 'toolCall', id: 'call_abc', name: 'get_weather', arguments: { city: 'Paris' } },
          ],
        },
        {
          role: 'toolResult',
          toolCallId: 'call_abc',
          toolName: 'get_weather',
          content: [{ type: 'text', text: '18°C, clear' }],
        },
      ];
      const events = await collect(request(api, { messages, tools: [WEATHER_TOOL] }));
      expect(joined(events, 'text_delta')).toBe('It is 18°C in Paris.');
      const body = fake.requests[0]!.body;
      if (api === 'chat') {
        expect(body.messages).toEqual([
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [
              { id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_abc', content: '18°C, clear' },
        ]);
      } else {
        expect(body.input).toEqual([
          { type: 'message', role: 'user', content: 'Weather in Paris?' },
          { type: 'message', role: 'assistant', content: 'Checking.' },
          { type: 'function_call', call_id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call_output', call_id: 'call_abc', output: '18°C, clear' },
        ]);
      }
    });

    it('round-trips a streamed tool call into the next request', async () => {
      fake.script({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, { text: 'Cold.' });
      const first = await collect(request(api, { tools: [WEATHER_TOOL] }));
      const call = toolCalls(first)[0] as Extract<ModelStreamEvent, { type: 'tool_call' }>;
      const messages: ChatMessage[] = [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: [{ type: 'toolCall', id: call.id, name: call.name, arguments: call.arguments }] },
        { role: 'toolResult', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: '-3°C' }] },
      ];
      // The fake rejects histories whose calls and results do not pair up.
      const second = await collect(request(api, { messages, tools: [WEATHER_TOOL] }));
      expect(joined(second, 'text_delta')).toBe('Cold.');
      if (api === 'chat')
        expect(fake.requests[1]!.body.messages[1]).toEqual({
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: call.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          ],
        });
    });

    it('sends images in user messages as data URLs', async () => {
      fake.script({ text: 'A red pixel.' });
      const messages: ChatMessage[] = [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', data: PIXEL, mimeType: 'image/png' },
          ],
        },
      ];
      await collect(request(api, { messages }));
      const body = fake.requests[0]!.body;
      if (api === 'chat') {
        expect(body.messages[0]).toEqual({
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } },
          ],
        });
      } else {
        expect(body.input[0]).toEqual({
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: `data:image/png;base64,${PIXEL}`, detail: 'auto' },
          ],
        });
      }
    });

    it('moves images from tool results into a user message after the results', async () => {
      fake.script({ text: 'Nice screenshot.' });
      const messages: ChatMessage[] = [
        { role: 'user', content: 'Take two screenshots' },
        {
          role: 'assistant',
          content: [
            { type: 'toolCall', id: 'call_1', name: 'screenshot', arguments: {} },
            { type: 'toolCall', id: 'call_2', name: 'screenshot', arguments: {} },
          ],
        },
        {
          role: 'toolResult',
          toolCallId: 'call_1',
          toolName: 'screenshot',
          content: [{ type: 'image', data: PIXEL, mimeType: 'image/png' }],
        },
        {
          role: 'toolResult',
          toolCallId: 'call_2',
          toolName: 'screenshot',
          content: [{ type: 'text', text: 'second failed' }],
          isError: true,
        },
      ];
      await collect(request(api, { messages }));
      const body = fake.requests[0]!.body;
      const wire = api === 'chat' ? body.messages : body.input;
      const images = wire[wire.length - 1];
      expect(images.role).toBe('user');
      if (api === 'chat') {
        expect(wire).toHaveLength(5);
        expect(wire.slice(2, 4)).toEqual([
          { role: 'tool', tool_call_id: 'call_1', content: '(image attached below)' },
          { role: 'tool', tool_call_id: 'call_2', content: 'second failed' },
        ]);
        expect(images.content[1]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } });
      } else {
        // user, two function_call items, two outputs, then the images.
        expect(wire).toHaveLength(6);
        expect(wire.slice(3, 5)).toEqual([
          { type: 'function_call_output', call_id: 'call_1', output: '(image attached below)' },
          { type: 'function_call_output', call_id: 'call_2', output: 'second failed' },
        ]);
        expect(images.content[1]).toEqual({
          type: 'input_image',
          image_url: `data:image/png;base64,${PIXEL}`,
          detail: 'auto',
        });
      }
    });

    it('maps a truncated answer to stopReason length', async () => {
      fake.script({ text: 'This is cut', stopReason: 'length' });
      const events = await collect(request(api, { maxTokens: 3 }));
      expect(last(events)).toMatchObject({ type: 'done', stopReason: 'length' });
      const body = fake.requests[0]!.body;
      if (api === 'chat') expect(body.max_tokens).toBe(3);
      else expect(body.max_output_tokens).toBe(3);
    });

    it.each([
      [{ status: 401 }, 'auth'],
      [{ status: 403 }, 'auth'],
      [{ status: 402 }, 'billing'],
      [
        {
          status: 429,
          type: 'insufficient_quota',
          code: 'insufficient_quota',
          message: 'You exceeded your current quota, please check your plan and billing details.',
        },
        'billing',
      ],
      [{ status: 429 }, 'rate_limit'],
      [{ status: 500 }, 'overloaded'],
      [{ status: 503 }, 'overloaded'],
      [{ status: 529 }, 'overloaded'],
      [{ status: 400, message: "Invalid value for 'temperature'." }, 'invalid_request'],
    ])('maps HTTP error %j to kind %s', async (error, kind) => {
      fake.script({ error });
      const caught = await failure(collect(request(api)));
      expect(caught.kind).toBe(kind);
      expect(caught.status).toBe(error.status);
      expect(caught.provider).toBe('openai');
    });

    it('carries retry-after on a rate limit', async () => {
      fake.script({ error: { status: 429, retryAfterSeconds: 7 } });
      const caught = await failure(collect(request(api)));
      expect(caught.kind).toBe('rate_limit');
      expect(caught.retryAfterMs).toBe(7000);
    });

    it('maps a context overflow', async () => {
      fake.script({ contextOverflow: true });
      expect((await failure(collect(request(api)))).kind).toBe('context_overflow');
    });

    it('fails on an error reported inside the stream, after the content so far', async () => {
      fake.script({ text: 'partial', streamError: { message: 'The server had an error', type: 'server_error' } });
      const events: ModelStreamEvent[] = [];
      const caught = await failure(
        (async () => {
          for await (const event of provider.stream(request(api), {})) events.push(event);
        })(),
      );
      expect(caught.kind).toBe('overloaded');
      expect(joined(events, 'text_delta')).toBe('partial');
      expect(events.some((event) => event.type === 'done')).toBe(false);
    });

    it('times out a hung request after endpoint.timeoutMs', async () => {
      fake.script({ hang: true });
      const started = Date.now();
      const caught = await failure(collect(request(api, { endpoint: { timeoutMs: 200 } })));
      expect(caught.kind).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('bounds the whole stream with the timeout, not just the response headers', async () => {
      fake.script({ text: 'slow slow slow slow', chunkSize: 1, delayMs: 40 });
      const caught = await failure(collect(request(api, { endpoint: { timeoutMs: 300 } })));
      expect(caught.kind).toBe('timeout');
    });

    it('reports a caller abort as aborted, before and during the request', async () => {
      fake.script({ hang: true });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      expect((await failure(collect(request(api, { endpoint: { timeoutMs: 10_000 } }), controller.signal))).kind).toBe(
        'aborted',
      );

      const already = new AbortController();
      already.abort();
      const before = fake.requests.length;
      expect((await failure(collect(request(api), already.signal))).kind).toBe('aborted');
      expect(fake.requests.length).toBe(before);
    });

    it('reports an abort in the middle of a stream as aborted', async () => {
      fake.script({ text: 'one two three four five six', chunkSize: 2, delayMs: 30 });
      const controller = new AbortController();
      const events: ModelStreamEvent[] = [];
      const caught = await failure(
        (async () => {
          for await (const event of provider.stream(request(api), { signal: controller.signal })) {
            events.push(event);
            if (events.length === 2) controller.abort();
          }
        })(),
      );
      expect(caught.kind).toBe('aborted');
    });

    it('sends no Authorization header without an API key, and adds configured headers', async () => {
      fake.script({ text: 'local' });
      const events = await collect({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'Hi' }],
        endpoint: { baseUrl: `${fake.openaiBaseUrl}/`, api, headers: { 'x-title': 'claw' } },
      });
      expect(joined(events, 'text_delta')).toBe('local');
      const sent = fake.requests[0]!;
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.apiKey).toBeUndefined();
      expect(sent.headers['x-title']).toBe('claw');
    });
  });

  it('chooses the wire API by endpoint.api, chat by default, and rejects others', async () => {
    fake.script({ text: 'a' });
    await collect({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Hi' }],
      endpoint: { baseUrl: fake.openaiBaseUrl },
    });
    expect(fake.requests[0]!.api).toBe('openai-chat');
    const caught = await failure(collect(request('chat', { endpoint: { api: 'completions' } })));
    expect(caught.kind).toBe('invalid_request');
  });

  it('asks OpenAI itself for max_completion_tokens and compatible servers for max_tokens', () => {
    const req: ModelRequest = { model: 'o4-mini', messages: [{ role: 'user', content: 'Hi' }], maxTokens: 500 };
    expect(chatBody(req, { useMaxCompletionTokens: true })).toMatchObject({ max_completion_tokens: 500 });
    expect(chatBody(req, { useMaxCompletionTokens: true }).max_tokens).toBeUndefined();
    expect(chatBody(req, { useMaxCompletionTokens: false })).toMatchObject({ max_tokens: 500 });
  });

  describe('chat stream parsing (servers other than the fake)', () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      choices: [{ index: 0, delta, finish_reason: finish }],
    });

    it('turns malformed tool arguments into an invalid_request error', async () => {
      const events = sse(
        chunk({
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Par' } },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'is"' } }] }),
        chunk({}, 'tool_calls'),
        '[DONE]',
      );
      const caught = await failure(collectFrom(parseChatStream(events, 'openai')));
      expect(caught.kind).toBe('invalid_request');
      expect(caught.message).toMatch(/get_weather/);
    });

    it('reads `reasoning` deltas, calls without index or id, and tool calls reported with finish "stop"', async () => {
      const events = await collectFrom(
        parseChatStream(
          sse(
            chunk({ role: 'assistant', reasoning: 'hmm' }),
            chunk({ tool_calls: [{ function: { name: 'ping', arguments: { host: 'a' } } }] }),
            chunk({}, 'stop'),
            { choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } },
            '[DONE]',
          ),
          'openai',
        ),
      );
      expect(events[0]).toEqual({ type: 'thinking_delta', delta: 'hmm' });
      expect(events[1]).toMatchObject({ type: 'tool_call', name: 'ping', arguments: { host: 'a' } });
      expect((events[1] as { id: string }).id).toMatch(/^call_/);
      expect(events[2]).toEqual({ type: 'done', stopReason: 'toolUse', usage: { input: 5, output: 2 } });
    });

    it('calls an empty argument string an empty object', async () => {
      const events = await collectFrom(
        parseChatStream(
          sse(
            chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'now', arguments: '' } }] }),
            chunk({}, 'tool_calls'),
          ),
          'openai',
        ),
      );
      expect(events[0]).toEqual({ type: 'tool_call', id: 'c', name: 'now', arguments: {} });
    });

    it('fails when the stream stops before the model finished (a transport failure, retried like a timeout)', async () => {
      const caught = await failure(collectFrom(parseChatStream(sse(chunk({ content: 'half' })), 'openai')));
      expect(caught.kind).toBe('timeout');
    });
  });

  describe('responses stream parsing', () => {
    it('maps response.failed and error events through the failure classifier', async () => {
      const failed = sse({
        type: 'response.failed',
        response: { status: 'failed', error: { code: 'rate_limit_exceeded', message: 'Slow down' } },
      });
      expect((await failure(collectFrom(parseResponsesStream(failed, 'openai')))).kind).toBe('rate_limit');
      const error = sse({
        type: 'error',
        code: 'context_length_exceeded',
        message: 'Your input exceeds the context window of this model.',
      });
      expect((await failure(collectFrom(parseResponsesStream(error, 'openai')))).kind).toBe('context_overflow');
    });
  });
});
