/**
 * One agent's memory index on MiniSearch: keyword search over Markdown chunks, re-ranked
 * by embeddings when a provider is configured, persisted as JSON plus a vector sidecar.
 *
 * Consistency rules:
 * - Syncs run one at a time. A sync reads, chunks and embeds first and changes the live
 *   index only at the end, in one synchronous step, so a search running meanwhile sees
 *   the old index or the new one, never a mix.
 * - The vector sidecar is written before the index file. A crash between the two leaves
 *   extra vectors (harmless) or chunks without vectors (embedded by the next sync).
 * - An embedding failure never fails a sync: the keyword index is updated, the chunks
 *   without vectors rank by keyword until a later sync embeds them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import {
  writeFileAtomic,
  type Logger,
  type MemorySearchResult,
  type MemorySyncProgress,
  type MemorySyncStats,
} from '../../sdk/index.js';
import {
  type EmbeddingProvider,
  type EmbeddingSelection,
  type CappedFile,
  type MemoryFile,
  type MemoryFiles,
  type MemoryIndex,
  type MemoryIndexContext,
  type MemoryRanking,
  type MemorySettings,
  type Chunk,
  type MemoryText,
} from '../../sdk/memory/index.js';
import {
  createEngine,
  keywordSearch,
  loadEngine,
  loadMiniSearch,
  tokenizerFingerprint,
  type ChunkDoc,
  type Engine,
  type EngineClass,
} from './engine.js';
import { candidate, toHits, vectorCandidates, type Candidate } from './rank.js';
import {
  indexPaths,
  paramsChange,
  parseIndex,
  sameParams,
  serializeIndex,
  type ChunkRecord,
  type FileRecord,
  type IndexParams,
  type LastSync,
} from './store.js';
import { VectorStore } from './vectors.js';

export const BACKEND = 'minisearch';

interface State {
  engine: Engine;
  params: IndexParams;
  files: Map<string, FileRecord>;
  chunks: Map<number, ChunkRecord>;
  nextId: number;
  lastSync?: LastSync;
  /** Set when what was loaded cannot be kept as is; the next sync rebuilds everything. */
  rebuildReason?: string;
  /** Why the last save failed; the next sync saves again. */
  unsaved?: string;
}

interface ReadFile {
  file: MemoryFile;
  text: string;
  hash: string;
}

interface ChangedFile extends ReadFile {
  pieces: Chunk[];
}

type SearchOptions = { maxResults: number; minScore: number; signal?: AbortSignal };
type Progress = (progress: MemorySyncProgress) => void;

