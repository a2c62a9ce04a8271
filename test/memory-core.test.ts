/** The memory SDK's shared parts: settings, files, chunking, tokens and ranking (spec numbers). */
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../sdk/memory/index.js';
import { chunkMarkdown, segmentCjk, tokenize } from '../plugins/memory-core/text.js';
import { listMemoryFiles, resolveMemoryPath } from '../plugins/memory-core/files.js';
import {
  datedFileDay,
  keywordMinScore,
  mergeHybridResults,
  mmrRerank,
  temporalDecayMultiplier,
} from '../plugins/memory-core/ranking.js';
import { resolveMemorySettings } from '../plugins/memory-core/settings.js';
import { sanitizeAndNormalizeEmbedding } from '../plugins/embeddings/normalize.js';
import { bm25RankToScore, normalizeBm25 } from '../plugins/memory-sqlite-engine/bm25.js';
import { tempDir } from './helpers.js';

const settings = (memorySearch: Record<string, unknown> = {}) =>
  resolveMemorySettings({ agents: { defaults: { memorySearch } } } as never, {
    agentId: 'main',
    workspaceDir: '/w',
    stateDir: '/s',
  });

describe('settings', () => {
  it('has the documented defaults and normalises the hybrid weights', () => {
    expect(settings()).toMatchObject({
      store: { path: '/s/memory/main.sqlite' },
      chunking: { tokens: 400, overlap: 80 },
      query: {
        maxResults: 6,
        minScore: 0.35,
        hybrid: { vectorWeight: 0.7, textWeight: 0.3, candidateMultiplier: 4 },
        mmr: { lambda: 0.7 },
        temporalDecay: { halfLifeDays: 30 },
      },
      cache: { enabled: true, maxEntries: 50_000 },
      sync: { watchDebounceMs: 1500 },
    });
    const weights = settings({ query: { hybrid: { vectorWeight: 14, textWeight: 6 } } }).query.hybrid;
    expect(weights.vectorWeight).toBeCloseTo(0.7, 12);
    expect(weights.textWeight).toBeCloseTo(0.3, 12);
    expect(settings({ store: { path: '/data/{agentId}.db' } }).store.path).toBe('/data/main.db');
  });
});

