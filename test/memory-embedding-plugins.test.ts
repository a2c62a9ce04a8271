/**
 * Embedding providers from plugins (plugins/embeddings/plugin-providers.ts): the wrapper's limits
 * and shape checks, and selection by id. The end-to-end path (an OpenClaw plugin installed
 * with `claw plugins install`, memory_search in hybrid mode) is in openclaw-plugins.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { CapabilityInfo, KernelConfig } from '../kernel/index.js';
import { createPluginEmbeddingProvider, selectMemoryEmbeddings } from '../plugins/embeddings/plugin-providers.js';
import { embeddingServiceId, type PluginEmbeddingAdapter } from '../sdk/memory/embeddings.js';
import { invalidEmbeddingAdapter } from '../host/openclaw/embedding.js';
import type { MemorySettings } from '../sdk/memory/settings.js';
import { resolveMemorySettings } from '../plugins/memory-core/settings.js';
import { tempDir } from './helpers.js';

const dir = tempDir('claw-embed-plugins-');
const context = { config: {} as KernelConfig, env: {} };

function settingsFor(memorySearch: Record<string, unknown> = {}): MemorySettings {
  return resolveMemorySettings({ agents: { defaults: { memorySearch } } } as unknown as KernelConfig, {
    agentId: 'main',
    workspaceDir: dir,
    stateDir: dir,
  });
}

function adapter(
  embedBatch: (texts: string[]) => Promise<unknown>,
  extra: Partial<PluginEmbeddingAdapter> = {},
): PluginEmbeddingAdapter & { batches: string[][] } {
  const batches: string[][] = [];
  return {
    id: 'words',
    defaultModel: 'w-3',
    batches,
    create: async ({ model }) => ({
      provider: {
        model,
        embedBatch: async (texts: string[]) => (batches.push(texts), embedBatch(texts) as Promise<number[][]>),
      },
    }),
    ...extra,
  };
}

/** A capability lookup holding the given adapters as embedding-provider services. */
function lookup(adapters: PluginEmbeddingAdapter[]) {
  const services = new Map(adapters.map((entry) => [embeddingServiceId(entry.id), entry]));
  return {
    find: async (_kind: string, name: string) =>
      services.has(name) ? { id: name, api: services.get(name) } : undefined,
    list: (): CapabilityInfo[] =>
      [...services.keys()].map((name) => ({ kind: 'service', name, pluginId: 'words-plugin', loaded: true })),
    routes: async () => [],
  } as never;
}

describe('plugin embedding providers', () => {
  it('batches by remote.batchSize, normalises, and keeps one length per provider', async () => {
    const words = adapter(async (texts) => texts.map((text) => [text.length, 0, 0]));
    const provider = await createPluginEmbeddingProvider(words, settingsFor({ remote: { batchSize: 2 } }), context);
    expect(provider).toMatchObject({ id: 'words', model: 'w-3', fingerprint: 'plugin:words:w-3' });
    expect(await provider.embed(['a', 'bb', 'ccc'])).toEqual([
      [1, 0, 0],
      [1, 0, 0],
      [1, 0, 0],
    ]);
    expect(words.batches).toEqual([['a', 'bb'], ['ccc']]);
    expect(provider.dims).toBe(3);
  });

  it('names what is wrong with what the plugin returns', async () => {
    const settings = settingsFor();
    const tooFew = await createPluginEmbeddingProvider(
      adapter(async () => [[1, 2]]),
      settings,
      context,
    );
    await expect(tooFew.embed(['a', 'b'])).rejects.toThrow(
      'embedding provider "words": returned 1 vectors for 2 texts (expected number[][], one vector per text)',
    );
    const notNumbers = await createPluginEmbeddingProvider(
      adapter(async () => [['x']]),
      settings,
      context,
    );
    await expect(notNumbers.embed(['a'])).rejects.toThrow('vector 0 is not a non-empty list of numbers');
    let call = 0;
    const shifting = await createPluginEmbeddingProvider(
      adapter(async () => [++call === 1 ? [1, 2] : [1, 2, 3]]),
      settings,
      context,
    );
    await shifting.embed(['a']);
    await expect(shifting.embed(['b'])).rejects.toThrow('vector 0 has 3 dimensions, expected 2');
    const slow = await createPluginEmbeddingProvider(
      adapter(() => new Promise(() => {})),
      settingsFor({ remote: { timeoutMs: 20 } }),
      context,
    );
    await expect(slow.embed(['a'])).rejects.toThrow('no vectors within 20 ms (memorySearch.remote.timeoutMs)');
    await expect(
      createPluginEmbeddingProvider({ id: 'empty', create: async () => ({ provider: null }) }, settings, context),
    ).rejects.toThrow(
      'embedding provider "empty": the plugin created no provider with embedBatch(texts) or embed(text)',
    );
  });

  it('rejects adapters that are not OpenClaw-shaped or take a built-in id', () => {
    expect(invalidEmbeddingAdapter({ id: 'x', embed: () => [] })).toBe(
      'embedding provider "x" has no create(options) function',
    );
    expect(invalidEmbeddingAdapter({ id: 'openai', create: () => ({}) })).toContain("is one of memory's own");
    expect(invalidEmbeddingAdapter(adapter(async () => []))).toBeUndefined();
  });

  it('selects a registered id as provider or fallback; an unknown id names the known ones', async () => {
    const words = adapter(async (texts) => texts.map(() => [1, 0]));
    const primary = await selectMemoryEmbeddings(settingsFor({ provider: 'words' }), {
      ...context,
      capabilities: lookup([words]),
    });
    expect(primary.provider?.id).toBe('words');
    expect(primary.reason).toBe('words w-3 (plugin words-plugin)');
    const fallback = await selectMemoryEmbeddings(settingsFor({ provider: 'openai', fallback: 'words' }), {
      ...context,
      capabilities: lookup([words]),
    });
    expect(fallback.provider?.id).toBe('words');
    expect(fallback.reason).toContain('using fallback words w-3');
    await expect(
      selectMemoryEmbeddings(settingsFor({ provider: 'wrods' }), { ...context, capabilities: lookup([words]) }),
    ).rejects.toThrow(
      'memorySearch.provider (agent main) is "wrods", which is neither built in nor registered by an enabled plugin; known: "auto", "local", "openai", "gemini", "voyage", "none", "words"',
    );
  });
});
