import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { watchImports } from './import-watch.js';
import type { KernelConfig } from '../kernel/index.js';
import { isModelError } from '../sdk/models.js';
import type {
  BuildOptions,
  ConcreteProviderId,
  EmbeddingContext,
  LocalEmbeddingProvider as LocalProvider,
} from '../plugins/embeddings/providers.js';
import type { EmbeddingProvider } from '../sdk/memory/embeddings.js';
import { sanitizeAndNormalizeEmbedding } from '../plugins/embeddings/normalize.js';
import type { MemorySettings } from '../sdk/memory/settings.js';
import { resolveMemorySettings } from '../plugins/memory-core/settings.js';
import {
  fakeVector,
  startFakeGemini,
  startFakeVoyage,
  type FakeEmbeddingServer,
  type FakeEmbeddingStep,
} from './fakes/embedding-servers.js';
import { fakeEmbedding, startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { writeTinyLlamaGguf } from './fixtures/gguf.js';
import { tempDir, waitFor } from './helpers.js';
import { runtimeDepsService } from '../host/runtime-deps.js';

// Watch the ESM loader itself: the hook reports every node-llama-cpp module URL anything in
// this process resolves, so "not imported before the first embed" is observed, not assumed.
const seen = watchImports('/node_modules/node-llama-cpp/');

// Imported only now, with the hook in place: a static import of node-llama-cpp anywhere in
// the providers' module graph would otherwise run before the hook could see it.
const { createEmbeddingProvider, LocalEmbeddingProvider, planBatches, selectEmbeddingProvider, withFallback } =
  await import('../plugins/embeddings/providers.js');

async function backendImports(): Promise<string[]> {
  await seen.settled();
  return seen.filter((url) => /\/node-llama-cpp\/dist\/index\.js$/.test(url));
}

const SLOW = 60_000;
const FAST_RETRY: BuildOptions = { retry: { attempts: 1 } };
const dir = tempDir('claw-embed-');
const runtimeDeps = runtimeDepsService({ stateDir: dir });

function settingsFor(memorySearch: Record<string, unknown> = {}): MemorySettings {
  const config = { agents: { defaults: { memorySearch } } } as unknown as KernelConfig;
  return resolveMemorySettings(config, { agentId: 'main', workspaceDir: dir, stateDir: dir });
}

function contextFor(
  env: Record<string, string> = {},
  config: Record<string, unknown> = {},
  logger?: EmbeddingContext['logger'],
): EmbeddingContext {
  return { config: config as KernelConfig, env, logger, runtimeDeps };
}

function build(
  id: ConcreteProviderId,
  memorySearch: Record<string, unknown>,
  context = contextFor(),
  options: BuildOptions = FAST_RETRY,
): EmbeddingProvider {
  const built = createEmbeddingProvider(id, settingsFor(memorySearch), context, options);
  if (!built.provider) throw new Error(`expected a provider: ${built.unavailable}`);
  return built.provider;
}

async function failure(promise: Promise<unknown>): Promise<{ kind: string; message: string; status?: number }> {
  try {
    await promise;
  } catch (error) {
    if (!isModelError(error)) throw error;
    return { kind: error.kind, message: error.message, status: error.status };
  }
  throw new Error('expected a ModelError');
}

function norm(vector: number[]): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
}

function closeTo(actual: number[], expected: number[]): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((value, index) => expect(value).toBeCloseTo(expected[index]!, 6));
}

