/**
 * OpenClaw's environment conventions for model providers, and where memory embeddings go:
 * `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` name a provider's endpoint when config names none
 * (config > environment > default); a server that is not there fails at once, naming the URL;
 * and memory text follows the OpenAI endpoint the user chose, never api.openai.com behind
 * their back. Every request goes to fakes on 127.0.0.1, and a guard around fetch records (and
 * refuses) anything else.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MemoryBackend } from '../sdk/index.js';
import type { ModelOutcome } from '../sdk/agent/index.js';
import { ModelService } from '../plugins/models/service.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { freePort, REPO } from './helpers.js';

const plugin = (id: string) => join(REPO, 'plugins', id);

let fake: FakeLlm;
let closedPort: number;
let kernel: TestKernel | undefined;
/** Every URL fetched while a test ran; anything off 127.0.0.1 is refused as well as recorded. */
const fetched: string[] = [];
const realFetch = globalThis.fetch;

beforeAll(async () => {
  fake = await startFakeLlm();
  closedPort = await freePort();
  globalThis.fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    fetched.push(url);
    if (new URL(url).hostname !== '127.0.0.1') return Promise.reject(new Error(`test network guard: ${url}`));
    return realFetch(input, init);
  };
});

afterAll(async () => {
  globalThis.fetch = realFetch;
  await fake?.close();
});

beforeEach(() => {
  fake.reset();
  fetched.length = 0;
});

afterEach(async () => {
  await kernel?.dispose();
  kernel = undefined;
});

const offLoopback = () => fetched.filter((url) => new URL(url).hostname !== '127.0.0.1');

async function ask(
  env: Record<string, string>,
  config: Record<string, unknown> = {},
  ref = 'openai/gpt-4.1',
): Promise<{ outcome: ModelOutcome; waits: number[] }> {
  kernel = await createTestKernel({ env, config, plugins: [plugin('openai'), plugin('anthropic')] });
  const waits: number[] = [];
  const service = new ModelService(kernel.plugins.kernelServices, { sleep: async (ms) => void waits.push(ms) });
  const outcome = await service.models.stream(
    service.settings('main'),
    [ref],
    { messages: [{ role: 'user', content: 'hi' }] },
    { signal: new AbortController().signal, onEvent: () => {} },
  );
  return { outcome, waits };
}