describe('ranking', () => {
  it('normalises embeddings as specified', () => {
    expect(sanitizeAndNormalizeEmbedding([3, 4])).toEqual([0.6, 0.8]);
    expect(sanitizeAndNormalizeEmbedding([NaN, 1])).toEqual([0, 1]);
    expect(sanitizeAndNormalizeEmbedding([Infinity, 0, 0])).toEqual([0, 0, 0]);
    expect(sanitizeAndNormalizeEmbedding([1e-11, 0])).toEqual([1e-11, 0]);
  });

  it('maps ranks to scores; SQLite bm25 (negative) normalised so the best is 1', () => {
    expect([0, 1, 3, -5].map(bm25RankToScore)).toEqual([1, 0.5, 0.25, 1]);
    expect(normalizeBm25([-8, -4, -2])).toEqual([1, 0.5, 0.25]);
    expect(normalizeBm25([0, 0])).toEqual([1, 0.5]);
  });

  it('decays dated files by half-life; evergreen files keep their score', () => {
    expect(temporalDecayMultiplier(0, 30)).toBe(1);
    expect(Math.abs(temporalDecayMultiplier(30, 30) - 0.5)).toBeLessThan(1e-12);
    expect(temporalDecayMultiplier(60, 30)).toBeCloseTo(0.25, 12);
    expect(temporalDecayMultiplier(-10, 30)).toBe(1);
    const now = new Date(2026, 10, 21, 12);
    const chunk = (id: string, path: string) => ({ id, path, startLine: 1, endLine: 1, text: id, score: 0.8 });
    const results = mergeHybridResults([chunk('old', 'memory/2026-10-22.md'), chunk('ever', 'MEMORY.md')], [], {
      vectorWeight: 1,
      textWeight: 0,
      minScore: 0,
      maxResults: 6,
      temporalDecay: { enabled: true, halfLifeDays: 30 },
      now,
    });
    const byId = Object.fromEntries(results.map((item) => [item.id, item.score]));
    expect(byId.ever).toBe(0.8);
    expect(byId.old! / byId.ever!).toBeCloseTo(0.5, 1);
  });

  it('merges hybrid results as specified (0.7 · vector + 0.3 · text, minScore 0.35, max 6)', () => {
    const base = { path: 'MEMORY.md', startLine: 1, endLine: 1, text: '' };
    const options = { vectorWeight: 0.7, textWeight: 0.3, minScore: 0.35, maxResults: 6 };
    expect(mergeHybridResults([{ ...base, id: 'v', score: 0.8 }], [], options)).toMatchObject([
      { id: 'v', score: expect.closeTo(0.56, 12) },
    ]);
    // A keyword-only hit scores 0.3, under minScore, yet is kept (OpenClaw keeps keyword matches).
    expect(mergeHybridResults([], [{ ...base, id: 't', score: 1 }], options)).toMatchObject([
      { id: 't', score: expect.closeTo(0.3, 12) },
    ]);
    expect(
      mergeHybridResults([{ ...base, id: 'x', score: 0.5 }], [{ ...base, id: 'x', score: 0.5 }], options),
    ).toMatchObject([{ id: 'x', score: expect.closeTo(0.5, 12) }]);
    const ten = Array.from({ length: 10 }, (_, i) => ({ ...base, id: `c${i}`, score: 0.9 - i * 0.01 }));
    expect(mergeHybridResults(ten, [], options)).toHaveLength(6);
  });

  it('hybrid keeps what keyword-only keeps: keyword matches fill the slots hits above minScore leave; semantic-only ones still need minScore', () => {
    const base = { path: 'MEMORY.md', startLine: 1, endLine: 1, text: '' };
    const options = { vectorWeight: 0.7, textWeight: 0.3, minScore: 0.35, maxResults: 3 };
    const vector = [
      { ...base, id: 'strong', score: 0.9 },
      { ...base, id: 'weak-semantic', score: 0.4 },
    ];
    const keyword = [
      { ...base, id: 'exact', score: 1 },
      { ...base, id: 'partial', score: 0.5 },
      { ...base, id: 'noise', score: 0.05 },
    ];
    const merged = mergeHybridResults(vector, keyword, options);
    // 0.4 · 0.7 = 0.28 (semantic only) is dropped; text 0.05 is under the keyword-only floor 0.105.
    expect(merged.map((item) => item.id)).toEqual(['strong', 'exact', 'partial']);
    expect(mergeHybridResults(vector, keyword, { ...options, maxResults: 1 }).map((item) => item.id)).toEqual([
      'strong',
    ]);
    // Every hit under minScore: the keyword matches remain, best first.
    expect(mergeHybridResults(vector.slice(1), keyword, { ...options, maxResults: 6 }).map((item) => item.id)).toEqual([
      'exact',
      'partial',
    ]);
    expect(keywordMinScore(0.35, 0.3)).toBeCloseTo(0.105, 12);
  });

  it('MMR prefers a different chunk over a near-copy (A, B, A′)', () => {
    const order = mmrRerank(
      [
        { id: 'A', score: 0.9, text: 'the quarterly budget meeting with alice' },
        { id: "A'", score: 0.89, text: 'the quarterly budget meeting with alice' },
        { id: 'B', score: 0.8, text: 'tomatoes basil balcony garden' },
      ],
      0.7,
    ).map((item) => item.id);
    expect(order).toEqual(['A', 'B', "A'"]);
  });
});

