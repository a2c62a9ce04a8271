/**
 * One agent's memory in QMD, with the built-in SQLite engine behind it.
 *
 * Every agent has a private QMD home, `<stateDir>/agents/<agentId>/qmd/` (`xdg-config`,
 * `xdg-cache`, handed to qmd as XDG_CONFIG_HOME / XDG_CACHE_HOME, and HOME so nothing lands in
 * the user's own). Sync makes sure the collections exist and runs `qmd update`; in the modes
 * that use vectors, and only when QMD's embedding model is already on disk (models.ts: a
 * missing model would be downloaded), it also runs `qmd embed` in the background. Searches go
 * to one long-lived `qmd mcp` process (qmd-server.ts), one keyword search per content term of
 * the question plus a vector search when there are vectors, fused into one ranking
 * (query-plan.ts). Whenever qmd is missing, fails, is too slow or answers nothing, the same
 * call is answered by the built-in SQLite index (opened on first need) and the result says
 * so (`backend`, `notice`); a failure is logged once, and the next call tries qmd again.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ensurePrivateDir,
  writeJsonAtomic,
  type Logger,
  type MemorySearchResult,
  type MemorySyncProgress,
  type MemorySyncStats,
} from '../../sdk/index.js';
import {
  embeddingsForIndex,
  memoryEngineServiceId,
  type MemoryEngine,
  type MemoryLines,
  type MemoryIndex,
  type MemoryIndexContext,
  SNIPPET_MAX_CHARS,
  type MemorySettings,
} from '../../sdk/memory/index.js';
import { requireService } from '../../sdk/services.js';
import { planCollections, resolveQmdPath, type QmdCollection } from './collections.js';
import { embedModel, type ModelPresence } from './models.js';
import { QmdError, resolveQmdCommand, runQmd, type QmdCommand, type RunResult } from './qmd-cli.js';
import { QmdServer } from './qmd-server.js';
import { fuseLists, QMD_LIST_CAP, type RankedList } from './query-plan.js';
import { parseQueryResults, resolveHit, toSearchHit } from './results.js';

export type SearchMode = 'search' | 'vsearch' | 'query';

export interface QmdPluginConfig extends Record<string, unknown> {
  command?: string;
  searchMode?: SearchMode;
  timeoutMs?: number;
  updateTimeoutMs?: number;
  embedTimeoutMs?: number;
  updateIntervalMinutes?: number;
  maxResults?: number;
}

/** A search shorter than this would be all start-up: QMD gets at least this long to come up once. */
const SERVER_START_LIMIT_MS = 30_000;
/** QMD unloads its models after 5 minutes without use (dist/index.js: inactivityTimeoutMs); a little less, to be safe. */
const VECTOR_IDLE_MS = 4 * 60_000;

type Target = NonNullable<ReturnType<typeof resolveHit>>;

/** What sync remembers between runs: the collections it created and each file's hash. */
interface QmdState {
  version: 1;
  collections: Record<string, { dir: string; mask: string }>;
  /** absolute path → sha256 of the content QMD last indexed. */
  files: Record<string, string>;
  lastSyncAt?: string;
}

/** The part of the SQLite engine (service "memory-engine:sqlite") this backend uses. */
type FallbackIndex = Pick<MemoryIndex, 'search' | 'sync' | 'status' | 'close'>;

function sha256(path: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch {
    return undefined;
  }
}

export class QmdMemoryIndex implements MemoryIndex {
  readonly home: string;
  readonly xdgConfig: string;
  readonly xdgCache: string;
  private readonly statePath: string;
  private readonly logger: Logger;
  private readonly mode: SearchMode;
  private readonly timeoutMs: number;
  private readonly updateTimeoutMs: number;
  private readonly embedTimeoutMs: number;
  private state: QmdState;
  private syncing?: Promise<MemorySyncStats>;
  private embedding?: Promise<void>;
  private lastEmbed?: { at: string; chunks?: number; error?: string };
  private timer?: NodeJS.Timeout;
  private fallback?: Promise<FallbackIndex>;
  private readonly reported = new Set<string>();
  private collectionsLock: Promise<void> = Promise.resolve();
  /** QMD's index vanished since the last sync: every file was indexed anew. */
  private indexLost = false;
  private healthy: boolean | undefined;
  private lastFailure?: { reason: string; at: string; during: 'sync' | 'search' | 'status' };
  private closed = false;
  /** Aborted by close(): every qmd still running for this index (a background embed too) is killed. */
  private readonly lifetime = new AbortController();
  /** The long-lived `qmd mcp` every search goes to. */
  readonly server: QmdServer;
  /** The server process that has its embedding model loaded (a vector search answered), if any. */
  private vectorsReadyPid?: number;
  private vectorsUsedAt = 0;
  private warmingVectors?: Promise<unknown>;
  /** Why the last model load failed; vectors are left out until the next embed. */
  private vectorFailure?: string;