describe('provider endpoints from the environment', () => {
  it('OPENAI_BASE_URL sends openai requests (and OPENAI_API_KEY) to that server', async () => {
    fake.script({ text: 'from the local server' });
    const { outcome } = await ask({ OPENAI_BASE_URL: fake.openaiBaseUrl, OPENAI_API_KEY: 'sk-env' });
    expect(outcome.text).toBe('from the local server');
    expect(fake.requests.map((request) => [request.path, request.apiKey])).toEqual([
      ['/v1/chat/completions', 'sk-env'],
    ]);
    expect(offLoopback()).toEqual([]);
  });

  it('with OPENAI_BASE_URL and no key, the request goes without one (a local server takes none)', async () => {
    fake.script({ text: 'keyless' });
    const { outcome } = await ask({ OPENAI_BASE_URL: `${fake.openaiBaseUrl}/` });
    expect(outcome.text).toBe('keyless');
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('models.providers.openai.baseUrl wins over OPENAI_BASE_URL', async () => {
    fake.script({ text: 'from config' });
    const { outcome } = await ask(
      { OPENAI_BASE_URL: `http://127.0.0.1:${closedPort}/v1`, OPENAI_API_KEY: 'sk-env' },
      { models: { providers: { openai: { baseUrl: fake.openaiBaseUrl } } } },
    );
    expect(outcome.text).toBe('from config');
    expect(fetched).toEqual([`${fake.openaiBaseUrl}/chat/completions`]);
  });

  it('ANTHROPIC_BASE_URL does the same for anthropic', async () => {
    fake.script({ text: 'from the anthropic stand-in' });
    const { outcome } = await ask(
      { ANTHROPIC_BASE_URL: fake.anthropicBaseUrl, ANTHROPIC_API_KEY: 'sk-ant-env' },
      {},
      'anthropic/claude-sonnet-4-20250514',
    );
    expect(outcome.text).toBe('from the anthropic stand-in');
    expect(fake.requests.map((request) => [request.api, request.apiKey])).toEqual([['anthropic', 'sk-ant-env']]);
  });

  it('a base URL that is not http(s) is an error naming the variable', async () => {
    await expect(ask({ OPENAI_BASE_URL: 'localhost:8080/v1', OPENAI_API_KEY: 'sk-env' })).rejects.toThrow(
      'OPENAI_BASE_URL is not an http(s) URL: "localhost:8080/v1"',
    );
    expect(fetched).toEqual([]);
  });

  it('nothing listening at OPENAI_BASE_URL fails at once, naming the URL, with no retries', async () => {
    const url = `http://127.0.0.1:${closedPort}/v1`;
    const error = await ask({ OPENAI_BASE_URL: url, OPENAI_API_KEY: 'sk-env' }).then(
      () => undefined,
      (thrown: Error) => thrown,
    );
    expect(error?.message).toContain(`openai cannot connect to ${url}/chat/completions (ECONNREFUSED)`);
    // One attempt: no backoff waits, however the clock runs.
    expect(fetched).toEqual([`${url}/chat/completions`]);
  });
});

describe('memory embeddings go where the user pointed OpenAI', () => {
  const NOTES = {
    'MEMORY.md': '# Notes\n\nThe user keeps bees and prefers tea in the afternoon.\n',
    'memory/2026-01-02.md': 'Fixed the websocket reconnect bug in the gateway today.\n',
  };

  async function syncMemory(env: Record<string, string>, config: Record<string, unknown>) {
    kernel = await createTestKernel({
      env,
      plugins: [plugin('memory-minisearch'), plugin('memory-core'), plugin('embeddings')],
      config: { ...config, plugins: { slots: { memory: 'memory-minisearch' } } },
    });
    for (const [name, text] of Object.entries(NOTES)) {
      const file = join(kernel.paths.workspaceDir, name);
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, text);
    }
    const memory = (await kernel.capabilities.slot('memory')) as MemoryBackend;
    const synced = await memory.sync!({ agentId: 'main', force: true });
    return { synced, status: await memory.status({ agentId: 'main' }) };
  }

  it.each([
    [
      'models.providers.openai.baseUrl',
      () => ({ OPENAI_API_KEY: 'sk-env' }),
      () => ({ models: { providers: { openai: { baseUrl: fake.openaiBaseUrl } } } }),
    ],
    ['OPENAI_BASE_URL', () => ({ OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: fake.openaiBaseUrl }), () => ({})],
  ] as const)(
    'with %s set, the embeddings request and the key go there, never to api.openai.com',
    async (_, env, config) => {
      const { synced, status } = await syncMemory(env(), config());
      expect(synced.embedded).toBeGreaterThan(0);
      const embeddings = fake.requests.filter((request) => request.api === 'embeddings');
      expect(embeddings.length).toBeGreaterThan(0);
      expect(embeddings.every((request) => request.apiKey === 'sk-env')).toBe(true);
      expect(JSON.stringify(embeddings.map((request) => request.body.input))).toContain('keeps bees');
      expect(status).toMatchObject({ provider: 'openai' });
      expect(fetched.length).toBeGreaterThan(0);
      expect(fetched.every((url) => url === `${fake.openaiBaseUrl}/embeddings`)).toBe(true);
      expect(offLoopback()).toEqual([]);
    },
  );

  it('memorySearch.provider "openai" with only OPENAI_BASE_URL embeds keyless there', async () => {
    const { synced } = await syncMemory(
      { OPENAI_BASE_URL: fake.openaiBaseUrl },
      { agents: { defaults: { memorySearch: { provider: 'openai' } } } },
    );
    expect(synced.embedded).toBeGreaterThan(0);
    const embeddings = fake.requests.filter((request) => request.api === 'embeddings');
    expect(embeddings.every((request) => request.headers.authorization === undefined)).toBe(true);
    expect(offLoopback()).toEqual([]);
  });

  it('memorySearch.remote.baseUrl still wins, and the provider key does not follow it to another host', async () => {
    const { status } = await syncMemory(
      { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: `http://127.0.0.1:${closedPort}/v1` },
      { agents: { defaults: { memorySearch: { provider: 'openai', remote: { baseUrl: fake.openaiBaseUrl } } } } },
    );
    expect(fake.requests.filter((request) => request.api === 'embeddings').length).toBeGreaterThan(0);
    expect(fake.requests.every((request) => request.apiKey === undefined)).toBe(true);
    expect(fetched.every((url) => url.startsWith(fake.openaiBaseUrl))).toBe(true);
    expect(status).toMatchObject({ provider: 'openai' });
  });
});
