import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type KernelConfig, type LogRecord, type Logger } from '../sdk/index.js';
import { CONTRACT_CORPUS, memoryContractSuite } from '../sdk/memory/contract.js';
import { selectEmbeddingProvider } from '../plugins/embeddings/providers.js';
import type { EmbeddingProvider, EmbeddingSelection } from '../sdk/memory/embeddings.js';
import { createHashEmbedder } from './fakes/hash-embedder.js';
import type { MemorySettings } from '../sdk/memory/settings.js';
import { resolveMemorySettings } from '../plugins/memory-core/settings.js';
import { buildFtsQuery, namesIn } from '../plugins/memory-sqlite-engine/fts-query.js';
import { SqliteMemoryIndex } from '../plugins/memory-sqlite-engine/engine.js';
import { sqliteModuleFor } from '../sdk/sqlite.js';
import { REPO, spawnUntil, tempDir } from './helpers.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { memoryRanking } from '../plugins/memory-core/ranking.js';
import { memoryFiles } from '../plugins/memory-core/files.js';
import { memoryText } from '../plugins/memory-core/text.js';
import { contentTerms } from '../plugins/memory-core/query-terms.js';

const require = createRequire(import.meta.url);
// The same better-sqlite3 build the engine picks for this Node (12 on Node 20, 13 from 22).
const Database = require(sqliteModuleFor()) as typeof BetterSqlite3;
const JITI = join(REPO, 'node_modules/jiti/lib/jiti-cli.mjs');

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});

memoryContractSuite({
  name: 'memory-sqlite',
  plugin: join(REPO, 'plugins/memory-sqlite'),
  plugins: [join(REPO, 'plugins/memory-sqlite-engine'), join(REPO, 'plugins/embeddings')],
  backend: 'sqlite',
  config: () => ({
    agents: {
      defaults: { memorySearch: { provider: 'openai', remote: { baseUrl: fake.openaiBaseUrl, apiKey: 'k' } } },
    },
  }),
});

// ── helpers ──────────────────────────────────────────────────────────────────────

function writeFiles(root: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), `${text}\n`);
  }
}

/** Memory settings live in agents.defaults.memorySearch, which the kernel's config type leaves open. */
function configWith(memorySearch: Record<string, unknown>): KernelConfig {
  return { agents: { defaults: { memorySearch } } } as KernelConfig;
}

interface Setup {
  dir: string;
  workspace: string;
  settings(memorySearch?: Record<string, unknown>): MemorySettings;
}

function setup(files: Record<string, string> = CONTRACT_CORPUS): Setup {
  const dir = tempDir('claw-memory-sqlite-');
  const workspace = join(dir, 'workspace');
  writeFiles(workspace, files);
  return {
    dir,
    workspace,
    settings: (memorySearch = {}) =>
      resolveMemorySettings(configWith(memorySearch), { agentId: 'main', workspaceDir: workspace, stateDir: dir }),
  };
}

function recordingLogger(): { logger: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  return { logger: createLogger({ level: 'debug', sink: (record) => records.push(record) }), records };
}

const quiet = createLogger({ level: 'silent' });
const opened: SqliteMemoryIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close().catch(() => undefined);
});

async function open(
  settings: MemorySettings,
  embeddings: EmbeddingSelection,
  logger: Logger = quiet,
): Promise<SqliteMemoryIndex> {
  const index = await SqliteMemoryIndex.open(settings, {
    embeddings,
    logger,
    ranking: memoryRanking,
    files: memoryFiles,
    text: memoryText,
  });
  opened.push(index);
  return index;
}

const hashed = (provider: EmbeddingProvider = createHashEmbedder()): EmbeddingSelection => ({
  provider,
  reason: `test ${provider.model}`,
});
const none: EmbeddingSelection = { reason: 'memorySearch.provider is "none": keyword search only' };
const DEFAULT_QUERY = { maxResults: 6, minScore: 0.35 };

function paths(result: { results: Array<{ path: string }> }): string[] {
  return result.results.map((hit) => hit.path);
}

function scratchFiles(dir: string): string[] {
  return readdirSync(join(dir, 'memory')).filter((name) => name.includes('.rebuild-'));
}

function withDb<T>(path: string, run: (db: BetterSqlite3.Database) => T, vec = false): T {
  const db = new Database(path);
  try {
    if (vec) (require('sqlite-vec') as { load(db: unknown): void }).load(db);
    return run(db);
  } finally {
    db.close();
  }
}

/** A hash embedder whose indexing calls wait until released (queries pass straight through). */
function gatedEmbedder(model = 'hash-64'): EmbeddingProvider & { texts: number; hold(): void; release(): void } {
  const inner = createHashEmbedder({ model });
  let gate: Promise<void> | undefined;
  let open = () => {};
  return {
    id: inner.id,
    model: inner.model,
    fingerprint: inner.fingerprint,
    dims: inner.dims,
    get texts() {
      return inner.texts;
    },
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release() {
      open();
      gate = undefined;
    },
    async embed(texts) {
      if (gate && texts.some((text) => text.includes('\n'))) await gate;
      return inner.embed(texts);
    },
  };
}

// ── the engine ───────────────────────────────────────────────────────────────────

