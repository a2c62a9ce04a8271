/**
 * The model provider contract, as a vitest suite any provider plugin runs against a fake of
 * its API on 127.0.0.1:
 *
 *   providerContractSuite({ name: 'acme', plugin: dir, provider: 'acme', model: 'acme-1', endpoint: () => ({ baseUrl, apiKey: 'k' }), server });
 *
 * It loads the plugin into a test kernel, takes its provider and checks what the agent loop
 * and model failover rely on: text streamed in deltas ending in exactly one `done`, a tool
 * call and its result round-tripped on the wire, the stop reasons (stop, toolUse, length),
 * usage, aborts through the signal (before the answer and mid-stream), and failures thrown as
 * ModelErrors whose `kind` is what failover branches on (auth rotates the profile,
 * rate_limit and overloaded retry then fall back, timeout retries, context_overflow
 * compacts) without the API key in the message. Only imported by tests (it imports vitest).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage, ModelEndpoint, ModelProvider, ModelRequest, ModelStreamEvent } from '../types/models.js';
import type { PluginDefinition } from '../types/plugin.js';
import { isModelError, type ModelError } from '../models.js';
import { createTestKernel, waitFor as until, type TestKernel } from '../testing.js';

/** What the fake answers one model request with. Extra fields a fake understands are passed on. */
export type ProviderStep =
  | {
      text?: string;
      /** The fake picks each call's id, in its API's own format. */
      toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
      stopReason?: 'stop' | 'length';
      usage?: { input: number; output: number };
      /** Characters per streamed delta. */
      chunkSize?: number;
      /** Pause before each streamed delta. */
      delayMs?: number;
    }
  /** The API's own error response for this HTTP status (its JSON error body, Retry-After when given). */
  | { error: { status: number; message?: string; retryAfterSeconds?: number } }
  /** The API's real "prompt too long" error. */
  | { contextOverflow: true }
  /** Accept the request (send headers, for streams) and never finish. */
  | { hang: true };

/** The test's side of the provider's API. */
export interface FakeModelServer {
  start?(): Promise<void>;
  stop?(): Promise<void>;
  /** Queue answers for the next model requests, in order. */
  script(...steps: ProviderStep[]): void;
  /** The bodies of the model requests received, oldest first (parsed JSON). */
  requests(): unknown[];
  reset(): void;
}

export interface ProviderContractTarget {
  /** Shown in the suite's title, e.g. "openai (responses)". */
  name: string;
  plugin: string | PluginDefinition;
  /** The provider id the plugin registers. */
  provider: string;
  model: string;
  /** How to reach the fake: baseUrl, a key it accepts, the wire `api` when the provider speaks several. */
  endpoint(): ModelEndpoint;
  server: FakeModelServer;
  config?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
}

const TOOL = {
  name: 'lookup_order',
  description: 'Where an order is',
  parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
};
const TOOL_RESULT = 'order A-17 left the warehouse (contract result 5f3a)';
const TEXT = 'The quick brown fox jumps over the lazy dog, twice over.';

async function collect(
  stream: AsyncIterable<ModelStreamEvent>,
  events: ModelStreamEvent[] = [],
): Promise<ModelStreamEvent[]> {
  for await (const event of stream) events.push(event);
  return events;
}

/** The ModelError a stream fails with; anything else (or no failure) fails the test. */
async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const caught = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!isModelError(caught))
    throw new Error(`expected a ModelError, got ${caught === undefined ? 'a finished stream' : String(caught)}`);
  return caught;
}

const texts = (events: ModelStreamEvent[]) =>
  events.flatMap((event) => (event.type === 'text_delta' ? [event.delta] : []));
const calls = (events: ModelStreamEvent[]) =>
  events.filter((event): event is Extract<ModelStreamEvent, { type: 'tool_call' }> => event.type === 'tool_call');

function expectOneDoneAtEnd(events: ModelStreamEvent[]): Extract<ModelStreamEvent, { type: 'done' }> {
  const done = events.filter((event) => event.type === 'done');
  expect(done, 'exactly one done event').toHaveLength(1);
  expect(events[events.length - 1], 'done comes last').toBe(done[0]);
  return done[0] as Extract<ModelStreamEvent, { type: 'done' }>;
}

