import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeEmbedding, fakeThinkingSignature, startFakeLlm, type FakeLlm } from './fakes/llm-server.js';

let fake: FakeLlm;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeLlm();
  // Retries off: every request must consume exactly the step the test scripted.
  client = new OpenAI({ apiKey: 'sk-test-key', baseURL: fake.openaiBaseUrl, maxRetries: 0 });
});
afterEach(() => fake.reset());
afterAll(() => fake.close());

interface SseFrame {
  event?: string;
  data: any;
}

/** Minimal SSE parsing, independent of any client library, so the raw wire is what gets checked. */
function parseSse(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === '') continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    const joined = data.join('\n');
    frames.push({ event, data: joined === '[DONE]' ? joined : JSON.parse(joined) });
  }
  return frames;
}

function anthropic(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${fake.anthropicBaseUrl}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};

describe('fake LLM: OpenAI chat completions', () => {
  it('answers "ok" when nothing is scripted, non-streaming, with usage and ids', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.model).toBe('gpt-test');
    expect(typeof completion.created).toBe('number');
    expect(completion.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'ok' });
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ api: 'openai-chat', path: '/v1/chat/completions', apiKey: 'sk-test-key' });
    expect(fake.requests[0]!.body.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('streams text in chunks, then a usage chunk and [DONE]', async () => {
    fake.script({ text: 'Hello there, this is streamed.', chunkSize: 5, usage: { input: 11, output: 7 } });
    const stream = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Hello there, this is streamed.');
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBe(6);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === chunks[0]!.id)).toBe(true);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  });

  it('leaves out the usage chunk unless include_usage is asked for, and ends with [DONE] on the wire', async () => {
    const response = await fetch(`${fake.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = parseSse(await response.text());
    expect(frames.at(-1)!.data).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((frame) => frame.data);
    expect(chunks.every((chunk) => !('usage' in chunk))).toBe(true);
    expect(chunks.at(-1).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
  });

  it('streams tool calls the real way; the client reassembles them', async () => {
    fake.script({
      thinking: 'The user wants weather in two places.',
      text: 'Checking.',
      toolCalls: [
        { id: 'call_fixed', name: 'get_weather', arguments: { city: 'Paris', days: 3 } },
        { name: 'get_weather', arguments: { city: 'Zürich, Switzerland' } },
      ],
    });
    const runner = client.chat.completions.stream({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [weatherTool],
    });
    const raw: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    runner.on('chunk', (chunk) => raw.push(chunk));
    const completion = await runner.finalChatCompletion();
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe('Checking.');
    const calls = choice.message.tool_calls!.map(
      (call) => call as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall,
    );
    expect(calls).toHaveLength(2);
    expect(calls[0]!.id).toBe('call_fixed');
    expect(calls[1]!.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(calls.map((call) => call.function.name)).toEqual(['get_weather', 'get_weather']);
    expect(JSON.parse(calls[0]!.function.arguments)).toEqual({ city: 'Paris', days: 3 });
    expect(JSON.parse(calls[1]!.function.arguments)).toEqual({ city: 'Zürich, Switzerland' });

    // On the wire: the opening delta has id/type/name and empty arguments, then several argument fragments.
    const toolDeltas = raw
      .flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])
      .filter((delta) => delta.index === 0);
    expect(toolDeltas[0]).toEqual({
      index: 0,
      id: 'call_fixed',
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    });
    expect(toolDeltas.length).toBeGreaterThan(3);
    expect(toolDeltas.slice(1).every((delta) => delta.id === undefined && delta.function?.name === undefined)).toBe(
      true,
    );
    const reasoning = raw
      .map((chunk) => (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '')
      .join('');
    expect(reasoning).toBe('The user wants weather in two places.');
  });

  it('non-streaming tool calls, reasoning_content and finish_reason "length"', async () => {
    fake.script(
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }], thinking: 'hmm' },
      { text: 'cut sh', stopReason: 'length', usage: { input: 3, output: 100, cacheRead: 2 } },
    );
    const first = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'x' }],
      tools: [weatherTool],
    });
    const message = first.choices[0]!.message as OpenAI.Chat.Completions.ChatCompletionMessage & {
      reasoning_content?: string;
    };
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(message.content).toBeNull();
    expect(message.reasoning_content).toBe('hmm');
    const call = message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Oslo' });

    const second = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: 'sunny' },
      ],
    });
    expect(second.choices[0]!.finish_reason).toBe('length');
    expect(second.usage).toMatchObject({
      prompt_tokens: 3,
      completion_tokens: 100,
      prompt_tokens_details: { cached_tokens: 2 },
    });
  });

  it('rejects histories the real API rejects: tool results without a call, calls without results', async () => {
    fake.script({ text: 'still queued' });
    const orphan = client.chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'tool', tool_call_id: 'call_x', content: 'r' },
      ],
    });
    await expect(orphan).rejects.toMatchObject({ status: 400, type: 'invalid_request_error' });
    const unanswered = client.chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'user', content: 'y' },
      ],
    });
    await expect(unanswered).rejects.toThrow(/did not have response messages: call_a/);
    const dotted = client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 'fs.read', parameters: {} } }],
    });
    await expect(dotted).rejects.toMatchObject({ status: 400, param: 'tools[0].function.name' });
    // Validation failures happen before the model runs, so no step was consumed.
    expect(fake.pendingSteps()).toBe(1);
  });

  it('surfaces scripted errors as the client APIError subclasses with status, code and retry-after', async () => {
    fake.script(
      { error: { status: 429, retryAfterSeconds: 7 } },
      { contextOverflow: true },
      { error: { status: 500, message: 'boom' } },
    );
    const limited = await client.chat.completions
      .create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('7');
    expect(limited).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });

    const overflow = await client.chat.completions
      .create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], stream: true })
      .catch((e: unknown) => e);
    expect(overflow).toBeInstanceOf(OpenAI.BadRequestError);
    expect(overflow).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'messages' });
    expect((overflow as Error).message).toMatch(
      /maximum context length is 8192 tokens\. However, your messages resulted in 9000 tokens/,
    );

    const server = await client.chat.completions
      .create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(server).toBeInstanceOf(OpenAI.InternalServerError);
    expect(server).toMatchObject({
      status: 500,
      type: 'server_error',
      error: { message: 'boom', param: null, code: null },
    });
  });

  it('fails mid-stream the way OpenAI does, after HTTP 200', async () => {
    fake.script({ text: 'partial answer', streamError: { message: 'upstream died' } });
    const stream = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    let text = '';
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(text).toBe('partial answer');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toMatch(/upstream died/);
  });

  it('answers malformed JSON with a 400 in the OpenAI shape and keeps serving', async () => {
    const response = await fetch(`${fake.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body).toMatchObject({ error: { type: 'invalid_request_error', param: null, code: null } });
    expect(body.error.message).toMatch(/could not parse the JSON body/);
    expect(fake.requests[0]!.body).toBe('{"model":');
    const unknown = await fetch(`${fake.url}/v1/nope`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(fake.unhandled).toEqual(['POST /v1/nope']);
    const completion = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(completion.choices[0]!.message.content).toBe('ok');
  });
});

