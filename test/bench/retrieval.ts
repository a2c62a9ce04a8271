/**
 * Retrieval quality on a generated personal memory (personal-corpus.ts): ≈ 880 daily notes and
 * MEMORY.md, ≈ 76 questions with known answers (the tuning set), the same questions typo'd, and
 * 60 questions written independently by someone who never saw the ranking code
 * (heldout-personal.ts), asked through each backend with the default memorySearch settings
 * (maxResults 6, minScore 0.35), as memory_search asks them.
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
import { cpSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type MemorySearchResult } from '../../sdk/index.js';
import { selectEmbeddingProvider } from '../../plugins/embeddings/providers.js';
import { hashEmbedding } from '../fakes/hash-embedder.js';
import { checkHeldOutPersonal, HELD_OUT_PERSONAL } from './heldout-personal.js';
import type { MemoryIndex } from '../../sdk/memory/plugin.js';
import type { MemorySettings } from '../../sdk/memory/settings.js';
import { resolveMemorySettings } from '../../plugins/memory-core/settings.js';
import { generatePersonalCorpus, type BenchQuery } from './personal-corpus.js';
import { resolveHeldOutDocs } from './heldout-docs.js';
import { rng } from './rng.js';
import { memoryRanking } from '../../plugins/memory-core/ranking.js';
import { memoryFiles } from '../../plugins/memory-core/files.js';
import { memoryText } from '../../plugins/memory-core/text.js';

export interface Scores {
  n: number;
  hit1: number;
  hit5: number;
  hit6: number;
  mrr: number;
}

/** One question: what is asked, its kind, and every workspace path that answers it. */
export interface SetQuestion {
  query: string;
  category: string;
  accept: string[];
}

export interface QuestionSet {
  name: string;
  /** Never used to tune ranking (see heldout-docs.ts). */
  heldOut: boolean;
  questions: SetQuestion[];
}

export interface BackendRun {
  set: string;
  name: string;
  overall: Scores;
  byCategory: Record<string, Scores>;
  /** For qmd: how many questions QMD answered itself. */
  answeredBy?: Record<string, number>;
}

export interface RetrievalBenchResult {
  corpora: Array<{
    name: string;
    files: number;
    sets: Array<{ name: string; heldOut: boolean; questions: number; categories: Record<string, number> }>;
  }>;
  runs: BackendRun[];
  qmd?: { p50: number; p95: number; samples: number } | { skipped: string };
}

function score(ranks: Array<number | undefined>): Scores {
  const n = ranks.length || 1;
  return {
    n: ranks.length,
    hit1: ranks.filter((rank) => rank === 1).length / n,
    hit5: ranks.filter((rank) => rank !== undefined && rank <= 5).length / n,
    hit6: ranks.filter((rank) => rank !== undefined && rank <= 6).length / n,
    mrr: ranks.reduce<number>((sum, rank) => sum + (rank ? 1 / rank : 0), 0) / n,
  };
}

