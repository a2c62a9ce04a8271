/**
 * `claw memory status` tells the truth: no embedding backlog when there is no embedder,
 * whether the index is complete or still being built (also across processes, and after a
 * build was killed), and how to get semantic search when no provider is configured.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, type KernelConfig } from '../sdk/index.js';
import type { EmbeddingProvider } from '../sdk/memory/embeddings.js';
import { createHashEmbedder } from './fakes/hash-embedder.js';
import type { MemorySettings } from '../sdk/memory/settings.js';
import { resolveMemorySettings } from '../plugins/memory-core/settings.js';
import { SqliteMemoryIndex } from '../plugins/memory-sqlite-engine/engine.js';
import { MiniSearchMemoryIndex } from '../plugins/memory-minisearch/memory-index.js';
import { claw, REPO, spawnUntil, tempDir } from './helpers.js';
import { runMemoryCli } from '../plugins/memory-core/cli.js';
import type { CliContext } from '../sdk/types/plugin.js';
import type { MemorySyncProgress, MemorySyncStats } from '../sdk/types/memory.js';
import { memoryRanking } from '../plugins/memory-core/ranking.js';
import { memoryFiles } from '../plugins/memory-core/files.js';
import { memoryText } from '../plugins/memory-core/text.js';

const quiet = createLogger({ level: 'error', sink: () => undefined });
const JITI = join(REPO, 'node_modules/jiti/lib/jiti-cli.mjs');

function workspace(files: Record<string, string>) {
  const dir = tempDir('claw-memory-status-');
  const ws = join(dir, 'workspace');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(ws, name, '..'), { recursive: true });
    writeFileSync(join(ws, name), text);
  }
  const settings = (memorySearch: Record<string, unknown> = {}): MemorySettings =>
    resolveMemorySettings({ agents: { defaults: { memorySearch } } } as KernelConfig, {
      agentId: 'main',
      workspaceDir: ws,
      stateDir: dir,
    });
  return { dir, ws, settings };
}

const notes = (count: number) =>
  Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`memory/note-${i}.md`, `# Note ${i}\n\nmarker${i} and shared words.\n`]),
  );

const opened: SqliteMemoryIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close().catch(() => undefined);
});

async function open(settings: MemorySettings, provider?: EmbeddingProvider): Promise<SqliteMemoryIndex> {
  const index = await SqliteMemoryIndex.open(settings, {
    embeddings: provider
      ? { provider, reason: 'test' }
      : { reason: 'memorySearch.provider is "none": keyword search only' },
    logger: quiet,
    ranking: memoryRanking,
    files: memoryFiles,
    text: memoryText,
  });
  opened.push(index);
  return index;
}

describe('memory status: completeness', () => {
  it('a first index is "building" with its progress while it is written in place, "complete" once the sync ends', async () => {
    const env = workspace(notes(7));
    const inner = createHashEmbedder();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let embedding!: () => void;
    const started = new Promise<void>((resolve) => (embedding = resolve));
    const slow: EmbeddingProvider = { ...inner, embed: async (texts) => (embedding(), await gate, inner.embed(texts)) };
    const index = await open(env.settings(), slow);
    expect(await index.status({})).toMatchObject({ index: 'empty' });

    const sync = index.sync({});
    await started;
    expect(await index.status({})).toMatchObject({ index: 'building', indexProgress: { filesTotal: 7 } });
    release();
    await sync;
    const done = await index.status({});
    expect(done).toMatchObject({ index: 'complete', pendingEmbeddings: 0 });
    expect(done.indexProgress).toBeUndefined();
  });

  it('a first build in another process is "building" while it lives, never half-visible, and "empty" after kill -9', async () => {
    // 600 one-chunk notes: the first 512 are written (to the scratch file), then the build is killed mid-way.
    const env = workspace(notes(600));
    const url = (path: string) => JSON.stringify(pathToFileURL(join(REPO, path)).href);
    const script = join(env.dir, 'build.ts');
    writeFileSync(
      script,
      `import { SqliteMemoryIndex } from ${url('plugins/memory-sqlite-engine/engine.ts')};
import { createHashEmbedder } from ${url('test/fakes/hash-embedder.ts')};
import { resolveMemorySettings } from ${url('plugins/memory-core/settings.ts')};
import { memoryRanking } from ${url('plugins/memory-core/ranking.ts')};
import { memoryFiles } from ${url('plugins/memory-core/files.ts')};
import { memoryText } from ${url('plugins/memory-core/text.ts')};
const [workspace, stateDir] = process.argv.slice(2);
const settings = resolveMemorySettings({ agents: { defaults: { memorySearch: { remote: { batchSize: 8 } } } } }, { agentId: 'main', workspaceDir: workspace, stateDir });
const inner = createHashEmbedder();
let written = false;
const slow = { ...inner, embed: async (texts) => { if (written) await new Promise((resolve) => setTimeout(resolve, 200)); return inner.embed(texts); } };
const quiet = { debug() {}, info() {}, warn() {}, error() {}, child() { return quiet; } };
const index = await SqliteMemoryIndex.open(settings, { embeddings: { provider: slow, reason: 'slow' }, logger: quiet, ranking: memoryRanking, files: memoryFiles, text: memoryText });
await index.sync({ onProgress: (progress) => {
  if (progress.phase === 'write') written = true;
  else if (written && progress.phase === 'embed') process.stdout.write('half\\n');
} });
process.stdout.write('finished\\n');
`,
    );
    const { child, output } = await spawnUntil([JITI, script, env.ws, env.dir], 'half');

    const settings = env.settings({ remote: { batchSize: 8 } });
    const reader = await open(settings, createHashEmbedder());
    const during = await reader.status({});
    // The first index is built in a scratch file: readers see none of it until it is whole.
    expect(during).toMatchObject({
      index: 'building',
      files: 0,
      chunks: 0,
      indexProgress: { files: 512, filesTotal: 600 },
    });

    const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(output()).not.toContain('finished');
    const after = await reader.status({});
    expect(after).toMatchObject({ index: 'empty', files: 0 });

    // The next sync builds it whole.
    expect(await reader.sync({})).toMatchObject({ files: 600, indexed: 600 });
    expect(await reader.status({})).toMatchObject({ index: 'complete', files: 600 });
  }, 60_000);
});

describe('memory status: minisearch', () => {
  it('says whether a sync has built the index yet (a sync applies its changes at once)', async () => {
    const env = workspace(notes(3));
    const index = new MiniSearchMemoryIndex(
      env.settings({ provider: 'none' }),
      { logger: quiet, ranking: memoryRanking, files: memoryFiles, text: memoryText },
      { reason: 'memorySearch.provider is "none": keyword search only' },
    );
    try {
      expect(await index.status({})).toMatchObject({ mode: 'keyword', index: 'empty' });
      await index.sync({});
      expect(await index.status({})).toMatchObject({ mode: 'keyword', index: 'complete', files: 3 });
    } finally {
      await index.close();
    }
  });
});

describe('claw memory status', () => {
  function stateWith(memorySearch: Record<string, unknown>) {
    const stateDir = tempDir('claw-memory-status-cli-');
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ agents: { defaults: { memorySearch } } }));
    mkdirSync(join(stateDir, 'workspace', 'memory'), { recursive: true });
    writeFileSync(join(stateDir, 'workspace', 'MEMORY.md'), '# Memory\n\nThe Lisbon offsite hotel is Memmo Alfama.\n');
    writeFileSync(join(stateDir, 'workspace', 'memory', '2026-11-01.md'), '# 2026-11-01\n\nBooked the flights.\n');
    return { OPENCLAW_STATE_DIR: stateDir };
  }

  it('with no embedding provider: keyword mode, no embedding backlog, the index state, and one line on how to get semantic search', async () => {
    const env = stateWith({});
    const empty = JSON.parse((await claw(['memory', 'status', '--json'], env)).stdout);
    expect(empty).toMatchObject({ backend: 'sqlite', mode: 'keyword', index: 'empty' });

    const indexed = await claw(['memory', 'index'], env);
    expect(indexed.code, indexed.stderr).toBe(0);
    const json = JSON.parse((await claw(['memory', 'status', '--json'], env)).stdout);
    expect(json).toMatchObject({ backend: 'sqlite', mode: 'keyword', files: 2, index: 'complete' });
    expect(json).not.toHaveProperty('pendingEmbeddings');
    expect(json.semanticSearch).toMatch(/agents\.defaults\.memorySearch\.provider/);
    expect(json.semanticSearch).toMatch(/agents\.defaults\.memorySearch\.local\.modelPath/);
    expect(json.semanticSearch).toMatch(/GGUF/);

    const text = await claw(['memory', 'status'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).not.toMatch(/pendingEmbeddings/);
    expect(text.stdout).toMatch(/^ {2}index {12}complete$/m);
    const hint = text.stdout.split('\n').filter((line) => /semantic search/i.test(line));
    expect(hint).toHaveLength(1);
    expect(hint[0]).toMatch(
      /^ {2}semanticSearch {3}keyword search only; for semantic search configure an embedding provider: agents\.defaults\.memorySearch\.provider .*local\.modelPath$/,
    );
  });

  it('provider "none" (keyword search chosen on purpose) gets the same line; a configured provider gets none', async () => {
    const none = JSON.parse((await claw(['memory', 'status', '--json'], stateWith({ provider: 'none' }))).stdout);
    expect(none).toMatchObject({ mode: 'keyword', provider: 'none' });
    expect(none.semanticSearch).toMatch(/memorySearch\.provider/);

    // A provider is configured (its key is set, never called by status): the backlog counts, no hint.
    const openai = JSON.parse(
      (
        await claw(
          ['memory', 'status', '--json'],
          stateWith({ provider: 'openai', remote: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k' } }),
        )
      ).stdout,
    );
    expect(openai).toMatchObject({ provider: 'openai', pendingEmbeddings: 0 });
    expect(openai).not.toHaveProperty('semanticSearch');
  });
});

describe('memory index at gateway start', () => {
  it('an idle gateway opens no index; a new session indexes in the background: status becomes complete without a search', async () => {
    const { startGateway } = await import('./gateway-helpers.js');
    const stateDir = tempDir('claw-memory-gw-');
    const ws = join(stateDir, 'workspace');
    mkdirSync(join(ws, 'memory'), { recursive: true });
    writeFileSync(join(ws, 'MEMORY.md'), '# Memory\n\n- The garage code is 4711.\n');
    for (let day = 1; day <= 5; day++)
      writeFileSync(join(ws, 'memory', `2026-11-0${day}.md`), `# Day ${day}\n\n- Note number ${day}.\n`);
    const gw = await startGateway({
      stateDir,
      plugins: ['memory-sqlite', 'memory-core', 'memory-sqlite-engine', 'embeddings'].map((id) =>
        join(REPO, 'plugins', id),
      ),
      config: { agents: { defaults: { memorySearch: { provider: 'none', sync: { watch: false } } } } },
    });
    const wait = () => new Promise((resolve) => setTimeout(resolve, 50));
    try {
      // Listening came first: the memory plugin loads after start() returned.
      expect(gw.kernel.plugins.get('memory-sqlite')?.status).not.toBe('active');
      for (let i = 0; i < 200 && gw.kernel.plugins.get('memory-sqlite')?.status !== 'active'; i++) await wait();
      await gw.kernel.hooks.ready('session_start');
      // Its sync service has started, and no index was opened or written.
      expect(existsSync(join(stateDir, 'memory', 'main.sqlite'))).toBe(false);
      await gw.kernel.hooks.runVoid(
        'session_start',
        { sessionId: 's1', sessionKey: 'agent:main:main' },
        { agentId: 'main' },
      );
      let status: Record<string, unknown> | undefined;
      for (let i = 0; i < 200 && status?.index !== 'complete'; i++) {
        status = await (await gw.kernel.capabilities.slot('memory'))!.status();
        if (status.index !== 'complete') await wait();
      }
      expect(status).toMatchObject({ index: 'complete', files: 6, mode: 'keyword' });
    } finally {
      await gw.stop();
    }
  }, 30_000);
});

describe('claw memory index: progress', () => {
  // Three progress events 120 ms apart, then the stats.
  const target = {
    async sync(
      _agent?: string,
      options: { onProgress?: (progress: MemorySyncProgress) => void } = {},
    ): Promise<MemorySyncStats> {
      for (const files of [0, 1, 2]) {
        options.onProgress?.({ phase: 'write', files, filesTotal: 4, chunks: files * 3, embedded: 0 });
        await new Promise((resolve) => setTimeout(resolve, 120));
      }
      return {
        files: 4,
        indexed: 4,
        skipped: 0,
        removed: 0,
        chunks: 12,
        embedded: 0,
        cacheHits: 0,
        rebuilt: false,
        durationMs: 360,
      };
    },
    search: async () => ({ results: [], backend: 'fake', mode: 'keyword' as const }),
    status: async () => ({}),
    settings: () => ({ query: { maxResults: 6, minScore: 0.35 } }),
    stop: async () => undefined,
  };
  function context(tty: boolean): { ctx: CliContext; stderr: () => string; stdout: () => string } {
    let out = '';
    let err = '';
    const stream = (append: (text: string) => void) => ({
      isTTY: tty,
      write: (chunk: string) => (append(String(chunk)), true),
    });
    const ctx = {
      stdout: stream((text) => (out += text)),
      stderr: stream((text) => (err += text)),
      env: {},
    } as unknown as CliContext;
    return { ctx, stderr: () => err, stdout: () => out };
  }

  it('draws a bar redrawn in place on a terminal, ending full', async () => {
    const { ctx, stderr, stdout } = context(true);
    expect(await runMemoryCli(['index'], ctx, target)).toBe(0);
    const frames = stderr().split('\r').filter(Boolean);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    expect(frames[0]).toMatch(/^\[#*\.+\] \d\/4 files · \d+ chunks/);
    expect(frames.at(-1)).toBe(`[${'#'.repeat(24)}] 4/4 files · 6 chunks · 0 embedded (0/s)\n`);
    expect(stdout()).toMatch(/^Indexed 4 files: 4 changed/);
  });

  it('writes plain lines (no bar, no carriage returns) when stderr is not a terminal', async () => {
    const { ctx, stderr } = context(false);
    expect(await runMemoryCli(['index'], ctx, target)).toBe(0);
    expect(stderr()).not.toMatch(/[\r[#]/);
    expect(stderr().trim().split('\n').at(-1)).toBe('4/4 files · 6 chunks · 0 embedded (0/s)');
  });

  it('the real command on a pipe ends with a plain progress line', async () => {
    const stateDir = tempDir('claw-memory-cli-');
    mkdirSync(join(stateDir, 'workspace', 'memory'), { recursive: true });
    writeFileSync(join(stateDir, 'workspace', 'MEMORY.md'), '# Memory\n\nThe garage code is 4711.\n');
    const result = await claw(['memory', 'index'], { OPENCLAW_STATE_DIR: stateDir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^1\/1 files · 1 chunks · 0 embedded \(\d+\/s\)$/m);
  });
});