describe('text', () => {
  it('chunks 1000 one-token lines at 400/80 starting at tokens 0, 320 and 640', () => {
    const text = Array.from({ length: 1000 }, (_, i) => String(i % 1000).padStart(3, '0')).join('\n');
    const chunks = chunkMarkdown(text, { tokens: 400, overlap: 80 });
    expect(chunks.map((chunk) => chunk.startLine)).toEqual([1, 321, 641]);
    expect(chunks.map((chunk) => chunk.endLine)).toEqual([400, 720, 1000]);
    for (const chunk of chunks) expect(chunk.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('splits a line longer than a chunk and never loses text', () => {
    const long = 'word '.repeat(1000).trim();
    const chunks = chunkMarkdown(`# Title\n${long}\nend`, { tokens: 100, overlap: 10 });
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks.every((chunk) => chunk.tokens <= 100)).toBe(true);
    expect(chunks[0]!.startLine).toBe(1);
    expect(chunks[chunks.length - 1]!.endLine).toBe(3);
  });

  it('counts and tokenises CJK text so it is findable', () => {
    expect(estimateTokens('记忆系统')).toBe(4);
    expect(estimateTokens('abcdefgh')).toBe(2);
    expect(tokenize('讨论记忆 system')).toEqual(['讨', '论', '讨论', '记', '论记', '忆', '记忆', 'system']);
    expect(segmentCjk('東京で会議')).toBe(' 東 京 で 会 議 ');
  });
});

describe('memory files', () => {
  function workspace() {
    const root = tempDir();
    const ws = join(root, 'ws');
    mkdirSync(join(ws, 'memory', 'deep'), { recursive: true });
    writeFileSync(join(ws, 'MEMORY.md'), 'curated');
    writeFileSync(join(ws, 'memory', '2026-11-01.md'), 'daily');
    writeFileSync(join(ws, 'memory', 'deep', 'note.md'), 'nested');
    writeFileSync(join(ws, 'memory', 'image.png'), 'not markdown');
    writeFileSync(join(root, 'outside.md'), 'outside');
    symlinkSync(join(root, 'outside.md'), join(ws, 'memory', 'link.md'));
    mkdirSync(join(root, 'team-docs', 'sub'), { recursive: true });
    writeFileSync(join(root, 'team-docs', 'sub', 'guide.md'), 'guide');
    writeFileSync(join(root, 'team-docs', 'data.txt'), 'skip');
    symlinkSync(join(root, 'outside.md'), join(root, 'team-docs', 'linked.md'));
    return { root, ws };
  }

  it('lists MEMORY.md, memory/**/*.md and extra paths; skips symlinks, hard links and non-Markdown; dedupes', () => {
    const { root, ws } = workspace();
    linkSync(join(root, 'outside.md'), join(ws, 'memory', 'hard.md'));
    const files = listMemoryFiles(ws, [join(root, 'team-docs'), join(ws, 'memory')]);
    expect(files.map((file) => [file.path, file.source])).toEqual([
      ['MEMORY.md', 'memory'],
      ['memory/2026-11-01.md', 'memory'],
      ['memory/deep/note.md', 'memory'],
      ['extra/team-docs/sub/guide.md', 'extra'],
    ]);
  });

  it('resolves allowed names and refuses escapes with the reason', () => {
    const { root, ws } = workspace();
    const extra = [join(root, 'team-docs')];
    expect(resolveMemoryPath(ws, extra, 'memory/deep/note.md').absPath).toBe(join(ws, 'memory', 'deep', 'note.md'));
    expect(resolveMemoryPath(ws, extra, 'extra/team-docs/sub/guide.md').absPath).toBe(
      join(root, 'team-docs', 'sub', 'guide.md'),
    );
    const refused: Array<[string, RegExp]> = [
      ['../outside.md', /"\.\."/],
      [join(root, 'outside.md'), /absolute/],
      ['memory/link.md', /symlink/],
      ['extra/team-docs/linked.md', /symlink/],
      ['extra/nope/x.md', /unknown extra root/],
      ['notes.md', /not a memory file/],
      ['memory/image.png', /not a Markdown file/],
      ['memory/hard.md', /has 2 hard links/],
    ];
    linkSync(join(root, 'outside.md'), join(ws, 'memory', 'hard.md'));
    for (const [path, reason] of refused) expect(() => resolveMemoryPath(ws, extra, path), path).toThrow(reason);
  });

  it('knows dated daily files', () => {
    expect(datedFileDay('memory/2026-11-01.md')?.getDate()).toBe(1);
    expect(datedFileDay('memory/2026-11-01-standup.md')?.getMonth()).toBe(10);
    expect(datedFileDay('MEMORY.md')).toBeUndefined();
    expect(datedFileDay('memory/projects/garden.md')).toBeUndefined();
  });
});

describe('the memory plugin wiring', () => {
  it('re-indexes in the background after memory files change (watcher, 1.5 s debounce)', async () => {
    const { createTestKernel } = await import('../sdk/testing.js');
    const { REPO } = await import('./helpers.js');
    const { mkdirSync: mkdir, writeFileSync: write } = await import('node:fs');
    const kernel = await createTestKernel({
      plugins: ['memory-sqlite', 'memory-core', 'memory-sqlite-engine', 'embeddings'].map((id) =>
        join(REPO, 'plugins', id),
      ),
      // Searches must not sync by themselves here: only the watcher can bring the change in.
      config: { agents: { defaults: { memorySearch: { provider: 'none', sync: { onSearch: false } } } } },
    });
    try {
      mkdir(join(kernel.paths.workspaceDir, 'memory'), { recursive: true });
      write(join(kernel.paths.workspaceDir, 'MEMORY.md'), '# Memory\n\n- The garage code is 4711.\n');
      await kernel.start();
      const memory = (await kernel.capabilities.slot('memory'))!;
      expect((await memory.search('garage code')).results.map((hit) => hit.path)).toEqual(['MEMORY.md']);
      const changedAt = Date.now();
      write(join(kernel.paths.workspaceDir, 'memory', '2026-11-21.md'), '# Today\n\n- Ordered a new bicycle chain.\n');
      let found = false;
      while (!found && Date.now() - changedAt < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        found = (await memory.search('bicycle chain')).results.some((hit) => hit.path === 'memory/2026-11-21.md');
      }
      expect(found).toBe(true);
      // Not before the debounce: the change settles for 1.5 s first.
      expect(Date.now() - changedAt).toBeGreaterThanOrEqual(1400);
    } finally {
      await kernel.dispose();
    }
  }, 20_000);
});