describe('fake LLM: scripting', () => {
  it('consumes per-key steps before the shared queue, then the handler, then "ok"', async () => {
    fake.script({ text: 'shared 1' }, { text: 'shared 2' });
    fake.scriptForKey('sk-other', { error: { status: 401 } });
    fake.respond((request) => ({ text: `handled ${request.body.messages.length}` }));
    const other = new OpenAI({ apiKey: 'sk-other', baseURL: fake.openaiBaseUrl, maxRetries: 0 });
    const ask = (c: OpenAI) =>
      c.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
        .then((r) => r.choices[0]!.message.content);

    await expect(ask(other)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    expect(await ask(other)).toBe('shared 1');
    expect(await ask(client)).toBe('shared 2');
    expect(await ask(client)).toBe('handled 1');
    expect(fake.requests.map((r) => r.apiKey)).toEqual(['sk-other', 'sk-other', 'sk-test-key', 'sk-test-key']);
    fake.reset();
    expect(await ask(client)).toBe('ok');
    expect(fake.requests).toHaveLength(1);
  });

  it('requireApiKey and apiKeys give each provider its real 401', async () => {
    const strict = await startFakeLlm({ apiKeys: ['good'] });
    try {
      const anonymous = await fetch(`${strict.openaiBaseUrl}/chat/completions`, { method: 'POST', body: '{}' });
      expect(anonymous.status).toBe(401);
      expect(((await anonymous.json()) as any).error.message).toMatch(/didn't provide an API key/);
      const wrong = new OpenAI({ apiKey: 'sk-wrong-key-123456', baseURL: strict.openaiBaseUrl, maxRetries: 0 });
      await expect(
        wrong.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
      ).rejects.toMatchObject({
        status: 401,
        code: 'invalid_api_key',
      });
      const anthropicMissing = await fetch(`${strict.url}/v1/messages`, {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        body: '{}',
      });
      expect(anthropicMissing.status).toBe(401);
      expect(await anthropicMissing.json()).toMatchObject({
        type: 'error',
        error: { type: 'authentication_error', message: 'x-api-key header is required' },
      });
      const good = new OpenAI({ apiKey: 'good', baseURL: strict.openaiBaseUrl, maxRetries: 0 });
      expect(
        (await good.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })).choices[0]!
          .message.content,
      ).toBe('ok');
    } finally {
      await strict.close();
    }
  });

  it('hang: a stream gets headers then stalls; close() ends it', async () => {
    const local = await startFakeLlm();
    const hungClient = new OpenAI({ apiKey: 'k', baseURL: local.openaiBaseUrl, maxRetries: 0 });
    local.script({ hang: true }, { hang: true });
    const stream = await hungClient.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const reading = (async () => {
      for await (const _chunk of stream) {
        // nothing ever arrives
      }
    })().then(
      () => 'ended',
      () => 'failed',
    );
    let outcome: string | undefined;
    void reading.then((value) => (outcome = value));
    const nonStream = hungClient.chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: 'x' }] },
      { timeout: 150 },
    );
    await expect(nonStream).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    // The stream has been open for the whole 150 ms the other request waited, and still is.
    expect(outcome).toBeUndefined();
    await local.close();
    expect(await reading).toMatch(/ended|failed/);
  });

  it('delayMs paces stream deltas', async () => {
    fake.script({ text: 'abcdefgh', chunkSize: 2, delayMs: 40 });
    const started = Date.now();
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const times: number[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) times.push(Date.now() - started);
    expect(times).toHaveLength(4);
    expect(times[3]! - times[0]!).toBeGreaterThanOrEqual(100);
  });
});

