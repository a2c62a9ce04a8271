/**
 * Retrieval quality on a generated personal memory (personal-corpus.ts): ≈ 880 daily notes and
 * MEMORY.md, ≈ 76 questions with known answers, asked through each backend with the default
 * memorySearch settings (maxResults 6, minScore 0.35), as memory_search asks them.
 *
 *   sqlite keyword     the built-in index, no embedding provider
 *   sqlite hybrid      the built-in index with an OpenAI-compatible embedding provider: a
 *                      loopback server started here that answers /v1/embeddings with the
 *                      SDK's hash embedding (a bag of words and CJK characters/pairs mapped to
 *                      random directions). It exercises the real HTTP provider and the hybrid
 *                      merge; it knows no synonyms and no translation, so it measures whether
 *                      hybrid keeps the keyword hits, not what a real model would add.
 *   minisearch         memory-minisearch, keyword only
 *   qmd                memory-qmd through its long-lived `qmd mcp` process, as the plugin
 *                      answers (QMD's models are not on disk here, so BM25); `answered by
 *                      QMD` counts the questions QMD itself answered (the rest came from the
 *                      SQLite fallback after an empty QMD answer)
 *
 * hit@1 / hit@6: the answer is the first / among the results; MRR: 1/rank of the answer (0
 * when it is not among them). Also QMD's warm query latency through the plugin.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type MemorySearchResult } from '../../sdk/index.js';
import { selectEmbeddingProvider } from '../../plugins/embeddings/providers.js';
import { hashEmbedding } from '../fakes/hash-embedder.js';
import type { MemoryIndex } from '../../sdk/memory/plugin.js';
import type { MemorySettings } from '../../sdk/memory/settings.js';
import { resolveMemorySettings } from '../../plugins/memory-core/settings.js';
import { generatePersonalCorpus, type BenchQuery, type QueryCategory } from './personal-corpus.js';
import { memoryRanking } from '../../plugins/memory-core/ranking.js';
import { memoryFiles } from '../../plugins/memory-core/files.js';
import { memoryText } from '../../plugins/memory-core/text.js';

export interface Scores {
  n: number;
  hit1: number;
  hit6: number;
  mrr: number;
}

export interface BackendRun {
  name: string;
  overall: Scores;
  byCategory: Record<QueryCategory, Scores>;
  /** For qmd: how many questions QMD answered itself. */
  answeredBy?: Record<string, number>;
}

export interface RetrievalBenchResult {
  files: number;
  chineseNotes: number;
  queries: number;
  categories: Record<QueryCategory, number>;
  runs: BackendRun[];
  qmd?: { p50: number; p95: number; samples: number } | { skipped: string };
}

const CATEGORIES: QueryCategory[] = ['keyword', 'paraphrase', 'chinese', 'cross'];

function score(ranks: Array<number | undefined>): Scores {
  const n = ranks.length || 1;
  return {
    n: ranks.length,
    hit1: ranks.filter((rank) => rank === 1).length / n,
    hit6: ranks.filter((rank) => rank !== undefined && rank <= 6).length / n,
    mrr: ranks.reduce<number>((sum, rank) => sum + (rank ? 1 / rank : 0), 0) / n,
  };
}