export function providerContractSuite(target: ProviderContractTarget): void {
  describe(`provider contract: ${target.name}`, () => {
    let kernel: TestKernel;
    let provider: ModelProvider;
    const ask = (messages: ChatMessage[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
      model: target.model,
      messages,
      ...extra,
      endpoint: { ...target.endpoint(), ...extra.endpoint },
    });
    const hello = (extra: Partial<ModelRequest> = {}) => ask([{ role: 'user', content: 'Say the sentence.' }], extra);
    const run = (request: ModelRequest, signal?: AbortSignal, events?: ModelStreamEvent[]) =>
      collect(provider.stream(request, { signal }), events);

    beforeAll(async () => {
      await target.server.start?.();
      kernel = await createTestKernel({ plugins: [target.plugin], config: target.config, env: target.env });
      await kernel.start();
      provider = await kernel.capabilities.get('provider', target.provider);
    });
    afterAll(async () => {
      await kernel?.dispose();
      await target.server.stop?.();
    });
    beforeEach(() => target.server.reset());

    it('streams text in several deltas, then one done with stop and the usage', async () => {
      target.server.script({ text: TEXT, chunkSize: 6, usage: { input: 31, output: 12 } });
      const events = await run(hello({ systemPrompt: 'Be exact.' }));
      expect(texts(events).length).toBeGreaterThan(1);
      expect(texts(events).join('')).toBe(TEXT);
      const done = expectOneDoneAtEnd(events);
      expect(done.stopReason).toBe('stop');
      expect(done.usage).toMatchObject({ input: 31, output: 12 });
    });

    it('round-trips a tool call: offered tool, complete arguments, toolUse, then the result on the wire', async () => {
      target.server.script({
        toolCalls: [{ name: TOOL.name, arguments: { orderId: 'A-17' } }],
        usage: { input: 40, output: 9 },
      });
      const question: ChatMessage = { role: 'user', content: 'Where is order A-17?' };
      const first = await run(ask([question], { tools: [TOOL] }));
      expect(JSON.stringify(target.server.requests().at(-1)), 'the tool is offered to the model').toContain(TOOL.name);
      const [call, ...more] = calls(first);
      expect(more).toEqual([]);
      expect(call).toMatchObject({ name: TOOL.name, arguments: { orderId: 'A-17' } });
      expect(call!.id).toBeTruthy();
      expect(expectOneDoneAtEnd(first).stopReason).toBe('toolUse');

      target.server.script({ text: 'It left the warehouse.', usage: { input: 60, output: 5 } });
      const second = await run(
        ask(
          [
            question,
            {
              role: 'assistant',
              content: [{ type: 'toolCall', id: call!.id, name: call!.name, arguments: call!.arguments }],
              stopReason: 'toolUse',
            },
            {
              role: 'toolResult',
              toolCallId: call!.id,
              toolName: call!.name,
              content: [{ type: 'text', text: TOOL_RESULT }],
            },
          ],
          { tools: [TOOL] },
        ),
      );
      expect(texts(second).join('')).toBe('It left the warehouse.');
      expect(expectOneDoneAtEnd(second).stopReason).toBe('stop');
      const wire = JSON.stringify(target.server.requests().at(-1));
      expect(wire, 'the call goes back with its id').toContain(call!.id);
      expect(wire, 'the result goes back').toContain(TOOL_RESULT);
    });

    it('reports a reply cut at the token limit as length (the loop then runs none of its tool calls)', async () => {
      target.server.script({ text: 'This answer was cut', stopReason: 'length', usage: { input: 8, output: 4 } });
      const events = await run(hello({ maxTokens: 4 }));
      expect(texts(events).join('')).toBe('This answer was cut');
      expect(expectOneDoneAtEnd(events)).toMatchObject({ stopReason: 'length', usage: { input: 8, output: 4 } });
    });

    it('an abort while waiting for the answer fails as aborted, and an aborted signal sends nothing', async () => {
      target.server.script({ hang: true });
      const controller = new AbortController();
      const waiting = failure(run(hello({ endpoint: { timeoutMs: 30_000 } }), controller.signal));
      await until(() => target.server.requests().length === 1, 'the request to reach the server');
      controller.abort();
      expect((await waiting).kind).toBe('aborted');

      const already = new AbortController();
      already.abort();
      expect((await failure(run(hello(), already.signal))).kind).toBe('aborted');
      expect(target.server.requests()).toHaveLength(1);
    });

    it('an abort in the middle of a stream fails as aborted and stops the deltas', async () => {
      target.server.script({ text: TEXT, chunkSize: 4, delayMs: 25 });
      const controller = new AbortController();
      const events: ModelStreamEvent[] = [];
      const running = failure(run(hello({ endpoint: { timeoutMs: 30_000 } }), controller.signal, events));
      await until(() => texts(events).length > 0, 'the first delta');
      controller.abort();
      expect((await running).kind).toBe('aborted');
      expect(texts(events).join('').length).toBeLessThan(TEXT.length);
      expect(events.some((event) => event.type === 'done')).toBe(false);
    });

    it('a server that never answers fails as timeout after endpoint.timeoutMs', async () => {
      target.server.script({ hang: true });
      const started = Date.now();
      expect((await failure(run(hello({ endpoint: { timeoutMs: 250 } })))).kind).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(10_000);
    });

    const failures: Array<[string, ProviderStep, ModelError['kind']]> = [
      ['401', { error: { status: 401, message: 'invalid api key' } }, 'auth'],
      ['403', { error: { status: 403, message: 'permission denied' } }, 'auth'],
      ['429', { error: { status: 429, message: 'slow down' } }, 'rate_limit'],
      ['500', { error: { status: 500, message: 'internal error' } }, 'overloaded'],
      ['503', { error: { status: 503, message: 'unavailable' } }, 'overloaded'],
      ['a prompt too long', { contextOverflow: true }, 'context_overflow'],
    ];
    it.each(failures)('classifies %s for failover, without the key in the message', async (_, step, kind) => {
      target.server.script(step);
      const caught = await failure(run(hello()));
      expect(caught.kind).toBe(kind);
      const key = target.endpoint().apiKey;
      if (key) expect(caught.message).not.toContain(key);
    });

    it("passes the server's Retry-After on to the retry policy", async () => {
      target.server.script({ error: { status: 429, message: 'slow down', retryAfterSeconds: 7 } });
      const caught = await failure(run(hello()));
      expect(caught).toMatchObject({ kind: 'rate_limit', retryAfterMs: 7000 });
    });
  });
}
