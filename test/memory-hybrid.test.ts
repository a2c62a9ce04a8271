/**
 * Hybrid search is never worse than keyword-only search: a note found only by its words
 * (its vector says little, as a long note's vector does for a three-word query) ranks
 * where keyword-only search ranks it, in every backend that shares the SDK merge.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, type KernelConfig, type MemorySearchResult } from '../sdk/index.js';
import type { EmbeddingProvider, EmbeddingSelection } from '../sdk/memory/embeddings.js';
import { createHashEmbedder } from './fakes/hash-embedder.js';
import type { MemorySettings } from '../sdk/memory/settings.js';
import { resolveMemorySettings } from '../plugins/memory-core/settings.js';
import { SqliteMemoryIndex } from '../plugins/memory-sqlite-engine/engine.js';
import { MiniSearchMemoryIndex } from '../plugins/memory-minisearch/memory-index.js';
import { tempDir } from './helpers.js';
import { memoryRanking } from '../plugins/memory-core/ranking.js';
import { memoryFiles } from '../plugins/memory-core/files.js';
import { memoryText } from '../plugins/memory-core/text.js';

const quiet = createLogger({ level: 'error', sink: () => undefined });
const QUERY = { maxResults: 6, minScore: 0.35 };
const ANSWER = 'memory/2026-03-14.md';

/** Deterministic filler words, none of them a query word. */
function words(seed: number, count: number): string {
  const out: string[] = [];
  let state = seed * 2654435761;
  for (let i = 0; i < count; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    out.push(`w${(state >>> 8) % 5000}`);
  }
  return out.join(' ');
}

/** 150 daily notes of unrelated words, one other hotel, and one long note with the answer. */
function corpus(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let day = 0; day < 150; day++) {
    const date = new Date(Date.UTC(2026, 0, 1 + day)).toISOString().slice(0, 10);
    files[`memory/${date}.md`] = `# ${date}\n\n${words(day + 1, 12)}\n`;
  }
  files['memory/2026-02-02.md'] =
    `# 2026-02-02\n\n${words(7001, 100)}\n\nThe hotel in Porto had a noisy lift.\n\n${words(7002, 100)}\n`;
  files[ANSWER] =
    `# 2026-03-14\n\n${words(9001, 120)}\n\nLisbon offsite hotel: Memmo Alfama, booked for the whole team.\n\n${words(9002, 120)}\n`;
  files['MEMORY.md'] = `# Memory\n\n${words(4242, 30)}\n`;
  return files;
}

function workspaceWith(files: Record<string, string>): {
  settings: (memorySearch: Record<string, unknown>) => MemorySettings;
} {
  const stateDir = tempDir('claw-memory-hybrid-');
  const workspace = join(stateDir, 'workspace');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(workspace, name, '..'), { recursive: true });
    writeFileSync(join(workspace, name), text);
  }
  return {
    settings: (memorySearch) =>
      resolveMemorySettings({ agents: { defaults: { memorySearch } } } as KernelConfig, {
        agentId: 'main',
        workspaceDir: workspace,
        stateDir,
      }),
  };
}

interface Searchable {
  sync(options: object): Promise<unknown>;
  search(query: string, options: typeof QUERY): Promise<MemorySearchResult>;
  close(): Promise<void>;
}

const opened: Searchable[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close().catch(() => undefined);
});

const backends: Record<string, (settings: MemorySettings, selection: EmbeddingSelection) => Promise<Searchable>> = {
  sqlite: (settings, embeddings) =>
    SqliteMemoryIndex.open(settings, {
      embeddings,
      logger: quiet,
      ranking: memoryRanking,
      files: memoryFiles,
      text: memoryText,
    }),
  minisearch: async (settings, selection) =>
    new MiniSearchMemoryIndex(
      settings,
      { logger: quiet, ranking: memoryRanking, files: memoryFiles, text: memoryText },
      selection,
    ),
};

describe.each(Object.keys(backends))('hybrid never loses a keyword-only hit: %s', (backend) => {
  async function searchWith(provider: EmbeddingProvider | undefined, query: string): Promise<MemorySearchResult> {
    const { settings } = workspaceWith(corpus());
    const selection: EmbeddingSelection = provider
      ? { provider, reason: 'test' }
      : { reason: 'memorySearch.provider is "none": keyword search only' };
    const index = await backends[backend]!(settings(provider ? {} : { provider: 'none' }), selection);
    opened.push(index);
    await index.sync({});
    return index.search(query, QUERY);
  }

  it('"Lisbon offsite hotel" is rank 1 in hybrid mode as in keyword-only mode', async () => {
    const keyword = await searchWith(undefined, 'Lisbon offsite hotel');
    expect(keyword.mode).toBe('keyword');
    expect(keyword.results[0]?.path).toBe(ANSWER);

    const hybrid = await searchWith(createHashEmbedder({ dims: 256 }), 'Lisbon offsite hotel');
    expect(hybrid.mode).toBe('hybrid');
    expect(hybrid.results[0]?.path).toBe(ANSWER);
    // Every note keyword-only search found is still there.
    for (const hit of keyword.results) expect(hybrid.results.map((result) => result.path)).toContain(hit.path);
  });

  it('so does a whole question, most of whose words no note holds', async () => {
    const question = 'which hotel did we book for the Lisbon offsite last spring';
    const keyword = await searchWith(undefined, question);
    expect(keyword.results[0]?.path).toBe(ANSWER);
    const hybrid = await searchWith(createHashEmbedder({ dims: 256 }), question);
    expect(hybrid.mode).toBe('hybrid');
    expect(hybrid.results[0]?.path).toBe(ANSWER);
  });
});
