/**
 * The built-in memory index: one SQLite file per agent holding the Markdown chunks, an
 * FTS5 index over them, their embeddings (in a sqlite-vec table when the extension loads,
 * else searched by cosine in JS) and an embedding cache.
 *
 * Search degrades instead of failing: no provider, a failing provider, or an index still
 * waiting for vectors gives keyword results; no FTS5 gives vector results. Every such
 * answer carries a `notice` that says why.
 */
import { statSync } from 'node:fs';
import type {
  Logger,
  MemorySearchHit,
  MemorySearchResult,
  MemorySyncProgress,
  MemorySyncStats,
} from '../../sdk/index.js';
import {
  type CappedFile,
  type Chunk,
  type EmbeddingProvider,
  type EmbeddingSelection,
  type MemoryEngineOptions,
  type MemoryFile,
  type MemoryFiles,
  type MemoryIndex,
  type MemoryRanking,
  type MemorySettings,
  type MemoryText,
  type ScoredChunk,
  SNIPPET_MAX_CHARS,
} from '../../sdk/memory/index.js';
import { listSessionFiles, readSessionDelta, sessionChunks, type SessionFile } from './session-files.js';
import { normalizeBm25 } from './bm25.js';
import { buildFtsQuery, namesIn } from './fts-query.js';
import { chunkContexts } from './context.js';
import { correctedQuestion, corrections, type Spelling } from './spelling.js';
import type { IndexBuilding, IndexMeta } from './schema.js';
import {
  claimScratchPath,
  processAlive,
  releaseScratchPath,
  removeAbandonedScratch,
  replaceWithScratch,
} from './scratch.js';
import { DimensionMismatchError, IndexStore, removeDatabaseFile, type ChunkRow, type FileRow } from './store.js';
import { isZeroVector } from './vectors.js';

/** The engine service's options (sdk/memory/engine.ts): the providers, which the index now owns, the logger, the backend name, memory-core's ranking and memory files. */
export type SqliteMemoryIndexOptions = MemoryEngineOptions;

/** Files are chunked, embedded and written in groups of about this many chunks, bounding memory. */
const WRITE_GROUP_CHUNKS = 512;

type Candidate = Omit<ScoredChunk, 'vectorScore' | 'textScore'>;

interface Outcome {
  files: number;
  indexed: number;
  skipped: number;
  removed: number;
  embedded: number;
  cacheHits: number;
  rebuilt: boolean;
  /** Paths present in this sync's listing (and readable). */
  paths: Set<string>;
  /** Files over memorySearch.maxFileBytes, indexed only up to it. */
  capped: CappedFile[];
  /** The provider failed; chunks written without vectors wait for the next sync. */
  failure?: Error;
  /** The provider's vectors changed length under an unchanged fingerprint. */
  dimsChanged?: { reason: string; dims: number };
}

type Side = { items: Candidate[]; notice?: undefined } | { items?: undefined; notice: string };

class Progress {
  files = 0;
  chunks = 0;
  embedded = 0;

  constructor(
    private readonly listener: ((progress: MemorySyncProgress) => void) | undefined,
    readonly filesTotal: number,
  ) {}

  emit(phase: MemorySyncProgress['phase']): void {
    try {
      this.listener?.({
        phase,
        files: this.files,
        filesTotal: this.filesTotal,
        chunks: this.chunks,
        embedded: this.embedded,
      });
    } catch {
      // A broken progress display must not break indexing.
    }
  }
}

function buildingRecord(progress: Progress, startedAt: string): IndexBuilding {
  return {
    pid: process.pid,
    files: progress.files,
    filesTotal: progress.filesTotal,
    startedAt,
    updatedAt: new Date().toISOString(),
  };
}

