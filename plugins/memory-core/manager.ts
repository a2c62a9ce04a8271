/**
 * Per-agent indexes of one memory backend, created on first use; one sync at a time per
 * agent; a watcher on MEMORY.md and memory/ (1.5 s debounce) that re-syncs in the
 * background. An index is brought up to date when a session starts, at search time and on
 * the configured interval; at gateway start only for a backend that asks (QMD).
 */
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type {
  MemoryBackend,
  MemorySearchResult,
  MemorySyncProgress,
  MemorySyncStats,
  PluginApi,
} from '../../sdk/index.js';
import { agentPaths, defaultAgentId } from '../../sdk/agent/index.js';
import type { MemoryIndex, MemoryPluginOptions, MemorySettings } from '../../sdk/memory/index.js';
import { memoryFiles } from './files.js';
import { memoryRanking } from './ranking.js';
import { resolveMemorySettings, SEMANTIC_SEARCH_HINT } from './settings.js';
import { memoryText } from './text.js';

/** A backend's status says it searches by keyword because it has no embedding provider at all. */
function noEmbedder(report: Record<string, unknown>): boolean {
  return report.mode === 'keyword' && (report.provider === undefined || report.provider === 'none');
}

/** Per-agent indexes, the watcher, and the slot capability over them. */
export class MemoryManager<Config extends Record<string, unknown> = Record<string, unknown>> {
  private readonly indexes = new Map<string, Promise<MemoryIndex>>();
  private readonly watchers: FSWatcher[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly debounce = new Map<string, NodeJS.Timeout>();
  private readonly syncing = new Map<string, Promise<MemorySyncStats>>();
  private readonly dirty = new Set<string>();
  private stopped = false;

  constructor(
    readonly api: PluginApi<Config>,
    readonly options: MemoryPluginOptions<Config>,
  ) {}

  get backendName(): string {
    return this.options.backend;
  }

  defaultAgent(): string {
    return defaultAgentId(this.api.kernel.config());
  }

  settings(agentId = this.defaultAgent()): MemorySettings {
    const config = this.api.kernel.config();
    const { workspaceDir } = agentPaths(config, agentId, this.api.kernel.paths);
    return resolveMemorySettings(config, { agentId, workspaceDir, stateDir: this.api.kernel.paths.stateDir });
  }

  index(agentId = this.defaultAgent()): Promise<MemoryIndex> {
    let index = this.indexes.get(agentId);
    if (!index) {
      const settings = this.settings(agentId);
      // Only the SQLite index reads transcripts; another backend would silently search less than asked.
      if (settings.sources.includes('sessions') && this.options.backend !== 'sqlite') {
        return Promise.reject(
          new Error(
            `memorySearch.sources "sessions" (agent ${agentId}) is supported by the memory-sqlite backend only, not ${this.options.backend}; remove "sessions" or use memory-sqlite`,
          ),
        );
      }
      index = Promise.resolve(
        this.options.createIndex(
          settings,
          {
            api: this.api,
            logger: this.api.logger,
            stateDir: this.api.kernel.paths.stateDir,
            env: this.api.kernel.env,
            ranking: memoryRanking,
            files: memoryFiles,
            text: memoryText,
          },
          this.api.config,
        ),
      );
      index.catch(() => this.indexes.delete(agentId));
      this.indexes.set(agentId, index);
    }
    return index;
  }

  /** One sync at a time per agent; callers during a sync share it. */
  sync(
    agentId = this.defaultAgent(),
    options: { force?: boolean; onProgress?: (progress: MemorySyncProgress) => void } = {},
  ): Promise<MemorySyncStats> {
    const running = this.syncing.get(agentId);
    if (running && !options.force) return running;
    const run = (running ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        this.dirty.delete(agentId);
        return (await this.index(agentId)).sync(options);
      })
      .finally(() => {
        if (this.syncing.get(agentId) === run) this.syncing.delete(agentId);
      });
    this.syncing.set(agentId, run);
    return run;
  }

  async search(
    query: string,
    options: { agentId?: string; maxResults?: number; minScore?: number; signal?: AbortSignal } = {},
  ): Promise<MemorySearchResult> {
    const agentId = options.agentId ?? this.defaultAgent();
    const settings = this.settings(agentId);
    if (!settings.enabled)
      return {
        results: [],
        backend: this.backendName,
        mode: 'keyword',
        notice: 'memory search is disabled for this agent (memorySearch.enabled: false)',
      };
    const index = await this.index(agentId);
    // The first search waits for the first index build (joining the start-up sync if it is
    // running); after that, a search only catches up with files marked changed.
    const first = !this.synced.has(agentId);
    if (first || (settings.sync.onSearch && this.dirty.has(agentId))) {
      await this.sync(agentId)
        .then(() => this.synced.add(agentId))
        .catch((error: Error) => this.api.logger.warn(`memory sync before search failed: ${error.message}`));
    }
    return index.search(query, {
      maxResults: options.maxResults ?? settings.query.maxResults,
      minScore: options.minScore ?? settings.query.minScore,
      signal: options.signal,
    });
  }