describe('memory-sqlite engine: degraded modes', () => {
  it('without an embedding provider it answers from keywords, with a lower threshold, and says why', async () => {
    const { settings } = setup();
    const index = await open(settings({ provider: 'none' }), none);
    const stats = await index.sync({});
    expect(stats).toMatchObject({ files: 7, indexed: 7, embedded: 0, cacheHits: 0, rebuilt: false });

    const exact = await index.search('OPS-4711', DEFAULT_QUERY);
    expect(exact).toMatchObject({ backend: 'sqlite', mode: 'keyword' });
    expect(exact.notice).toMatch(/^keyword search only: memorySearch\.provider is "none"/);
    expect(exact.provider).toBeUndefined();
    expect(paths(exact)[0]).toBe('memory/2026-11-02.md');
    expect(exact.results[0]!.score).toBe(1);

    // Keyword scores stand alone against minScore × textWeight (0.105), so a weaker keyword
    // hit below 0.35 survives, where in a hybrid search 0.3 × textScore could never pass.
    const weaker = await index.search('quarterly budget travel cut', DEFAULT_QUERY);
    expect(paths(weaker)[0]).toBe('memory/2026-11-01.md');
    const second = weaker.results.find((hit) => hit.path === 'MEMORY.md');
    expect(second?.score).toBeLessThan(0.35);
    expect(second?.score).toBeGreaterThanOrEqual(0.105);

    const status = await index.status({});
    expect(status).toMatchObject({
      backend: 'sqlite',
      mode: 'keyword',
      provider: 'none',
      vector: 'off',
      fts: true,
      files: 7,
      chunks: 7,
    });
    expect(status.notice).toMatch(/keyword search only: memorySearch\.provider is "none"/);
    expect(status.reason).toMatch(/"none"/);
  });

  it('a provider failing with HTTP 500: text is indexed anyway, search says keyword-only and why, and vectors follow once it recovers', async () => {
    fake.reset();
    const { settings } = setup();
    const memorySettings = settings({ provider: 'openai', remote: { baseUrl: fake.openaiBaseUrl, apiKey: 'k' } });
    const embeddings = selectEmbeddingProvider(memorySettings, { config: {}, env: {} }, { retry: { attempts: 1 } });
    const { logger, records } = recordingLogger();
    const index = await open(memorySettings, embeddings, logger);

    fake.scriptEmbeddings(
      ...Array.from({ length: 20 }, () => ({ error: { status: 500, message: 'embedding backend down' } })),
    );
    const failed = await index.sync({});
    expect(failed).toMatchObject({ files: 7, indexed: 7, embedded: 0 });
    expect(records.some((record) => record.level === 'warn' && /HTTP 500/.test(record.message))).toBe(true);

    const status = await index.status({});
    expect(status).toMatchObject({ mode: 'keyword', pendingEmbeddings: 7, provider: 'openai' });
    expect(String(status.lastEmbeddingError)).toMatch(/HTTP 500/);
    expect(String(status.notice)).toMatch(/7 chunks are still waiting for embeddings/);

    const during = await index.search('OPS-4711', DEFAULT_QUERY);
    expect(during.mode).toBe('keyword');
    expect(during.notice).toMatch(/waiting for embeddings.*HTTP 500/);
    expect(paths(during)[0]).toBe('memory/2026-11-02.md');

    // The provider recovers: the next sync embeds what is waiting, though no file changed.
    fake.reset();
    const recovered = await index.sync({});
    expect(recovered).toMatchObject({ indexed: 0, skipped: 7, embedded: 7 });
    expect(await index.status({})).toMatchObject({ mode: 'hybrid', pendingEmbeddings: 0 });
    const hybrid = await index.search('OPS-4711', DEFAULT_QUERY);
    expect(hybrid).toMatchObject({ mode: 'hybrid', provider: 'openai', model: 'text-embedding-3-small' });
    expect(hybrid.notice).toBeUndefined();

    // A failure while embedding the query: that one query is answered from keywords.
    fake.scriptEmbeddings({ error: { status: 500, message: 'blip' } });
    const blip = await index.search('OPS-4711', DEFAULT_QUERY);
    expect(blip.mode).toBe('keyword');
    expect(blip.notice).toMatch(/embedding the query failed.*500/);
    expect(paths(blip)[0]).toBe('memory/2026-11-02.md');
    expect((await index.search('OPS-4711', DEFAULT_QUERY)).mode).toBe('hybrid');
  });

  it('a failing primary hands over to the fallback: the index is built from its vectors and results say so', async () => {
    const { settings } = setup();
    const broken: EmbeddingProvider = {
      id: 'broken',
      model: 'm',
      fingerprint: 'broken:m',
      embed: async () => {
        throw new Error('HTTP 503 from broken');
      },
    };
    const fallback = createHashEmbedder();
    const { logger, records } = recordingLogger();
    const index = await open(settings(), { provider: broken, fallback, reason: 'broken; fallback hash' }, logger);
    const stats = await index.sync({});
    expect(stats).toMatchObject({ files: 7, indexed: 7, embedded: 7 });
    expect(
      records.some((record) => record.level === 'warn' && /switching to the fallback hash/.test(record.message)),
    ).toBe(true);
    const result = await index.search('websocket reconnect bug', DEFAULT_QUERY);
    expect(result).toMatchObject({ mode: 'hybrid', provider: 'hash' });
    expect(result.notice).toMatch(/fallback provider hash/);
    expect(paths(result)[0]).toBe('memory/2026-11-02.md');
    expect(await index.status({})).toMatchObject({
      usingFallback: true,
      fingerprint: fallback.fingerprint,
      pendingEmbeddings: 0,
    });
  });

  it('falls back to JS cosine when sqlite-vec cannot load, logs one error, and ranks exactly as sqlite-vec does', async () => {
    const env = setup();
    const bad = join(env.dir, 'not-sqlite-vec.so');
    writeFileSync(bad, 'this is not a shared library');
    const { logger, records } = recordingLogger();
    const js = await open(
      env.settings({ store: { path: join(env.dir, 'memory', 'js.sqlite'), vector: { extensionPath: bad } } }),
      hashed(),
      logger,
    );
    const vec = await open(env.settings({ store: { path: join(env.dir, 'memory', 'vec.sqlite') } }), hashed());

    expect(await js.status({})).toMatchObject({ vector: 'js', mode: 'hybrid' });
    expect(String((await js.status({})).vectorError)).toContain(bad);
    expect(await vec.status({})).toMatchObject({ vector: 'sqlite-vec' });

    await js.sync({});
    await vec.sync({});
    await js.sync({ force: true }); // reopens the file: must not try (and log) again
    expect(await js.status({})).toMatchObject({ vector: 'js', vectorError: expect.stringContaining(bad) });
    for (const query of [
      'coffee preference Ethiopia',
      'websocket reconnect bug',
      '记忆系统',
      'tomatoes basil balcony',
    ]) {
      const a = await js.search(query, DEFAULT_QUERY);
      const b = await vec.search(query, DEFAULT_QUERY);
      expect(a.mode).toBe('hybrid');
      expect(paths(a)).toEqual(paths(b));
      a.results.forEach((hit, i) => expect(hit.score).toBeCloseTo(b.results[i]!.score, 5));
    }
    const errors = records.filter((record) => record.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/sqlite-vec did not load from .*not-sqlite-vec\.so.*in-process cosine/);
  });

  it('a writer without sqlite-vec leaves chunks_vec stale; the next connection with sqlite-vec rebuilds it', async () => {
    const env = setup();
    const bad = join(env.dir, 'bad.so');
    writeFileSync(bad, 'x');
    const path = env.settings().store.path;
    const first = await open(env.settings(), hashed());
    await first.sync({});
    await first.close();
    const vecRows = () =>
      withDb(path, (db) => (db.prepare('SELECT count(*) AS n FROM chunks_vec').get() as { n: number }).n, true);
    expect(vecRows()).toBe(7);

    const js = await open(env.settings({ store: { vector: { extensionPath: bad } } }), hashed());
    rmSync(join(env.workspace, 'memory', '2026-11-02.md'));
    expect(await js.sync({})).toMatchObject({ removed: 1 });
    await js.close();
    expect(vecRows()).toBe(7); // the JS writer could not touch it

    const again = await open(env.settings(), hashed());
    expect(vecRows()).toBe(6);
    const result = await again.search('websocket reconnect bug', { maxResults: 6, minScore: 0 });
    expect(paths(result)).not.toContain('memory/2026-11-02.md');
  });

  it('without a usable FTS5 table search runs on vectors alone and says so', async () => {
    const env = setup();
    const path = env.settings().store.path;
    // A first index is built in a fresh scratch file (with a working FTS5 table); the
    // table breaks afterwards, in the live file.
    const built = await open(env.settings(), hashed());
    expect(await built.sync({})).toMatchObject({ indexed: 7, embedded: 7 });
    await built.close();
    withDb(path, (db) => db.exec('DROP TABLE chunks_fts; CREATE TABLE chunks_fts (text TEXT);'));
    const { logger, records } = recordingLogger();
    const index = await open(env.settings(), hashed(), logger);
    expect(records.some((record) => record.level === 'warn' && /FTS5 is unusable/.test(record.message))).toBe(true);
    expect(await index.status({})).toMatchObject({ fts: false, mode: 'vector' });
    expect(await index.sync({})).toMatchObject({ indexed: 0, skipped: 7 });
    const result = await index.search('websocket reconnect bug', DEFAULT_QUERY);
    expect(result.mode).toBe('vector');
    expect(result.notice).toMatch(/vector search only: FTS5 is unusable/);
    expect(paths(result)[0]).toBe('memory/2026-11-02.md');
  });

  it('an aborted search rejects instead of answering', async () => {
    const { settings } = setup();
    const slow: EmbeddingProvider = {
      ...createHashEmbedder(),
      embed: (texts, options) =>
        texts.length > 1 || texts[0]!.includes('\n')
          ? createHashEmbedder().embed(texts)
          : new Promise((_resolve, reject) =>
              options?.signal?.addEventListener('abort', () => reject(options.signal!.reason)),
            ),
    };
    const index = await open(settings(), hashed(slow));
    await index.sync({});
    const controller = new AbortController();
    const pending = index.search('websocket', { ...DEFAULT_QUERY, signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    await expect(pending).rejects.toThrow(/abort/i);
    await expect(index.search('websocket', { ...DEFAULT_QUERY, signal: AbortSignal.abort() })).rejects.toThrow(
      /abort/i,
    );
  });
});

describe('memory-sqlite engine: indexing', () => {
  const LONG = Array.from(
    { length: 40 },
    (_, i) => `- Line ${i}: note number ${i} about topic${i} and subject${i * 7}.`,
  ).join('\n');

  it('re-indexing takes unchanged chunk texts from the embedding cache (counted provider calls)', async () => {
    const env = setup({ ...CONTRACT_CORPUS, 'memory/long.md': LONG });
    const embedder = createHashEmbedder();
    const index = await open(
      env.settings({ chunking: { tokens: 60, overlap: 12 }, remote: { batchSize: 4 } }),
      hashed(embedder),
    );

    const first = await index.sync({});
    expect(first.chunks).toBeGreaterThan(10);
    expect(first).toMatchObject({ indexed: 8, embedded: first.chunks, cacheHits: 0 });
    expect(embedder.texts).toBe(first.chunks);
    expect(embedder.calls).toBe(Math.ceil(first.chunks / 4));

    expect(await index.sync({})).toMatchObject({ indexed: 0, skipped: 8, embedded: 0 });
    expect(embedder.texts).toBe(first.chunks);

    const forced = await index.sync({ force: true });
    expect(forced).toMatchObject({ rebuilt: true, indexed: 8, embedded: 0, cacheHits: first.chunks });
    expect(embedder.texts).toBe(first.chunks);

    // Change only the last line of the long file: its earlier chunks come from the cache.
    writeFileSync(
      join(env.workspace, 'memory/long.md'),
      `${LONG.replace(/topic39 .*$/, 'topic39 was rewritten today.')}\n`,
    );
    const changed = await index.sync({});
    expect(changed.indexed).toBe(1);
    expect(changed.embedded).toBeGreaterThanOrEqual(1);
    expect(changed.embedded).toBeLessThanOrEqual(2);
    expect(changed.cacheHits).toBeGreaterThan(0);
    expect(embedder.texts).toBe(first.chunks + changed.embedded);
    expect((await index.search('rewritten today', DEFAULT_QUERY)).results[0]?.path).toBe('memory/long.md');
  });

  it('the cache keeps at most maxEntries vectors, dropping the least recently used', async () => {
    const env = setup();
    const settings = env.settings({ cache: { maxEntries: 4 }, remote: { batchSize: 1 } });
    const index = await open(settings, hashed());
    const cachedPaths = () =>
      withDb(settings.store.path, (db) =>
        (
          db
            .prepare(
              'SELECT DISTINCT c.path AS path FROM embedding_cache e JOIN chunks c ON c.hash = e.hash ORDER BY c.path',
            )
            .all() as Array<{ path: string }>
        ).map((row) => row.path),
      );
    // Seven texts, one per embedding call, into room for four: the last four stay.
    await index.sync({});
    expect((await index.status({})).cache).toEqual({ enabled: true, entries: 4, maxEntries: 4 });
    expect(cachedPaths()).toEqual([
      'memory/2026-11-03.md',
      'memory/2026-11-04.md',
      'memory/projects/garden.md',
      'memory/projects/reading.md',
    ]);

    // A copy of 2026-11-03 hits its (oldest) entry, which becomes the most recently used…
    writeFileSync(join(env.workspace, 'memory/2026-10-31.md'), `${CONTRACT_CORPUS['memory/2026-11-03.md']}\n`);
    expect(await index.sync({})).toMatchObject({ indexed: 1, cacheHits: 1, embedded: 0 });
    // …so a new text pushes out 2026-11-04 instead.
    writeFileSync(join(env.workspace, 'memory/zzz.md'), 'A brand new note.\n');
    expect(await index.sync({})).toMatchObject({ indexed: 1, cacheHits: 0, embedded: 1 });
    expect(cachedPaths()).toEqual([
      'memory/2026-10-31.md',
      'memory/2026-11-03.md',
      'memory/projects/garden.md',
      'memory/projects/reading.md',
      'memory/zzz.md',
    ]);
    expect((await index.status({})).cache).toMatchObject({ entries: 4 });
  });

  it('rebuilds when the model, the dimension or the chunking changes, and only then', async () => {
    const env = setup();
    const build = async (provider: EmbeddingProvider, memorySearch: Record<string, unknown> = {}) => {
      const index = await open(env.settings(memorySearch), hashed(provider));
      const stats = await index.sync({});
      const status = await index.status({});
      await index.close();
      return { stats, status };
    };
    expect((await build(createHashEmbedder())).stats).toMatchObject({ rebuilt: false, indexed: 7, embedded: 7 });
    expect((await build(createHashEmbedder())).stats).toMatchObject({
      rebuilt: false,
      indexed: 0,
      skipped: 7,
      embedded: 0,
    });

    const model = await build(createHashEmbedder({ model: 'hash-b' }));
    expect(model.stats).toMatchObject({ rebuilt: true, indexed: 7, embedded: 7 });
    expect(model.status).toMatchObject({ fingerprint: 'hash:hash-b', dims: 64 });

    const dims = await build(createHashEmbedder({ model: 'hash-b', dims: 32 }));
    expect(dims.stats).toMatchObject({ rebuilt: true, embedded: 7 });
    expect(dims.status).toMatchObject({ dims: 32 });

    const chunking = await build(createHashEmbedder({ model: 'hash-b', dims: 32 }), {
      chunking: { tokens: 50, overlap: 10 },
    });
    expect(chunking.stats).toMatchObject({ rebuilt: true, indexed: 7 });
    expect(chunking.status).toMatchObject({ chunking: { tokens: 50, overlap: 10 } });
    expect(
      (await build(createHashEmbedder({ model: 'hash-b', dims: 32 }), { chunking: { tokens: 50, overlap: 10 } })).stats,
    ).toMatchObject({
      rebuilt: false,
      indexed: 0,
    });
  });

  it('keeps answering from the old index while a rebuild runs, then swaps the new one in', async () => {
    const env = setup();
    const embedder = gatedEmbedder();
    const index = await open(env.settings({ cache: { enabled: false } }), hashed(embedder));
    await index.sync({});
    embedder.hold();
    let embedding!: () => void;
    const started = new Promise<void>((resolve) => (embedding = resolve));
    const phases: string[] = [];
    const rebuild = index.sync({
      force: true,
      onProgress: (progress) => {
        phases.push(progress.phase);
        if (progress.phase === 'embed') embedding();
      },
    });
    await started;
    expect(scratchFiles(env.dir)).toHaveLength(1);
    const meanwhile = await index.search('websocket reconnect bug', DEFAULT_QUERY);
    expect(meanwhile.mode).toBe('hybrid');
    expect(paths(meanwhile)[0]).toBe('memory/2026-11-02.md');
    expect(await index.status({})).toMatchObject({ files: 7, chunks: 7 });

    embedder.release();
    expect(await rebuild).toMatchObject({ rebuilt: true, indexed: 7, embedded: 7, chunks: 7 });
    expect(phases[0]).toBe('scan');
    expect(phases.at(-1)).toBe('done');
    expect(scratchFiles(env.dir)).toEqual([]);
    expect(paths(await index.search('websocket reconnect bug', DEFAULT_QUERY))[0]).toBe('memory/2026-11-02.md');
  });

  it('builds the first index the way a rebuild does: in a scratch file, whole or not at all, with the same result', async () => {
    const env = setup();
    const embedder = gatedEmbedder();
    const index = await open(env.settings({ cache: { enabled: false } }), hashed(embedder));
    embedder.hold();
    let embedding!: () => void;
    const started = new Promise<void>((resolve) => (embedding = resolve));
    const first = index.sync({ onProgress: (progress) => progress.phase === 'embed' && embedding() });
    await started;
    // The fast path: a scratch file beside the index, and a reader (another connection) sees nothing half-built.
    expect(scratchFiles(env.dir)).toHaveLength(1);
    const reader = await open(env.settings({ cache: { enabled: false } }), hashed());
    expect(await reader.status({})).toMatchObject({ files: 0, chunks: 0, index: 'empty' });
    expect(await index.status({})).toMatchObject({ index: 'building', indexProgress: { filesTotal: 7 } });

    embedder.release();
    const built = await first;
    expect(built).toMatchObject({ rebuilt: false, indexed: 7, embedded: 7, chunks: 7 });
    expect(scratchFiles(env.dir)).toEqual([]);
    expect(await reader.status({})).toMatchObject({ files: 7, chunks: 7, index: 'complete' });
    const before = await index.search('websocket reconnect bug', DEFAULT_QUERY);

    // A forced rebuild of the same corpus ends with the same index.
    expect(await index.sync({ force: true })).toMatchObject({ rebuilt: true, indexed: 7, chunks: 7 });
    const after = await index.search('websocket reconnect bug', DEFAULT_QUERY);
    expect(after.results.map((hit) => [hit.path, hit.startLine, hit.score])).toEqual(
      before.results.map((hit) => [hit.path, hit.startLine, hit.score]),
    );
    expect(paths(after)[0]).toBe('memory/2026-11-02.md');
  });

  it('picks better-sqlite3 12 on Node 20 and 13 (better-sqlite3-node22) on Node 22 and later', () => {
    expect(sqliteModuleFor('20.20.2')).toBe('better-sqlite3');
    expect(sqliteModuleFor('22.12.0')).toBe('better-sqlite3-node22');
    expect(sqliteModuleFor('24.21.0')).toBe('better-sqlite3-node22');
    expect((require(sqliteModuleFor()) as { prototype: object }).prototype).toBeDefined();
  });

  it('survives SIGKILL mid-rebuild: the index stays intact and answers, and the leftovers are removed on open', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        `memory/note-${i}.md`,
        `# Note ${i}\n\nUnique word marker${i} and shared words.`,
      ]),
    );
    const env = setup(files);
    const settings = env.settings({ remote: { batchSize: 1 } });
    const before = await open(settings, hashed());
    expect(await before.sync({})).toMatchObject({ files: 40, indexed: 40 });
    await before.close();

    const url = (path: string) => JSON.stringify(pathToFileURL(join(REPO, path)).href);
    const script = join(env.dir, 'rebuild.ts');
    writeFileSync(
      script,
      `import { SqliteMemoryIndex } from ${url('plugins/memory-sqlite-engine/engine.ts')};
import { createHashEmbedder } from ${url('test/fakes/hash-embedder.ts')};
import { resolveMemorySettings } from ${url('plugins/memory-core/settings.ts')};
import { memoryRanking } from ${url('plugins/memory-core/ranking.ts')};
import { memoryFiles } from ${url('plugins/memory-core/files.ts')};
import { memoryText } from ${url('plugins/memory-core/text.ts')};
const [workspace, stateDir] = process.argv.slice(2);
const settings = resolveMemorySettings({ agents: { defaults: { memorySearch: { remote: { batchSize: 1 } } } } }, { agentId: 'main', workspaceDir: workspace, stateDir });
// Another model: a full rebuild, and the cache has none of its vectors.
const inner = createHashEmbedder({ model: 'hash-slow' });
const slow = { ...inner, embed: async (texts) => { await new Promise((resolve) => setTimeout(resolve, 40)); return inner.embed(texts); } };
const quiet = { debug() {}, info() {}, warn() {}, error() {}, child() { return quiet; } };
const index = await SqliteMemoryIndex.open(settings, { embeddings: { provider: slow, reason: 'slow' }, logger: quiet, ranking: memoryRanking, files: memoryFiles, text: memoryText });
let told = false;
await index.sync({ onProgress: (progress) => {
  if (progress.phase === 'embed' && progress.embedded >= 2 && !told) { told = true; process.stdout.write('rebuilding\\n'); }
} });
process.stdout.write('finished\\n');
`,
    );

    for (const delayMs of [0, 150, 400]) {
      const { child, output } = await spawnUntil([JITI, script, env.workspace, env.dir], 'rebuilding');
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      expect(output()).not.toContain('finished');
      expect(scratchFiles(env.dir).length).toBeGreaterThan(0);

      // The real file was never touched: intact, still the old model's index.
      expect(withDb(settings.store.path, (db) => db.pragma('integrity_check', { simple: true }))).toBe('ok');
      const after = await open(settings, hashed());
      expect(scratchFiles(env.dir)).toEqual([]);
      expect(await after.status({})).toMatchObject({
        files: 40,
        chunks: 40,
        fingerprint: 'hash:hash-64',
        pendingEmbeddings: 0,
        mode: 'hybrid',
      });
      const result = await after.search('marker17', DEFAULT_QUERY);
      expect(result.mode).toBe('hybrid');
      expect(paths(result)[0]).toBe('memory/note-17.md');
      expect(await after.sync({})).toMatchObject({ rebuilt: false, indexed: 0, skipped: 40, embedded: 0 });
      await after.close();
    }
  });

  it('an open removes the scratch files of rebuilds whose process is gone, and only those', async () => {
    const env = setup();
    const settings = env.settings();
    mkdirSync(dirname(settings.store.path), { recursive: true });
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.on('exit', resolve));
    // Another node process rebuilding the same index right now.
    const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    // A pid that a process other than node holds now: the rebuild that named it is gone.
    const recycled = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const base = basename(settings.store.path);
      const scratch = (pid: number | undefined) =>
        ['', '-journal', '-wal', '-shm'].map((end) => `${base}.rebuild-${pid}-0badcafe${end}`);
      for (const name of [...scratch(dead.pid), ...scratch(live.pid), ...scratch(recycled.pid)]) {
        writeFileSync(join(dirname(settings.store.path), name), 'partial');
      }
      const { logger, records } = recordingLogger();
      const index = await open(settings, hashed(), logger);
      expect(scratchFiles(env.dir).sort()).toEqual(scratch(live.pid).sort());
      const messages = records.map((record) => record.message);
      expect(messages).toContainEqual(expect.stringContaining('removed what an interrupted rebuild left behind'));
      expect(await index.sync({})).toMatchObject({ indexed: 7 });
    } finally {
      live.kill();
      recycled.kill();
    }
  });

  it('indexes extraPaths recursively, Markdown only, never through symlinks', async () => {
    const env = setup();
    const notes = join(env.dir, 'team-notes');
    const outside = join(env.dir, 'outside');
    writeFiles(notes, {
      'a.md': 'alphaword in the top folder',
      'deep/er/b.md': 'betaword two folders down',
      'c.txt': 'gammaword in a text file',
    });
    writeFiles(outside, {
      'linked/d.md': 'deltaword behind a folder symlink',
      'e.md': 'epsilonword behind a file symlink',
      'single.md': 'zetaword in a single extra file',
    });
    symlinkSync(join(outside, 'linked'), join(notes, 'linked'));
    symlinkSync(join(outside, 'e.md'), join(notes, 'e.md'));
    const index = await open(env.settings({ provider: 'none', extraPaths: [notes, join(outside, 'single.md')] }), none);

    expect(await index.sync({})).toMatchObject({ files: 10, indexed: 10 });
    const find = async (word: string) => (await index.search(word, DEFAULT_QUERY)).results;
    expect(await find('alphaword')).toMatchObject([{ path: 'extra/team-notes/a.md', source: 'extra' }]);
    expect(await find('betaword')).toMatchObject([{ path: 'extra/team-notes/deep/er/b.md', source: 'extra' }]);
    expect(await find('zetaword')).toMatchObject([{ path: 'extra/single/single.md', source: 'extra' }]);
    expect(await find('gammaword')).toEqual([]);
    expect(await find('deltaword')).toEqual([]);
    expect(await find('epsilonword')).toEqual([]);
    expect((await find('OPS-4711'))[0]).toMatchObject({ path: 'memory/2026-11-02.md', source: 'memory' });
  });

  it('recovers from a damaged or outdated index file and refuses a database that is not an index', async () => {
    const env = setup();
    const path = env.settings().store.path;
    mkdirSync(join(env.dir, 'memory'), { recursive: true });
    writeFileSync(path, 'garbage, not SQLite '.repeat(100));
    const { logger, records } = recordingLogger();
    const index = await open(env.settings(), hashed(), logger);
    expect(
      records.some((record) => record.level === 'warn' && /not a readable database.*moved it to/.test(record.message)),
    ).toBe(true);
    expect(readdirSync(join(env.dir, 'memory')).some((name) => name.includes('.corrupt-'))).toBe(true);
    expect(await index.sync({})).toMatchObject({ indexed: 7 });
    await index.close();

    withDb(path, (db) => db.prepare("UPDATE meta SET value = '999' WHERE key = 'schemaVersion'").run());
    const newer = await open(env.settings(), hashed(), logger);
    expect(records.some((record) => /schema version 999/.test(record.message))).toBe(true);
    expect(await newer.sync({})).toMatchObject({ indexed: 7, embedded: 7, cacheHits: 0 }); // the cache went with it
    await newer.close();

    const foreign = join(env.dir, 'other.sqlite');
    withDb(foreign, (db) => db.exec('CREATE TABLE contacts (name TEXT)'));
    await expect(open(env.settings({ store: { path: foreign } }), hashed())).rejects.toThrow(
      /other\.sqlite is a SQLite database but not a memory index/,
    );
  });
});

