import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type KernelConfig, type LogRecord } from '../sdk/index.js';
import { readManifest } from '../host/manifest.js';
import type { MemoryBackend, MemorySyncProgress } from '../sdk/index.js';
import { CONTRACT_CORPUS, memoryContractSuite } from '../sdk/memory/contract.js';
import type { EmbeddingProvider } from '../sdk/memory/embeddings.js';
import { createHashEmbedder } from './fakes/hash-embedder.js';
import { resolveMemorySettings } from '../plugins/memory-core/settings.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { MiniSearchMemoryIndex } from '../plugins/memory-minisearch/memory-index.js';
import { parseIndex } from '../plugins/memory-minisearch/store.js';
import { VectorStore } from '../plugins/memory-minisearch/vectors.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { REPO, tempDir } from './helpers.js';
import { memoryRanking } from '../plugins/memory-core/ranking.js';
import { memoryFiles } from '../plugins/memory-core/files.js';
import { memoryText } from '../plugins/memory-core/text.js';

const PLUGIN = join(REPO, 'plugins', 'memory-minisearch');
/** The embedding providers are the embeddings plugin's service. */
const EMBEDDINGS = join(REPO, 'plugins', 'embeddings');
const FILES = Object.keys(CONTRACT_CORPUS).length;

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});

const openaiMemory = () => ({ provider: 'openai', remote: { baseUrl: fake.openaiBaseUrl, apiKey: 'k' } });

describe('with embeddings (fake OpenAI)', () => {
  memoryContractSuite({
    name: 'memory-minisearch',
    plugin: PLUGIN,
    plugins: [EMBEDDINGS],
    backend: 'minisearch',
    config: () => ({ agents: { defaults: { memorySearch: openaiMemory() } } }),
  });
});

describe('keyword-only', () => {
  memoryContractSuite({
    name: 'memory-minisearch',
    plugin: PLUGIN,
    plugins: [EMBEDDINGS],
    backend: 'minisearch',
    config: () => ({ agents: { defaults: { memorySearch: { provider: 'none' } } } }),
  });
});

// ── Helpers ──────────────────────────────────────────────────────────────────────────

function writeFiles(workspace: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(workspace, name, '..'), { recursive: true });
    writeFileSync(join(workspace, name), `${text}\n`);
  }
}

/** A workspace with the contract corpus and indexes over it, outside any kernel. */
function corpusIn(memorySearch: Record<string, unknown> = {}) {
  const stateDir = tempDir('claw-minisearch-');
  const workspace = join(stateDir, 'workspace');
  writeFiles(workspace, CONTRACT_CORPUS);
  const logs: LogRecord[] = [];
  const logger = createLogger({ level: 'debug', sink: (record) => logs.push(record) });
  const settings = (more: Record<string, unknown> = {}) =>
    resolveMemorySettings({ agents: { defaults: { memorySearch: { ...memorySearch, ...more } } } } as KernelConfig, {
      agentId: 'main',
      workspaceDir: workspace,
      stateDir,
    });
  const open = (
    provider?: EmbeddingProvider,
    options: { fallback?: EmbeddingProvider; more?: Record<string, unknown> } = {},
  ) =>
    new MiniSearchMemoryIndex(
      settings(options.more),
      { logger, ranking: memoryRanking, files: memoryFiles, text: memoryText },
      {
        provider,
        fallback: options.fallback,
        reason: provider ? provider.id : 'memorySearch.provider is "none": keyword search only',
      },
    );
  return {
    stateDir,
    workspace,
    logs,
    open,
    indexFile: join(stateDir, 'memory', 'main.minisearch.json'),
    vectorFile: join(stateDir, 'memory', 'main.minisearch.vectors.bin'),
  };
}

const search = (
  index: MiniSearchMemoryIndex,
  query: string,
  options: { maxResults?: number; minScore?: number } = {},
) => index.search(query, { maxResults: options.maxResults ?? 6, minScore: options.minScore ?? 0.35 });

/** An embedder that can be told to fail, counting what it was asked to embed. */
function flakyEmbedder(options: { model?: string } = {}) {
  const inner = createHashEmbedder({ model: options.model });
  const state = { failing: false, texts: [] as string[] };
  const provider: EmbeddingProvider = {
    id: 'flaky',
    model: inner.model,
    fingerprint: `flaky:${inner.model}`,
    async embed(texts) {
      if (state.failing) throw new Error('HTTP 503 upstream unavailable');
      state.texts.push(...texts);
      return inner.embed(texts);
    },
  };
  return Object.assign(state, { provider });
}