  constructor(
    readonly settings: MemorySettings,
    private readonly context: MemoryIndexContext,
    private readonly config: QmdPluginConfig,
  ) {
    this.logger = context.logger;
    this.mode = config.searchMode ?? 'query';
    this.timeoutMs = config.timeoutMs ?? 4000;
    this.updateTimeoutMs = config.updateTimeoutMs ?? 120_000;
    this.embedTimeoutMs = config.embedTimeoutMs ?? 30 * 60_000;
    this.home = join(context.stateDir, 'agents', settings.agentId, 'qmd');
    this.xdgConfig = join(this.home, 'xdg-config');
    this.xdgCache = join(this.home, 'xdg-cache');
    this.statePath = join(this.home, 'claw-state.json');
    this.state = this.readState();
    this.server = new QmdServer({
      command: () => this.command(),
      env: () => {
        ensurePrivateDir(this.xdgConfig);
        ensurePrivateDir(this.xdgCache);
        return this.childEnv();
      },
      cwd: this.home,
      startTimeoutMs: Math.max(SERVER_START_LIMIT_MS, this.timeoutMs),
      onExit: (reason) =>
        this.logger.info(`memory-qmd: the QMD server ended (${reason}); the next search starts it again`, {
          agentId: this.settings.agentId,
        }),
    });
    const minutes = config.updateIntervalMinutes ?? 5;
    if (minutes > 0) {
      // Armed when the index is created, which the service does at start-up for the default agent.
      this.timer = setInterval(() => {
        this.sync({}).catch((error: Error) => this.logger.warn(`memory-qmd: periodic update failed: ${error.message}`));
      }, minutes * 60_000);
      this.timer.unref();
    }
  }

  // ── qmd plumbing ──────────────────────────────────────────────────────────────────

  command(): QmdCommand {
    return resolveQmdCommand(this.config.command, this.context.env);
  }