async function evaluate(
  name: string,
  index: Pick<MemoryIndex, 'search'>,
  settings: MemorySettings,
  set: QuestionSet,
): Promise<BackendRun> {
  const ranks: Array<{ category: string; rank: number | undefined }> = [];
  const answeredBy: Record<string, number> = {};
  for (const item of set.questions) {
    const result: MemorySearchResult = await index.search(item.query, {
      maxResults: settings.query.maxResults,
      minScore: settings.query.minScore,
    });
    answeredBy[result.backend] = (answeredBy[result.backend] ?? 0) + 1;
    const position = result.results.findIndex((hit) => item.accept.includes(hit.path));
    ranks.push({ category: item.category, rank: position === -1 ? undefined : position + 1 });
  }
  const categories = [...new Set(set.questions.map((item) => item.category))];
  const byCategory = Object.fromEntries(
    categories.map((category) => [
      category,
      score(ranks.filter((item) => item.category === category).map((item) => item.rank)),
    ]),
  );
  return { set: set.name, name, overall: score(ranks.map((item) => item.rank)), byCategory, answeredBy };
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

/**
 * The tuning questions with one word misspelt (two inner letters swapped in the longest
 * lower-case word of five letters or more), as typed in a hurry: a held-out set, derived
 * mechanically so nobody chose the typos to suit the ranking. Questions with no such word
 * (Chinese, identifiers only) are left out.
 */
export function typoSet(questions: readonly BenchQuery[]): SetQuestion[] {
  const random = rng(34);
  const out: SetQuestion[] = [];
  for (const item of questions) {
    const words = [...item.query.matchAll(/\b[a-z]{5,}\b/g)].sort((a, b) => b[0].length - a[0].length);
    const word = words[0];
    if (!word) continue;
    const at = 1 + Math.floor(random() * (word[0].length - 3));
    const typo = word[0].slice(0, at) + word[0][at + 1] + word[0][at] + word[0].slice(at + 2);
    out.push({
      query: item.query.slice(0, word.index) + typo + item.query.slice(word.index! + word[0].length),
      category: item.category,
      accept: [item.answer],
    });
  }
  return out;
}

interface Corpus {
  name: string;
  workspace: string;
  files: number;
  sets: QuestionSet[];
}

function personalCorpus(root: string): Corpus {
  const corpus = generatePersonalCorpus(join(root, 'personal'));
  const tuning = corpus.queries.map((item) => ({ query: item.query, category: item.category, accept: [item.answer] }));
  const problems = checkHeldOutPersonal(corpus.workspace);
  if (problems.length > 0)
    throw new Error(`the independent held-out set no longer fits the corpus:\n${problems.join('\n')}`);
  return {
    name: `personal memory (${corpus.files} files, ${corpus.chineseNotes} daily notes in Chinese)`,
    workspace: corpus.workspace,
    files: corpus.files,
    sets: [
      { name: 'personal, tuning set', heldOut: false, questions: tuning },
      { name: "personal, typo'd (held-out)", heldOut: true, questions: typoSet(corpus.queries) },
      {
        name: 'personal, independent (held-out)',
        heldOut: true,
        questions: HELD_OUT_PERSONAL.map((item) => ({
          query: item.query,
          category: item.category,
          accept: item.accept,
        })),
      },
    ],
  };
}

/** OpenClaw's documentation as a memory: every page under memory/openclaw/. */
function docsCorpus(root: string, docsDir: string): Corpus {
  const workspace = join(root, 'docs');
  const questions = resolveHeldOutDocs(docsDir);
  let files = 0;
  cpSync(docsDir, join(workspace, 'memory', 'openclaw'), {
    recursive: true,
    filter: (source) => {
      const isPage = source.endsWith('.md');
      if (isPage) files++;
      return isPage || statSync(source).isDirectory();
    },
  });
  return {
    name: `OpenClaw docs (${files} pages)`,
    workspace,
    files,
    sets: [
      {
        name: 'OpenClaw docs (held-out)',
        heldOut: true,
        questions: questions.map((item) => ({
          query: item.query,
          category: item.category,
          accept: item.accept.map((path) => `memory/openclaw/${path}`),
        })),
      },
    ],
  };
}

export async function retrievalBench(
  options: { qmdCommand?: string; docsDir?: string; only?: 'sqlite keyword' | 'sqlite' } = {},
): Promise<RetrievalBenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'claw-bench-retrieval-'));
  const logger = createLogger({ level: 'error' });
  const runs: BackendRun[] = [];
  let qmdLatency: RetrievalBenchResult['qmd'];
  try {
    const corpora = [personalCorpus(root)];
    if (options.docsDir && existsSync(options.docsDir)) corpora.push(docsCorpus(root, options.docsDir));
    const { SqliteMemoryIndex } = await import('../../plugins/memory-sqlite-engine/engine.js');
    const { MiniSearchMemoryIndex } = await import('../../plugins/memory-minisearch/memory-index.js');
    const kits = { ranking: memoryRanking, files: memoryFiles, text: memoryText };
    const embeddings = await startHashEmbeddings(64);
    try {
      for (const [n, corpus] of corpora.entries()) {
        const dir = join(root, `index-${n}`);
        const evaluateAll = async (name: string, index: Pick<MemoryIndex, 'search'>, settings: MemorySettings) => {
          for (const set of corpus.sets) runs.push(await evaluate(name, index, settings, set));
        };

        const keywordSettings = settingsFor(root, corpus.workspace, join(dir, 'keyword.sqlite'), { provider: 'none' });
        const keyword = await SqliteMemoryIndex.open(keywordSettings, {
          embeddings: { reason: 'keyword only' },
          logger,
          ...kits,
        });
        await keyword.sync({ force: true });
        await evaluateAll('sqlite keyword', keyword, keywordSettings);
        await keyword.close();
        if (options.only === 'sqlite keyword') continue;

        const hybridSettings = settingsFor(root, corpus.workspace, join(dir, 'hybrid.sqlite'), {
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
        const hybrid = await SqliteMemoryIndex.open(hybridSettings, { embeddings: selection, logger, ...kits });
        await hybrid.sync({ force: true });
        const mode = (await hybrid.search('gateway', { maxResults: 6, minScore: 0.35 })).mode;
        if (mode !== 'hybrid') throw new Error(`the hybrid run searched in ${mode} mode`);
        await evaluateAll('sqlite hybrid (loopback hash embeddings)', hybrid, hybridSettings);
        await hybrid.close();
        if (options.only) continue;

        const miniSettings = settingsFor(root, corpus.workspace, join(dir, 'mini.sqlite'), { provider: 'none' });
        const mini = new MiniSearchMemoryIndex(miniSettings, { logger, ...kits }, { reason: 'keyword only' });
        await mini.sync({ force: true });
        await evaluateAll('minisearch', mini, miniSettings);
        await mini.close();

        if (!options.qmdCommand) {
          qmdLatency = { skipped: 'qmd is not installed (npm run setup:qmd)' };
          continue;
        }
        const { QmdMemoryIndex } = await import('../../plugins/memory-qmd/qmd-index.js');
        const qmdSettings = settingsFor(root, corpus.workspace, join(dir, 'qmd-fallback.sqlite'), { provider: 'none' });
        const context = {
          logger,
          stateDir: join(dir, 'qmd-state'),
          env: {},
          api: { kernel: { config: () => ({}) } },
          ...kits,
        } as never;
        const qmd = new QmdMemoryIndex(qmdSettings, context, { command: options.qmdCommand, updateIntervalMinutes: 0 });
        try {
          await qmd.sync({ force: true });
          for (const set of corpus.sets) runs.push(await evaluate('qmd (memory-qmd plugin)', qmd, qmdSettings, set));
          if (n > 0) continue;
          // Warm: the same process, every tuning question again, timed one by one.
          const latencies: number[] = [];
          for (const item of corpus.sets[0]!.questions) {
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
      }
    } finally {
      embeddings.server.close();
    }
    return {
      corpora: corpora.map((corpus) => ({
        name: corpus.name,
        files: corpus.files,
        sets: corpus.sets.map((set) => ({
          name: set.name,
          heldOut: set.heldOut,
          questions: set.questions.length,
          categories: countBy(set.questions.map((item) => item.category)),
        })),
      })),
      runs,
      qmd: qmdLatency,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function countBy(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const value of values) out[value] = (out[value] ?? 0) + 1;
  return out;
}
