/**
 * A memory backend is only its index: the memory-core plugin (the service "memory-core")
 * puts everything else around it — per-agent indexes created on first use, the `memory`
 * slot capability, the `memory_search` and `memory_get` tools, `claw memory
 * status|index|search`, a watcher on MEMORY.md and memory/ that re-syncs in the background,
 * and a sync when a session starts — registered on the backend's own behalf, so its manifest declares
 * them and requires the service. Its engine gets the shared ranking and memory files in `ctx`.
 *
 *   export default defineMemoryPlugin({ id: 'memory-x', backend: 'x', createIndex: (settings, ctx) => new XIndex(settings) });
 */
import type { Logger } from '../../kernel/index.js';
import type { PluginApi, PluginDefinition } from '../types/plugin.js';
import type { MemorySearchResult, MemorySyncProgress, MemorySyncStats } from '../types/memory.js';
import { definePlugin } from '../index.js';
import { requireService } from '../services.js';
import type { MemoryFiles, MemoryLines } from './files.js';
import type { MemorySettings } from './settings.js';
import type { MemoryText } from './text.js';

/** One agent's index in one backend. */
export interface MemoryIndex {
  search(
    query: string,
    options: { maxResults: number; minScore: number; signal?: AbortSignal },
  ): Promise<MemorySearchResult>;
  sync(options: { force?: boolean; onProgress?: (progress: MemorySyncProgress) => void }): Promise<MemorySyncStats>;
  status(options: { deep?: boolean }): Promise<Record<string, unknown>>;
  /** Read a memory file; the default is `ctx.files` (MEMORY.md, memory/ and extra paths, safely). */
  get?(path: string, options: { from?: number; lines?: number }): Promise<MemoryLines & { path: string }>;
  close(): Promise<void> | void;
}

export interface MemoryIndexContext {
  api: PluginApi<any>;
  logger: Logger;
  stateDir: string;
  env: Readonly<Record<string, string | undefined>>;
  /** The ranking every backend shares, so they rank alike. */
  ranking: MemoryRanking;
  /** Which files are memory and how they are read, the same for every backend. */
  files: MemoryFiles;
  text: MemoryText;
}

export interface MemoryPluginOptions<Config extends Record<string, unknown>> {
  id: string;
  /** Reported as `backend` in results and status. */
  backend: string;
  createIndex(
    settings: MemorySettings,
    context: MemoryIndexContext,
    config: Config,
  ): MemoryIndex | Promise<MemoryIndex>;
  /** Index at gateway start (QMD warms its models); otherwise at a session's start or first search. */
  indexOnStart?: boolean;
}

/** A search candidate: a chunk with one score (vector or keyword). */
export interface RankedChunk {
  /** Unique per chunk (the merge key). */
  id: string;
  path: string;
  startLine: number;
  endLine: number;
  text: string;
  source?: string;
  score: number;
}

export interface ScoredChunk extends RankedChunk {
  vectorScore?: number;
  textScore?: number;
}

export interface MergeOptions {
  vectorWeight: number;
  textWeight: number;
  minScore: number;
  maxResults: number;
  mmr?: { enabled: boolean; lambda: number };
  temporalDecay?: { enabled: boolean; halfLifeDays: number };
  now?: Date;
}

/** Ranking rules memory engines share (OpenClaw's), from memory-core as `ctx.ranking`. */
export interface MemoryRanking {
  /**
   * Union by chunk id, weighted sum, optional decay and MMR, then minScore and maxResults;
   * keyword matches that keyword-only search would keep fill the slots left free.
   */
  mergeHybridResults(
    vector: readonly RankedChunk[],
    keyword: readonly RankedChunk[],
    options: MergeOptions,
  ): ScoredChunk[];
  /** Decay, MMR, threshold and limit, for results already scored. */
  finish(results: ScoredChunk[], options: Omit<MergeOptions, 'vectorWeight' | 'textWeight'>): ScoredChunk[];
  /** The threshold a keyword match must reach on its own: the share of minScore the text side can earn. */
  keywordMinScore(minScore: number, textWeight: number): number;
  cosine(a: ArrayLike<number>, b: ArrayLike<number>): number;
  /** A question's content terms, for keyword engines that OR them (no question words; CJK as character pairs). */
  contentTerms(question: string): string[];
}

export const MEMORY_CORE_SERVICE_ID = 'memory-core';

export interface MemoryCoreService {
  /** Registers the memory capability, tools, CLI command and `<id>-sync` service on the backend's `api`. */
  serve<Config extends Record<string, unknown>>(api: PluginApi<Config>, options: MemoryPluginOptions<Config>): void;
}

export function defineMemoryPlugin<Config extends Record<string, unknown> = Record<string, unknown>>(
  options: MemoryPluginOptions<Config>,
): PluginDefinition<Config> {
  return definePlugin<Config>({
    id: options.id,
    async register(api) {
      const core = await requireService<MemoryCoreService>(api.kernel, MEMORY_CORE_SERVICE_ID, options.id);
      core.serve(api, options);
    },
  });
}