  /** The child's environment: the caller's, with this agent's QMD home in every place QMD looks. */
  private childEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...process.env, ...this.context.env }))
      if (typeof value === 'string') env[key] = value;
    // Each of these would point QMD at some other index or config than this agent's.
    delete env.INDEX_PATH;
    delete env.QMD_CONFIG_DIR;
    // QMD turns every model operation off when CI is set at all, to keep CI jobs from
    // downloading models. This plugin never lets QMD reach for a model that is not already on
    // disk (models.ts), so that guard adds nothing here and would only make a gateway that
    // happens to run with CI set (a CI runner, some containers) silently keyword-only.
    delete env.CI;
    return {
      ...env,
      XDG_CONFIG_HOME: this.xdgConfig,
      XDG_CACHE_HOME: this.xdgCache,
      HOME: this.home,
      PWD: this.home,
      NO_COLOR: '1',
    };
  }

  private run(args: string[], timeoutMs: number, signal?: AbortSignal): Promise<RunResult> {
    ensurePrivateDir(this.xdgConfig);
    ensurePrivateDir(this.xdgCache);
    const combined = signal ? AbortSignal.any([this.lifetime.signal, signal]) : this.lifetime.signal;
    const result = runQmd(this.command(), args, { env: this.childEnv(), cwd: this.home, timeoutMs, signal: combined });
    result.then(
      (done) =>
        this.logger.debug(`memory-qmd: qmd ${args.slice(0, 2).join(' ')} took ${done.durationMs} ms`, {
          agentId: this.settings.agentId,
        }),
      () => undefined,
    );
    return result;
  }

  private readState(): QmdState {
    try {
      const parsed = JSON.parse(readFileSync(this.statePath, 'utf8')) as QmdState;
      if (parsed.version === 1 && parsed.collections && parsed.files) return parsed;
    } catch {
      // First run, or a damaged file: start over (the next sync re-creates what is missing).
    }
    return { version: 1, collections: {}, files: {} };
  }

  private saveState(): void {
    writeJsonAtomic(this.statePath, this.state);
  }

  /**
   * Make QMD's collections match the plan: add missing ones, re-create changed ones, drop
   * ones no longer configured. Idempotent; costs nothing when the recorded state matches.
   */
  private ensureCollections(plan: readonly QmdCollection[], force: boolean): Promise<void> {
    // A search and a sync may both find a collection missing; the second must see the first's work.
    const run = this.collectionsLock.catch(() => undefined).then(() => this.reconcileCollections(plan, force));
    this.collectionsLock = run;
    return run;
  }

  private async reconcileCollections(plan: readonly QmdCollection[], force: boolean): Promise<void> {
    // QMD's config or index gone (home wiped, or never made): whatever the state says, nothing exists.
    if (
      !existsSync(join(this.xdgConfig, 'qmd', 'index.yml')) ||
      !existsSync(join(this.xdgCache, 'qmd', 'index.sqlite'))
    ) {
      if (Object.keys(this.state.collections).length > 0) this.indexLost = true;
      this.state.collections = {};
    }
    const wanted = new Map(plan.map((item) => [item.name, item]));
    for (const name of Object.keys(this.state.collections)) {
      if (!wanted.has(name)) {
        await this.removeCollection(name);
        delete this.state.collections[name];
        this.saveState();
      }
    }
    for (const item of plan) {
      const known = this.state.collections[item.name];
      if (!force && known && known.dir === item.dir && known.mask === item.mask) continue;
      if (known || force) await this.removeCollection(item.name);
      try {
        await this.addCollection(item);
      } catch (error) {
        // Made earlier by a run whose state was lost: replace it with the planned one.
        if (!(error instanceof QmdError) || !/already exists/i.test(error.reason)) throw error;
        await this.removeCollection(item.name);
        await this.addCollection(item);
      }
      this.state.collections[item.name] = { dir: item.dir, mask: item.mask };
      this.saveState();
    }
  }

  private addCollection(item: QmdCollection): Promise<RunResult> {
    return this.run(['collection', 'add', item.dir, '--name', item.name, '--mask', item.mask], this.updateTimeoutMs);
  }

  private async removeCollection(name: string): Promise<void> {
    try {
      await this.run(['collection', 'remove', name], this.updateTimeoutMs);
    } catch (error) {
      if (!(error instanceof QmdError) || !/not found/i.test(error.reason)) throw error;
    }
  }

  private noteFailure(error: QmdError, during: 'sync' | 'search' | 'status'): void {
    this.healthy = false;
    this.lastFailure = { reason: error.reason, at: new Date().toISOString(), during };
    if (!this.reported.has(error.reason)) {
      this.reported.add(error.reason);
      this.logger.warn(
        `memory-qmd: QMD failed (${error.reason}); the built-in SQLite index answers until it works again`,
        { agentId: this.settings.agentId },
      );
    }
  }

  private noteSuccess(): void {
    if (this.healthy === false) this.logger.info('memory-qmd: QMD works again', { agentId: this.settings.agentId });
    this.healthy = true;
  }

  // ── the built-in engine, for when qmd fails ─────────────────────────────────────

  private openFallback(): Promise<FallbackIndex> {
    if (!this.fallback) {
      const opening = (async (): Promise<FallbackIndex> => {
        // The engine first: providers selected for an index that cannot open would be left unclosed.
        const engine = await requireService<MemoryEngine>(
          this.context.api.kernel,
          memoryEngineServiceId('sqlite'),
          "memory-qmd's SQLite fallback",
        );
        const embeddings = await embeddingsForIndex(this.settings, { ...this.context, logger: this.logger });
        const { ranking, files, text } = this.context;
        return engine.open(this.settings, { embeddings, logger: this.logger, backend: 'sqlite', ranking, files, text });
      })();
      this.fallback = opening;
      // A failed open is retried on the next fallback (better-sqlite3 may get rebuilt meanwhile).
      opening.catch(() => {
        if (this.fallback === opening) this.fallback = undefined;
      });
    }
    return this.fallback;
  }

  private async fallbackSearch(
    error: QmdError,
    query: string,
    options: { maxResults: number; minScore: number; signal?: AbortSignal },
  ): Promise<MemorySearchResult> {
    this.noteFailure(error, 'search');
    return this.answerFromSqlite(error, `QMD failed (${error.reason})`, query, options);
  }

  /** The same question to the built-in index, saying why it answers (`why` starts the notice). */
  private async answerFromSqlite(
    error: QmdError | undefined,
    why: string,
    query: string,
    options: { maxResults: number; minScore: number; signal?: AbortSignal },
  ): Promise<MemorySearchResult> {
    let index: FallbackIndex;
    try {
      index = await this.openFallback();
    } catch (openError) {
      const reason = `${why} and the built-in SQLite index could not be opened: ${(openError as Error).message}`;
      if (!this.reported.has(reason)) {
        this.reported.add(reason);
        if (error) this.logger.error(`memory-qmd: ${reason}`);
        else this.logger.warn(`memory-qmd: ${reason}`);
      }
      return { results: [], backend: 'qmd', mode: 'keyword', notice: reason };
    }
    // The fallback may have been idle while QMD served; bring it up to date (unchanged files are skipped).
    await index
      .sync({})
      .catch((syncError: Error) => this.logger.warn(`memory-qmd: SQLite fallback sync failed: ${syncError.message}`));
    const result = await index.search(query, options);
    if (!error && result.results.length === 0)
      return {
        results: [],
        backend: 'qmd',
        mode: 'keyword',
        notice: `${why}; the built-in SQLite index found nothing either`,
      };
    const notice = `${why}; answered by the built-in SQLite index${result.notice ? `; ${result.notice}` : ''}`;
    return { ...result, backend: 'sqlite', notice };
  }

  // ── MemoryIndex ──────────────────────────────────────────────────────────────────

  sync(
    options: { force?: boolean; onProgress?: (progress: MemorySyncProgress) => void } = {},
  ): Promise<MemorySyncStats> {
    // One at a time: the periodic timer and the manager's syncs share a running one.
    if (this.syncing && !options.force) return this.syncing;
    const previous = this.syncing ?? Promise.resolve(undefined);
    const run = previous
      .catch(() => undefined)
      .then(() => this.syncOnce(options))
      .finally(() => {
        if (this.syncing === run) this.syncing = undefined;
      });
    this.syncing = run;
    return run;
  }

  private async syncOnce(options: {
    force?: boolean;
    onProgress?: (progress: MemorySyncProgress) => void;
  }): Promise<MemorySyncStats> {
    if (this.closed) throw new Error('memory-qmd: the index is closed');
    const started = Date.now();
    const force = options.force === true;
    const files = this.context.files.list(this.settings.workspaceDir, this.settings.extraPaths);
    const progress = (phase: MemorySyncProgress['phase'], done: number) =>
      options.onProgress?.({ phase, files: done, filesTotal: files.length, chunks: done, embedded: 0 });
    progress('scan', 0);
    const hashes = new Map(files.map((file) => [file.absPath, sha256(file.absPath)]));
    let embedded = 0;
    try {
      await this.ensureCollections(planCollections(this.settings), force);
      progress('write', 0);
      await this.run(['update'], this.updateTimeoutMs);
      // Without the model on disk `qmd embed` would download it: keyword search it is, and status says so.
      if (this.mode !== 'search' && this.embedModel().path) {
        const embedding = this.embed(force);
        // Only an explicit rebuild waits for the vectors; otherwise search falls back meanwhile.
        if (force) {
          progress('embed', files.length);
          await embedding;
          embedded = this.lastEmbed?.chunks ?? 0;
        }
      }
    } catch (error) {
      if (!(error instanceof QmdError)) throw error;
      this.noteFailure(error, 'sync');
      let index: FallbackIndex;
      try {
        index = await this.openFallback();
      } catch (openError) {
        throw new Error(
          `memory-qmd: QMD failed (${error.reason}) and the built-in SQLite index could not be opened: ${(openError as Error).message}`,
        );
      }
      return index.sync(options);
    }
    this.noteSuccess();
    // QMD's index was made anew: a server that opened the old one must not keep answering from it.
    if (this.indexLost) this.server.restart();
    // Indexed and ready: bring the search process up now rather than on the first question,
    // and have it load the embedding model (a vector search does) if there are vectors to search.
    this.server.warm();
    if (this.mode !== 'search' && this.vectorPlan().use) this.warmVectors();
    const rebuilt = force || this.indexLost;
    this.indexLost = false;
    let indexed = 0;
    let skipped = 0;
    const next: Record<string, string> = {};
    for (const file of files) {
      const hash = hashes.get(file.absPath);
      if (hash === undefined) continue;
      next[file.absPath] = hash;
      if (!rebuilt && this.state.files[file.absPath] === hash) skipped++;
      else indexed++;
    }
    const removed = Object.keys(this.state.files).filter((path) => !(path in next)).length;
    this.state.files = next;
    this.state.lastSyncAt = new Date().toISOString();
    this.saveState();
    progress('done', files.length);
    const count = Object.keys(next).length;
    // QMD's keyword index holds whole documents, so a file is one chunk to it.
    return {
      files: count,
      indexed,
      skipped,
      removed,
      chunks: count,
      embedded,
      cacheHits: 0,
      rebuilt,
      durationMs: Date.now() - started,
    };
  }

  /**
   * Whether the server has the embedding model loaded: it answered a vector search, recently
   * enough (QMD unloads its models after 5 idle minutes; a reload needs a warm-up again).
   */
  private vectorsReady(): boolean {
    return (
      this.server.pid !== undefined &&
      this.vectorsReadyPid === this.server.pid &&
      Date.now() - this.vectorsUsedAt < VECTOR_IDLE_MS
    );
  }

  /**
   * One vector search in the background, with time to load the model; when it answers, this
   * server process has the model and searches add vector lists. Once at a time.
   */
  private warmVectors(): void {
    const collections = Object.keys(this.state.collections);
    if (collections.length === 0 || this.warmingVectors || this.closed) return;
    const args = { searches: [{ type: 'vec', query: 'memory' }], limit: 1, rerank: false, collections };
    const warming = this.server
      .callTool('query', args, SERVER_START_LIMIT_MS, this.lifetime.signal, { killOnTimeout: false })
      .then(() => {
        this.vectorsReadyPid = this.server.pid;
        this.vectorsUsedAt = Date.now();
      })
      .catch((error: Error) => {
        if (this.closed) return;
        // A process that died (or was restarted) while loading, or a load slower than the limit
        // on a busy machine (the server keeps loading): the next search tries again.
        if (error instanceof QmdError && (error.kind === 'exit' || error.kind === 'timeout')) {
          if (error.kind === 'timeout')
            this.logger.warn(
              `memory-qmd: QMD's embedding model did not load within ${SERVER_START_LIMIT_MS} ms; keyword search until it does`,
              { agentId: this.settings.agentId },
            );
          return;
        }
        this.vectorFailure = error instanceof QmdError ? error.reason : error.message;
        this.logger.warn(
          `memory-qmd: QMD could not search vectors (${this.vectorFailure}); keyword search only until the next qmd embed`,
          { agentId: this.settings.agentId },
        );
      })
      .finally(() => {
        if (this.warmingVectors === warming) this.warmingVectors = undefined;
      });
    this.warmingVectors = warming;
  }

  /** `qmd embed`, one at a time, in the background; the outcome is kept for status. */
  private embed(force: boolean): Promise<void> {
    if (this.embedding) return this.embedding;
    const run = this.run(force ? ['embed', '-f'] : ['embed'], this.embedTimeoutMs)
      .then((result) => {
        this.lastEmbed = {
          at: new Date().toISOString(),
          chunks: Number(/Embedded (\d+) chunks/.exec(result.stdout)?.[1] ?? 0),
        };
        // New vectors (perhaps the first): the next vector search may load the model anew.
        this.vectorsReadyPid = undefined;
        this.vectorFailure = undefined;
        if (!this.closed) this.warmVectors();
      })
      .catch((error: Error) => {
        if (this.closed) return;
        const reason = error instanceof QmdError ? error.reason : error.message;
        this.lastEmbed = { at: new Date().toISOString(), error: reason };
        if (!this.reported.has(reason)) {
          this.reported.add(reason);
          this.logger.warn(
            `memory-qmd: qmd embed failed (${reason}); ${this.mode} searches fall back to the built-in SQLite index until vectors exist`,
          );
        }
      })
      .finally(() => {
        if (this.embedding === run) this.embedding = undefined;
      });
    this.embedding = run;
    return run;
  }

  /** QMD's embedding model, looked for on disk only (models.ts). */
  embedModel(): ModelPresence {
    return embedModel(this.childEnv(), this.xdgCache);
  }

  /** Whether this search adds a vector search, and if not, why (for the result's notice). */
  private vectorPlan(): { use: boolean; why?: string } {
    if (this.mode === 'search') return { use: false };
    const model = this.embedModel();
    if (!model.path)
      return {
        use: false,
        why: `QMD's embedding model is not on disk (${model.uri}, looked in ${model.lookedIn}); keyword (BM25) search only`,
      };
    if (this.lastEmbed?.error)
      return { use: false, why: `qmd embed failed (${this.lastEmbed.error}); keyword (BM25) search only` };
    if (this.vectorFailure)
      return { use: false, why: `QMD's vector search failed (${this.vectorFailure}); keyword (BM25) search only` };
    return { use: true };
  }

  async search(
    query: string,
    options: { maxResults: number; minScore: number; signal?: AbortSignal },
  ): Promise<MemorySearchResult> {
    const maxResults = Math.max(1, Math.min(options.maxResults, this.config.maxResults ?? Number.POSITIVE_INFINITY));
    const vector = this.vectorPlan();
    try {
      const plan = planCollections(this.settings);
      await this.ensureCollections(plan, false);
      if (plan.length === 0) {
        this.noteSuccess();
        return {
          results: [],
          backend: 'qmd',
          mode: 'keyword',
          notice: `no memory files yet (the workspace ${this.settings.workspaceDir} does not exist)`,
        };
      }
      const terms = this.context.ranking.contentTerms(query);
      const collections = plan.map((item) => item.name);
      const ask = async (type: 'lex' | 'vec', text: string): Promise<Target[]> => {
        // QMD caps each list per collection; asking for all of them keeps every collection's share.
        const args = {
          searches: [{ type, query: text }],
          limit: QMD_LIST_CAP * collections.length,
          rerank: false,
          collections,
        };
        const answer = await this.server.callTool('query', args, this.timeoutMs, options.signal, {
          killOnTimeout: type === 'lex',
        });
        const seen = new Set<string>();
        const targets: Target[] = [];
        for (const hit of parseQueryResults(answer.structuredContent)) {
          const target = resolveHit(hit, plan);
          if (target && !seen.has(target.key)) {
            seen.add(target.key);
            targets.push(target);
          }
        }
        return targets;
      };
      // A vector query takes plain text: no lines, no leading "-" (QMD reads that as negation).
      const plain = query
        .replace(/\s+/g, ' ')
        .replace(/(^|\s)-+/g, '$1')
        .trim();
      let vectorNote: string | undefined;
      if (vector.use && plain) {
        // The first vector search on a process loads the model, holding QMD up for seconds (and
        // QMD drops requests sent meanwhile): that search runs alone, and this one waits for it.
        if (!this.vectorsReady()) this.warmVectors();
        if (this.warmingVectors && !(await settlesWithin(this.warmingVectors, this.timeoutMs))) {
          return this.answerFromSqlite(
            undefined,
            `QMD is still loading its embedding model (more than ${this.timeoutMs} ms)`,
            query,
            { ...options, maxResults },
          );
        }
      }
      // vsearch is vectors only, once there are vectors; until then it is keyword search like the rest.
      // All sent at once: the process answers them in turn, with no round trip in between.
      const keywordTerms = this.mode === 'vsearch' && vector.use ? [] : terms;
      const asked: Array<Promise<RankedList<Target>>> = keywordTerms.map(async (term) => ({
        kind: 'term' as const,
        hits: await ask('lex', term),
      }));
      if (vector.use && plain && this.vectorsReady()) {
        const vectorList = ask('vec', plain).then(
          (hits) => {
            this.vectorsUsedAt = Date.now();
            return { kind: 'vector' as const, hits };
          },
          (error: unknown) => {
            // A vector search slower than a search may take: keywords answer this one.
            if (!(error instanceof QmdError) || error.kind !== 'timeout') throw error;
            vectorNote = `QMD's vector search did not answer within ${this.timeoutMs} ms (its embedding model may still be loading); keyword (BM25) results only`;
            return { kind: 'vector' as const, hits: [] };
          },
        );
        asked.push(vectorList);
      }
      const lists = await Promise.all(asked);
      const vectorHits = lists.some((list) => list.kind === 'vector' && list.hits.length > 0);
      const mode: MemorySearchResult['mode'] = vectorHits ? 'hybrid' : 'keyword';
      const fused = fuseLists(lists, Math.max(Object.keys(this.state.files).length, 1), (target) => target.key);
      this.noteSuccess();
      const best = fused[0]?.score ?? 0;
      const focus = terms.join(' ') || query;
      const results = [];
      for (const { hit, score } of fused) {
        // Relative to the best hit, as the built-in index scores keyword results.
        const relative = best > 0 ? score / best : 0;
        if (relative < options.minScore) break;
        const result = toSearchHit(hit, this.settings, focus, relative, {
          max: SNIPPET_MAX_CHARS,
          text: this.context.text,
        });
        if (result) results.push(result);
        if (results.length >= maxResults) break;
      }
      if (results.length === 0)
        return this.answerFromSqlite(undefined, 'QMD found nothing', query, { ...options, maxResults });
      const notice = vector.why ?? vectorNote;
      return { results, backend: 'qmd', mode, ...(notice ? { notice } : {}) };
    } catch (error) {
      if (!(error instanceof QmdError)) throw error;
      return this.fallbackSearch(error, query, { ...options, maxResults });
    }
  }

  async status(options: { deep?: boolean } = {}): Promise<Record<string, unknown>> {
    const command = this.command();
    let version: string | undefined;
    if (options.deep) {
      try {
        version = (await this.run(['--version'], this.timeoutMs)).stdout.trim();
        this.noteSuccess();
      } catch (error) {
        if (!(error instanceof QmdError)) throw error;
        this.noteFailure(error, 'status');
      }
    }
    let fallback: Record<string, unknown> | undefined;
    if (this.fallback) {
      try {
        fallback = await (await this.fallback).status(options);
      } catch (error) {
        fallback = { error: (error as Error).message };
      }
    }
    const model = this.embedModel();
    const vector = this.vectorPlan();
    return {
      backend: 'qmd',
      searchMode: this.mode,
      // What searches actually do: vectors need QMD's embedding model on disk (never downloaded here).
      retrieval: vector.use ? 'hybrid (BM25 + vectors)' : 'keyword (BM25)',
      ...(vector.why ? { retrievalNote: vector.why } : {}),
      embedModel: { uri: model.uri, path: model.path ?? null },
      server: { pid: this.server.pid ?? null, starts: this.server.starts },
      // null: QMD has not run yet.
      healthy: this.healthy ?? null,
      command: command.path,
      commandSource: command.source,
      ...(version ? { version } : {}),
      home: this.home,
      collections: Object.keys(this.state.collections),
      files: Object.keys(this.state.files).length,
      lastSyncAt: this.state.lastSyncAt ?? null,
      lastFailure: this.lastFailure ?? null,
      ...(this.mode !== 'search'
        ? { embedding: this.embedding ? 'running' : 'idle', lastEmbed: this.lastEmbed ?? null }
        : {}),
      ...(fallback ? { fallback } : {}),
    };
  }

  async get(path: string, options: { from?: number; lines?: number } = {}): Promise<MemoryLines & { path: string }> {
    const resolved = /^qmd\//.test(path.trim())
      ? resolveQmdPath(planCollections(this.settings), path)
      : this.context.files.resolve(this.settings.workspaceDir, this.settings.extraPaths, path);
    return {
      path: resolved.path,
      ...this.context.files.readLines(resolved.absPath, options.from, options.lines, this.settings.get),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.lifetime.abort(new Error('memory-qmd: the index was closed'));
    await Promise.allSettled([this.syncing, this.embedding, this.server.close()]);
    const fallback = this.fallback;
    this.fallback = undefined;
    if (fallback) await (await fallback.catch(() => undefined))?.close();
  }
}

/** Whether `promise` settles (either way) within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
