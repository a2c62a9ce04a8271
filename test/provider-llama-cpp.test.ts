import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchImports } from './import-watch.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import type { ModelProvider, ModelRequest, ModelStreamEvent } from '../sdk/index.js';
import { isModelError } from '../sdk/index.js';
import { IMAGE_NOTE, toChatHistory } from '../plugins/llama-cpp/history.js';
import { writeTinyLlamaGguf } from './fixtures/gguf.js';
import { REPO } from './helpers.js';

const PLUGIN_DIR = join(REPO, 'plugins/llama-cpp');
const MODEL_PATH_KEY = 'plugins.entries.llama-cpp.config.modelPath';
const SLOW = 60_000;

// Watch the ESM loader itself rather than trust a flag the plugin sets: the hook reports
// every module URL of node-llama-cpp that anything in this process resolves. The plugin is
// loaded through jiti, which hands node_modules ESM packages to Node's own import().
const seen = watchImports('/node_modules/node-llama-cpp/');

/** What the loader resolved of the backend, once the loader thread has reported everything so far. */
async function backendImports(): Promise<string[]> {
  await seen.settled();
  return seen.filter((url) => /\/node-llama-cpp\/dist\/index\.js$/.test(url));
}

type TestProvider = ModelProvider & { readonly backendRequested: boolean };

function ask(text: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'tiny', messages: [{ role: 'user', content: text }], temperature: 0, ...extra };
}

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function failure(promise: Promise<unknown>): Promise<{ kind: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (!isModelError(error)) throw error;
    return { kind: error.kind, message: error.message };
  }
  throw new Error('expected a ModelError');
}

function text(events: ModelStreamEvent[]): string {
  return events.map((event) => (event.type === 'text_delta' ? event.delta : '')).join('');
}