export class MiniSearchMemoryIndex implements MemoryIndex {
  private readonly paths: { index: string; vectors: string };
  private readonly logger: Logger;
  private readonly ranking: MemoryRanking;
  private readonly files: MemoryFiles;
  private readonly textKit: MemoryText;
  /** The provider vectors are made with now: the primary, or the fallback after the primary failed. */
  private provider: EmbeddingProvider | undefined;
  private fallbackReason: string | undefined;
  private vectors: VectorStore | undefined;
  private lastEmbedError: string | undefined;
  private engineClass: EngineClass | undefined;
  private state: State | undefined;
  private loading: Promise<State> | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly settings: MemorySettings,
    context: Pick<MemoryIndexContext, 'logger' | 'ranking' | 'files' | 'text'>,
    private readonly selection: EmbeddingSelection,
  ) {
    this.paths = indexPaths(settings.store.path);
    this.logger = context.logger;
    this.ranking = context.ranking;
    this.files = context.files;
    this.textKit = context.text;
    this.provider = selection.provider;
  }

  // ── Loading ────────────────────────────────────────────────────────────────────────

  private params(): IndexParams {
    return {
      chunkTokens: this.settings.chunking.tokens,
      chunkOverlap: this.settings.chunking.overlap,
      tokenizer: tokenizerFingerprint(this.textKit),
      embedding: this.provider?.fingerprint ?? null,
    };
  }

  private ready(): Promise<State> {
    if (this.state) return Promise.resolve(this.state);
    this.loading ??= this.load().then(
      (state) => (this.state = state),
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }

  private async load(): Promise<State> {
    const engineClass = await loadMiniSearch();
    this.engineClass = engineClass;
    const wanted = this.params();
    this.vectors = this.provider ? this.loadVectors(this.provider.fingerprint) : undefined;
    const empty = (rebuildReason?: string): State => ({
      engine: createEngine(engineClass, this.textKit),
      params: wanted,
      files: new Map(),
      chunks: new Map(),
      nextId: 0,
      rebuildReason,
    });
    if (!existsSync(this.paths.index)) return empty();
    let state: State;
    try {
      const snapshot = parseIndex(readFileSync(this.paths.index, 'utf8'));
      state = {
        engine: loadEngine(engineClass, snapshot.minisearch, this.textKit),
        params: snapshot.params,
        files: new Map(Object.entries(snapshot.files)),
        chunks: new Map(snapshot.chunks.map((chunk) => [chunk.id, chunk])),
        nextId: snapshot.nextId,
        lastSync: snapshot.lastSync,
      };
    } catch (error) {
      this.logger.warn(
        `memory index ${this.paths.index} is unreadable (${message(error)}); rebuilding it from the memory files`,
      );
      return empty('the index file was unreadable');
    }
    if (!sameParams(state.params, wanted)) {
      // Keep answering from the old index until the rebuild replaces it.
      state.rebuildReason = paramsChange(state.params, wanted);
      this.logger.info(
        `memory index ${this.paths.index} was built with other settings (${state.rebuildReason}); the next sync rebuilds it`,
      );
    }
    return state;
  }

  private loadVectors(fingerprint: string): VectorStore {
    if (!existsSync(this.paths.vectors)) return new VectorStore(fingerprint);
    try {
      const stored = VectorStore.decode(readFileSync(this.paths.vectors));
      if (stored.fingerprint === fingerprint) return stored;
      this.logger.info(
        `embeddings in ${this.paths.vectors} were made by ${stored.fingerprint}, not ${fingerprint}; chunks are embedded again`,
      );
    } catch (error) {
      this.logger.warn(
        `embedding file ${this.paths.vectors} is unreadable (${message(error)}); chunks are embedded again`,
      );
    }
    return new VectorStore(fingerprint);
  }

  // ── Sync ───────────────────────────────────────────────────────────────────────────

  sync(options: { force?: boolean; onProgress?: Progress } = {}): Promise<MemorySyncStats> {
    return this.serial(async () => {
      this.syncing = true;
      try {
        return await this.runSync(options.force === true, options.onProgress);
      } finally {
        this.syncing = false;
      }
    });
  }

  /** A sync is running in this process (status says a never-synced index is being built). */
  private syncing = false;

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async runSync(force: boolean, onProgress: Progress | undefined): Promise<MemorySyncStats> {
    const started = Date.now();
    const state = await this.ready();
    const rebuilt = force || state.rebuildReason !== undefined;
    const capped: CappedFile[] = [];
    const found = this.readFiles(capped);
    const total = found.length;
    let newChunks = 0;
    const emit = (phase: MemorySyncProgress['phase'], files: number, embedded: number) =>
      onProgress?.({ phase, files, filesTotal: total, chunks: newChunks, embedded });
    emit('scan', 0, 0);

    const changed: ChangedFile[] = [];
    const kept: ChunkRecord[] = [];
    let skipped = 0;
    found.forEach((item, index) => {
      const old = rebuilt ? undefined : state.files.get(item.file.path);
      if (old && old.hash === item.hash && old.source === item.file.source) {
        skipped++;
        for (const id of old.chunks) kept.push(state.chunks.get(id)!);
      } else {
        const pieces = this.textKit.chunkMarkdown(item.text, {
          tokens: this.settings.chunking.tokens,
          overlap: this.settings.chunking.overlap,
        });
        changed.push({ ...item, pieces });
        newChunks += pieces.length;
      }
      emit('chunk', index + 1, 0);
    });
    const present = new Set(found.map((item) => item.file.path));
    const removed = [...state.files.keys()].filter((path) => !present.has(path));

    const fresh = changed.flatMap((item) => item.pieces);
    const { embedded, cacheHits } = this.provider
      ? await this.embedChunks(kept, fresh, (count) => emit('embed', total, count))
      : { embedded: 0, cacheHits: 0 };

    this.apply(state, rebuilt, changed, removed);
    // Discarded chunks linger in MiniSearch's term lists until vacuumed; not worth saving.
    if (state.engine.dirtCount > 0) await state.engine.vacuum({ batchWait: 0 });

    const stats: MemorySyncStats = {
      files: total,
      indexed: changed.length,
      skipped,
      removed: removed.length,
      chunks: state.chunks.size,
      embedded,
      cacheHits,
      rebuilt,
      durationMs: Date.now() - started,
      ...(capped.length ? { capped } : {}),
    };
    state.lastSync = { at: new Date().toISOString(), stats };
    // A sync that changed nothing is not worth a write (the watcher triggers many of them).
    if (rebuilt || changed.length > 0 || removed.length > 0 || embedded > 0 || state.unsaved !== undefined) {
      emit('write', total, embedded);
      this.save(state);
    }
    emit('done', total, embedded);
    return stats;
  }

  private lastCappedNote: string | undefined;

  private readFiles(capped: CappedFile[]): ReadFile[] {
    const out: ReadFile[] = [];
    for (const file of this.files.list(this.settings.workspaceDir, this.settings.extraPaths)) {
      try {
        const { text, size, indexedBytes } = this.files.readText(file.absPath, this.settings.maxFileBytes);
        if (indexedBytes !== undefined) capped.push({ path: file.path, size, indexedBytes });
        out.push({ file, text, hash: this.textKit.hashText(text) });
      } catch (error) {
        // Deleted or made unreadable between listing and reading: treated as absent.
        this.logger.debug(`memory file ${file.path} skipped: ${message(error)}`);
      }
    }
    // Said once per change, not on every watcher-triggered sync.
    const note = capped.length ? this.files.cappedNote(capped, this.settings.maxFileBytes) : undefined;
    if (note && note !== this.lastCappedNote) this.logger.warn(note);
    this.lastCappedNote = note;
    return out;
  }

  /**
   * Vectors for new chunks (from the cache when their text was embedded before) and for
   * kept chunks that still lack one (an earlier embedding failure). Counts texts sent to
   * the provider and new chunks served from the cache.
   */
  private async embedChunks(
    kept: readonly ChunkRecord[],
    fresh: readonly Chunk[],
    onBatch: (embedded: number) => void,
  ): Promise<{ embedded: number; cacheHits: number }> {
    const counter = { embedded: 0 };
    for (;;) {
      const provider = this.provider!;
      const vectors = this.vectors!;
      let cacheHits = 0;
      const needed = new Map<string, string>();
      for (const chunk of fresh) {
        if (needed.has(chunk.hash)) continue;
        if (this.settings.cache.enabled && vectors.has(chunk.hash)) {
          cacheHits++;
          vectors.touch(chunk.hash);
        } else {
          needed.set(chunk.hash, chunk.text);
        }
      }
      for (const chunk of kept) if (!vectors.has(chunk.hash)) needed.set(chunk.hash, chunk.text);
      try {
        await this.embedInto(provider, vectors, needed, counter, onBatch);
        this.lastEmbedError = undefined;
        return { embedded: counter.embedded, cacheHits };
      } catch (error) {
        const reason = message(error);
        const fallback = this.selection.fallback;
        if (fallback && this.provider === this.selection.provider && fallback.fingerprint !== provider.fingerprint) {
          // The fallback's vectors are not comparable with the primary's: it starts its own set.
          this.fallbackReason = `${provider.id} failed (${reason}); using ${fallback.id} (${fallback.model})`;
          this.logger.warn(`memory embeddings: ${this.fallbackReason}`);
          this.provider = fallback;
          this.vectors = this.loadVectors(fallback.fingerprint);
          continue;
        }
        this.lastEmbedError = reason;
        const missing = needed.size - [...needed.keys()].filter((hash) => vectors.has(hash)).length;
        this.logger.warn(
          `memory embeddings failed (${reason}); ${missing} chunk texts stay keyword-only until a later sync embeds them`,
        );
        return { embedded: counter.embedded, cacheHits };
      }
    }
  }

  private async embedInto(
    provider: EmbeddingProvider,
    vectors: VectorStore,
    needed: ReadonlyMap<string, string>,
    counter: { embedded: number },
    onBatch: (embedded: number) => void,
  ): Promise<void> {
    const entries = [...needed];
    const size = Math.max(1, Math.floor(this.settings.remote.batchSize) || 64);
    for (let start = 0; start < entries.length; start += size) {
      const batch = entries.slice(start, start + size);
      const result = await provider.embed(batch.map(([, text]) => text));
      if (result.length !== batch.length)
        throw new Error(`${provider.id} returned ${result.length} vectors for ${batch.length} texts`);
      batch.forEach(([hash], k) => {
        const vector = result[k]!;
        if (vectors.set(hash, vector)) return;
        // The model's output size changed under the same fingerprint: old vectors are useless.
        this.logger.warn(
          `memory embeddings changed size (${String(vectors.dims)} → ${vector.length} values); earlier vectors are dropped`,
        );
        vectors.clear();
        vectors.set(hash, vector);
      });
      counter.embedded += batch.length;
      onBatch(counter.embedded);
    }
  }

  /** The one synchronous step that changes what searches see. */
  private apply(state: State, rebuilt: boolean, changed: readonly ChangedFile[], removed: readonly string[]): void {
    if (rebuilt) {
      state.engine = createEngine(this.engineClass!, this.textKit);
      state.files = new Map();
      state.chunks = new Map();
    } else {
      for (const path of [...removed, ...changed.map((item) => item.file.path)]) {
        const record = state.files.get(path);
        if (!record) continue;
        state.engine.discardAll(record.chunks);
        for (const id of record.chunks) state.chunks.delete(id);
        state.files.delete(path);
      }
    }
    const docs: ChunkDoc[] = [];
    for (const item of changed) {
      const ids = item.pieces.map((piece) => {
        const id = state.nextId++;
        state.chunks.set(id, {
          id,
          path: item.file.path,
          source: item.file.source,
          startLine: piece.startLine,
          endLine: piece.endLine,
          hash: piece.hash,
          text: piece.text,
        });
        docs.push({ id, text: piece.text });
        return id;
      });
      state.files.set(item.file.path, { hash: item.hash, source: item.file.source, chunks: ids });
    }
    state.engine.addAll(docs);
    state.params = this.params();
    state.rebuildReason = undefined;
    if (this.vectors) {
      const live = new Set([...state.chunks.values()].map((chunk) => chunk.hash));
      this.vectors.prune(live, this.settings.cache.enabled ? this.settings.cache.maxEntries : 0);
    }
  }

  private save(state: State): void {
    try {
      if (this.vectors) writeFileAtomic(this.paths.vectors, this.vectors.encode());
      writeFileAtomic(
        this.paths.index,
        serializeIndex({
          params: state.params,
          nextId: state.nextId,
          files: Object.fromEntries(state.files),
          chunks: [...state.chunks.values()],
          lastSync: state.lastSync,
          minisearch: state.engine.toJSON(),
        }),
      );
      state.unsaved = undefined;
    } catch (error) {
      state.unsaved = message(error);
      this.logger.error(
        `could not save the memory index ${this.paths.index} (${state.unsaved}); it stays in memory and is saved by the next sync`,
      );
    }
  }

  // ── Search ─────────────────────────────────────────────────────────────────────────

  /** Never throws: a failure is an empty answer with a notice saying why. */
  async search(query: string, options: SearchOptions): Promise<MemorySearchResult> {
    try {
      return await this.runSearch(query, options);
    } catch (error) {
      this.logger.warn(`memory search failed: ${message(error)}`);
      return { results: [], backend: BACKEND, mode: 'keyword', notice: `memory search failed: ${message(error)}` };
    }
  }

  private async runSearch(query: string, { maxResults, minScore, signal }: SearchOptions): Promise<MemorySearchResult> {
    const state = await this.ready();
    const { hybrid, mmr, temporalDecay } = this.settings.query;
    const pool = Math.max(maxResults, Math.ceil(maxResults * hybrid.candidateMultiplier));
    const text = query.trim();
    const keyword: Candidate[] = text
      ? keywordSearch(state.engine, text, pool).flatMap((hit) => {
          const chunk = state.chunks.get(hit.id);
          return chunk ? [candidate(chunk, hit.score)] : [];
        })
      : [];
    const shared = { maxResults, mmr, temporalDecay };
    const { finish, keywordMinScore, mergeHybridResults, cosine } = this.ranking;
    // Keyword scores are at most 1, and a hybrid hit needs minScore with text weighing only
    // textWeight; without vectors the threshold scales the same way, so the filter keeps
    // what the hybrid ranking would keep from the keyword side alone.
    const keywordOnly = (notice: string): MemorySearchResult => ({
      results: toHits(
        finish(
          keyword.map((item) => ({ ...item, textScore: item.score })),
          { ...shared, minScore: keywordMinScore(minScore, hybrid.textWeight) },
        ),
        text,
        this.textKit,
      ),
      backend: BACKEND,
      mode: 'keyword',
      notice,
    });

    const provider = this.provider;
    const vectors = this.vectors;
    if (!provider || !vectors)
      return keywordOnly(`keyword search only: ${this.selection.reason.replace(/:\s*keyword search only\.?$/i, '')}`);
    if (!text)
      return {
        results: [],
        backend: BACKEND,
        mode: hybrid.enabled ? 'hybrid' : 'vector',
        provider: provider.id,
        model: provider.model,
      };

    let queryVector: ArrayLike<number> | undefined;
    try {
      queryVector = (await provider.embed([text], { signal }))[0];
    } catch (error) {
      this.logger.warn(`memory search: embedding the query failed (${message(error)}); answering by keyword`);
      return keywordOnly(`embedding the query failed (${message(error)}): this search used keywords only`);
    }
    if (!queryVector || !Array.from(queryVector).some((value) => value !== 0)) {
      return keywordOnly(`${provider.id} returned an empty vector for the query: this search used keywords only`);
    }

    const missing = [...state.chunks.values()].filter((chunk) => !vectors.has(chunk.hash)).length;
    const why = this.lastEmbedError ? ` (${this.lastEmbedError})` : '';
    if (missing > 0 && missing === state.chunks.size)
      return keywordOnly(`no chunk has an embedding yet${why}: this search used keywords only`);

    const vector = vectorCandidates(
      queryVector,
      state.chunks,
      vectors,
      pool,
      keyword.map((item) => Number(item.id)),
      cosine,
    );
    // A chunk not embedded yet (the provider failed during sync) would lose the vector share
    // of its score and drop under minScore however well its words match; until a sync embeds
    // it, its keyword score stands in for the vector score.
    for (const item of keyword) {
      if (!vectors.has(state.chunks.get(Number(item.id))!.hash)) vector.push(item);
    }
    const notes: string[] = [];
    if (this.fallbackReason) notes.push(`embeddings from the fallback provider: ${this.fallbackReason}`);
    if (missing > 0)
      notes.push(`${missing} of ${state.chunks.size} chunks have no embedding yet${why}; they rank by keyword only`);
    const base = {
      backend: BACKEND,
      provider: provider.id,
      model: provider.model,
      ...(notes.length ? { notice: notes.join('; ') } : {}),
    };
    if (!hybrid.enabled) {
      return {
        ...base,
        mode: 'vector',
        results: toHits(
          finish(
            vector.map((item) => ({ ...item, vectorScore: item.score })),
            { ...shared, minScore },
          ),
          text,
          this.textKit,
        ),
      };
    }
    const merged = mergeHybridResults(vector, keyword, {
      vectorWeight: hybrid.vectorWeight,
      textWeight: hybrid.textWeight,
      minScore,
      ...shared,
    });
    return { ...base, mode: 'hybrid', results: toHits(merged, text, this.textKit) };
  }

  // ── Status ─────────────────────────────────────────────────────────────────────────

  async status(options: { deep?: boolean } = {}): Promise<Record<string, unknown>> {
    let state: State | undefined;
    let loadError: string | undefined;
    try {
      state = await this.ready();
    } catch (error) {
      loadError = message(error);
    }
    const provider = this.provider;
    const vectors = this.vectors;
    const chunks = state ? [...state.chunks.values()] : [];
    const report: Record<string, unknown> = {
      backend: BACKEND,
      indexPath: this.paths.index,
      files: state?.files.size ?? 0,
      chunks: chunks.length,
      mode: provider ? (this.settings.query.hybrid.enabled ? 'hybrid' : 'vector') : 'keyword',
      ...(provider ? { provider: provider.id, model: provider.model } : { reason: this.selection.reason }),
      ...(this.fallbackReason ? { fallback: this.fallbackReason } : {}),
      chunking: { tokens: this.settings.chunking.tokens, overlap: this.settings.chunking.overlap },
      lastSync: state?.lastSync ? { at: state.lastSync.at, ...state.lastSync.stats } : null,
      // A sync applies all its changes at once, so once one has finished the index is whole.
      index: state?.lastSync ? 'complete' : this.syncing ? 'building' : 'empty',
    };
    if (provider && vectors) {
      const embedded = chunks.filter((chunk) => vectors.has(chunk.hash)).length;
      report.vectorsPath = this.paths.vectors;
      report.embeddings = {
        dims: vectors.dims ?? provider.dims ?? null,
        chunks: embedded,
        missing: chunks.length - embedded,
        ...(this.lastEmbedError ? { lastError: this.lastEmbedError } : {}),
      };
    }
    if (state?.rebuildReason) report.pendingRebuild = state.rebuildReason;
    if (state?.unsaved) report.unsaved = state.unsaved;
    if (loadError) report.error = loadError;
    if (options.deep) {
      report.workspaceDir = this.settings.workspaceDir;
      report.extraPaths = this.settings.extraPaths;
      report.indexBytes = fileSize(this.paths.index);
      if (provider) report.vectorsBytes = fileSize(this.paths.vectors);
      report.terms = state?.engine.termCount ?? 0;
      report.cache = {
        enabled: this.settings.cache.enabled,
        entries: vectors?.size ?? 0,
        maxEntries: this.settings.cache.maxEntries,
      };
    }
    return report;
  }

  async close(): Promise<void> {
    await this.queue;
    const providers = new Set([this.selection.provider, this.selection.fallback]);
    for (const provider of providers) await provider?.close?.();
  }
}

function fileSize(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