function progressOf(progress: { files: number; filesTotal: number }): { files: number; filesTotal: number } {
  return { files: progress.files, filesTotal: progress.filesTotal };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class SqliteMemoryIndex implements MemoryIndex {
  private store: IndexStore;
  private active: EmbeddingProvider | undefined;
  private readonly backend: string;
  private readonly logger: Logger;
  private readonly ranking: MemoryRanking;
  private readonly files: MemoryFiles;
  private readonly text: MemoryText;
  private queue: Promise<unknown> = Promise.resolve();
  private clock: number;
  private closing = false;
  private closed = false;
  private lastEmbeddingError?: string;
  private readonly warned = new Set<string>();
  private readonly tuning: Tuning;
  /** The sync running in this process, for status. */
  private running?: Progress;
  /** When the running sync began building the first index (in a scratch file); the live file says so, for other processes. */
  private firstBuild?: string;
  /** Why sqlite-vec is not used, as found at open (reopened files do not try again). */
  private readonly vectorError?: string;

  private constructor(
    private readonly settings: MemorySettings,
    private readonly selection: EmbeddingSelection,
    options: SqliteMemoryIndexOptions,
    store: IndexStore,
  ) {
    this.store = store;
    this.tuning = tuningOf(settings);
    this.vectorError = store.vectorError;
    this.active = selection.provider;
    this.backend = options.backend ?? 'sqlite';
    this.logger = options.logger;
    this.ranking = options.ranking;
    this.files = options.files;
    this.text = options.text;
    this.clock = store.lastCacheUse();
  }

  static async open(settings: MemorySettings, options: SqliteMemoryIndexOptions): Promise<SqliteMemoryIndex> {
    const path = settings.store.path;
    const leftovers = removeAbandonedScratch(path);
    if (leftovers.length)
      options.logger.info(
        `memory index ${path}: removed what an interrupted rebuild left behind (${leftovers.join(', ')})`,
      );
    const store = IndexStore.open(path, { vector: settings.store.vector, segment: options.text.segmentCjk });
    if (store.recovered) options.logger.warn(`memory index ${path}: ${store.recovered}`);
    if (settings.store.vector.enabled && store.vectorError) {
      options.logger.error(
        `memory search: ${store.vectorError}; vector search runs as in-process cosine similarity instead`,
      );
    }
    if (!store.fts)
      options.logger.warn(`memory search: FTS5 is unusable in ${path} (${store.ftsError}); searching by vectors only`);
    return new SqliteMemoryIndex(settings, options.embeddings, options, store);
  }

  // ── search ─────────────────────────────────────────────────────────────────────

  async search(
    query: string,
    options: { maxResults: number; minScore: number; signal?: AbortSignal },
  ): Promise<MemorySearchResult> {
    this.assertOpen();
    const { signal } = options;
    signal?.throwIfAborted();
    this.reopenIfReplaced();
    const limit = Math.max(1, Math.floor(options.maxResults) || 1);
    const pool = Math.ceil(limit * this.tuning.candidateMultiplier);
    const text = query.trim();
    if (!text) return { results: [], backend: this.backend, mode: 'keyword', notice: 'the query is empty' };

    // Misspelt words are corrected once, from the index's vocabulary, for both sides: the
    // keyword side searches the corrections beside the word, the embedding sees the corrected question.
    const spelling = this.spelling(this.store, text);
    const embedded = await this.embedQuery(spelling.question, signal);
    signal?.throwIfAborted();
    this.assertOpen();
    // Both sides read the store only after the await, so they see the same chunks.
    const store = this.store;
    const keyword = this.keywordSide(store, text, pool, spelling);
    const vector: Side = embedded.vector
      ? this.vectorSide(store, embedded.vector, pool, keyword.items ?? [])
      : { notice: embedded.notice! };
    const { mode, scored, notice } = this.combine(keyword, vector, limit, options.minScore, embedded.provider);
    const vectorsTookPart = mode !== 'keyword' && embedded.provider !== undefined;
    return {
      results: scored.map((item) => toHit(item, text, this.text)),
      backend: this.backend,
      mode,
      ...(vectorsTookPart ? { provider: embedded.provider!.id, model: embedded.provider!.model } : {}),
      ...(notice ? { notice } : {}),
    };
  }

  private combine(
    keyword: Side,
    vector: Side,
    limit: number,
    minScore: number,
    embeddedBy: EmbeddingProvider | undefined,
  ): { mode: MemorySearchResult['mode']; scored: ScoredChunk[]; notice?: string } {
    const query = this.settings.query;
    const common = { maxResults: limit, mmr: query.mmr, temporalDecay: query.temporalDecay };
    const { vectorWeight, textWeight } = query.hybrid;
    const fallbackNote =
      embeddedBy && embeddedBy === this.selection.fallback
        ? `embeddings come from the fallback provider ${embeddedBy.id} (${embeddedBy.model})`
        : undefined;
    const join = (...notes: Array<string | undefined>) => notes.filter(Boolean).join('; ') || undefined;
    if (vector.items && !query.hybrid.enabled) {
      return {
        mode: 'vector',
        scored: this.ranking.finish(vector.items.map(asVectorScored), { ...common, minScore }),
        notice: fallbackNote,
      };
    }
    if (vector.items && keyword.items) {
      return {
        mode: 'hybrid',
        scored: this.ranking.mergeHybridResults(vector.items, keyword.items, {
          ...common,
          vectorWeight,
          textWeight,
          minScore,
        }),
        notice: fallbackNote,
      };
    }
    // One side alone: its own score, against the part of minScore that side could earn in a hybrid search.
    if (vector.items) {
      return {
        mode: 'vector',
        scored: this.ranking.finish(vector.items.map(asVectorScored), { ...common, minScore: minScore * vectorWeight }),
        notice: join(`vector search only: ${keyword.notice}`, fallbackNote),
      };
    }
    if (keyword.items) {
      return {
        mode: 'keyword',
        scored: this.ranking.finish(keyword.items.map(asTextScored), {
          ...common,
          minScore: this.ranking.keywordMinScore(minScore, textWeight),
        }),
        notice: `keyword search only: ${vector.notice}`,
      };
    }
    return { mode: 'keyword', scored: [], notice: `no search is possible: ${vector.notice}; ${keyword.notice}` };
  }

  /** Providers whose vectors the index holds, or why vectors cannot take part now. */
  private vectorReadiness(meta: IndexMeta, pending: number): { providers: EmbeddingProvider[] } | { reason: string } {
    if (!this.active) return { reason: this.selection.reason.replace(/:?\s*keyword search only\.?$/i, '') };
    const candidates = [this.active, this.otherProvider()].filter(
      (provider): provider is EmbeddingProvider => provider?.fingerprint === meta.fingerprint,
    );
    if (candidates.length === 0) {
      const built =
        meta.fingerprint === undefined
          ? 'nothing has been indexed yet'
          : meta.fingerprint === 'none'
            ? 'the index was built without embeddings'
            : `the index holds vectors from ${meta.fingerprint}`;
      return { reason: `${built}; the next sync indexes it for ${this.active.fingerprint}` };
    }
    if (pending > 0) {
      return {
        reason: `${pending} chunk${pending === 1 ? ' is' : 's are'} still waiting for embeddings${this.lastEmbeddingError ? ` (last error: ${this.lastEmbeddingError})` : ''}`,
      };
    }
    return { providers: candidates };
  }

  private async embedQuery(
    text: string,
    signal?: AbortSignal,
  ): Promise<{ vector?: Float32Array; provider?: EmbeddingProvider; notice?: string }> {
    const readiness = this.vectorReadiness(this.store.meta(), this.store.pendingCount());
    if ('reason' in readiness) return { notice: readiness.reason };
    const errors: string[] = [];
    for (const provider of readiness.providers) {
      try {
        const [vector] = await provider.embed([text], { signal });
        if (!vector || vector.length === 0 || isZeroVector(vector)) {
          errors.push(`${provider.id} returned an empty vector`);
          continue;
        }
        return { vector: Float32Array.from(vector), provider };
      } catch (error) {
        if (signal?.aborted) throw signal.reason ?? error;
        errors.push(`${provider.id}: ${message(error)}`);
      }
    }
    const reason = `embedding the query failed (${errors.join('; ')})`;
    this.warnOnce(`memory search: ${reason}; answering from keywords only`);
    return { notice: reason };
  }

  /** The question's content terms, corrections for the words the index does not know, and the question with them applied. */
  private spelling(store: IndexStore, text: string): Spelling {
    const terms = this.ranking.contentTerms(text);
    if (!store.fts) return { terms, fixes: new Map(), question: text };
    try {
      const fixes = corrections(terms, store);
      return { terms, fixes, question: correctedQuestion(text, fixes, (stem) => store.surfaceForm(stem)) };
    } catch (error) {
      this.warnOnce(`memory search: spelling correction failed: ${message(error)}`);
      return { terms, fixes: new Map(), question: text };
    }
  }

  private keywordSide(store: IndexStore, text: string, pool: number, spelling: Spelling): Side {
    if (!store.fts) return { notice: `FTS5 is unusable (${store.ftsError})` };
    const match = buildFtsQuery(spelling.terms, this.text, spelling.fixes, namesIn(text));
    if (!match) return { items: [] };
    try {
      const rows = store.keyword(match, pool);
      const scores = normalizeBm25(rows.map((row) => row.rank));
      return { items: rows.map((row, index) => candidate(row, scores[index]!)) };
    } catch (error) {
      this.warnOnce(`memory search: the keyword query failed: ${message(error)}`);
      return { notice: `the keyword query failed (${message(error)})` };
    }
  }

  /**
   * The `pool` nearest chunks, plus the vector score of every keyword candidate: a chunk
   * found by its words but outside the nearest few would otherwise count as vector score 0.
   */
  private vectorSide(store: IndexStore, vector: Float32Array, pool: number, keyword: readonly Candidate[]): Side {
    try {
      const { cosine } = this.ranking;
      const items = store.nearest(vector, pool, cosine).map((row) => candidate(row, row.score));
      const seen = new Set(items.map((item) => item.id));
      const similarity = store.similarities(
        vector,
        keyword.filter((item) => !seen.has(item.id)).map((item) => Number(item.id)),
        cosine,
      );
      for (const item of keyword) {
        const score = similarity.get(Number(item.id));
        if (score !== undefined && score > 0) items.push({ ...item, score });
      }
      return { items };
    } catch (error) {
      this.warnOnce(`memory search: the vector query failed: ${message(error)}`);
      return { notice: `the vector query failed (${message(error)})` };
    }
  }

  // ── sync ───────────────────────────────────────────────────────────────────────

  /** One sync at a time; a sync asked for while one runs starts after it. */
  sync(
    options: { force?: boolean; onProgress?: (progress: MemorySyncProgress) => void } = {},
  ): Promise<MemorySyncStats> {
    const run = this.queue.then(() => this.runSync(options.force === true, options.onProgress));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async runSync(force: boolean, onProgress?: (progress: MemorySyncProgress) => void): Promise<MemorySyncStats> {
    this.assertOpen();
    this.reopenIfReplaced();
    const started = Date.now();
    const files: IndexedFile[] = this.files.list(this.settings.workspaceDir, this.settings.extraPaths);
    if (this.settings.sources.includes('sessions')) files.push(...listSessionFiles(this.settings.sessionsDir));
    const progress = new Progress(onProgress, files.length);
    progress.emit('scan');
    this.running = progress;
    try {
      return await this.syncAll(files, force, progress, started);
    } finally {
      this.running = undefined;
      this.firstBuild = undefined;
    }
  }

  private async syncAll(
    files: IndexedFile[],
    force: boolean,
    progress: Progress,
    started: number,
  ): Promise<MemorySyncStats> {
    let outcome = await this.syncWith(this.active, files, force, progress);
    const fallback = this.selection.fallback;
    if (outcome.failure && fallback && this.active === this.selection.provider) {
      this.logger.warn(
        `memory embeddings: ${this.active!.id} (${this.active!.model}) failed (${outcome.failure.message}); switching to the fallback ${fallback.id} (${fallback.model}) and re-indexing`,
      );
      this.active = fallback;
      const second = await this.syncWith(fallback, files, false, progress);
      outcome = {
        ...second,
        embedded: outcome.embedded + second.embedded,
        cacheHits: outcome.cacheHits + second.cacheHits,
      };
    }
    const stats: MemorySyncStats = {
      files: outcome.files,
      indexed: outcome.indexed,
      skipped: outcome.skipped,
      removed: outcome.removed,
      chunks: this.store.counts().chunks,
      embedded: outcome.embedded,
      cacheHits: outcome.cacheHits,
      rebuilt: outcome.rebuilt,
      durationMs: Date.now() - started,
      ...(outcome.capped.length ? { capped: outcome.capped } : {}),
    };
    if (outcome.capped.length) this.warnOnce(this.files.cappedNote(outcome.capped, this.settings.maxFileBytes));
    // Every listed file has been through this sync: the index is complete (vectors still
    // missing after a provider failure are reported apart, as pendingEmbeddings).
    this.store.setMeta({
      lastSync: {
        ...stats,
        at: new Date(started).toISOString(),
        ...(outcome.failure ? { embeddingError: outcome.failure.message } : {}),
      },
      complete: true,
      building: undefined,
    });
    progress.emit('done');
    return stats;
  }

  private async syncWith(
    provider: EmbeddingProvider | undefined,
    files: IndexedFile[],
    force: boolean,
    progress: Progress,
  ): Promise<Outcome> {
    progress.files = 0;
    const meta = this.store.meta();
    if (meta.fingerprint === undefined && !force) {
      // A new index is built like a rebuild: in a scratch file without per-file fsyncs, then
      // swapped in whole, so it is as fast as --force and no reader sees half of it. The
      // (still empty) live file records who builds it and how far, for status elsewhere.
      this.firstBuild = new Date().toISOString();
      this.store.setMeta({ building: buildingRecord(progress, this.firstBuild) });
      const outcome = await this.rebuild(provider, files, 'no index yet', progress);
      return { ...outcome, rebuilt: false };
    }
    const reason = force ? 'asked for' : this.rebuildReason(meta, provider);
    if (reason) return this.rebuild(provider, files, reason, progress);
    const outcome = await this.indexInto(this.store, provider, files, progress);
    return outcome.dimsChanged
      ? this.rebuild(provider, files, outcome.dimsChanged.reason, progress, outcome.dimsChanged.dims)
      : outcome;
  }

  /**
   * What a new index records before its first vector. A known dimension is recorded up
   * front, so cached vectors of another length (same model name, other size) are not reused.
   */
  private metaFor(provider: EmbeddingProvider | undefined, dims = provider?.dims): Partial<IndexMeta> {
    return {
      fingerprint: provider?.fingerprint ?? 'none',
      provider: provider?.id ?? 'none',
      model: provider?.model,
      dims,
      chunkTokens: this.tuning.chunking.tokens,
      chunkOverlap: this.tuning.chunking.overlap,
    };
  }

  /** Why the stored index cannot be updated in place, if it cannot. */
  private rebuildReason(meta: IndexMeta, provider: EmbeddingProvider | undefined): string | undefined {
    const fingerprint = provider?.fingerprint ?? 'none';
    if (meta.fingerprint !== fingerprint)
      return `the embedding provider changed from ${meta.fingerprint ?? 'nothing'} to ${fingerprint}`;
    const { tokens, overlap } = this.tuning.chunking;
    if (meta.chunkTokens !== tokens || meta.chunkOverlap !== overlap) {
      return `chunking changed from ${meta.chunkTokens}/${meta.chunkOverlap} to ${tokens}/${overlap} tokens (size/overlap)`;
    }
    if (provider?.dims !== undefined && meta.dims !== undefined && provider.dims !== meta.dims) {
      return `the embedding dimension changed from ${meta.dims} to ${provider.dims}`;
    }
    return undefined;
  }

  /**
   * Builds a complete new index in a scratch file while the current one keeps answering,
   * then swaps it in. If the primary provider fails and a fallback exists, the scratch file
   * is dropped and the caller starts over with the fallback.
   */
  private async rebuild(
    provider: EmbeddingProvider | undefined,
    files: IndexedFile[],
    reason: string,
    progress: Progress,
    dims?: number,
  ): Promise<Outcome> {
    const livePath = this.settings.store.path;
    this.logger.info(`memory index ${livePath}: full rebuild (${reason})`);
    const previousPaths = new Set(this.store.files().keys());
    const scratchPath = claimScratchPath(livePath);
    let scratch: IndexStore | undefined;
    let swapped = false;
    try {
      scratch = IndexStore.open(scratchPath, {
        vector: this.vectorOptions(),
        scratch: true,
        segment: this.text.segmentCjk,
      });
      // Swapped in only once every file is in it.
      scratch.setMeta({ ...this.metaFor(provider, dims ?? provider?.dims), complete: true });
      scratch.importCache(livePath, this.tuning.cacheEntries);
      progress.files = 0;
      const outcome = await this.indexInto(scratch, provider, files, progress);
      if (outcome.failure && this.canFallBack(provider)) return outcome;
      if (outcome.dimsChanged)
        throw new Error(
          `${provider?.id} returned vectors of different lengths within one rebuild: ${outcome.dimsChanged.reason}`,
        );
      this.assertOpen();
      scratch.close();
      this.swapIn(scratchPath);
      swapped = true;
      const removed = [...previousPaths].filter((path) => !outcome.paths.has(path)).length;
      return { ...outcome, removed, rebuilt: true };
    } finally {
      releaseScratchPath(scratchPath);
      if (!swapped) {
        scratch?.close();
        removeDatabaseFile(scratchPath);
      }
    }
  }

  /** Once per write group (WRITE_GROUP_CHUNKS), not per file: each record is a synced write. */
  private recordFirstBuild(progress: Progress): void {
    if (this.firstBuild) this.store.setMeta({ building: buildingRecord(progress, this.firstBuild) });
  }

  private swapIn(scratchPath: string): void {
    const livePath = this.settings.store.path;
    this.store.close();
    try {
      replaceWithScratch(scratchPath, livePath);
    } catch (error) {
      this.store = this.openLive();
      throw new Error(`memory index ${livePath}: could not replace it with the rebuilt index: ${message(error)}`);
    }
    this.store = this.openLive();
  }

  private openLive(): IndexStore {
    const store = IndexStore.open(this.settings.store.path, {
      vector: this.vectorOptions(),
      segment: this.text.segmentCjk,
    });
    if (store.recovered) this.logger.warn(`memory index ${this.settings.store.path}: ${store.recovered}`);
    if (store.vector !== this.store?.vector && store.vectorError) this.warnOnce(`memory search: ${store.vectorError}`);
    return store;
  }

  /** Whether sqlite-vec loaded is decided once, at open: scratch and reopened files follow it. */
  private vectorOptions(): { enabled: boolean; extensionPath?: string } {
    return { enabled: this.store.vector === 'sqlite-vec', extensionPath: this.settings.store.vector.extensionPath };
  }

  /** Another process may have swapped in a rebuilt index (or deleted it): follow the path. */
  private reopenIfReplaced(): void {
    let inode: number | undefined;
    try {
      inode = statSync(this.settings.store.path).ino;
    } catch {
      inode = undefined;
    }
    if (inode === this.store.inode) return;
    this.logger.info(
      `memory index ${this.settings.store.path}: the file was replaced or removed by someone else; reopening it`,
    );
    this.store.close();
    this.store = this.openLive();
  }

  private canFallBack(provider: EmbeddingProvider | undefined): boolean {
    return provider !== undefined && provider === this.selection.provider && this.selection.fallback !== undefined;
  }

  private otherProvider(): EmbeddingProvider | undefined {
    return this.active === this.selection.provider ? this.selection.fallback : this.selection.provider;
  }

  /**
   * Delta indexing into `store`: unchanged files (same content hash) are skipped, changed
   * and new ones re-chunked and written with their vectors, vanished ones removed.
   */
  private async indexInto(
    store: IndexStore,
    provider: EmbeddingProvider | undefined,
    files: IndexedFile[],
    progress: Progress,
  ): Promise<Outcome> {
    const known = store.files();
    const outcome: Outcome = {
      files: 0,
      indexed: 0,
      skipped: 0,
      removed: 0,
      embedded: 0,
      cacheHits: 0,
      rebuilt: false,
      paths: new Set(),
      capped: [],
    };
    const stopOnFailure = this.canFallBack(provider);
    let group: Array<{ row: FileRow; chunks: Array<Chunk & { context?: string }>; append?: boolean }> = [];
    let groupChunks = 0;

    const flush = async (): Promise<boolean> => {
      if (group.length === 0) return true;
      const vectors = provider
        ? await this.vectorsFor(
            store,
            provider,
            group.flatMap((item) => item.chunks),
            outcome,
            progress,
          )
        : new Map<string, Float32Array>();
      if ((outcome.failure && stopOnFailure) || outcome.dimsChanged) return false;
      this.assertSyncing();
      progress.emit('write');
      for (const item of group) {
        const chunks = item.chunks.map((chunk) => ({ ...chunk, vector: vectors.get(chunk.hash) }));
        if (item.append) store.appendToFile(item.row, chunks);
        else store.writeFile(item.row, chunks);
      }
      this.recordFirstBuild(progress);
      group = [];
      groupChunks = 0;
      return true;
    };

    for (const file of files) {
      this.assertSyncing();
      if (file.source === 'sessions') {
        const delta = this.readSession(file, known.get(file.path));
        if (delta === 'vanished') continue;
        outcome.files++;
        outcome.paths.add(file.path);
        progress.files++;
        if (delta === 'unchanged' || delta === 'unreadable') {
          outcome.skipped++;
          continue;
        }
        group.push(delta);
        groupChunks += delta.chunks.length;
        outcome.indexed++;
        progress.chunks += delta.chunks.length;
        if (groupChunks >= WRITE_GROUP_CHUNKS && !(await flush())) return outcome;
        continue;
      }
      const read = this.readFile(file);
      if (read === 'vanished') continue;
      outcome.files++;
      outcome.paths.add(file.path);
      progress.files++;
      const row = known.get(file.path);
      if (read !== 'unreadable' && read.indexedBytes !== undefined)
        outcome.capped.push({ path: file.path, size: read.size, indexedBytes: read.indexedBytes });
      if (read === 'unreadable') {
        // Its last good chunks stay until it can be read again.
        outcome.skipped++;
        continue;
      }
      const hash = this.text.hashText(read.text);
      if (row && row.hash === hash && row.source === file.source) {
        outcome.skipped++;
        if (row.mtime !== file.mtimeMs || row.size !== file.size) store.touchFile(file.path, file.mtimeMs, file.size);
        continue;
      }
      const pieces = this.text.chunkMarkdown(read.text, this.tuning.chunking);
      const contexts = chunkContexts(file.path, read.text, pieces);
      const chunks = pieces.map((chunk, index) => ({ ...chunk, context: contexts[index] }));
      group.push({ row: { path: file.path, source: file.source, hash, mtime: file.mtimeMs, size: file.size }, chunks });
      groupChunks += chunks.length;
      outcome.indexed++;
      progress.chunks += chunks.length;
      progress.emit('chunk');
      if (groupChunks >= WRITE_GROUP_CHUNKS && !(await flush())) return outcome;
    }
    if (!(await flush())) return outcome;
    for (const path of known.keys()) {
      if (outcome.paths.has(path)) continue;
      store.removeFile(path);
      outcome.removed++;
    }
    // Chunks an earlier failed sync left without vectors get another chance.
    if (provider && !outcome.failure) {
      const pending = store.pendingTexts();
      if (pending.length) {
        const vectors = await this.vectorsFor(store, provider, pending, outcome, progress);
        if (!outcome.dimsChanged) store.fillVectors(vectors);
      }
    }
    return outcome;
  }

  /**
   * A transcript's turns since the last sync. Transcripts are append-only, so the file row
   * records how far it was read (size: bytes, hash: lines) and only what follows is read;
   * one that shrank was rewritten and is read again from its start.
   */
  private readSession(
    file: SessionFile,
    row: FileRow | undefined,
  ): { row: FileRow; chunks: Chunk[]; append: boolean } | 'unchanged' | 'vanished' | 'unreadable' {
    const resume = row?.source === 'sessions' && row.size <= file.size ? row : undefined;
    if (resume && resume.size === file.size) return 'unchanged';
    const fromLine = resume ? Number(/^lines:(\d+)$/.exec(resume.hash)?.[1] ?? NaN) : 0;
    if (resume && !Number.isFinite(fromLine)) return this.readSession(file, undefined);
    let delta;
    try {
      delta = readSessionDelta(file.absPath, resume?.size ?? 0, fromLine);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'vanished';
      this.warnOnce(
        `memory index: cannot read session transcript ${file.absPath} (${message(error)}); keeping what was indexed from it before`,
      );
      return 'unreadable';
    }
    // Only part of a line was added since: it is read once it is complete.
    if (resume && delta.endByte === resume.size) return 'unchanged';
    return {
      row: {
        path: file.path,
        source: 'sessions',
        hash: `lines:${delta.endLine}`,
        mtime: file.mtimeMs,
        size: delta.endByte,
      },
      chunks: sessionChunks(delta.turns, this.tuning.chunking, this.text),
      append: resume !== undefined,
    };
  }

  private readFile(
    file: MemoryFile,
  ): { text: string; size: number; indexedBytes?: number } | 'vanished' | 'unreadable' {
    try {
      return this.files.readText(file.absPath, this.settings.maxFileBytes);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'vanished';
      this.warnOnce(
        `memory index: cannot read ${file.absPath} (${message(error)}); keeping what was indexed from it before`,
      );
      return 'unreadable';
    }
  }

  /**
   * Vectors for these texts: from the cache where it has them, from the provider for the
   * rest (each batch cached as soon as it arrives, so an interrupted sync keeps what it paid
   * for). A provider failure is recorded in `outcome`, never thrown.
   */
  private async vectorsFor(
    store: IndexStore,
    provider: EmbeddingProvider,
    items: ReadonlyArray<{ hash: string; text: string }>,
    outcome: Outcome,
    progress: Progress,
  ): Promise<Map<string, Float32Array>> {
    const texts = new Map<string, string>();
    for (const item of items) texts.set(item.hash, item.text);
    const cacheOn = this.tuning.cacheEntries > 0;
    const found = cacheOn
      ? store.cacheLookup(provider.fingerprint, [...texts.keys()], store.meta().dims, this.tick)
      : new Map<string, Float32Array>();
    outcome.cacheHits += items.filter((item) => found.has(item.hash)).length;
    const missing = [...texts].filter(([hash]) => !found.has(hash));
    const batch = this.tuning.batchSize;
    for (let start = 0; start < missing.length; start += batch) {
      this.assertSyncing();
      const slice = missing.slice(start, start + batch);
      progress.emit('embed');
      let vectors: number[][];
      try {
        vectors = await provider.embed(slice.map(([, text]) => text));
        if (vectors.length !== slice.length)
          throw new Error(`returned ${vectors.length} vectors for ${slice.length} texts`);
      } catch (error) {
        outcome.failure = error instanceof Error ? error : new Error(String(error));
        this.lastEmbeddingError = `${provider.id}: ${outcome.failure.message}`;
        this.warnOnce(
          `memory embeddings: ${provider.id} (${provider.model}) failed: ${outcome.failure.message}; those chunks are searchable by keyword until a later sync embeds them`,
        );
        return found;
      }
      const fresh = new Map<string, Float32Array>();
      for (let i = 0; i < slice.length; i++) {
        const vector = Float32Array.from(vectors[i]!);
        try {
          store.checkDims(vector.length);
        } catch (error) {
          if (!(error instanceof DimensionMismatchError)) throw error;
          outcome.dimsChanged = { reason: error.message, dims: vector.length };
          return found;
        }
        fresh.set(slice[i]![0], vector);
      }
      if (cacheOn) store.cacheStore(provider.fingerprint, fresh, this.tuning.cacheEntries, this.tick);
      for (const [hash, vector] of fresh) found.set(hash, vector);
      outcome.embedded += slice.length;
      progress.embedded += slice.length;
      this.lastEmbeddingError = undefined;
    }
    progress.emit('embed');
    return found;
  }

  /** Strictly increasing recency stamps for the cache (ms-based, but never equal). */
  private readonly tick = (): number => {
    this.clock = Math.max(Date.now(), this.clock + 1);
    return this.clock;
  };

  // ── status and lifecycle ───────────────────────────────────────────────────────

  async status(options: { deep?: boolean } = {}): Promise<Record<string, unknown>> {
    this.assertOpen();
    this.reopenIfReplaced();
    const store = this.store;
    const counts = store.counts();
    const meta = store.meta();
    const readiness = this.vectorReadiness(meta, counts.pending);
    const vectorsReady = 'providers' in readiness;
    const mode: MemorySearchResult['mode'] = !vectorsReady
      ? 'keyword'
      : !store.fts || !this.settings.query.hybrid.enabled
        ? 'vector'
        : 'hybrid';
    const provider = this.active;
    const stale = meta.fingerprint !== undefined ? this.rebuildReason(meta, provider) : undefined;
    const report: Record<string, unknown> = {
      backend: this.backend,
      dbPath: this.settings.store.path,
      files: counts.files,
      chunks: counts.chunks,
      mode,
      ...(vectorsReady ? {} : { notice: `keyword search only: ${readiness.reason}` }),
      provider: provider?.id ?? 'none',
      model: provider?.model,
      reason: this.selection.reason,
      ...(this.selection.fallback
        ? {
            fallback: `${this.selection.fallback.id} (${this.selection.fallback.model})`,
            usingFallback: provider === this.selection.fallback,
          }
        : {}),
      fingerprint: meta.fingerprint,
      dims: meta.dims,
      vector: provider ? store.vector : 'off',
      ...(store.vector === 'sqlite-vec'
        ? { vecVersion: store.vecVersion }
        : { vectorError: this.vectorError ?? store.vectorError }),
      fts: store.fts,
      ...(store.fts ? {} : { ftsError: store.ftsError }),
      cache: {
        enabled: this.settings.cache.enabled,
        entries: counts.cacheEntries,
        maxEntries: this.settings.cache.maxEntries,
      },
      chunking: this.tuning.chunking,
      ...this.completeness(meta, counts.files),
      // Without a provider nothing waits for embeddings; a count would suggest otherwise.
      ...(provider ? { pendingEmbeddings: counts.pending } : {}),
      ...(this.lastEmbeddingError ? { lastEmbeddingError: this.lastEmbeddingError } : {}),
      ...(stale ? { staleBecause: stale } : {}),
      lastSync: meta.lastSync,
    };
    if (options.deep) report.probe = await this.probe();
    return report;
  }

  /**
   * Whether the index holds every memory file. An index from before `complete` was
   * recorded is complete once a sync has finished (lastSync). An incomplete one is being
   * built by this or another live process, or was interrupted (the next sync finishes it).
   */
  private completeness(meta: IndexMeta, files: number): Record<string, unknown> {
    const builder =
      meta.building && meta.building.pid !== process.pid && processAlive(meta.building.pid) ? meta.building : undefined;
    if (meta.fingerprint === undefined) {
      const live = this.running ?? builder;
      return live ? { index: 'building', indexProgress: progressOf(live) } : { index: 'empty' };
    }
    if (meta.complete ?? meta.lastSync !== undefined) return { index: 'complete' };
    const live = this.running ?? builder;
    const progress = live ? progressOf(live) : { files, filesTotal: meta.building?.filesTotal ?? null };
    return { index: live ? 'building' : 'incomplete', indexProgress: progress };
  }

  /** `status --deep`: one real embedding call and one real search, timed. */
  private async probe(): Promise<Record<string, unknown>> {
    const probe: Record<string, unknown> = {};
    const provider = this.active;
    if (provider) {
      const started = Date.now();
      try {
        const [vector] = await provider.embed(['memory index probe']);
        probe.embedding = { ok: true, ms: Date.now() - started, dims: vector?.length ?? 0 };
      } catch (error) {
        probe.embedding = { ok: false, ms: Date.now() - started, error: message(error) };
      }
    } else {
      probe.embedding = { ok: false, error: this.selection.reason };
    }
    const started = Date.now();
    try {
      const result = await this.search('memory', { maxResults: 1, minScore: 0 });
      probe.search = {
        ok: true,
        ms: Date.now() - started,
        mode: result.mode,
        results: result.results.length,
        ...(result.notice ? { notice: result.notice } : {}),
      };
    } catch (error) {
      probe.search = { ok: false, ms: Date.now() - started, error: message(error) };
    }
    return probe;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.queue;
    this.closed = true;
    this.store.close();
    for (const provider of new Set([this.selection.provider, this.selection.fallback])) {
      await Promise.resolve(provider?.close?.()).catch((error: unknown) =>
        this.logger.warn(`memory embeddings: closing ${provider?.id} failed: ${message(error)}`),
      );
    }
  }

  private assertOpen(): void {
    if (this.closed || this.closing) throw new Error(`memory index ${this.settings.store.path} is closed`);
  }

  /** A sync stops between steps once close() has been called. */
  private assertSyncing(): void {
    if (this.closing) throw new Error(`memory index ${this.settings.store.path} was closed during a sync`);
  }

  /** Repeated failures (every query while a provider is down) are logged once, then at debug. */
  private warnOnce(text: string): void {
    if (this.warned.has(text)) {
      this.logger.debug(text);
      return;
    }
    // Bounded: distinct messages (with request ids, say) must not pile up for ever.
    if (this.warned.size >= 100) this.warned.clear();
    this.warned.add(text);
    this.logger.warn(text);
  }
}

/** The numbers the engine runs on, with the documented defaults where a setting is not a usable number. */
interface Tuning {
  chunking: { tokens: number; overlap: number };
  candidateMultiplier: number;
  /** Texts per embedding call. */
  batchSize: number;
  /** 0: the cache is off. */
  cacheEntries: number;
}

/** What a sync goes through: memory files and, when `sources` has "sessions", this agent's transcripts. */
type IndexedFile = MemoryFile | SessionFile;

function tuningOf(settings: MemorySettings): Tuning {
  const whole = (value: number, fallback: number, min: number) =>
    Number.isFinite(value) ? Math.max(min, Math.floor(value)) : fallback;
  const multiplier = settings.query.hybrid.candidateMultiplier;
  return {
    chunking: { tokens: whole(settings.chunking.tokens, 400, 1), overlap: whole(settings.chunking.overlap, 80, 0) },
    candidateMultiplier: Number.isFinite(multiplier) ? Math.max(1, multiplier) : 4,
    batchSize: whole(settings.remote.batchSize, 64, 1),
    cacheEntries: settings.cache.enabled ? whole(settings.cache.maxEntries, 50_000, 0) : 0,
  };
}

function candidate(row: ChunkRow, score: number): Candidate {
  return {
    id: String(row.id),
    path: row.path,
    startLine: row.startLine,
    endLine: row.endLine,
    text: row.text,
    source: row.source,
    score,
  };
}

function asVectorScored(item: Candidate): ScoredChunk {
  return { ...item, vectorScore: item.score };
}

function asTextScored(item: Candidate): ScoredChunk {
  return { ...item, textScore: item.score };
}

function toHit(item: ScoredChunk, query: string, text: MemoryText): MemorySearchHit {
  return {
    path: item.path,
    startLine: item.startLine,
    endLine: item.endLine,
    score: item.score,
    snippet: text.snippetAround(item.text, query, SNIPPET_MAX_CHARS),
    ...(item.source ? { source: item.source } : {}),
  };
}