describe('memory-sqlite engine: queries', () => {
  it('finds Chinese and Japanese by keyword alone (segmented FTS)', async () => {
    const { settings } = setup({
      ...CONTRACT_CORPUS,
      'memory/2026-11-05.md': '# 2026-11-05\n\n我们讨论了系统的设计和检索速度。',
    });
    const index = await open(settings({ provider: 'none' }), none);
    await index.sync({});
    const top = async (query: string) => paths(await index.search(query, DEFAULT_QUERY))[0];
    expect(await top('混合检索')).toBe('memory/2026-11-03.md');
    expect(await top('田中先生')).toBe('memory/2026-11-03.md');
    expect(await top('大阪のチーム')).toBe('memory/2026-11-04.md');
    expect(await top('打ち合わせ')).toBe('memory/2026-11-04.md');
    expect(await top('检索速度')).toBe('memory/2026-11-05.md');
    // Mixed scripts in one query.
    expect(await top('OPS-4711 记忆')).toBeDefined();
  });

  it('treats FTS5 syntax in the query as plain words', async () => {
    const { settings } = setup();
    const index = await open(settings({ provider: 'none' }), none);
    await index.sync({});
    const wordy: Array<[string, string]> = [
      ['OPS-4711', 'memory/2026-11-02.md'],
      ['"OPS-4711', 'memory/2026-11-02.md'],
      ['OPS-4711 AND', 'memory/2026-11-02.md'],
      ['NEAR(websocket', 'memory/2026-11-02.md'],
      ['websocket*', 'memory/2026-11-02.md'],
      ['text:websocket', 'memory/2026-11-02.md'],
      ['^websocket OR NOT (gateway', 'memory/2026-11-02.md'],
      ["Alice's budget", 'memory/2026-11-01.md'],
      ['{tomatoes} [basil] -balcony', 'memory/projects/garden.md'],
    ];
    for (const [query, expected] of wordy) {
      const result = await index.search(query, DEFAULT_QUERY);
      expect(result.notice, query).not.toMatch(/failed/);
      expect(paths(result)[0], query).toBe(expected);
    }
    for (const query of ['*', '"', '(', 'AND', '-', ':', '""""']) {
      const result = await index.search(query, DEFAULT_QUERY);
      expect(result.notice, query).not.toMatch(/failed/);
    }
    expect((await index.search('*', DEFAULT_QUERY)).results).toEqual([]);
    expect(buildFtsQuery(contentTerms('OPS-4711'), memoryText)).toBe('"ops" OR "4711" OR "ops 4711"');
    expect(buildFtsQuery(contentTerms('记忆'), memoryText)).toBe('"记 忆"');
    expect(buildFtsQuery(contentTerms('say "hi" AND *'), memoryText)).toBe('"hi"');
    expect(buildFtsQuery(contentTerms('* () "'), memoryText)).toBeUndefined();
    // A question: its filler dropped, longer words matched by their stem, a name counted twice,
    // each pair of words again as a NEAR group (proximity), Chinese as character pairs.
    expect(
      buildFtsQuery(
        contentTerms('What did Alice and I decide about the conference ideas?'),
        memoryText,
        new Map(),
        namesIn('What did Alice and I decide about the conference ideas?'),
      ),
    ).toBe(
      '{text context} : "alice" OR "alice"* OR "decide"* OR "conference"* OR "idea"* OR ' +
        'NEAR("alice" "decide", 8) OR NEAR("alice" "conference", 8) OR NEAR("alice" "ideas", 8) OR ' +
        'NEAR("decide" "conference", 8) OR NEAR("decide" "ideas", 8) OR NEAR("conference" "ideas", 8)',
    );
    expect(namesIn('Which hotel did I book in Porto? OPS-4711 and Dr. Castillo')).toEqual(
      new Set(['which', 'i', 'porto', 'ops-4711', 'dr', 'castillo']),
    );
    // A word the index does not know also searches the corrections it is given.
    expect(buildFtsQuery(contentTerms('webhok'), memoryText, new Map([['webhok', ['webhook']]]))).toBe(
      '"webhok"* OR "webhook"',
    );
    expect(buildFtsQuery(contentTerms('我和田中先生讨论了什么？'), memoryText)).toBe(
      '"田 中" OR "中 先" OR "先 生" OR "生 讨" OR "讨 论"',
    );
    // Nothing but filler: its words are searched rather than nothing.
    expect(buildFtsQuery(contentTerms('what was that?'), memoryText)).toBe(
      '"what" OR "was" OR "that" OR NEAR("what" "was", 8) OR NEAR("what" "that", 8) OR NEAR("was" "that", 8)',
    );
  });

  it('status --deep probes the provider and a real query', async () => {
    const { settings } = setup();
    const index = await open(settings(), hashed());
    await index.sync({});
    const status = await index.status({ deep: true });
    expect(status).toMatchObject({
      backend: 'sqlite',
      files: 7,
      chunks: 7,
      mode: 'hybrid',
      provider: 'hash',
      model: 'hash-64',
      vector: 'sqlite-vec',
      fts: true,
      cache: { enabled: true, entries: 7, maxEntries: 50_000 },
      lastSync: { files: 7, indexed: 7 },
      probe: { embedding: { ok: true, dims: 64 }, search: { ok: true, mode: 'hybrid' } },
    });
    expect(status.dbPath).toBe(settings().store.path);
  });
});