  private readonly synced = new Set<string>();

  async get(path: string, options: { agentId?: string; from?: number; lines?: number } = {}) {
    const agentId = options.agentId ?? this.defaultAgent();
    const index = await this.index(agentId);
    if (index.get) return index.get(path, options);
    const settings = this.settings(agentId);
    const resolved = memoryFiles.resolve(settings.workspaceDir, settings.extraPaths, path);
    return {
      path: resolved.path,
      ...memoryFiles.readLines(resolved.absPath, options.from, options.lines, settings.get),
    };
  }

  async status(options: { agentId?: string; deep?: boolean } = {}): Promise<Record<string, unknown>> {
    const agentId = options.agentId ?? this.defaultAgent();
    const index = await this.index(agentId);
    const report = { backend: this.backendName, agentId, ...(await index.status({ deep: options.deep })) };
    return noEmbedder(report) ? { ...report, semanticSearch: SEMANTIC_SEARCH_HINT } : report;
  }

  backend(): MemoryBackend {
    return {
      search: (query, options) => this.search(query, options),
      get: (path, options) => this.get(path, options),
      status: (options) => this.status(options),
      sync: (options) => this.sync(options?.agentId, options),
      close: () => this.stop(),
    };
  }

  /**
   * Service start: watch the default agent's memory files. The index itself waits for a
   * session or a search (an idle gateway then holds no SQLite index, ≈ 5 MB), unless the
   * backend must warm up first.
   */
  start(): void {
    this.stopped = false;
    const agentId = this.defaultAgent();
    const settings = this.settings(agentId);
    if (!settings.enabled) return;
    if (this.options.indexOnStart) this.warm(agentId);
    if (settings.sync.watch) this.watch(agentId, settings);
    if (settings.sync.intervalMinutes > 0) {
      const timer = setInterval(() => this.markDirty(agentId, 0), settings.sync.intervalMinutes * 60_000);
      timer.unref();
      this.timers.add(timer);
    }
  }

  /** A session starts: bring its agent's index up to date in the background, so its searches need not wait. */
  warm(agentId = this.defaultAgent()): void {
    if (this.stopped || (this.synced.has(agentId) && !this.dirty.has(agentId))) return;
    if (!this.settings(agentId).enabled) return;
    this.sync(agentId)
      .then(() => this.synced.add(agentId))
      .catch((error: Error) => this.api.logger.warn(`memory index for agent ${agentId} failed: ${error.message}`));
  }

  /** Changes settle for `debounceMs`, then a background sync picks them up. */
  markDirty(agentId: string, debounceMs = this.settings(agentId).sync.watchDebounceMs): void {
    this.dirty.add(agentId);
    clearTimeout(this.debounce.get(agentId));
    const timer = setTimeout(() => {
      this.debounce.delete(agentId);
      if (this.stopped || !this.dirty.has(agentId)) return;
      this.sync(agentId).catch((error: Error) => this.api.logger.warn(`memory re-index failed: ${error.message}`));
    }, debounceMs);
    timer.unref();
    this.debounce.set(agentId, timer);
  }

  private watch(agentId: string, settings: MemorySettings): void {
    const onChange = (file: string | null, wanted: RegExp) => {
      if (file === null || wanted.test(file) || !file.includes('.')) this.markDirty(agentId);
    };
    const tryWatch = (path: string, recursive: boolean, wanted = /\.md$/i) => {
      try {
        const watcher = watch(path, { recursive, persistent: false }, (_event, file) =>
          onChange(file ? String(file) : null, wanted),
        );
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // The folder may not exist yet; the workspace watcher notices when it appears.
      }
    };
    tryWatch(settings.workspaceDir, false);
    tryWatch(join(settings.workspaceDir, 'memory'), true);
    // A transcript that grew is picked up by a debounced background sync; searches never wait for it.
    if (settings.sources.includes('sessions')) tryWatch(settings.sessionsDir, false, /\.jsonl$/);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const watcher of this.watchers.splice(0)) watcher.close();
    for (const timer of [...this.timers, ...this.debounce.values()]) clearTimeout(timer);
    this.timers.clear();
    this.debounce.clear();
    await Promise.allSettled([...this.syncing.values()]);
    const indexes = [...this.indexes.values()];
    this.indexes.clear();
    this.synced.clear();
    for (const index of await Promise.allSettled(indexes)) if (index.status === 'fulfilled') await index.value.close();
  }
}