describe('fake LLM: OpenAI Responses', () => {
  it('streams reasoning, text and a function call with the real event sequence', async () => {
    fake.script({
      thinking: 'Need the weather tool.',
      text: 'Let me check that.',
      toolCalls: [{ name: 'get_weather', arguments: { city: 'Lisbon', unit: 'celsius' } }],
      usage: { input: 40, output: 12 },
    });
    const stream = await client.responses.create({
      model: 'gpt-test',
      input: [{ role: 'user', content: 'weather in Lisbon?' }],
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false }],
      stream: true,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((event) => event.type);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types.at(-1)).toBe('response.completed');
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
    for (const expected of [
      'response.output_item.added',
      'response.reasoning_summary_text.delta',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
    ]) {
      expect(types).toContain(expected);
    }
    // Reasoning first, then text, then the call — each block opened before its deltas and closed after.
    expect(types.indexOf('response.reasoning_summary_text.delta')).toBeLessThan(
      types.indexOf('response.output_text.delta'),
    );
    expect(types.indexOf('response.output_text.done')).toBeLessThan(
      types.indexOf('response.function_call_arguments.delta'),
    );

    const deltas = events.filter(
      (e): e is OpenAI.Responses.ResponseTextDeltaEvent => e.type === 'response.output_text.delta',
    );
    expect(deltas.map((e) => e.delta).join('')).toBe('Let me check that.');
    const summary = events.filter(
      (e): e is OpenAI.Responses.ResponseReasoningSummaryTextDeltaEvent =>
        e.type === 'response.reasoning_summary_text.delta',
    );
    expect(summary.map((e) => e.delta).join('')).toBe('Need the weather tool.');

    const added = events.filter(
      (e): e is OpenAI.Responses.ResponseOutputItemAddedEvent => e.type === 'response.output_item.added',
    );
    const callItem = added
      .map((e) => e.item)
      .find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(callItem).toMatchObject({
      type: 'function_call',
      name: 'get_weather',
      arguments: '',
      status: 'in_progress',
    });
    expect(callItem.id).toMatch(/^fc_/);
    expect(callItem.call_id).toMatch(/^call_/);
    const argDeltas = events.filter(
      (e): e is OpenAI.Responses.ResponseFunctionCallArgumentsDeltaEvent =>
        e.type === 'response.function_call_arguments.delta',
    );
    expect(argDeltas.length).toBeGreaterThan(1);
    expect(argDeltas.every((e) => e.item_id === callItem.id)).toBe(true);
    expect(JSON.parse(argDeltas.map((e) => e.delta).join(''))).toEqual({ city: 'Lisbon', unit: 'celsius' });
    const argsDone = events.find(
      (e): e is OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent =>
        e.type === 'response.function_call_arguments.done',
    )!;
    expect(JSON.parse(argsDone.arguments)).toEqual({ city: 'Lisbon', unit: 'celsius' });

    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.status).toBe('completed');
    expect(completed.response.id).toMatch(/^resp_/);
    expect(completed.response.model).toBe('gpt-test');
    expect(completed.response.usage).toMatchObject({ input_tokens: 40, output_tokens: 12, total_tokens: 52 });
    expect(completed.response.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call']);
  });

  it('non-streaming answers carry output items and usage; length ends "incomplete"', async () => {
    fake.script({ text: 'plain answer' }, { text: 'trunc', stopReason: 'length' });
    const response = await client.responses.create({ model: 'gpt-test', input: 'hello', instructions: 'be brief' });
    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('plain answer');
    expect(response.instructions).toBe('be brief');
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);

    const stream = await client.responses.create({ model: 'gpt-test', input: 'hello', stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const last = events.at(-1) as OpenAI.Responses.ResponseIncompleteEvent;
    expect(last.type).toBe('response.incomplete');
    expect(last.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('validates function_call / function_call_output pairing and the flat tool shape', async () => {
    await expect(
      client.responses.create({
        model: 'm',
        input: [{ type: 'function_call_output', call_id: 'call_1', output: 'x' }],
      }),
    ).rejects.toThrow(/No tool call found for function call output with call_id call_1/);
    const nested = client.responses.create({
      model: 'm',
      input: 'x',
      tools: [{ type: 'function', function: { name: 'f' } } as unknown as OpenAI.Responses.FunctionTool],
    });
    await expect(nested).rejects.toMatchObject({ status: 400, param: 'tools[0].name' });
    fake.script({ contextOverflow: true });
    await expect(client.responses.create({ model: 'm', input: 'x', stream: true })).rejects.toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
    });
  });
});

describe('fake LLM: Anthropic messages', () => {
  const tools = [
    {
      name: 'get_weather',
      description: 'Weather',
      input_schema: { type: 'object', properties: { city: { type: 'string' } } },
    },
  ];

  it('streams thinking, text and tool_use with the real event sequence', async () => {
    fake.script({
      thinking: 'I should call the tool.',
      text: 'One moment.',
      toolCalls: [{ name: 'get_weather', arguments: { city: 'Kyoto', detail: { hourly: true } } }],
      usage: { input: 50, output: 30, cacheRead: 20 },
    });
    const response = await anthropic({
      model: 'claude-test',
      max_tokens: 4096,
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools,
      messages: [{ role: 'user', content: 'weather in Kyoto?' }],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const frames = parseSse(await response.text());
    expect(frames.every((frame) => frame.event === frame.data.type)).toBe(true);

    const sequence = frames.map((frame) =>
      frame.event === 'content_block_start'
        ? `start:${frame.data.content_block.type}`
        : frame.event === 'content_block_delta'
          ? `delta:${frame.data.delta.type}`
          : frame.event,
    );
    const collapsed = sequence.filter((name, i) => name !== sequence[i - 1]);
    expect(collapsed).toEqual([
      'message_start',
      'ping',
      'start:thinking',
      'delta:thinking_delta',
      'delta:signature_delta',
      'content_block_stop',
      'start:text',
      'delta:text_delta',
      'content_block_stop',
      'start:tool_use',
      'delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);

    const start = frames[0]!.data.message;
    expect(start).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [],
      stop_reason: null,
    });
    expect(start.id).toMatch(/^msg_/);
    expect(start.usage).toMatchObject({ input_tokens: 50, cache_read_input_tokens: 20 });

    const deltasOf = (index: number) =>
      frames.filter((f) => f.event === 'content_block_delta' && f.data.index === index).map((f) => f.data.delta);
    expect(
      deltasOf(0)
        .filter((d) => d.type === 'thinking_delta')
        .map((d) => d.thinking)
        .join(''),
    ).toBe('I should call the tool.');
    const signature = deltasOf(0).find((d) => d.type === 'signature_delta').signature;
    expect(signature).toBe(fakeThinkingSignature('I should call the tool.'));
    expect(
      deltasOf(1)
        .map((d) => d.text)
        .join(''),
    ).toBe('One moment.');

    const toolStart = frames.find(
      (f) => f.event === 'content_block_start' && f.data.content_block.type === 'tool_use',
    )!.data;
    expect(toolStart.index).toBe(2);
    expect(toolStart.content_block).toMatchObject({ type: 'tool_use', name: 'get_weather', input: {} });
    expect(toolStart.content_block.id).toMatch(/^toolu_01/);
    const partials = deltasOf(2).map((d) => d.partial_json as string);
    expect(partials.filter((p) => p !== '').length).toBeGreaterThan(2);
    expect(JSON.parse(partials.join(''))).toEqual({ city: 'Kyoto', detail: { hourly: true } });

    const messageDelta = frames.find((f) => f.event === 'message_delta')!.data;
    expect(messageDelta.delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });
    expect(messageDelta.usage.output_tokens).toBe(30);
    expect(fake.requests[0]).toMatchObject({ api: 'anthropic', apiKey: 'sk-ant-test' });
    expect(fake.requests[0]!.headers['anthropic-version']).toBe('2023-06-01');

    // Sending the turn back with its signed thinking block and a tool_result is accepted...
    const history = [
      { role: 'user', content: 'weather in Kyoto?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should call the tool.', signature },
          { type: 'tool_use', id: toolStart.content_block.id, name: 'get_weather', input: { city: 'Kyoto' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolStart.content_block.id, content: 'rain' }] },
    ];
    const followUp = await anthropic({
      model: 'claude-test',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools,
      messages: history,
    });
    expect(followUp.status).toBe(200);
    expect(await followUp.json()).toMatchObject({
      type: 'message',
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
    });

    // ...but a tampered signature, or dropping the thinking block, is not.
    const tampered = structuredClone(history);
    (tampered[1]!.content as any[])[0].signature = 'forged';
    const rejected = await anthropic({
      model: 'claude-test',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools,
      messages: tampered,
    });
    expect(rejected.status).toBe(400);
    expect(((await rejected.json()) as any).error.message).toMatch(/Invalid `signature` in `thinking` block/);
    const stripped = structuredClone(history);
    (stripped[1]!.content as any[]).shift();
    const noThinking = await anthropic({
      model: 'claude-test',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools,
      messages: stripped,
    });
    expect(((await noThinking.json()) as any).error.message).toMatch(/must start with a thinking block/);
  });

  it('non-streaming: content blocks, stop reasons and usage', async () => {
    fake.script(
      { toolCalls: [{ id: 'toolu_fixed', name: 'get_weather', arguments: { city: 'Rome' } }] },
      { text: 'long', stopReason: 'length', usage: { input: 9, output: 4, cacheWrite: 5 } },
    );
    const first = (await (
      await anthropic({ model: 'claude-test', max_tokens: 100, tools, messages: [{ role: 'user', content: 'x' }] })
    ).json()) as any;
    expect(first).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      stop_reason: 'tool_use',
      stop_sequence: null,
      content: [{ type: 'tool_use', id: 'toolu_fixed', name: 'get_weather', input: { city: 'Rome' } }],
    });
    const second = (await (
      await anthropic({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] })
    ).json()) as any;
    expect(second.stop_reason).toBe('max_tokens');
    expect(second.usage).toEqual({
      input_tokens: 9,
      output_tokens: 4,
      cache_creation_input_tokens: 5,
      cache_read_input_tokens: 0,
    });
  });

  it('errors use the Anthropic shape: overloaded 529, rate limit with retry-after, prompt too long, bad JSON', async () => {
    fake.script(
      { error: { status: 529 } },
      { error: { status: 429, retryAfterSeconds: 30 } },
      { contextOverflow: true },
    );
    const request = { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'x' }], stream: true };

    const overloaded = await anthropic(request);
    expect(overloaded.status).toBe(529);
    expect(await overloaded.json()).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });

    const limited = await anthropic(request);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('30');
    expect(await limited.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });

    const overflow = await anthropic(request);
    expect(overflow.status).toBe(400);
    expect(await overflow.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 9000 tokens > 8192 maximum' },
    });

    const malformed = await anthropic('{not json');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });

    const noVersion = await fetch(`${fake.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k' },
      body: JSON.stringify(request),
    });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
    });
    const systemRole = await anthropic({
      model: 'claude-test',
      max_tokens: 10,
      messages: [{ role: 'system', content: 'x' }],
    });
    expect(((await systemRole.json()) as any).error.message).toMatch(/Unexpected role "system"/);
    const missingResult = await anthropic({
      model: 'claude-test',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: {} }] },
        { role: 'user', content: 'never mind' },
      ],
    });
    expect(((await missingResult.json()) as any).error.message).toMatch(
      /`tool_use` ids were found without `tool_result` blocks immediately after: toolu_a/,
    );
  });

  it('fails mid-stream with an error event, after HTTP 200', async () => {
    fake.script({ text: 'half', streamError: {} });
    const frames = parseSse(
      await (
        await anthropic({
          model: 'claude-test',
          max_tokens: 100,
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
        })
      ).text(),
    );
    expect(frames.at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    expect(frames.some((frame) => frame.event === 'message_stop')).toBe(false);
  });
});

describe('fake LLM: embeddings', () => {
  it('is deterministic, sized by option or request, and similar text scores higher than unrelated text', async () => {
    const texts = ['the cat sat on the mat', 'a cat sat on a mat today', 'quarterly revenue forecast spreadsheet'];
    const result = await client.embeddings.create({ model: 'text-embedding-3-small', input: texts });
    expect(result.object).toBe('list');
    expect(result.model).toBe('text-embedding-3-small');
    expect(result.data.map((d) => [d.object, d.index])).toEqual([
      ['embedding', 0],
      ['embedding', 1],
      ['embedding', 2],
    ]);
    expect(result.usage.total_tokens).toBeGreaterThan(0);
    // The client asks for base64 by default and decodes; it must match the float answer exactly.
    const [cat, cat2, revenue] = result.data.map((d) => d.embedding);
    expect(cat).toHaveLength(64);
    expect(cat).toEqual(fakeEmbedding(texts[0]!, 64));
    expect(Math.hypot(...cat!)).toBeCloseTo(1, 5);
    expect(cosine(cat!, cat2!)).toBeGreaterThan(0.6);
    expect(cosine(cat!, cat2!)).toBeGreaterThan(cosine(cat!, revenue!) + 0.3);

    const again = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: texts[0]!,
      encoding_format: 'float',
      dimensions: 16,
    });
    expect(again.data[0]!.embedding).toEqual(fakeEmbedding(texts[0]!, 16));
    expect(fake.requests.map((r) => r.api)).toEqual(['embeddings', 'embeddings']);

    const wide = await startFakeLlm({ embeddingDims: 256 });
    try {
      const wideClient = new OpenAI({ apiKey: 'k', baseURL: wide.openaiBaseUrl, maxRetries: 0 });
      const out = await wideClient.embeddings.create({ model: 'e', input: 'hello' });
      expect(out.data[0]!.embedding).toHaveLength(256);
    } finally {
      await wide.close();
    }
  });

  it('does not consume model steps; scriptEmbeddings injects failures', async () => {
    fake.script({ text: 'for the model' });
    fake.scriptEmbeddings({ error: { status: 429, retryAfterSeconds: 2 } }, { contextOverflow: true });
    await expect(client.embeddings.create({ model: 'e', input: 'x' })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await expect(client.embeddings.create({ model: 'e', input: 'x' })).rejects.toThrow(
      /maximum context length is 8192 tokens/,
    );
    expect((await client.embeddings.create({ model: 'e', input: ['x'] })).data).toHaveLength(1);
    await expect(client.embeddings.create({ model: 'e', input: '' })).rejects.toMatchObject({ status: 400 });
    expect(fake.pendingSteps()).toBe(1);
  });
});

describe('fake LLM: robustness', () => {
  it('answers junk with 4xx in the right shape and never falls over', async () => {
    const notObjects = ['null', '[]', '"text"', '42', '', '{"model":'];
    const structural: Record<string, string[]> = {
      '/v1/chat/completions': [
        '{"messages":[]}',
        '{"model":"m","messages":"x"}',
        '{"model":"m","messages":[null]}',
        '{"model":"m","messages":[{"role":"user"}]}',
        '{"model":"m","tools":[null],"messages":[{"role":"user","content":"x"}]}',
      ],
      '/v1/responses': [
        '{"input":"x"}',
        '{"model":"m","input":[null]}',
        '{"model":"m","input":[{"type":"function_call_output"}]}',
        '{"model":"m","tools":[null]}',
      ],
      '/v1/messages': [
        '{"model":"m","messages":[]}',
        '{"model":"m","max_tokens":5,"messages":[null]}',
        '{"model":"m","max_tokens":5,"messages":[{"role":"user"}]}',
        '{"model":"m","max_tokens":5,"tools":[null],"messages":[{"role":"user","content":"x"}]}',
        '{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t"}]},null]}',
      ],
      '/v1/messages/count_tokens': ['{"messages":[]}', '{"model":"m","messages":[null]}'],
      '/v1/embeddings': [
        '{"input":"x"}',
        '{"model":"m"}',
        '{"model":"m","input":[null]}',
        '{"model":"m","input":"x","dimensions":-1}',
      ],
    };
    for (const [path, bodies] of Object.entries(structural)) {
      for (const body of [...notObjects, ...bodies]) {
        const response = await fetch(`${fake.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
          body,
        });
        expect(response.status, `${path} ${body}`).toBe(400);
        const parsed = (await response.json()) as any;
        if (path.startsWith('/v1/messages'))
          expect(parsed).toMatchObject({
            type: 'error',
            error: { type: 'invalid_request_error', message: expect.any(String) },
          });
        else expect(parsed).toMatchObject({ error: { message: expect.any(String), type: 'invalid_request_error' } });
      }
    }
    const get = await fetch(`${fake.openaiBaseUrl}/chat/completions`);
    expect(get.status).toBe(404);
    expect(fake.pendingSteps()).toBe(0);
    expect(
      (await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })).choices[0]!
        .message.content,
    ).toBe('ok');
  });

  it('survives clients that hang up mid-stream, and a handler that throws', async () => {
    fake.script({ text: 'x'.repeat(200), chunkSize: 1, delayMs: 5 });
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true },
      { signal: controller.signal },
    );
    let seen = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content && ++seen === 3) controller.abort();
    }
    fake.respond(() => {
      throw new Error('handler bug');
    });
    await expect(
      client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toThrow(/handler bug/);
    fake.respond(() => ({ text: 'fine' }));
    expect(
      (await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })).choices[0]!
        .message.content,
    ).toBe('fine');
  });

  it('counts Anthropic tokens without consuming a step', async () => {
    fake.script({ text: 'kept' });
    const response = await fetch(`${fake.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-test', messages: [{ role: 'user', content: 'hello there' }] }),
    });
    expect(await response.json()).toEqual({ input_tokens: expect.any(Number) });
    expect(fake.pendingSteps()).toBe(1);
  });
});
