/**
 * Memory backends on one generated corpus: 2,000 Markdown files (≈ 10,000 chunks) with a
 * deterministic in-process embedder (no HTTP, so the figures are the index's own work).
 *
 *   sqlite:     full index, first index vs a --force rebuild (embedding cache off), re-index of the unchanged corpus, hybrid query p50 / p99
 *   minisearch: full index, query p50 (keyword + vector re-rank)
 *   qmd:        `qmd update`, `qmd search` CLI p50 (a process per query; the plugin keeps one
 *               `qmd mcp` process instead: see retrieval.ts for its warm latency)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type Logger } from '../../sdk/index.js';
import type { MemoryIndex } from '../../sdk/memory/plugin.js';
import { createHashEmbedder } from '../fakes/hash-embedder.js';
import type { MemorySettings } from '../../sdk/memory/settings.js';
import { resolveMemorySettings } from '../../plugins/memory-core/settings.js';
import { rng } from './rng.js';
import { memoryRanking } from '../../plugins/memory-core/ranking.js';
import { memoryFiles } from '../../plugins/memory-core/files.js';
import { memoryText } from '../../plugins/memory-core/text.js';

const FILES = 2000;
const DIMS = 64;

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ra',
  'te',
  'su',
  'no',
  'vi',
  'de',
  'pa',
  'zu',
  'ri',
  'ma',
  'ko',
  'le',
  'fo',
  'ne',
  'ba',
  'gi',
  'tu',
];

function vocabulary(random: () => number, size: number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const length = 2 + Math.floor(random() * 3);
    words.add(Array.from({ length }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(''));
  }
  return [...words];
}

/** Write the corpus; returns the workspace and some queries built from its words. */
export function generateCorpus(root: string): { workspace: string; queries: string[]; chunksHint: number } {
  const random = rng(42);
  // Natural text has a large vocabulary with a skewed (Zipf-like) use of it.
  const words = vocabulary(random, 20_000);
  const pick = () => words[Math.floor(random() ** 1.6 * words.length)]!;
  const workspace = join(root, 'workspace');
  mkdirSync(join(workspace, 'memory', 'notes'), { recursive: true });
  for (let i = 0; i < FILES; i++) {
    const lines: string[] = [`# Note ${i}`, ''];
    // ≈ 1,600 tokens per file → about five 400-token chunks with 80 overlap.
    for (let paragraph = 0; paragraph < 10; paragraph++) {
      lines.push(Array.from({ length: 70 }, pick).join(' ') + '.', '');
    }
    const day = new Date(Date.UTC(2024, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);
    const name = i % 2 === 0 ? join('memory', `${day}.md`) : join('memory', 'notes', `topic-${i}.md`);
    writeFileSync(join(workspace, name), lines.join('\n'));
  }
  writeFileSync(join(workspace, 'MEMORY.md'), `# Memory\n\n${Array.from({ length: 200 }, pick).join(' ')}\n`);
  // Queries are 2–4 content words: drawn evenly from the vocabulary, not by frequency (people
  // search for what a note is about, not for the words every note has).
  const queries = Array.from({ length: 200 }, () =>
    Array.from({ length: 2 + Math.floor(random() * 3) }, () => words[Math.floor(random() * words.length)]!).join(' '),
  );
  return { workspace, queries, chunksHint: FILES * 5 };
}

function settingsFor(
  root: string,
  workspace: string,
  store: string,
  memorySearch: Record<string, unknown> = {},
): MemorySettings {
  return resolveMemorySettings(
    { agents: { defaults: { memorySearch: { ...memorySearch, store: { path: store } } } } } as never,
    { agentId: 'main', workspaceDir: workspace, stateDir: root },
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function timeQueries(index: MemoryIndex, queries: string[]): Promise<{ p50: number; p99: number; hits: number }> {
  for (const query of queries.slice(0, 20)) await index.search(query, { maxResults: 6, minScore: 0.35 });
  const latencies: number[] = [];
  let hits = 0;
  for (const query of queries) {
    const start = performance.now();
    const result = await index.search(query, { maxResults: 6, minScore: 0.35 });
    latencies.push(performance.now() - start);
    hits += result.results.length;
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), hits };
}

export interface MemoryBenchResult {
  files: number;
  chunks: number;
  sqlite: {
    firstIndexMs: number;
    rebuildMs: number;
    indexMs: number;
    reindexMs: number;
    p50: number;
    p99: number;
    mode: string;
  };
  minisearch: { indexMs: number; reindexMs: number; p50: number; p99: number };
  qmd?: { updateMs: number; p50: number } | { skipped: string };
}

export async function memoryBench(options: { qmdCommand?: string } = {}): Promise<MemoryBenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'claw-bench-memory-'));
  const logger = createLogger({ level: 'error' });
  try {
    const { workspace, queries } = generateCorpus(root);
    const { SqliteMemoryIndex } = await import('../../plugins/memory-sqlite-engine/engine.js');
    const sqliteSettings = settingsFor(root, workspace, join(root, 'memory', 'main.sqlite'));
    const sqlite = await SqliteMemoryIndex.open(sqliteSettings, {
      embeddings: { provider: createHashEmbedder({ dims: DIMS }), reason: 'bench' },
      logger,
      ranking: memoryRanking,
      files: memoryFiles,
      text: memoryText,
    });
    let start = performance.now();
    const built = await sqlite.sync({ force: true });
    const indexMs = performance.now() - start;
    start = performance.now();
    const again = await sqlite.sync({});
    const reindexMs = performance.now() - start;
    if (again.indexed !== 0) throw new Error(`re-index of an unchanged corpus indexed ${again.indexed} files`);
    const sqliteQueries = await timeQueries(sqlite, queries);
    const mode = (await sqlite.search(queries[0]!, { maxResults: 6, minScore: 0.35 })).mode;
    await sqlite.close();
    const first = await firstIndexVsRebuild(root, workspace, logger);

    const { MiniSearchMemoryIndex } = await import('../../plugins/memory-minisearch/memory-index.js');
    const miniSettings = settingsFor(root, workspace, join(root, 'memory', 'mini.sqlite'));
    const mini = new MiniSearchMemoryIndex(
      miniSettings,
      { logger, ranking: memoryRanking, files: memoryFiles, text: memoryText },
      { provider: createHashEmbedder({ dims: DIMS }), reason: 'bench' },
    );
    start = performance.now();
    await mini.sync({ force: true });
    const miniIndexMs = performance.now() - start;
    start = performance.now();
    await mini.sync({});
    const miniReindexMs = performance.now() - start;
    const miniQueries = await timeQueries(mini, queries);
    await mini.close();

    let qmd: MemoryBenchResult['qmd'];
    if (options.qmdCommand) qmd = await qmdBench(options.qmdCommand, root, workspace, queries);
    else qmd = { skipped: 'qmd is not installed (npm run setup:qmd)' };

    return {
      files: built.files,
      chunks: built.chunks,
      sqlite: { ...first, indexMs, reindexMs, p50: sqliteQueries.p50, p99: sqliteQueries.p99, mode },
      minisearch: { indexMs: miniIndexMs, reindexMs: miniReindexMs, p50: miniQueries.p50, p99: miniQueries.p99 },
      qmd,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * The first index (no index file yet) against a --force rebuild of the same corpus, with the
 * embedding cache off: a rebuild would otherwise take every vector from the cache the first
 * build filled, and the figure would measure the cache, not the write path.
 */
async function firstIndexVsRebuild(
  root: string,
  workspace: string,
  logger: Logger,
): Promise<{ firstIndexMs: number; rebuildMs: number }> {
  const { SqliteMemoryIndex } = await import('../../plugins/memory-sqlite-engine/engine.js');
  const settings = settingsFor(root, workspace, join(root, 'memory', 'first.sqlite'), { cache: { enabled: false } });
  const index = await SqliteMemoryIndex.open(settings, {
    embeddings: { provider: createHashEmbedder({ dims: DIMS }), reason: 'bench' },
    logger,
    ranking: memoryRanking,
    files: memoryFiles,
    text: memoryText,
  });
  try {
    let start = performance.now();
    await index.sync({});
    const firstIndexMs = performance.now() - start;
    start = performance.now();
    await index.sync({ force: true });
    return { firstIndexMs, rebuildMs: performance.now() - start };
  } finally {
    await index.close();
  }
}

/** QMD's own CLI on the same files: one collection, `qmd update`, then `qmd search --json` per query. */
async function qmdBench(
  command: string,
  root: string,
  workspace: string,
  queries: string[],
): Promise<{ updateMs: number; p50: number }> {
  const { execFileSync } = await import('node:child_process');
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: join(root, 'qmd', 'config'),
    XDG_CACHE_HOME: join(root, 'qmd', 'cache'),
  };
  const run = (args: string[]) =>
    execFileSync(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 }).toString();
  // `collection add` indexes the folder; `update` afterwards finds nothing new.
  let start = performance.now();
  run(['collection', 'add', join(workspace, 'memory'), '--name', 'bench']);
  run(['update']);
  const updateMs = performance.now() - start;
  const latencies: number[] = [];
  for (const query of queries.slice(0, 30)) {
    start = performance.now();
    run(['search', query, '--json', '-c', 'bench']);
    latencies.push(performance.now() - start);
  }
  latencies.sort((a, b) => a - b);
  return { updateMs, p50: percentile(latencies, 0.5) };
}
