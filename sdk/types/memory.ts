/** The memory slot's contract (`api.registerMemory`): the same search/get/status/sync for every backend. */

export interface MemorySearchHit {
  /** Workspace-relative path (or `extra/<name>/…`, `qmd/<collection>/…` for other roots). */
  path: string;
  startLine: number;
  endLine: number;
  score: number;
  /** At most 700 characters of the chunk. */
  snippet: string;
  /** Which file set it came from: `memory` (MEMORY.md, memory/) or `extra` (extraPaths). */
  source?: string;
}

export interface MemorySearchOptions {
  agentId?: string;
  maxResults?: number;
  minScore?: number;
  signal?: AbortSignal;
}

/** What answered a search and how: the same contract for every backend. */
export interface MemorySearchResult {
  results: MemorySearchHit[];
  /** The backend that answered (after any fallback), e.g. "sqlite", "minisearch", "qmd". */
  backend: string;
  /** hybrid (vector + keyword), keyword (no embeddings), or vector (no full-text index). */
  mode: 'hybrid' | 'keyword' | 'vector';
  /** Embedding provider and model, when vectors took part. */
  provider?: string;
  model?: string;
  /** Why the answer is degraded (fallback backend, keyword-only, …). */
  notice?: string;
}

/** Lines of one memory file, as `memory_get` returns them. */
export interface MemoryLines {
  text: string;
  from: number;
  lines: number;
  totalLines: number;
  /** Set when the read stopped before the lines asked for (or the end of the file). */
  truncated?: boolean;
  /** The `from` that continues the read, when there is more. */
  nextFrom?: number;
}

export interface MemorySyncProgress {
  phase: 'scan' | 'chunk' | 'embed' | 'write' | 'done';
  files: number;
  filesTotal: number;
  chunks: number;
  embedded: number;
}

/** A file indexed only up to `memorySearch.maxFileBytes`. */
export interface CappedFile {
  path: string;
  size: number;
  indexedBytes: number;
}

export interface MemorySyncStats {
  files: number;
  /** Files (re)indexed because they were new or changed. */
  indexed: number;
  /** Unchanged files skipped by content hash. */
  skipped: number;
  removed: number;
  chunks: number;
  /** Texts sent to the embedding provider (cache misses). */
  embedded: number;
  cacheHits: number;
  /** The whole index was rebuilt (forced, or the provider/model/chunking changed). */
  rebuilt: boolean;
  durationMs: number;
  /** Files over `memorySearch.maxFileBytes`, indexed only up to it. */
  capped?: CappedFile[];
}

export interface MemoryBackend {
  search(query: string, options?: MemorySearchOptions): Promise<MemorySearchResult>;
  /** Lines of one memory file; refuses any path outside the memory files. */
  get(
    path: string,
    options?: { agentId?: string; from?: number; lines?: number },
  ): Promise<MemoryLines & { path: string }>;
  status(options?: { agentId?: string; deep?: boolean }): Promise<Record<string, unknown>> | Record<string, unknown>;
  sync?(options?: {
    agentId?: string;
    force?: boolean;
    onProgress?: (progress: MemorySyncProgress) => void;
  }): Promise<MemorySyncStats>;
  close?(): Promise<void> | void;
}