describe('llama-cpp provider with a tiny generated model', () => {
  let stateDir: string;
  let kernel: TestKernel;
  let provider: TestProvider;

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'claw-llama-'));
    writeTinyLlamaGguf(join(stateDir, 'models', 'tiny.gguf'), { seed: 3 });
    kernel = await createTestKernel({
      plugins: [PLUGIN_DIR],
      stateDir,
      // Relative on purpose: it must resolve against the state dir. One thread, because
      // vitest runs two test files at once on a 2-core CI machine.
      config: {
        plugins: { entries: { 'llama-cpp': { config: { modelPath: 'models/tiny.gguf', maxTokens: 5, threads: 1 } } } },
      },
    });
    await kernel.start();
  }, SLOW);

  afterAll(async () => {
    await kernel?.dispose();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('loads and lists its model without importing node-llama-cpp', async () => {
    provider = (await kernel.capabilities.get('provider', 'llama-cpp')) as TestProvider;
    expect(provider.requiresKey).toBe(false);
    expect(await provider.models!()).toEqual([
      expect.objectContaining({ id: 'tiny', contextWindow: 2048, maxTokens: 5 }),
    ]);
    // A stream that has not been iterated has not started either.
    provider.stream(ask('hi'), {});
    expect(await backendImports()).toEqual([]);
    expect(provider.backendRequested).toBe(false);
  });

  it(
    'streams text deltas and ends with done and usage; stream was the first to import the backend',
    async () => {
      const started = performance.now();
      let firstDeltaMs: number | undefined;
      const events: ModelStreamEvent[] = [];
      for await (const event of provider.stream(ask('hello world'), {})) {
        if (event.type === 'text_delta' && firstDeltaMs === undefined) firstDeltaMs = performance.now() - started;
        events.push(event);
      }
      expect(await backendImports()).toHaveLength(1);
      expect(provider.backendRequested).toBe(true);
      expect(firstDeltaMs).toBeDefined();

      const deltas = events.filter((event) => event.type === 'text_delta');
      expect(deltas.length).toBeGreaterThan(0);
      expect(text(events).length).toBeGreaterThan(0);
      expect(events.filter((event) => event.type === 'done')).toHaveLength(1);
      const done = events[events.length - 1];
      // The random model never emits </s>: the configured maxTokens (5) stops it.
      expect(done).toEqual({ type: 'done', stopReason: 'length', usage: { input: expect.any(Number), output: 5 } });
      if (done.type === 'done') expect(done.usage!.input).toBeGreaterThan(2);
    },
    SLOW,
  );

  it(
    'reuses the loaded model and honours request.maxTokens',
    async () => {
      const events = await collect(provider.stream(ask('the claw', { maxTokens: 3 }), {}));
      expect(events[events.length - 1]).toMatchObject({ type: 'done', stopReason: 'length', usage: { output: 3 } });
      const loads = kernel.logs.filter((record) => record.message.startsWith('loaded '));
      expect(loads).toHaveLength(1);
      expect(loads[0].message).toContain(join(stateDir, 'models', 'tiny.gguf'));
    },
    SLOW,
  );

  it(
    'counts a longer prompt as more input tokens',
    async () => {
      const short = await collect(provider.stream(ask('hello'), {}));
      const long = await collect(
        provider.stream(
          {
            ...ask('hello'),
            systemPrompt: 'You are claw. Answer briefly.',
            messages: [
              { role: 'user', content: 'hello world' },
              { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
              { role: 'user', content: 'the world' },
            ],
          },
          {},
        ),
      );
      const input = (events: ModelStreamEvent[]) =>
        (events[events.length - 1] as Extract<ModelStreamEvent, { type: 'done' }>).usage!.input;
      expect(input(long)).toBeGreaterThan(input(short));
    },
    SLOW,
  );

  it(
    'ends an aborted request with ModelError kind "aborted", after or before it starts',
    async () => {
      const controller = new AbortController();
      const received: ModelStreamEvent[] = [];
      const aborted = await failure(
        (async () => {
          for await (const event of provider.stream(ask('hello', { maxTokens: 200 }), { signal: controller.signal })) {
            received.push(event);
            if (event.type === 'text_delta') controller.abort();
          }
        })(),
      );
      expect(aborted.kind).toBe('aborted');
      expect(received.some((event) => event.type === 'done')).toBe(false);
      expect(received.length).toBeLessThan(200);

      const early = await failure(collect(provider.stream(ask('hello'), { signal: AbortSignal.abort() })));
      expect(early.kind).toBe('aborted');

      // The model is free again afterwards.
      const after = await collect(provider.stream(ask('hello', { maxTokens: 2 }), {}));
      expect(after[after.length - 1]).toMatchObject({ type: 'done', usage: { output: 2 } });
    },
    SLOW,
  );

  it(
    'stops generating when the consumer stops reading, and serves queued requests in turn',
    async () => {
      for await (const event of provider.stream(ask('hello', { maxTokens: 200 }), {})) {
        if (event.type === 'text_delta') break;
      }
      const [first, second] = await Promise.all([
        collect(provider.stream(ask('hello', { maxTokens: 2 }), {})),
        collect(provider.stream(ask('world', { maxTokens: 3 }), {})),
      ]);
      expect(first[first.length - 1]).toMatchObject({ type: 'done', usage: { output: 2 } });
      expect(second[second.length - 1]).toMatchObject({ type: 'done', usage: { output: 3 } });
    },
    SLOW,
  );

  it(
    'reports a prompt longer than the context window as context_overflow',
    async () => {
      const huge = 'hello world '.repeat(1500);
      const overflow = await failure(collect(provider.stream(ask(huge), {})));
      expect(overflow.kind).toBe('context_overflow');
    },
    SLOW,
  );

  it(
    "answers a request naming another file with that file alone, and frees it; the configured file's is reused",
    async () => {
      const other = writeTinyLlamaGguf(join(stateDir, 'models', 'other.gguf'), { seed: 5 });
      const loadsOf = (file: string) =>
        kernel.logs.filter((record) => record.message.startsWith(`loaded ${file} `)).length;
      for (let round = 1; round <= 2; round++) {
        const events = await collect(provider.stream(ask('hi', { maxTokens: 2, endpoint: { modelPath: other } }), {}));
        expect(events[events.length - 1]).toMatchObject({ type: 'done', usage: { output: 2 } });
        // Loaded again each time: the first one was freed when its answer ended.
        expect(loadsOf(other)).toBe(round);
      }
      // The configured model stays loaded throughout, and so does the backend it runs on.
      expect(provider.backendRequested).toBe(true);
      const configured = join(stateDir, 'models', 'tiny.gguf');
      const same = await collect(provider.stream(ask('hi', { maxTokens: 2, endpoint: { modelPath: configured } }), {}));
      expect(same[same.length - 1]).toMatchObject({ type: 'done' });
      expect(loadsOf(configured)).toBe(1);
    },
    SLOW,
  );

  it(
    'names a file llama.cpp cannot load, with its reason, as invalid_request',
    async () => {
      const broken = join(stateDir, 'models', 'cut.gguf');
      const whole = writeTinyLlamaGguf(join(stateDir, 'models', 'whole.gguf'), { seed: 6 });
      const bytes = readFileSync(whole);
      // A download cut short: a valid header, tensor data missing.
      writeFileSync(broken, bytes.subarray(0, Math.floor(bytes.length / 2)));
      const cut = await failure(collect(provider.stream(ask('hi', { endpoint: { modelPath: broken } }), {})));
      expect(cut.kind).toBe('invalid_request');
      expect(cut.message).toContain(`could not load ${broken} as a GGUF model`);
      expect(cut.message).toMatch(/not within the file bounds/);
      const missing = await failure(
        collect(provider.stream(ask('hi', { endpoint: { modelPath: join(stateDir, 'nope.gguf') } }), {})),
      );
      expect(missing).toEqual({
        kind: 'invalid_request',
        message: `llama-cpp: model file not found: ${join(stateDir, 'nope.gguf')}`,
      });
    },
    SLOW,
  );

  it('frees the backend when the kernel stops', async () => {
    await kernel.stop();
    expect(provider.backendRequested).toBe(false);
  });
});

describe('llama-cpp provider without a model', () => {
  it('names the config key when modelPath is unset, without importing the backend', async () => {
    const kernel = await createTestKernel({ plugins: [PLUGIN_DIR] });
    try {
      const provider = (await kernel.capabilities.get('provider', 'llama-cpp')) as TestProvider;
      expect(await provider.models!()).toEqual([expect.objectContaining({ id: 'local', contextWindow: 2048 })]);
      const missing = await failure(collect(provider.stream(ask('hi'), {})));
      expect(missing.kind).toBe('invalid_request');
      expect(missing.message).toContain(MODEL_PATH_KEY);
      expect(provider.backendRequested).toBe(false);
    } finally {
      await kernel.dispose();
    }
  });

  it(
    'answers a request naming a file, then frees the model and the backend it started',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'claw-llama-once-'));
      const kernel = await createTestKernel({
        plugins: [PLUGIN_DIR],
        config: { plugins: { entries: { 'llama-cpp': { config: { threads: 1 } } } } },
      });
      try {
        const file = writeTinyLlamaGguf(join(dir, 'probe.gguf'), { seed: 7 });
        const provider = (await kernel.capabilities.get('provider', 'llama-cpp')) as TestProvider;
        const events = await collect(provider.stream(ask('hi', { maxTokens: 2, endpoint: { modelPath: file } }), {}));
        expect(events[events.length - 1]).toMatchObject({ type: 'done', stopReason: 'length', usage: { output: 2 } });
        expect(provider.backendRequested).toBe(false);
        // Still nothing configured for ordinary requests.
        expect((await failure(collect(provider.stream(ask('hi'), {})))).message).toContain(MODEL_PATH_KEY);
      } finally {
        await kernel.dispose();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    SLOW,
  );

  it('names the resolved path when the file is missing', async () => {
    const kernel = await createTestKernel({
      plugins: [PLUGIN_DIR],
      config: {
        plugins: { entries: { 'llama-cpp': { config: { modelPath: 'models/nope.gguf', contextSize: 512 } } } },
      },
    });
    try {
      const provider = (await kernel.capabilities.get('provider', 'llama-cpp')) as TestProvider;
      expect(await provider.models!()).toEqual([expect.objectContaining({ id: 'nope', contextWindow: 512 })]);
      const missing = await failure(collect(provider.stream(ask('hi'), {})));
      expect(missing.kind).toBe('invalid_request');
      expect(missing.message).toContain(join(kernel.stateDir, 'models', 'nope.gguf'));
      expect(missing.message).toContain(MODEL_PATH_KEY);
    } finally {
      await kernel.dispose();
    }
  });

  it('rejects config the schema does not allow', async () => {
    const kernel = await createTestKernel({
      plugins: [PLUGIN_DIR],
      config: { plugins: { entries: { 'llama-cpp': { config: { modelPath: 'x.gguf', gpu: 'cuda' } } } } },
    });
    try {
      expect(kernel.issues()).toEqual([
        expect.objectContaining({ level: 'error', path: 'plugins.entries.llama-cpp.config.gpu', owner: 'llama-cpp' }),
      ]);
      await expect(kernel.capabilities.get('provider', 'llama-cpp')).rejects.toThrow();
    } finally {
      await kernel.dispose();
    }
  });
});

describe('toChatHistory', () => {
  it('turns the loop conversation into alternating chat turns', () => {
    const history = toChatHistory('Be brief.', [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'let me look' },
          { type: 'text', text: 'Checking.' },
          { type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a.txt' } },
        ],
      },
      { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: 'contents' }] },
      {
        role: 'toolResult',
        toolCallId: 'c2',
        toolName: 'exec',
        content: [{ type: 'text', text: 'boom' }],
        isError: true,
      },
      { role: 'user', content: 'And now?' },
    ]);
    expect(history).toEqual([
      { type: 'system', text: 'Be brief.' },
      { type: 'user', text: `What is this?\n${IMAGE_NOTE}` },
      { type: 'model', response: ['Checking.\n[called tool read with {"path":"a.txt"}]'] },
      { type: 'user', text: 'Tool read returned:\ncontents\n\nTool exec failed:\nboom\n\nAnd now?' },
    ]);
  });

  it('leaves out an empty system prompt and empty assistant turns', () => {
    expect(
      toChatHistory('  ', [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm' }] },
      ]),
    ).toEqual([{ type: 'user', text: 'hi' }]);
  });
});