const texts = (n: number, prefix = 'note'): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix} ${i} about topic${i % 7}`);

// ---------------------------------------------------------------------------------------

describe('sanitizeAndNormalizeEmbedding', () => {
  it('scales to unit length', () => {
    expect(sanitizeAndNormalizeEmbedding([3, 4])).toEqual([0.6, 0.8]);
    expect(norm(sanitizeAndNormalizeEmbedding([1, 2, 3, -4, 5]))).toBeCloseTo(1, 12);
  });

  it('turns NaN and ±Infinity into 0 before normalising', () => {
    expect(sanitizeAndNormalizeEmbedding([NaN, 1])).toEqual([0, 1]);
    expect(sanitizeAndNormalizeEmbedding([Infinity, 3, -Infinity, 4])).toEqual([0, 0.6, 0, 0.8]);
  });

  it('leaves vectors with magnitude below 1e-10 as they are (after sanitising)', () => {
    expect(sanitizeAndNormalizeEmbedding([0, 0, 0])).toEqual([0, 0, 0]);
    expect(sanitizeAndNormalizeEmbedding([1e-11, 0])).toEqual([1e-11, 0]);
    expect(sanitizeAndNormalizeEmbedding([Infinity, 0, 0])).toEqual([0, 0, 0]);
  });
});

describe('planBatches', () => {
  it('splits by count and by estimated tokens, and never drops or reorders a text', () => {
    expect(planBatches(['a', 'b', 'c', 'd', 'e'], 2)).toEqual([
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
    // 40 characters ≈ 10 tokens each: a 25-token budget holds two.
    const long = Array.from({ length: 5 }, () => 'x'.repeat(40));
    expect(planBatches(long, 100, 25)).toEqual([
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
    // One text over the budget still gets a batch of its own.
    expect(planBatches(['x'.repeat(400), 'y'], 100, 25)).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(planBatches([], 10)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------

describe('selectEmbeddingProvider', () => {
  let modelPath: string;
  beforeAll(() => {
    modelPath = writeTinyLlamaGguf(join(dir, 'models', 'select.gguf'), { seed: 2 });
  });

  it('auto picks local first when local.modelPath names an existing file, even with keys set', () => {
    const selection = selectEmbeddingProvider(
      settingsFor({ local: { modelPath: 'models/select.gguf' } }),
      contextFor({ OPENAI_API_KEY: 'sk-o' }),
    );
    expect(selection.provider?.id).toBe('local');
    expect(selection.provider).toBeInstanceOf(LocalEmbeddingProvider);
    expect(selection.provider?.fingerprint).toContain(modelPath);
    expect(selection.reason).toContain(modelPath);
  });

  it('auto skips a local model file that does not exist, and says so when nothing else works', () => {
    const withKey = selectEmbeddingProvider(
      settingsFor({ local: { modelPath: 'models/missing.gguf' } }),
      contextFor({ OPENAI_API_KEY: 'sk-o' }),
    );
    expect(withKey.provider?.id).toBe('openai');
    expect(withKey.reason).toContain(`skipped local: model file not found: ${join(dir, 'models', 'missing.gguf')}`);
    const without = selectEmbeddingProvider(settingsFor({ local: { modelPath: 'models/missing.gguf' } }), contextFor());
    expect(without.provider).toBeUndefined();
    expect(without.reason).toContain(join(dir, 'models', 'missing.gguf'));
  });

  it('auto with only OPENAI_API_KEY picks openai with its defaults', () => {
    const { provider, reason } = selectEmbeddingProvider(settingsFor(), contextFor({ OPENAI_API_KEY: 'sk-o' }));
    expect(provider?.id).toBe('openai');
    expect(provider?.model).toBe('text-embedding-3-small');
    expect(provider?.fingerprint).toBe('openai:text-embedding-3-small:https://api.openai.com/v1/embeddings');
    expect(reason).toContain('OPENAI_API_KEY');
    expect(reason).not.toContain('sk-o');
  });

  it('auto with only GEMINI_API_KEY picks gemini', () => {
    const { provider } = selectEmbeddingProvider(settingsFor(), contextFor({ GEMINI_API_KEY: 'g' }));
    expect(provider?.id).toBe('gemini');
    expect(provider?.model).toBe('gemini-embedding-001');
    expect(provider?.fingerprint).toContain(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents',
    );
  });

  it('auto with only VOYAGE_API_KEY picks voyage', () => {
    const { provider } = selectEmbeddingProvider(settingsFor(), contextFor({ VOYAGE_API_KEY: 'v' }));
    expect(provider?.id).toBe('voyage');
    expect(provider?.fingerprint).toContain('https://api.voyageai.com/v1/embeddings');
  });

  it('auto keeps the order openai → gemini → voyage, and config keys count like env keys', () => {
    expect(
      selectEmbeddingProvider(settingsFor(), contextFor({ GEMINI_API_KEY: 'g', VOYAGE_API_KEY: 'v' })).provider?.id,
    ).toBe('gemini');
    expect(
      selectEmbeddingProvider(settingsFor(), contextFor({ GEMINI_API_KEY: 'g', OPENAI_API_KEY: 'o' })).provider?.id,
    ).toBe('openai');
    const config = { models: { providers: { google: { apiKey: 'from-config' } } } };
    expect(selectEmbeddingProvider(settingsFor(), contextFor({ VOYAGE_API_KEY: 'v' }, config)).provider?.id).toBe(
      'gemini',
    );
  });

  it('with nothing usable there is no provider, and the reason names what is missing', () => {
    const { provider, fallback, reason } = selectEmbeddingProvider(settingsFor(), contextFor());
    expect(provider).toBeUndefined();
    expect(fallback).toBeUndefined();
    for (const expected of [
      'keyword search only',
      'local.modelPath',
      'OPENAI_API_KEY',
      'GEMINI_API_KEY',
      'VOYAGE_API_KEY',
    ])
      expect(reason).toContain(expected);
  });

  it('provider "none" means no provider even when keys are there', () => {
    const { provider, reason } = selectEmbeddingProvider(
      settingsFor({ provider: 'none' }),
      contextFor({ OPENAI_API_KEY: 'o' }),
    );
    expect(provider).toBeUndefined();
    expect(reason).toMatch(/none/);
  });

  it('an explicit provider without a key gives no provider and names the missing key', () => {
    for (const [id, key, config] of [
      ['gemini', 'GEMINI_API_KEY', 'models.providers.google.apiKey'],
      ['voyage', 'VOYAGE_API_KEY', 'models.providers.voyage.apiKey'],
      ['openai', 'OPENAI_API_KEY', 'models.providers.openai.apiKey'],
    ] as const) {
      const { provider, reason } = selectEmbeddingProvider(
        settingsFor({ provider: id }),
        contextFor({ SOME_OTHER_KEY: 'x' }),
      );
      expect(provider, id).toBeUndefined();
      expect(reason).toContain(key);
      expect(reason).toContain(config);
    }
    const local = selectEmbeddingProvider(settingsFor({ provider: 'local' }), contextFor({ OPENAI_API_KEY: 'o' }));
    expect(local.provider).toBeUndefined();
    expect(local.reason).toContain('local.modelPath');
  });

  it('a changed model or endpoint changes the fingerprint', () => {
    const env = { OPENAI_API_KEY: 'o' };
    const base = selectEmbeddingProvider(settingsFor({ provider: 'openai' }), contextFor(env)).provider!.fingerprint;
    const otherModel = selectEmbeddingProvider(
      settingsFor({ provider: 'openai', model: 'text-embedding-3-large' }),
      contextFor(env),
    ).provider!.fingerprint;
    const otherEndpoint = selectEmbeddingProvider(
      settingsFor({ provider: 'openai', remote: { baseUrl: 'http://127.0.0.1:9/v1' } }),
      contextFor(env),
    ).provider!.fingerprint;
    expect(new Set([base, otherModel, otherEndpoint]).size).toBe(3);
  });

  it('returns settings.fallback as the fallback, built with its own defaults', () => {
    const selection = selectEmbeddingProvider(
      settingsFor({ provider: 'openai', model: 'text-embedding-3-large', fallback: 'gemini' }),
      contextFor({ OPENAI_API_KEY: 'o', GEMINI_API_KEY: 'g' }),
    );
    expect(selection.provider?.id).toBe('openai');
    expect(selection.fallback?.id).toBe('gemini');
    // The primary's model means nothing to another provider.
    expect(selection.fallback?.model).toBe('gemini-embedding-001');
    expect(selection.reason).toContain('fallback gemini');

    expect(
      selectEmbeddingProvider(
        settingsFor({ provider: 'openai', fallback: 'none' }),
        contextFor({ OPENAI_API_KEY: 'o', GEMINI_API_KEY: 'g' }),
      ).fallback,
    ).toBeUndefined();
    const missing = selectEmbeddingProvider(
      settingsFor({ provider: 'openai', fallback: 'voyage' }),
      contextFor({ OPENAI_API_KEY: 'o' }),
    );
    expect(missing.fallback).toBeUndefined();
    expect(missing.reason).toContain('VOYAGE_API_KEY');
  });

  it('a primary that cannot be built hands over to a usable fallback; behind local, the fallback gets remote.* and model', () => {
    const selection = selectEmbeddingProvider(
      settingsFor({
        provider: 'local',
        fallback: 'openai',
        model: 'custom-embed',
        remote: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'r' },
      }),
      contextFor(),
    );
    expect(selection.provider?.id).toBe('openai');
    expect(selection.provider?.model).toBe('custom-embed');
    expect(selection.provider?.fingerprint).toBe('openai:custom-embed:http://127.0.0.1:9/v1/embeddings');
    expect(selection.reason).toContain('local.modelPath');
  });
});

// ---------------------------------------------------------------------------------------

describe('openai provider against the fake OpenAI server', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm({ apiKeys: ['sk-remote', 'sk-config', 'sk-env'] });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const remote = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    provider: 'openai',
    remote: { baseUrl: `${fake.openaiBaseUrl}/`, apiKey: 'sk-remote', ...extra },
  });

  it('posts {model, input} to {baseUrl}/embeddings with a bearer key and returns normalised vectors in order', async () => {
    const provider = build('openai', remote());
    const input = ['alpha beta', 'gamma delta', 'alpha gamma'];
    const vectors = await provider.embed(input);
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request!.path).toBe('/v1/embeddings');
    expect(request!.headers.authorization).toBe('Bearer sk-remote');
    expect(request!.body).toEqual({ model: 'text-embedding-3-small', input });
    vectors.forEach((vector, i) => closeTo(vector, sanitizeAndNormalizeEmbedding(fakeEmbedding(input[i]!))));
    expect(provider.dims).toBe(64);
    expect(await provider.embed([])).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it('takes the key from remote.apiKey, then models.providers.openai.apiKey, then OPENAI_API_KEY', async () => {
    const config = { models: { providers: { openai: { apiKey: 'sk-config', baseUrl: fake.openaiBaseUrl } } } };
    await build(
      'openai',
      { provider: 'openai', remote: { apiKey: 'sk-remote' } },
      contextFor({ OPENAI_API_KEY: 'sk-env' }, config),
    ).embed(['a']);
    await build('openai', { provider: 'openai' }, contextFor({ OPENAI_API_KEY: 'sk-env' }, config)).embed(['a']);
    const envOnly = { models: { providers: { openai: { baseUrl: fake.openaiBaseUrl } } } };
    await build('openai', { provider: 'openai' }, contextFor({ OPENAI_API_KEY: 'sk-env' }, envOnly)).embed(['a']);
    expect(fake.requests.map((request) => request.headers.authorization)).toEqual([
      'Bearer sk-remote',
      'Bearer sk-config',
      'Bearer sk-env',
    ]);
  });

  it('remote.baseUrl wins over models.providers.openai.baseUrl', async () => {
    const config = { models: { providers: { openai: { baseUrl: 'http://127.0.0.1:9/v1' } } } };
    const provider = build('openai', remote(), contextFor({}, config));
    await provider.embed(['x']);
    expect(fake.requests).toHaveLength(1);
    expect(provider.fingerprint).toContain(fake.openaiBaseUrl);
  });

  it('splits into batches of remote.batchSize, one request each, keeping the order', async () => {
    const provider = build('openai', {
      ...remote(),
      remote: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-remote', batchSize: 2 },
    });
    const input = texts(5);
    const vectors = await provider.embed(input);
    expect(fake.requests.map((request) => request.body.input)).toEqual([
      input.slice(0, 2),
      input.slice(2, 4),
      input.slice(4),
    ]);
    vectors.forEach((vector, i) => closeTo(vector, sanitizeAndNormalizeEmbedding(fakeEmbedding(input[i]!))));
  });

  it('merges headers: provider defaults, then models.providers.openai.headers, then remote.headers (remote wins)', async () => {
    const config = { models: { providers: { openai: { headers: { 'X-Config': 'config', 'X-Both': 'config' } } } } };
    const provider = build(
      'openai',
      remote({ headers: { 'x-both': 'remote', Authorization: 'Bearer sk-env', 'X-Extra': 'e' } }),
      contextFor({}, config),
    );
    await provider.embed(['x']);
    const headers = fake.requests[0]!.headers;
    expect(headers['x-config']).toBe('config');
    expect(headers['x-both']).toBe('remote');
    expect(headers['x-extra']).toBe('e');
    expect(headers.authorization).toBe('Bearer sk-env');
    expect(headers['content-type']).toBe('application/json');
  });

  it('reports a wrong key as auth, naming provider, model, status and where the key came from', async () => {
    const error = await failure(build('openai', remote({ apiKey: 'sk-wrong' })).embed(['x']));
    expect(error.kind).toBe('auth');
    expect(error.status).toBe(401);
    expect(error.message).toContain('openai embeddings (model text-embedding-3-small)');
    expect(error.message).toContain('HTTP 401');
    expect(error.message).toContain('memorySearch.remote.apiKey');
    expect(error.message).not.toContain('sk-wrong');
  });

  it('sends blank texts as a single space, since the API rejects empty input', async () => {
    const vectors = await build('openai', remote()).embed(['', 'real text']);
    expect(fake.requests[0]!.body.input).toEqual([' ', 'real text']);
    expect(vectors).toHaveLength(2);
  });
});

// ---------------------------------------------------------------------------------------

describe('gemini provider against the fake Gemini API', () => {
  let fake: FakeEmbeddingServer;
  beforeAll(async () => {
    fake = await startFakeGemini({ apiKeys: ['g-key', 'g-header'], dims: 768 });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const gemini = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    provider: 'gemini',
    remote: { baseUrl: fake.url, apiKey: 'g-key', ...extra },
  });

  it('posts batchEmbedContents with x-goog-api-key and one request per text', async () => {
    const provider = build('gemini', gemini());
    const input = ['alpha beta', 'gamma'];
    const vectors = await provider.embed(input);
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(request!.headers['x-goog-api-key']).toBe('g-key');
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.query.get('key')).toBeNull();
    expect(request!.body).toEqual({
      requests: input.map((text) => ({ model: 'models/gemini-embedding-001', content: { parts: [{ text }] } })),
    });
    vectors.forEach((vector, i) => closeTo(vector, sanitizeAndNormalizeEmbedding(fakeVector(input[i]!, 768))));
    expect(provider.dims).toBe(768);
  });

  it('never puts more than 100 texts in a request, whatever remote.batchSize says, and keeps the order', async () => {
    const provider = build('gemini', gemini({ batchSize: 500 }));
    const input = texts(250);
    const vectors = await provider.embed(input);
    expect(fake.requests.map((request) => request.body.requests.length)).toEqual([100, 100, 50]);
    expect(vectors).toHaveLength(250);
    for (const i of [0, 99, 100, 199, 249])
      closeTo(vectors[i]!, sanitizeAndNormalizeEmbedding(fakeVector(input[i]!, 768)));
  });

  it('accepts a base URL that already ends in /v1beta and a model spelled models/…', async () => {
    const provider = build('gemini', {
      ...gemini({ baseUrl: `${fake.url}/v1beta/` }),
      model: 'models/text-embedding-004',
    });
    await provider.embed(['x']);
    expect(provider.model).toBe('text-embedding-004');
    expect(fake.requests[0]!.path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
  });

  it('uses GEMINI_API_KEY or models.providers.google.apiKey, and remote.headers win over the key header', async () => {
    const config = { models: { providers: { google: { apiKey: 'g-key', baseUrl: fake.url } } } };
    await build('gemini', { provider: 'gemini' }, contextFor({ GEMINI_API_KEY: 'g-env' }, config)).embed(['x']);
    // The environment's key belongs to Gemini's own host; a custom remote.baseUrl elsewhere does not get it.
    const foreign = selectEmbeddingProvider(
      settingsFor({ provider: 'gemini', remote: { baseUrl: fake.url } }),
      contextFor({ GEMINI_API_KEY: 'g-key' }),
    );
    expect(foreign.provider).toBeUndefined();
    expect(foreign.reason).toMatch(/no API key/);
    await build('gemini', { provider: 'gemini', remote: { baseUrl: fake.url, apiKey: 'g-key' } }).embed(['x']);
    await build('gemini', gemini({ headers: { 'X-Goog-Api-Key': 'g-header' } })).embed(['x']);
    expect(fake.requests.map((request) => request.headers['x-goog-api-key'])).toEqual(['g-key', 'g-key', 'g-header']);
  });

  it("reports Gemini's 400 API_KEY_INVALID as an auth error", async () => {
    const error = await failure(build('gemini', gemini({ apiKey: 'g-wrong' })).embed(['x']));
    expect(error.kind).toBe('auth');
    expect(error.status).toBe(400);
    expect(error.message).toContain('API key not valid');
    expect(error.message).toContain('memorySearch.remote.apiKey');
  });
});

// ---------------------------------------------------------------------------------------

describe('voyage provider against the fake Voyage API', () => {
  let fake: FakeEmbeddingServer;
  beforeAll(async () => {
    fake = await startFakeVoyage({ apiKeys: ['v-key'], dims: 256 });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const voyage = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    provider: 'voyage',
    remote: { baseUrl: fake.url, apiKey: 'v-key', ...extra },
  });

  it('posts {model, input} to /v1/embeddings with a bearer key', async () => {
    const provider = build('voyage', voyage());
    const input = ['alpha beta', 'gamma'];
    const vectors = await provider.embed(input);
    const [request] = fake.requests;
    expect(request!.path).toBe('/v1/embeddings');
    expect(request!.headers.authorization).toBe('Bearer v-key');
    expect(request!.body).toEqual({ model: 'voyage-3.5-lite', input });
    vectors.forEach((vector, i) => closeTo(vector, sanitizeAndNormalizeEmbedding(fakeVector(input[i]!, 256))));
  });

  it('batches by remote.batchSize and never past 1000 texts a request', async () => {
    const small = build('voyage', voyage({ batchSize: 3 }));
    await small.embed(texts(7));
    expect(fake.requests.map((request) => request.body.input.length)).toEqual([3, 3, 1]);
    fake.reset();
    const big = build('voyage', voyage({ batchSize: 5000 }));
    const input = texts(1500, 'v');
    const vectors = await big.embed(input);
    expect(fake.requests.map((request) => request.body.input.length)).toEqual([1000, 500]);
    closeTo(vectors[1499]!, sanitizeAndNormalizeEmbedding(fakeVector(input[1499]!, 256)));
  });

  it('puts vectors back in input order by their index, whatever order the answer lists them in', async () => {
    fake.script({ reversed: true });
    const input = ['first text', 'second text', 'third text'];
    const vectors = await build('voyage', voyage()).embed(input);
    vectors.forEach((vector, i) => closeTo(vector, sanitizeAndNormalizeEmbedding(fakeVector(input[i]!, 256))));
  });

  it('normalises what comes back and zeroes values that are not finite numbers', async () => {
    fake.script({ vectors: [[3, null, 4]] });
    expect(await build('voyage', voyage()).embed(['x'])).toEqual([[0.6, 0, 0.8]]);
  });

  it('treats a wrong number of vectors, or vectors of a new length, as errors', async () => {
    const provider = build('voyage', voyage());
    fake.script({ vectors: [[1, 0]] });
    const short = await failure(provider.embed(['a', 'b']));
    expect(short.message).toContain('1 embeddings for 2 inputs');
    expect(short.message).toContain('voyage embeddings (model voyage-3.5-lite)');

    await provider.embed(['a']);
    expect(provider.dims).toBe(256);
    fake.script({ vectors: [[1, 0, 0]] });
    expect((await failure(provider.embed(['a']))).message).toContain('3-dimensional vector after 256-dimensional');
  });
});

// ---------------------------------------------------------------------------------------

describe.each([
  { id: 'openai' as const, start: async () => startFakeLlm(), base: (server: { url: string }) => `${server.url}/v1` },
  { id: 'gemini' as const, start: async () => startFakeGemini(), base: (server: { url: string }) => server.url },
  { id: 'voyage' as const, start: async () => startFakeVoyage(), base: (server: { url: string }) => server.url },
])('$id HTTP failures', ({ id, start, base }) => {
  let server: FakeLlm | FakeEmbeddingServer;
  const script = (...steps: FakeEmbeddingStep[]): void => {
    if ('scriptEmbeddings' in server) server.scriptEmbeddings(...(steps as Parameters<FakeLlm['scriptEmbeddings']>));
    else server.script(...steps);
  };
  const requests = (): number => server.requests.length;

  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  const provider = (remote: Record<string, unknown> = {}, options: BuildOptions = FAST_RETRY): EmbeddingProvider =>
    build(id, { provider: id, remote: { baseUrl: base(server), apiKey: 'k', ...remote } }, contextFor(), options);

  it.each([
    [401, 'auth'],
    [429, 'rate_limit'],
    [500, 'overloaded'],
  ])('HTTP %i is a clear %s error naming provider, model and status', async (status, kind) => {
    script({ error: { status, message: `scripted failure ${status}` } });
    const error = await failure(provider().embed(['x']));
    expect(error.kind).toBe(kind);
    expect(error.status).toBe(status);
    expect(error.message).toMatch(new RegExp(`^${id} embeddings \\(model [^)]+\\): HTTP ${status} `));
    expect(error.message).toContain(`scripted failure ${status}`);
  });

  it('retries a 500 and a 429 with backoff, but not a 401', async () => {
    const retrying = provider({}, { retry: { attempts: 3, baseDelayMs: 5 } });
    script({ error: { status: 500 } }, { error: { status: 429 } });
    expect(await retrying.embed(['x'])).toHaveLength(1);
    expect(requests()).toBe(3);
    server.reset();
    script({ error: { status: 401 } });
    expect((await failure(retrying.embed(['x']))).kind).toBe('auth');
    expect(requests()).toBe(1);
  });

  it('does not wait out a Retry-After longer than the retry policy allows', async () => {
    const retrying = provider({}, { retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 1_000 } });
    script({ error: { status: 429, retryAfterSeconds: 30 } });
    const started = Date.now();
    expect((await failure(retrying.embed(['x']))).kind).toBe('rate_limit');
    expect(requests()).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('gives up after remote.timeoutMs with a timeout error', async () => {
    script({ hang: true });
    const started = Date.now();
    const error = await failure(provider({ timeoutMs: 200 }, { retry: { attempts: 3, baseDelayMs: 5 } }).embed(['x']));
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('within 200 ms');
    expect(error.message).toContain(`${id} embeddings`);
    expect(Date.now() - started).toBeLessThan(3_000);
    // A timed-out request is not retried: that would multiply the wait.
    expect(requests()).toBe(1);
  });

  it("stops at once when the caller's signal aborts, before or during a request", async () => {
    const controller = new AbortController();
    controller.abort();
    expect((await failure(provider().embed(['x'], { signal: controller.signal }))).kind).toBe('aborted');
    expect(requests()).toBe(0);

    script({ hang: true });
    const live = new AbortController();
    const started = Date.now();
    const embedding = failure(provider().embed(['x'], { signal: live.signal }));
    // Aborted once the request is at the server: during it, not before.
    await waitFor(() => requests() === 1, { what: 'the request to reach the server' });
    live.abort();
    const error = await embedding;
    expect(error.kind).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

// ---------------------------------------------------------------------------------------

describe('local provider through node-llama-cpp', () => {
  let modelPath: string;
  let provider: LocalProvider;
  beforeAll(() => {
    modelPath = writeTinyLlamaGguf(join(dir, 'models', 'tiny.gguf'), { seed: 7 });
  });
  afterAll(() => provider?.close());

  it('builds without importing node-llama-cpp; a pre-aborted call does not import it either', async () => {
    const selection = selectEmbeddingProvider(settingsFor({ provider: 'local', local: { modelPath } }), contextFor());
    provider = selection.provider as LocalProvider;
    expect(provider).toBeInstanceOf(LocalEmbeddingProvider);
    // One thread: vitest runs two test files at once on a two-core machine.
    provider = new LocalEmbeddingProvider({ modelPath, timeoutMs: 300_000, threads: 1, runtimeDeps });
    expect(provider.fingerprint).toBe(`local:tiny:${modelPath}`);
    const controller = new AbortController();
    controller.abort();
    expect((await failure(provider.embed(['x'], { signal: controller.signal }))).kind).toBe('aborted');
    expect(provider.backendRequested).toBe(false);
    expect(await backendImports()).toEqual([]);
    expect(provider.dims).toBeUndefined();
  });

  it(
    "embeds on first use: one normalised vector of the model's 64 dims per text",
    async () => {
      const vectors = await provider.embed([
        'the cat sat on the mat',
        'quarterly revenue report',
        'the cat sat on the mat',
      ]);
      expect(await backendImports()).not.toEqual([]);
      expect(provider.backendRequested).toBe(true);
      expect(provider.dims).toBe(64);
      expect(vectors).toHaveLength(3);
      for (const vector of vectors) {
        expect(vector).toHaveLength(64);
        expect(vector.every(Number.isFinite)).toBe(true);
        expect(norm(vector)).toBeCloseTo(1, 6);
      }
      expect(vectors[2]).toEqual(vectors[0]);
      expect(vectors[1]).not.toEqual(vectors[0]);
    },
    SLOW,
  );

  it(
    'is deterministic across calls and after close() reloads the model',
    async () => {
      const [first] = await provider.embed(['deterministic please']);
      const [again] = await provider.embed(['deterministic please']);
      expect(again).toEqual(first);
      await provider.close();
      expect(provider.backendRequested).toBe(false);
      const [reloaded] = await provider.embed(['deterministic please']);
      expect(reloaded).toEqual(first);
    },
    SLOW,
  );

  it(
    'truncates a text longer than the context and gives blank text a zero vector',
    async () => {
      const [long, blank] = await provider.embed(['word '.repeat(5000), '']);
      expect(long).toHaveLength(64);
      expect(norm(long!)).toBeCloseTo(1, 6);
      expect(blank).toEqual(new Array(64).fill(0));
    },
    SLOW,
  );

  it(
    'stops waiting when the signal aborts during the load, which carries on for the next call',
    async () => {
      const fresh = new LocalEmbeddingProvider({ modelPath, timeoutMs: 300_000, threads: 1, runtimeDeps });
      try {
        const controller = new AbortController();
        const pending = fresh.embed(['x'], { signal: controller.signal });
        setTimeout(() => controller.abort(), 5);
        const started = Date.now();
        expect((await failure(pending)).kind).toBe('aborted');
        expect(Date.now() - started).toBeLessThan(200);
        expect(await fresh.embed(['x'])).toEqual(await provider.embed(['x']));
      } finally {
        await fresh.close();
      }
    },
    SLOW,
  );

  it(
    'gives up on a model that takes longer than local.timeoutMs to load',
    async () => {
      const slow = new LocalEmbeddingProvider({ modelPath, timeoutMs: 1, threads: 1, runtimeDeps });
      const error = await failure(slow.embed(['x']));
      expect(error.kind).toBe('timeout');
      expect(error.message).toContain('loading the model took longer than 1 ms');
      await slow.close();
    },
    SLOW,
  );
});

// ---------------------------------------------------------------------------------------

describe('withFallback', () => {
  let gemini: FakeEmbeddingServer;
  let voyage: FakeEmbeddingServer;
  beforeAll(async () => {
    [gemini, voyage] = await Promise.all([startFakeGemini({ dims: 32 }), startFakeVoyage({ dims: 16 })]);
  });
  afterAll(() => Promise.all([gemini.close(), voyage.close()]));
  beforeEach(() => {
    gemini.reset();
    voyage.reset();
  });

  function pair(): { primary: EmbeddingProvider; fallback: EmbeddingProvider } {
    return {
      primary: build('voyage', { provider: 'voyage', remote: { baseUrl: voyage.url, apiKey: 'v' } }),
      fallback: build('gemini', { provider: 'gemini', remote: { baseUrl: gemini.url, apiKey: 'g' } }),
    };
  }

  function recorder(): EmbeddingContext['logger'] & { warnings: string[]; infos: string[] } {
    const warnings: string[] = [];
    const infos: string[] = [];
    return {
      warnings,
      infos,
      warn: (message) => void warnings.push(message),
      info: (message) => void infos.push(message),
    };
  }

  it('uses the primary while it works, with the primary identity', async () => {
    const { primary, fallback } = pair();
    const logger = recorder();
    const wrapped = withFallback(primary, fallback, logger);
    expect(wrapped.fingerprint).toBe(primary.fingerprint);
    const result = await wrapped.embedWithSource(['hello']);
    expect(result).toMatchObject({ fingerprint: primary.fingerprint, fromFallback: false });
    expect(result.vectors[0]).toHaveLength(16);
    expect(wrapped.dims).toBe(16);
    expect(gemini.requests).toHaveLength(0);
    expect(logger.warnings).toEqual([]);
  });

  it('falls back when the primary fails, logs the reason once, keeps the primary fingerprint, and says who answered', async () => {
    const { primary, fallback } = pair();
    const logger = recorder();
    let clock = 0;
    const wrapped = withFallback(primary, fallback, logger, { retryPrimaryAfterMs: 1_000, now: () => clock });
    voyage.script({ error: { status: 500, message: 'voyage is down' } });

    const first = await wrapped.embedWithSource(['hello world']);
    expect(first.fromFallback).toBe(true);
    expect(first.fingerprint).toBe(fallback.fingerprint);
    closeTo(first.vectors[0]!, sanitizeAndNormalizeEmbedding(fakeVector('hello world', 32)));
    expect(wrapped.fingerprint).toBe(primary.fingerprint);
    expect(wrapped.usingFallback).toBe(true);

    // Within the cool-down the primary is not even asked.
    const second = await wrapped.embed(['again']);
    expect(second[0]).toHaveLength(32);
    expect(voyage.requests).toHaveLength(1);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toContain('voyage is down');
    expect(logger.warnings[0]).toContain('fallback gemini');

    // After it, the primary gets another chance and takes over again.
    clock = 1_000;
    const third = await wrapped.embedWithSource(['back']);
    expect(third.fromFallback).toBe(false);
    expect(wrapped.usingFallback).toBe(false);
    expect(logger.infos.some((line) => line.includes('works again'))).toBe(true);
  });

  it('logs one warning for an outage however many calls fail, and warns again after a recovery', async () => {
    const { primary, fallback } = pair();
    const logger = recorder();
    const wrapped = withFallback(primary, fallback, logger, { retryPrimaryAfterMs: 0 });
    voyage.script({ error: { status: 500 } }, { error: { status: 503 } });
    await wrapped.embed(['a']);
    await wrapped.embed(['b']);
    expect(voyage.requests).toHaveLength(2);
    expect(gemini.requests).toHaveLength(2);
    expect(logger.warnings).toHaveLength(1);
    // A success, then a failure: a new outage, so a new warning.
    voyage.script({ delayMs: 0 }, { error: { status: 500 } });
    await wrapped.embed(['c']);
    await wrapped.embed(['d']);
    expect(logger.warnings).toHaveLength(2);
  });

  it('does not fall back on an abort, and names both failures when the fallback fails too', async () => {
    const { primary, fallback } = pair();
    const logger = recorder();
    const wrapped = withFallback(primary, fallback, logger);
    voyage.script({ hang: true });
    const controller = new AbortController();
    const embedding = failure(wrapped.embed(['x'], { signal: controller.signal }));
    await waitFor(() => voyage.requests.length === 1, { what: 'the primary request to reach the server' });
    controller.abort();
    expect((await embedding).kind).toBe('aborted');
    expect(gemini.requests).toHaveLength(0);
    expect(logger.warnings).toEqual([]);

    voyage.script({ error: { status: 401, message: 'bad voyage key' } });
    gemini.script({ error: { status: 500, message: 'gemini broke' } });
    const error = await failure(wrapped.embed(['x']));
    expect(error.message).toContain('bad voyage key');
    expect(error.message).toContain('gemini broke');
  });

  it(
    'takes over when a local model cannot be loaded (the "local, fallback openai" setup)',
    async () => {
      const broken = join(dir, 'models', 'broken.gguf');
      writeFileSync(broken, 'this is not a GGUF file');
      const fake = await startFakeLlm();
      try {
        const selection = selectEmbeddingProvider(
          settingsFor({
            provider: 'local',
            local: { modelPath: broken },
            fallback: 'openai',
            remote: { baseUrl: fake.openaiBaseUrl, apiKey: 'k' },
          }),
          contextFor(),
          { threads: 1, ...FAST_RETRY },
        );
        expect(selection.provider?.id).toBe('local');
        expect(selection.fallback?.id).toBe('openai');
        const logger = recorder();
        const wrapped = withFallback(selection.provider!, selection.fallback!, logger);
        const result = await wrapped.embedWithSource(['memory text']);
        expect(result.fromFallback).toBe(true);
        closeTo(result.vectors[0]!, sanitizeAndNormalizeEmbedding(fakeEmbedding('memory text')));
        expect(logger.warnings).toHaveLength(1);
        expect(logger.warnings[0]).toContain('could not load the model');
        await wrapped.close();
      } finally {
        await fake.close();
      }
    },
    SLOW,
  );
});