describe('memory-sqlite plugin', () => {
  it('takes its index from the engine plugin and its vectors from the embeddings plugin, which reads models.providers.openai', async () => {
    const { createTestKernel } = await import('../sdk/testing.js');
    const kernel = await createTestKernel({
      plugins: ['memory-sqlite', 'memory-core', 'memory-sqlite-engine', 'embeddings'].map((id) =>
        join(REPO, 'plugins', id),
      ),
      config: {
        models: { providers: { openai: { apiKey: 'sk-from-models', baseUrl: fake.openaiBaseUrl } } },
        agents: { defaults: { memorySearch: { provider: 'openai', sync: { watch: false } } } },
      } as KernelConfig,
    });
    try {
      writeFiles(kernel.paths.workspaceDir, { 'MEMORY.md': '# Memory\n\n- The garage code is 4711.' });
      const before = fake.requests.length;
      const memory = (await kernel.capabilities.slot('memory'))!;
      const result = await memory.search('garage code');
      expect(result).toMatchObject({ backend: 'sqlite', mode: 'hybrid', results: [{ path: 'MEMORY.md' }] });
      const embedded = fake.requests.slice(before).filter((request) => request.path === '/v1/embeddings');
      expect(embedded.length).toBeGreaterThan(0);
      expect(embedded.every((request) => request.apiKey === 'sk-from-models')).toBe(true);
      expect(kernel.plugins.get('memory-sqlite-engine')?.status).toBe('active');
      expect(kernel.plugins.get('embeddings')?.status).toBe('active');
    } finally {
      await kernel.dispose();
    }
  });

  it('with the engine plugin off, the memory slot is unavailable, naming the plugin that provides the engine and that it is off', async () => {
    const { createTestKernel } = await import('../sdk/testing.js');
    const kernel = await createTestKernel({
      plugins: ['memory-sqlite', 'memory-core', 'memory-sqlite-engine'].map((id) => join(REPO, 'plugins', id)),
      config: {
        plugins: { entries: { 'memory-sqlite-engine': { enabled: false } } },
        agents: { defaults: { memorySearch: { provider: 'none', sync: { watch: false } } } },
      } as KernelConfig,
    });
    try {
      // The manifest's `requires` is checked before memory-sqlite runs.
      await expect(kernel.capabilities.slot('memory')).rejects.toThrow(
        /"memory-sqlite".*requires the service "memory-engine:sqlite".*plugin "memory-sqlite-engine" provides it but is off \(plugins\.entries\.memory-sqlite-engine\.enabled is false\)/,
      );
    } finally {
      await kernel.dispose();
    }
  });

  it('loads no native module until an index is opened', async () => {
    const script = join(tempDir('claw-memory-sqlite-lazy-'), 'lazy.ts');
    writeFileSync(
      script,
      `import ${JSON.stringify(pathToFileURL(join(REPO, 'plugins/memory-sqlite/index.ts')).href)};
import ${JSON.stringify(pathToFileURL(join(REPO, 'plugins/memory-sqlite-engine/index.ts')).href)};
import ${JSON.stringify(pathToFileURL(join(REPO, 'plugins/memory-core/index.ts')).href)};
import { createRequire } from 'node:module';
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => /better-sqlite3|sqlite-vec/.test(path));
process.stdout.write(JSON.stringify(loaded));
`,
    );
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [JITI, script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}`))));
    });
    expect(JSON.parse(output)).toEqual([]);
    expect(existsSync(join(REPO, 'plugins/memory-sqlite/openclaw.plugin.json'))).toBe(true);
  });
});