async function evaluate(
  name: string,
  index: Pick<MemoryIndex, 'search'>,
  settings: MemorySettings,
  queries: BenchQuery[],
): Promise<BackendRun> {
  const ranks: Array<{ category: QueryCategory; rank: number | undefined }> = [];
  const answeredBy: Record<string, number> = {};
  for (const item of queries) {
    const result: MemorySearchResult = await index.search(item.query, {
      maxResults: settings.query.maxResults,
      minScore: settings.query.minScore,
    });
    answeredBy[result.backend] = (answeredBy[result.backend] ?? 0) + 1;
    const position = result.results.findIndex((hit) => hit.path === item.answer);
    ranks.push({ category: item.category, rank: position === -1 ? undefined : position + 1 });
  }
  const byCategory = Object.fromEntries(
    CATEGORIES.map((category) => [
      category,
      score(ranks.filter((item) => item.category === category).map((item) => item.rank)),
    ]),
  ) as Record<QueryCategory, Scores>;
  return { name, overall: score(ranks.map((item) => item.rank)), byCategory, answeredBy };
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

/** A loopback OpenAI-compatible embeddings endpoint answering with hashEmbedding. */
async function startHashEmbeddings(dims: number): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string | string[]; model: string };
      const input = Array.isArray(body.input) ? body.input : [body.input];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          model: body.model,
          data: input.map((text, index) => ({ object: 'embedding', index, embedding: hashEmbedding(text, dims) })),
          usage: { prompt_tokens: 0, total_tokens: 0 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { server, baseUrl: `http://127.0.0.1:${address.port}/v1` };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

export async function retrievalBench(options: { qmdCommand?: string } = {}): Promise<RetrievalBenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'claw-bench-retrieval-'));
  const logger = createLogger({ level: 'error' });
  const runs: BackendRun[] = [];
  let qmdLatency: RetrievalBenchResult['qmd'];
  try {
    const corpus = generatePersonalCorpus(root);
    const { workspace, queries } = corpus;
    const { SqliteMemoryIndex } = await import('../../plugins/memory-sqlite-engine/engine.js');

    const keywordSettings = settingsFor(root, workspace, join(root, 'index', 'keyword.sqlite'), { provider: 'none' });
    const keyword = await SqliteMemoryIndex.open(keywordSettings, {
      embeddings: { reason: 'keyword only' },
      logger,
      ranking: memoryRanking,
      files: memoryFiles,
      text: memoryText,
    });
    await keyword.sync({ force: true });
    runs.push({ ...(await evaluate('sqlite keyword', keyword, keywordSettings, queries)), answeredBy: undefined });
    await keyword.close();

    const embeddings = await startHashEmbeddings(64);
    try {
      const hybridSettings = settingsFor(root, workspace, join(root, 'index', 'hybrid.sqlite'), {
        provider: 'openai',
        model: 'hash-64',
        remote: { baseUrl: embeddings.baseUrl, apiKey: 'bench' },
      });
      const selection = selectEmbeddingProvider(hybridSettings, {
        config: {} as never,
        env: {},
        logger,
        stateDir: root,
      } as never);
      const hybrid = await SqliteMemoryIndex.open(hybridSettings, {
        embeddings: selection,
        logger,
        ranking: memoryRanking,
        files: memoryFiles,
        text: memoryText,
      });
      await hybrid.sync({ force: true });
      const run = await evaluate('sqlite hybrid (loopback hash embeddings)', hybrid, hybridSettings, queries);
      const mode = (await hybrid.search(queries[0]!.query, { maxResults: 6, minScore: 0.35 })).mode;
      if (mode !== 'hybrid') throw new Error(`the hybrid run searched in ${mode} mode`);
      runs.push({ ...run, answeredBy: undefined });
      await hybrid.close();
    } finally {
      embeddings.server.close();
    }

    const { MiniSearchMemoryIndex } = await import('../../plugins/memory-minisearch/memory-index.js');
    const miniSettings = settingsFor(root, workspace, join(root, 'index', 'mini.sqlite'), { provider: 'none' });
    const mini = new MiniSearchMemoryIndex(
      miniSettings,
      { logger, ranking: memoryRanking, files: memoryFiles, text: memoryText },
      { reason: 'keyword only' },
    );
    await mini.sync({ force: true });
    runs.push({ ...(await evaluate('minisearch', mini, miniSettings, queries)), answeredBy: undefined });
    await mini.close();

    if (options.qmdCommand) {
      const { QmdMemoryIndex } = await import('../../plugins/memory-qmd/qmd-index.js');
      const qmdSettings = settingsFor(root, workspace, join(root, 'index', 'qmd-fallback.sqlite'), {
        provider: 'none',
      });
      const context = {
        logger,
        stateDir: root,
        env: {},
        api: { kernel: { config: () => ({}) } },
        ranking: memoryRanking,
        files: memoryFiles,
        text: memoryText,
      } as never;
      const qmd = new QmdMemoryIndex(qmdSettings, context, { command: options.qmdCommand, updateIntervalMinutes: 0 });
      try {
        await qmd.sync({ force: true });
        runs.push(await evaluate('qmd (memory-qmd plugin)', qmd, qmdSettings, queries));
        // Warm: the same process, every question again, timed one by one.
        const latencies: number[] = [];
        for (const item of queries) {
          const start = performance.now();
          const result = await qmd.search(item.query, { maxResults: 6, minScore: 0.35 });
          // Only QMD's own answers: an empty one is followed by a SQLite search, timed elsewhere.
          if (result.backend === 'qmd') latencies.push(performance.now() - start);
        }
        latencies.sort((a, b) => a - b);
        qmdLatency = { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), samples: latencies.length };
        if (qmd.server.starts !== 1) throw new Error(`the QMD server was started ${qmd.server.starts} times`);
      } finally {
        await qmd.close();
      }
    } else {
      qmdLatency = { skipped: 'qmd is not installed (npm run setup:qmd)' };
    }
    const categories = Object.fromEntries(
      CATEGORIES.map((category) => [category, queries.filter((item) => item.category === category).length]),
    ) as Record<QueryCategory, number>;
    return {
      files: corpus.files,
      chineseNotes: corpus.chineseNotes,
      queries: queries.length,
      categories,
      runs,
      qmd: qmdLatency,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