/** A token-hash embedder that also knows one synonym, to show vector-only recall. */
function synonymEmbedder(): EmbeddingProvider {
  const inner = createHashEmbedder();
  return {
    id: 'synonyms',
    model: inner.model,
    fingerprint: 'synonyms:hash-64',
    embed: (texts) => inner.embed(texts.map((text) => text.replace(/espresso/gi, 'coffee ethiopia dark roast'))),
  };
}

// ── The plugin ───────────────────────────────────────────────────────────────────────

describe('memory-minisearch plugin', () => {
  it('declares the memory slot, both tools, the CLI command and the sync service', () => {
    const result = readManifest(PLUGIN);
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (!result.ok) return;
    expect(result.manifest).toMatchObject({
      id: 'memory-minisearch',
      kind: 'memory',
      enabledByDefault: true,
      tools: ['memory_search', 'memory_get'],
      cliCommands: [{ name: 'memory', hasSubcommands: true }],
      services: ['memory-minisearch-sync'],
    });
  });

  it('loads minisearch lazily, not when the plugin module is imported', () => {
    for (const file of ['index.ts', 'memory-index.ts', 'engine.ts', 'store.ts', 'vectors.ts', 'rank.ts']) {
      const text = readFileSync(join(PLUGIN, file), 'utf8');
      expect(text, file).not.toMatch(/^import\s+(?!type\b)[^;]*from\s+['"]minisearch['"]/m);
    }
    expect(readFileSync(join(PLUGIN, 'engine.ts'), 'utf8')).toMatch(/import\('minisearch'\)/);
  });
});

// ── Persistence through the kernel ───────────────────────────────────────────────────

describe('persistence across kernels', () => {
  const boot = (stateDir: string, memorySearch: Record<string, unknown>) =>
    createTestKernel({
      plugins: [PLUGIN, join(REPO, 'plugins', 'memory-core'), EMBEDDINGS],
      stateDir,
      config: { agents: { defaults: { memorySearch } }, plugins: { slots: { memory: 'memory-minisearch' } } },
    });
  const slot = async (kernel: TestKernel): Promise<MemoryBackend> => (await kernel.capabilities.slot('memory'))!;
  const embeddingRequests = () => fake.requests.filter((request) => request.api === 'embeddings');

  it('a new kernel on the same state dir answers from the saved index, embedding only the query', async () => {
    const stateDir = tempDir('claw-minisearch-');
    const first = await boot(stateDir, openaiMemory());
    writeFiles(first.paths.workspaceDir, CONTRACT_CORPUS);
    const built = await (await slot(first)).sync!({ agentId: 'main', force: true });
    expect(built).toMatchObject({ files: FILES, indexed: FILES });
    expect(built.embedded).toBe(built.chunks);
    await first.dispose();
    expect(existsSync(join(stateDir, 'memory', 'main.minisearch.json'))).toBe(true);
    expect(existsSync(join(stateDir, 'memory', 'main.minisearch.vectors.bin'))).toBe(true);

    const before = embeddingRequests().length;
    const second = await boot(stateDir, openaiMemory());
    try {
      const memory = await slot(second);
      expect(await memory.status({ agentId: 'main' })).toMatchObject({
        backend: 'minisearch',
        files: FILES,
        chunks: built.chunks,
        mode: 'hybrid',
        provider: 'openai',
      });
      const result = await memory.search('websocket reconnect bug', { agentId: 'main' });
      expect(result).toMatchObject({
        backend: 'minisearch',
        mode: 'hybrid',
        provider: 'openai',
        model: 'text-embedding-3-small',
      });
      expect(result.results[0]?.path).toBe('memory/2026-11-02.md');
      expect(await memory.sync!({ agentId: 'main' })).toMatchObject({
        indexed: 0,
        skipped: FILES,
        embedded: 0,
        rebuilt: false,
      });
      // The only embedding request after the restart is the query itself.
      expect(
        embeddingRequests()
          .slice(before)
          .map((request) => request.body.input),
      ).toEqual([['websocket reconnect bug']]);
    } finally {
      await second.dispose();
    }
  });

  it.each([
    ['torn', (text: string) => text.slice(0, Math.floor(text.length / 2))],
    ['garbage', () => '\u0000\u00ff not json at all'],
    [
      'well-formed JSON of the wrong shape',
      () => JSON.stringify({ format: 'claw-memory-minisearch', version: 1, params: {} }),
    ],
    [
      'MiniSearch part missing a chunk',
      (text: string) => {
        const raw = JSON.parse(text);
        raw.minisearch.documentCount -= 1;
        return JSON.stringify(raw);
      },
    ],
  ])('a damaged index file (%s) is logged and rebuilt, not a crash', async (_label, damage) => {
    const stateDir = tempDir('claw-minisearch-');
    const first = await boot(stateDir, { provider: 'none' });
    writeFiles(first.paths.workspaceDir, CONTRACT_CORPUS);
    await (
      await slot(first)
    ).sync!({ agentId: 'main', force: true });
    await first.dispose();
    const file = join(stateDir, 'memory', 'main.minisearch.json');
    writeFileSync(file, damage(readFileSync(file, 'utf8')));

    const second = await boot(stateDir, { provider: 'none' });
    try {
      const memory = await slot(second);
      // The start-up sync is already rebuilding in the background; wait for it, then ask.
      expect(await memory.sync!({ agentId: 'main' })).toMatchObject({ files: FILES });
      const result = await memory.search('OPS-4711', { agentId: 'main' });
      expect(result.results[0]?.path).toBe('memory/2026-11-02.md');
      expect(
        second.logs.some((record) => record.level === 'warn' && record.message.includes(`${file} is unreadable`)),
      ).toBe(true);
      // Rewritten whole by the rebuild.
      expect(parseIndex(readFileSync(file, 'utf8')).chunks.length).toBeGreaterThanOrEqual(FILES);
    } finally {
      await second.dispose();
    }
  });
});

// ── Sync ─────────────────────────────────────────────────────────────────────────────

describe('sync', () => {
  it('reports every phase through onProgress, and writes nothing when nothing changed', async () => {
    const b = corpusIn({ remote: { batchSize: 3 } });
    const index = b.open(createHashEmbedder());
    const events: MemorySyncProgress[] = [];
    const stats = await index.sync({ onProgress: (progress) => events.push(progress) });
    expect(stats).toMatchObject({
      files: FILES,
      indexed: FILES,
      skipped: 0,
      removed: 0,
      chunks: FILES,
      embedded: FILES,
      cacheHits: 0,
      rebuilt: false,
    });
    const at = (phase: MemorySyncProgress['phase'], files: number, chunks: number, embedded: number) => ({
      phase,
      files,
      filesTotal: FILES,
      chunks,
      embedded,
    });
    expect(events).toEqual([
      at('scan', 0, 0, 0),
      ...Array.from({ length: FILES }, (_, k) => at('chunk', k + 1, k + 1, 0)),
      at('embed', FILES, FILES, 3),
      at('embed', FILES, FILES, 6),
      at('embed', FILES, FILES, 7),
      at('write', FILES, FILES, 7),
      at('done', FILES, FILES, 7),
    ]);

    const written = readFileSync(b.indexFile, 'utf8');
    writeFileSync(b.indexFile, written.replace('"version":1', '"version":1 ')); // marks the file, stays valid
    events.length = 0;
    expect(await index.sync({ onProgress: (progress) => events.push(progress) })).toMatchObject({
      indexed: 0,
      skipped: FILES,
      embedded: 0,
      rebuilt: false,
    });
    expect(events.map((event) => event.phase)).toEqual(['scan', ...Array(FILES).fill('chunk'), 'done']);
    expect(readFileSync(b.indexFile, 'utf8')).toContain('"version":1 ');
  });

  it('re-indexing unchanged text is served from the embedding cache, also after a restart', async () => {
    const b = corpusIn();
    const embedder = createHashEmbedder();
    const index = b.open(embedder);
    const first = await index.sync({});
    expect(embedder.texts).toBe(first.chunks);

    const forced = await index.sync({ force: true });
    expect(forced).toMatchObject({ rebuilt: true, indexed: FILES, embedded: 0, cacheHits: first.chunks });
    expect(embedder.texts).toBe(first.chunks);

    // A changed file embeds only its own new text; changing it back embeds nothing.
    const garden = join(b.workspace, 'memory', 'projects', 'garden.md');
    const original = readFileSync(garden, 'utf8');
    writeFileSync(garden, `${original}Harvested the first tomatoes in August.\n`);
    expect(await index.sync({})).toMatchObject({ indexed: 1, skipped: FILES - 1, embedded: 1, cacheHits: 0 });
    writeFileSync(garden, original);
    expect(await index.sync({})).toMatchObject({ indexed: 1, embedded: 0, cacheHits: 1 });
    expect(embedder.texts).toBe(first.chunks + 1);
    await index.close();

    const restarted = b.open(embedder);
    expect(await restarted.sync({ force: true })).toMatchObject({
      rebuilt: true,
      embedded: 0,
      cacheHits: first.chunks,
    });
    expect(embedder.texts).toBe(first.chunks + 1);
  });

  it('with cache.enabled false a rebuild embeds everything again', async () => {
    const b = corpusIn({ cache: { enabled: false } });
    const embedder = createHashEmbedder();
    const index = b.open(embedder);
    const first = await index.sync({});
    expect(await index.sync({ force: true })).toMatchObject({ rebuilt: true, embedded: first.chunks, cacheHits: 0 });
    expect(embedder.texts).toBe(2 * first.chunks);
  });

  it('rebuilds everything when chunking or the embedding fingerprint changed, not otherwise', async () => {
    const b = corpusIn();
    const first = b.open(createHashEmbedder());
    await first.sync({});
    await first.close();

    expect(await b.open(createHashEmbedder()).sync({})).toMatchObject({ rebuilt: false, indexed: 0, embedded: 0 });

    const rechunked = b.open(createHashEmbedder(), { more: { chunking: { tokens: 20, overlap: 5 } } });
    const rechunkedStats = await rechunked.sync({});
    expect(rechunkedStats).toMatchObject({ rebuilt: true, indexed: FILES });
    expect(rechunkedStats.chunks).toBeGreaterThan(FILES);
    expect(b.logs.some((record) => record.message.includes('chunking 400/80 → 20/5'))).toBe(true);
    await rechunked.close();

    const otherModel = createHashEmbedder({ dims: 32, model: 'hash-other' });
    const remodelled = b.open(otherModel, { more: { chunking: { tokens: 20, overlap: 5 } } });
    const remodelledStats = await remodelled.sync({});
    expect(remodelledStats).toMatchObject({
      rebuilt: true,
      indexed: FILES,
      embedded: rechunkedStats.chunks,
      cacheHits: 0,
    });
    expect(b.logs.some((record) => record.message.includes('embeddings hash:hash-64 → hash:hash-other'))).toBe(true);
  });

  it('forgets removed files and reports them', async () => {
    const b = corpusIn({ provider: 'none' });
    const index = b.open();
    await index.sync({});
    rmSync(join(b.workspace, 'memory', 'projects'), { recursive: true });
    expect(await index.sync({})).toMatchObject({ files: FILES - 2, removed: 2, indexed: 0 });
    expect((await search(index, 'tomatoes basil')).results).toEqual([]);
    expect(parseIndex(readFileSync(b.indexFile, 'utf8')).chunks.map((chunk) => chunk.path)).not.toContain(
      'memory/projects/garden.md',
    );
  });

  it('an unreadable vector file is logged and its chunks embedded again', async () => {
    const b = corpusIn();
    const embedder = createHashEmbedder();
    const first = b.open(embedder);
    const built = await first.sync({});
    await first.close();
    const bytes = readFileSync(b.vectorFile);
    writeFileSync(b.vectorFile, bytes.subarray(0, bytes.length - 10));

    const again = b.open(embedder);
    expect(await again.sync({})).toMatchObject({ rebuilt: false, indexed: 0, embedded: built.chunks });
    expect(
      b.logs.some((record) => record.level === 'warn' && record.message.includes(`${b.vectorFile} is unreadable`)),
    ).toBe(true);
    expect(VectorStore.decode(readFileSync(b.vectorFile)).size).toBe(built.chunks);
  });

  it('an embedding failure during sync keeps keyword search working and is repaired by a later sync', async () => {
    const b = corpusIn();
    const flaky = flakyEmbedder();
    flaky.failing = true;
    const index = b.open(flaky.provider);
    expect(await index.sync({})).toMatchObject({ indexed: FILES, embedded: 0 });
    expect(b.logs.some((record) => record.level === 'warn' && record.message.includes('HTTP 503'))).toBe(true);

    // Query embedding still fails: keyword search, said so.
    const down = await search(index, 'websocket reconnect bug');
    expect(down).toMatchObject({
      mode: 'keyword',
      notice: expect.stringMatching(/embedding the query failed \(HTTP 503/),
    });
    expect(down.results[0]?.path).toBe('memory/2026-11-02.md');

    // The provider is back for queries, but no chunk has a vector yet.
    flaky.failing = false;
    expect(await search(index, 'websocket reconnect bug')).toMatchObject({
      mode: 'keyword',
      notice: expect.stringMatching(/no chunk has an embedding yet \(HTTP 503/),
    });

    const repaired = await index.sync({});
    expect(repaired).toMatchObject({ indexed: 0, embedded: FILES });
    const up = await search(index, 'websocket reconnect bug');
    expect(up.mode).toBe('hybrid');
    expect(up.notice).toBeUndefined();
    expect(up.results[0]?.path).toBe('memory/2026-11-02.md');
    expect((await index.status({})).embeddings).toMatchObject({ chunks: FILES, missing: 0 });
  });

  it('a chunk whose embedding failed still ranks by its keywords among embedded ones', async () => {
    const b = corpusIn();
    const flaky = flakyEmbedder();
    const index = b.open(flaky.provider);
    await index.sync({});
    writeFiles(b.workspace, { 'memory/projects/garden.md': '# Garden\n\nThe zucchini plants got powdery mildew.' });
    flaky.failing = true;
    expect(await index.sync({})).toMatchObject({ indexed: 1, embedded: 0 });
    flaky.failing = false;
    const result = await search(index, 'zucchini mildew');
    expect(result).toMatchObject({
      mode: 'hybrid',
      notice: expect.stringContaining(`1 of ${FILES} chunks have no embedding yet (HTTP 503`),
    });
    expect(result.results[0]).toMatchObject({ path: 'memory/projects/garden.md', score: 1 });
  });

  it('falls back to the configured fallback provider when the primary fails during sync', async () => {
    const b = corpusIn();
    const primary = flakyEmbedder();
    primary.failing = true;
    const fallback = createHashEmbedder({ model: 'hash-fallback' });
    const index = b.open(primary.provider, { fallback });
    expect(await index.sync({})).toMatchObject({ indexed: FILES, embedded: FILES });
    expect(fallback.texts).toBe(FILES);
    const result = await search(index, 'tomatoes basil balcony');
    expect(result).toMatchObject({
      mode: 'hybrid',
      provider: 'hash',
      model: 'hash-fallback',
      notice: expect.stringContaining('fallback'),
    });
    expect(result.results[0]?.path).toBe('memory/projects/garden.md');
    expect(await index.status({})).toMatchObject({
      provider: 'hash',
      fallback: expect.stringContaining('flaky failed'),
    });
  });
});

// ── Search ───────────────────────────────────────────────────────────────────────────

describe('search', () => {
  it('keyword-only: scores relative to the best hit, threshold minScore × textWeight, and a notice', async () => {
    const b = corpusIn({ provider: 'none' });
    const index = b.open();
    await index.sync({});
    const result = await search(index, 'Alice budget travel decision');
    expect(result).toMatchObject({
      backend: 'minisearch',
      mode: 'keyword',
      notice: 'keyword search only: memorySearch.provider is "none"',
    });
    expect(result.provider).toBeUndefined();
    const scores = result.results.map((hit) => hit.score);
    expect(scores[0]).toBe(1);
    // MEMORY.md matches "Alice" and "budget" only: below minScore, above minScore × 0.3.
    const weak = result.results.find((hit) => hit.path === 'MEMORY.md');
    expect(weak?.score).toBeGreaterThanOrEqual(0.35 * 0.3);
    expect(weak?.score).toBeLessThan(0.35);
    expect(scores.every((score) => score >= 0.35 * 0.3)).toBe(true);
    expect(
      (await search(index, 'Alice budget travel decision', { minScore: 1 })).results.map((hit) => hit.path),
    ).toEqual(['memory/2026-11-01.md']);
  });

  it('matches prefixes only of four letters or more, and nothing fuzzy', async () => {
    const b = corpusIn({ provider: 'none' });
    writeFiles(b.workspace, { 'memory/extra.md': 'Reviewed budgets for the bus depot.' });
    const index = b.open();
    await index.sync({});
    expect((await search(index, 'budg')).results.map((hit) => hit.path).sort()).toEqual([
      'MEMORY.md',
      'memory/2026-11-01.md',
      'memory/extra.md',
    ]);
    // Three letters match whole words only ("tom" is not "tomatoes"); misspellings match nothing.
    expect((await search(index, 'tom')).results).toEqual([]);
    expect((await search(index, 'bug')).results.map((hit) => hit.path)).toEqual(['memory/2026-11-02.md']);
    expect((await search(index, 'tomatos')).results).toEqual([]);
  });

  it('hybrid: keyword candidates get vector scores, and the vector scan finds what no keyword matches', async () => {
    const b = corpusIn();
    const index = b.open(synonymEmbedder());
    await index.sync({});
    const result = await search(index, 'Alice budget', { minScore: 0 });
    expect(result).toMatchObject({ mode: 'hybrid', provider: 'synonyms', model: 'hash-64' });
    expect(result.results[0]?.path).toBe('memory/2026-11-01.md');
    for (const hit of result.results) expect(hit.score > 0 && hit.score <= 1).toBe(true);
    expect(result.results).toEqual([...result.results].sort((a, b) => b.score - a.score));
    // No chunk contains "espresso": only the embedding knows it is about coffee.
    const semantic = await search(index, 'espresso', { minScore: 0.1 });
    expect(semantic.mode).toBe('hybrid');
    expect(semantic.results[0]?.path).toBe('MEMORY.md');
    expect((await search(index, 'espresso')).results).toEqual([]); // 0.7 × cosine alone stays under minScore 0.35
  });

  it('hybrid.enabled false answers by vector similarity alone', async () => {
    const b = corpusIn({ query: { hybrid: { enabled: false } } });
    const index = b.open(createHashEmbedder());
    await index.sync({});
    const result = await search(index, 'tomatoes basil balcony', { minScore: 0.2 });
    expect(result.mode).toBe('vector');
    expect(result.results[0]?.path).toBe('memory/projects/garden.md');
  });

  it('finds Chinese and Japanese words inside unspaced text through the SDK tokenizer', async () => {
    const b = corpusIn({ provider: 'none' });
    const index = b.open();
    await index.sync({});
    expect((await search(index, '混合检索')).results[0]?.path).toBe('memory/2026-11-03.md');
    expect((await search(index, '大阪')).results[0]?.path).toBe('memory/2026-11-04.md');
  });

  it('labels extra-path hits with their source', async () => {
    const b = corpusIn({ provider: 'none' });
    const notes = join(b.stateDir, 'team-notes');
    writeFiles(notes, { 'runbook.md': '# Runbook\n\nRotate the Grafana API token every quarter.' });
    const index = b.open(undefined, { more: { extraPaths: [notes] } });
    await index.sync({});
    expect((await search(index, 'Grafana token')).results[0]).toMatchObject({
      path: 'extra/team-notes/runbook.md',
      source: 'extra',
    });
    expect((await search(index, 'coffee Ethiopia')).results[0]).toMatchObject({ path: 'MEMORY.md', source: 'memory' });
  });

  it('never throws: an empty query and an aborted one answer without results or by keyword', async () => {
    const b = corpusIn();
    const index = b.open(flakyEmbedder().provider);
    await index.sync({});
    expect(await search(index, '   ')).toMatchObject({ results: [], backend: 'minisearch' });
    const aborting: EmbeddingProvider = {
      id: 'slow',
      model: 'm',
      fingerprint: 'flaky:hash-64',
      embed: async (_texts, options) => {
        options?.signal?.throwIfAborted();
        return [];
      },
    };
    const again = b.open(aborting);
    const controller = new AbortController();
    controller.abort(new Error('user cancelled'));
    const result = await again.search('OPS-4711', { maxResults: 6, minScore: 0.35, signal: controller.signal });
    expect(result).toMatchObject({ mode: 'keyword', notice: expect.stringContaining('user cancelled') });
    expect(result.results[0]?.path).toBe('memory/2026-11-02.md');
  });

  it('status reports the index, mode and why there are no embeddings', async () => {
    const b = corpusIn({ provider: 'none' });
    const index = b.open();
    expect(await index.status({})).toMatchObject({
      backend: 'minisearch',
      files: 0,
      chunks: 0,
      mode: 'keyword',
      lastSync: null,
    });
    await index.sync({});
    const status = await index.status({ deep: true });
    expect(status).toMatchObject({
      backend: 'minisearch',
      indexPath: b.indexFile,
      files: FILES,
      mode: 'keyword',
      reason: expect.stringContaining('"none"'),
      lastSync: { files: FILES, indexed: FILES, at: expect.any(String) },
      indexBytes: expect.any(Number),
    });
    expect(status.provider).toBeUndefined();
  });
});
