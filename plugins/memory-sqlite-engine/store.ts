/**
 * One connection to one index file: files, chunks, the FTS5 and vec0 tables beside them,
 * and the embedding cache. Every write that touches several tables is one transaction,
 * and no transaction spans an `await`, so a search never sees half a file.
 */
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { ensurePrivateFile } from '../../sdk/index.js';
import type { Chunk, MemoryRanking, MemoryText } from '../../sdk/memory/index.js';
import type BetterSqlite3 from 'better-sqlite3';
import { loadSqlite, type Db } from '../../sdk/sqlite.js';
import { loadVectorExtension } from './native.js';
import {
  CORE_SCHEMA,
  CONTEXT_WEIGHT,
  FTS_SCHEMA,
  readMeta,
  SCHEMA_VERSION,
  tableNames,
  vecSchema,
  vecTableDims,
  writeMeta,
  type IndexMeta,
} from './schema.js';
import { fromBlob, toBlob } from './vectors.js';

export type VectorEngine = 'sqlite-vec' | 'js';

export interface StoreOptions {
  /** Try sqlite-vec (from `extensionPath`, else the bundled package); false: JS cosine. */
  vector: { enabled: boolean; extensionPath?: string };
  /** A rebuild's scratch file: no journal fsyncs (a crash discards it anyway). */
  scratch?: boolean;
  /** Chunk text as the full-text index takes it (CJK characters split apart). */
  segment: MemoryText['segmentCjk'];
}

export interface FileRow {
  path: string;
  source: string;
  hash: string;
  mtime: number;
  size: number;
}

export interface ChunkRow {
  id: number;
  path: string;
  source: string;
  startLine: number;
  endLine: number;
  text: string;
}

export interface StoreCounts {
  files: number;
  chunks: number;
  /** Chunks still waiting for a vector (the provider failed while they were written). */
  pending: number;
  cacheEntries: number;
}

/** An index file this code can open, but that something else created. */
export class ForeignDatabaseError extends Error {}

/** A vector of another length than the index's (the provider changed under one fingerprint). */
export class DimensionMismatchError extends Error {
  constructor(
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`embedding has ${actual} dimensions but the index holds ${expected}-dimensional vectors`);
    this.name = 'DimensionMismatchError';
  }
}

/** A chunk as stored: its vector when embedded, its context words (context.ts) when it has any. */
export type IndexedChunk = Chunk & { vector?: Float32Array; context?: string };

const CHUNK_COLUMNS =
  'c.id AS id, c.path AS path, c.source AS source, c.start_line AS startLine, c.end_line AS endLine, c.text AS text';

export class IndexStore {
  readonly vector: VectorEngine;
  /** Why sqlite-vec is not in use (load failure or config); undefined when it is. */
  readonly vectorError?: string;
  readonly vecVersion?: string;
  readonly fts: boolean;
  readonly ftsError?: string;
  /** Identity of the file this connection holds, to notice another process swapping it. */
  readonly inode: number;
  /** Why the file found at open was replaced by an empty index, if it was. */
  readonly recovered?: string;
  private readonly segment: StoreOptions['segment'];
  private metaCache?: IndexMeta;
  private stemmer = false;

  private constructor(
    readonly db: Db,
    readonly path: string,
    init: {
      vector: VectorEngine;
      vectorError?: string;
      vecVersion?: string;
      fts: boolean;
      ftsError?: string;
      recovered?: string;
      segment: StoreOptions['segment'];
    },
  ) {
    this.recovered = init.recovered;
    this.segment = init.segment;
    this.vector = init.vector;
    this.vectorError = init.vectorError;
    this.vecVersion = init.vecVersion;
    this.fts = init.fts;
    this.ftsError = init.ftsError;
    this.inode = statSync(path).ino;
  }

  /**
   * Opens (creating if needed) the index at `path`. An index of another schema version is
   * deleted (the next sync builds it again); a file that is not a database is moved aside to
   * `<path>.corrupt-<time>`; a database that is not a memory index is refused, untouched.
   */
  static open(path: string, options: StoreOptions): IndexStore {
    let Database: ReturnType<typeof loadSqlite>;
    try {
      Database = loadSqlite();
    } catch (error) {
      throw new Error(
        `memory-sqlite: ${(error as Error).message} (or pick another memory backend, e.g. memory-minisearch)`,
      );
    }
    let recovered: string | undefined;
    const connect = (): Db => {
      try {
        // Created 0600 before SQLite opens it: SQLite gives its journal files the database
        // file's mode, so the index and every -journal/-wal/-shm beside it stay owner-only.
        ensurePrivateFile(path);
        return new Database(path);
      } catch (error) {
        throw new Error(`memory index: cannot open ${path}: ${(error as Error).message}`);
      }
    };
    let db = connect();
    try {
      prepareSchema(db, path);
    } catch (error) {
      db.close();
      if (error instanceof SchemaVersionError) {
        removeDatabaseFile(path);
        recovered = error.message;
      } else if (isCorruption(error)) {
        const aside = `${path}.corrupt-${Date.now()}`;
        renameSync(path, aside);
        for (const suffix of ['-journal', '-wal', '-shm'])
          if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
        recovered = `the index file was not a readable database (${(error as Error).message}); moved it to ${aside} and started a new index`;
      } else {
        throw error;
      }
      db = connect();
      prepareSchema(db, path);
    }
    try {
      return IndexStore.configure(db, path, options, recovered);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private static configure(db: Db, path: string, options: StoreOptions, recovered: string | undefined): IndexStore {
    db.pragma('busy_timeout = 5000');
    if (options.scratch) {
      db.pragma('journal_mode = MEMORY');
      db.pragma('synchronous = OFF');
    } else {
      // Rollback journal, not WAL: a rebuilt index replaces this file by rename, and a
      // -wal file left beside the new file would be replayed into it.
      db.pragma('journal_mode = DELETE');
    }
    let vector: VectorEngine = 'js';
    let vectorError: string | undefined = 'disabled by memorySearch.store.vector.enabled: false';
    let vecVersion: string | undefined;
    if (options.vector.enabled) {
      try {
        vecVersion = loadVectorExtension(db, options.vector.extensionPath);
        vector = 'sqlite-vec';
        vectorError = undefined;
      } catch (error) {
        const from = options.vector.extensionPath
          ? `from ${options.vector.extensionPath}`
          : 'from the sqlite-vec package';
        vectorError = `sqlite-vec did not load ${from}: ${(error as Error).message}`;
      }
    }
    const fts = probeFts(db);
    const store = new IndexStore(db, path, {
      vector,
      vectorError,
      vecVersion,
      fts: fts.ok,
      ftsError: fts.error,
      recovered,
      segment: options.segment,
    });
    store.reconcileVecTable();
    return store;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  // ── meta ───────────────────────────────────────────────────────────────────────

  meta(): IndexMeta {
    this.metaCache ??= readMeta(this.db);
    return this.metaCache;
  }

  setMeta(values: Partial<IndexMeta>): void {
    writeMeta(this.db, values);
    this.metaCache = undefined;
  }

  // ── files and chunks ───────────────────────────────────────────────────────────

  files(): Map<string, FileRow> {
    const rows = this.db.prepare('SELECT path, source, hash, mtime, size FROM files').all() as FileRow[];
    return new Map(rows.map((row) => [row.path, row]));
  }

  touchFile(path: string, mtime: number, size: number): void {
    this.db.prepare('UPDATE files SET mtime = ?, size = ? WHERE path = ?').run(mtime, size, path);
  }

  /** Replaces a file's chunks; chunks without a vector wait for a later embedding pass. */
  writeFile(file: FileRow, chunks: ReadonlyArray<IndexedChunk>): void {
    this.putFile(file, chunks, true);
  }

  /** Adds chunks after a file's existing ones (an append-only transcript's new lines). */
  appendToFile(file: FileRow, chunks: ReadonlyArray<IndexedChunk>): void {
    this.putFile(file, chunks, false);
  }

  private putFile(file: FileRow, chunks: ReadonlyArray<IndexedChunk>, replace: boolean): void {
    const insertChunk = this.db.prepare(
      'INSERT INTO chunks (path, source, start_line, end_line, hash, text, embedding) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      if (replace) this.deleteChunks(file.path);
      for (const chunk of chunks) {
        const id = Number(
          insertChunk.run(
            file.path,
            file.source,
            chunk.startLine,
            chunk.endLine,
            chunk.hash,
            chunk.text,
            chunk.vector ? toBlob(chunk.vector) : null,
          ).lastInsertRowid,
        );
        if (this.fts)
          this.db
            .prepare('INSERT INTO chunks_fts (rowid, text, context) VALUES (?, ?, ?)')
            .run(id, this.segment(chunk.text), this.segment(chunk.context ?? ''));
        if (chunk.vector) this.putVec(id, chunk.vector);
      }
      this.db
        .prepare(
          'INSERT INTO files (path, source, hash, mtime, size) VALUES (?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET source = excluded.source, hash = excluded.hash, mtime = excluded.mtime, size = excluded.size',
        )
        .run(file.path, file.source, file.hash, file.mtime, file.size);
      this.markVecStale();
    })();
  }

  removeFile(path: string): void {
    this.db.transaction(() => {
      this.deleteChunks(path);
      this.db.prepare('DELETE FROM files WHERE path = ?').run(path);
      this.markVecStale();
    })();
  }

  /** Distinct texts of chunks that have no vector yet. */
  pendingTexts(): Array<{ hash: string; text: string }> {
    return this.db
      .prepare('SELECT hash, min(text) AS text FROM chunks WHERE embedding IS NULL GROUP BY hash')
      .all() as Array<{ hash: string; text: string }>;
  }

  /** Gives every vectorless chunk with one of these texts its vector. */
  fillVectors(vectors: ReadonlyMap<string, Float32Array>): number {
    const select = this.db.prepare('SELECT id FROM chunks WHERE hash = ? AND embedding IS NULL');
    const update = this.db.prepare('UPDATE chunks SET embedding = ? WHERE id = ?');
    let filled = 0;
    this.db.transaction(() => {
      for (const [hash, vector] of vectors) {
        for (const { id } of select.all(hash) as Array<{ id: number }>) {
          update.run(toBlob(vector), id);
          this.putVec(id, vector);
          filled++;
        }
      }
      if (filled) this.markVecStale();
    })();
    return filled;
  }

  counts(): StoreCounts {
    const one = (sql: string) => Number((this.db.prepare(sql).get() as { n: number }).n);
    return {
      files: one('SELECT count(*) AS n FROM files'),
      chunks: one('SELECT count(*) AS n FROM chunks'),
      pending: one('SELECT count(*) AS n FROM chunks WHERE embedding IS NULL'),
      cacheEntries: one('SELECT count(*) AS n FROM embedding_cache'),
    };
  }

  pendingCount(): number {
    return Number(
      (this.db.prepare('SELECT count(*) AS n FROM chunks WHERE embedding IS NULL').get() as { n: number }).n,
    );
  }

  private deleteChunks(path: string): void {
    const ids = this.db.prepare('SELECT id FROM chunks WHERE path = ?').all(path) as Array<{ id: number }>;
    if (ids.length === 0) return;
    const hasVec = this.vector === 'sqlite-vec' && this.hasVecTable();
    for (const { id } of ids) {
      if (this.fts) this.db.prepare('DELETE FROM chunks_fts WHERE rowid = ?').run(id);
      if (hasVec) this.db.prepare('DELETE FROM chunks_vec WHERE rowid = ?').run(BigInt(id));
    }
    this.db.prepare('DELETE FROM chunks WHERE path = ?').run(path);
  }

  // ── vectors ────────────────────────────────────────────────────────────────────

  /** Records the index's dimension on the first vector and refuses any other length. */
  checkDims(dims: number): void {
    const known = this.meta().dims;
    if (known === undefined) this.setMeta({ dims });
    else if (known !== dims) throw new DimensionMismatchError(known, dims);
  }

  /** Known to exist: searches skip the sqlite_master lookup (the table is only dropped in refreshVec). */
  private vecTableSeen = false;

  private hasVecTable(): boolean {
    if (this.vecTableSeen) return true;
    this.vecTableSeen = vecTableDims(this.db) !== undefined;
    return this.vecTableSeen;
  }

  // Searches run the same two statements again and again; preparing them once saves ~0.1 ms each.
  private readonly statements = new Map<string, BetterSqlite3.Statement<unknown[]>>();

  private statement(sql: string): BetterSqlite3.Statement<unknown[]> {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      prepared = this.db.prepare(sql);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  private putVec(id: number, vector: Float32Array): void {
    this.checkDims(vector.length);
    if (this.vector !== 'sqlite-vec') return;
    if (!this.hasVecTable()) this.db.exec(vecSchema(vector.length));
    this.db.prepare('INSERT INTO chunks_vec (rowid, embedding) VALUES (?, ?)').run(BigInt(id), toBlob(vector));
  }

  /** Without sqlite-vec this connection cannot update chunks_vec; the next one that can rebuilds it. */
  private markVecStale(): void {
    if (this.vector !== 'sqlite-vec' && this.hasVecTable() && !this.meta().vecStale) this.setMeta({ vecStale: true });
  }

  /** Brings chunks_vec in line with the stored vectors after a writer without sqlite-vec. */
  private reconcileVecTable(): void {
    if (this.vector !== 'sqlite-vec') return;
    const meta = this.meta();
    const tableDims = vecTableDims(this.db);
    const fresh = !meta.vecStale && (tableDims === meta.dims || (tableDims === undefined && !this.anyVector()));
    if (fresh) return;
    this.db.transaction(() => {
      if (tableDims !== undefined) {
        this.db.exec('DROP TABLE chunks_vec');
        this.vecTableSeen = false;
        this.statements.clear();
      }
      if (meta.dims !== undefined) {
        this.db.exec(vecSchema(meta.dims));
        const insert = this.db.prepare('INSERT INTO chunks_vec (rowid, embedding) VALUES (?, ?)');
        // Paged: a connection cannot write while it is still stepping through a SELECT.
        const page = this.db.prepare(
          'SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL AND id > ? ORDER BY id LIMIT 512',
        );
        for (let after = 0; ;) {
          const rows = page.all(after) as Array<{ id: number; embedding: Buffer }>;
          if (rows.length === 0) break;
          for (const row of rows)
            if (row.embedding.byteLength === meta.dims * 4) insert.run(BigInt(row.id), row.embedding);
          after = rows[rows.length - 1]!.id;
        }
      }
      this.setMeta({ vecStale: false });
    })();
  }

  private anyVector(): boolean {
    return this.db.prepare('SELECT 1 FROM chunks WHERE embedding IS NOT NULL LIMIT 1').get() !== undefined;
  }

  // ── embedding cache ────────────────────────────────────────────────────────────

  /** Cached vectors for these texts; each hit becomes the most recently used. */
  cacheLookup(
    fingerprint: string,
    hashes: readonly string[],
    dims: number | undefined,
    now: () => number,
  ): Map<string, Float32Array> {
    const found = new Map<string, Float32Array>();
    const select = this.db.prepare('SELECT vector FROM embedding_cache WHERE fingerprint = ? AND hash = ?');
    const touch = this.db.prepare('UPDATE embedding_cache SET used = ? WHERE fingerprint = ? AND hash = ?');
    this.db.transaction(() => {
      for (const hash of hashes) {
        const row = select.get(fingerprint, hash) as { vector: Buffer } | undefined;
        if (!row || (dims !== undefined && row.vector.byteLength !== dims * 4)) continue;
        found.set(hash, fromBlob(row.vector));
        touch.run(now(), fingerprint, hash);
      }
    })();
    return found;
  }

  /** Stores fresh vectors, then drops the least recently used entries beyond `maxEntries`. */
  cacheStore(
    fingerprint: string,
    vectors: ReadonlyMap<string, Float32Array>,
    maxEntries: number,
    now: () => number,
  ): void {
    const upsert = this.db.prepare(
      'INSERT INTO embedding_cache (fingerprint, hash, vector, used) VALUES (?, ?, ?, ?) ON CONFLICT(fingerprint, hash) DO UPDATE SET vector = excluded.vector, used = excluded.used',
    );
    this.db.transaction(() => {
      for (const [hash, vector] of vectors) upsert.run(fingerprint, hash, toBlob(vector), now());
      this.evictCache(maxEntries);
    })();
  }

  evictCache(maxEntries: number): void {
    const excess = this.counts().cacheEntries - Math.max(0, maxEntries);
    if (excess > 0) {
      this.db
        .prepare(
          'DELETE FROM embedding_cache WHERE rowid IN (SELECT rowid FROM embedding_cache ORDER BY used ASC, rowid ASC LIMIT ?)',
        )
        .run(excess);
    }
  }

  /** Latest `used` stamp, so recency keeps increasing across processes. */
  lastCacheUse(): number {
    return Number(
      (this.db.prepare('SELECT coalesce(max(used), 0) AS n FROM embedding_cache').get() as { n: number }).n,
    );
  }

  /** Copies the most recently used cache entries of another index (a rebuild's predecessor). */
  importCache(fromPath: string, maxEntries: number): void {
    if (maxEntries <= 0 || !existsSync(fromPath)) return;
    this.db.prepare('ATTACH DATABASE ? AS previous').run(fromPath);
    try {
      if (this.db.prepare("SELECT 1 FROM previous.sqlite_master WHERE name = 'embedding_cache'").get() !== undefined) {
        this.db
          .prepare(
            'INSERT OR IGNORE INTO main.embedding_cache (fingerprint, hash, vector, used) SELECT fingerprint, hash, vector, used FROM previous.embedding_cache ORDER BY used DESC LIMIT ?',
          )
          .run(maxEntries);
      }
    } finally {
      this.db.exec('DETACH DATABASE previous');
    }
  }

  // ── search ─────────────────────────────────────────────────────────────────────

  /** FTS5 matches, best first; `rank` is bm25(): negative, more negative is better. */
  keyword(match: string, limit: number): Array<ChunkRow & { rank: number }> {
    return this.statement(
      `SELECT ${CHUNK_COLUMNS}, bm25(chunks_fts, 1, ${CONTEXT_WEIGHT}) AS rank FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?`,
    ).all(match, limit) as Array<ChunkRow & { rank: number }>;
  }

  /** How many chunks hold each of these (already stemmed) index terms. */
  termCounts(terms: readonly string[]): Map<string, number> {
    const lookup = this.statement('SELECT doc FROM chunks_fts_terms WHERE term = ?');
    return new Map(terms.map((term) => [term, (lookup.get(term) as { doc: number } | undefined)?.doc ?? 0]));
  }

  /** Index terms from `from` (inclusive) to `to` (exclusive), with their chunk counts. */
  termsBetween(from: string, to: string): Array<{ term: string; doc: number }> {
    return this.statement('SELECT term, doc FROM chunks_fts_terms WHERE term >= ? AND term < ?').all(
      from,
      to,
    ) as Array<{
      term: string;
      doc: number;
    }>;
  }

  /** The word the indexed text most often writes for a stem ("configur" → "configuration"); the stem when none is found. */
  surfaceForm(stem: string): string {
    const row = this.statement('SELECT text FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1').get(
      `"${stem.replaceAll('"', '""')}"`,
    ) as { text: string } | undefined;
    const counts = new Map<string, number>();
    for (const match of row?.text.toLowerCase().matchAll(/\p{L}+/gu) ?? [])
      if (match[0].startsWith(stem)) counts.set(match[0], (counts.get(match[0]) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1] || a[0].length - b[0].length)[0]?.[0] ?? stem;
  }

  /**
   * Words as the index stores them (lower-cased, Porter-stemmed), through a scratch FTS5 table
   * with the same tokenizer, so the query side needs no stemmer of its own that could disagree.
   */
  stems(words: readonly string[]): string[] {
    if (!this.stemmer) {
      this.db.exec(
        `CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer USING fts5(word, tokenize = 'porter unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer_terms USING fts5vocab(temp, stemmer, 'instance')`,
      );
      this.stemmer = true;
    }
    const out: string[] = [];
    this.db.transaction(() => {
      for (const word of words) {
        this.statement('INSERT INTO temp.stemmer (rowid, word) VALUES (1, ?)').run(word);
        const row = this.statement('SELECT term FROM temp.stemmer_terms ORDER BY offset LIMIT 1').get() as
          { term: string } | undefined;
        out.push(row?.term ?? word.toLowerCase());
        this.statement('DELETE FROM temp.stemmer WHERE rowid = 1').run();
      }
    })();
    return out;
  }

  /**
   * The `limit` chunks nearest to `query` by cosine similarity, best first (score = cosine, ≥ 0);
   * `cosine` (memory-core's) scores them when sqlite-vec is not loaded.
   */
  nearest(query: Float32Array, limit: number, cosine: MemoryRanking['cosine']): Array<ChunkRow & { score: number }> {
    if (this.vector === 'sqlite-vec') {
      if (!this.hasVecTable()) return [];
      const rows = this.statement(
        `SELECT ${CHUNK_COLUMNS}, v.distance AS distance FROM (SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?) v JOIN chunks c ON c.id = v.rowid ORDER BY v.distance`,
      ).all(toBlob(query), limit) as Array<ChunkRow & { distance: number }>;
      return rows.map(({ distance, ...row }) => ({ ...row, score: clampScore(1 - distance) }));
    }
    return this.nearestInJs(query, limit, cosine);
  }

  /** Cosine similarity of `query` to each of these chunks that has a vector of its length. */
  similarities(query: Float32Array, ids: readonly number[], cosine: MemoryRanking['cosine']): Map<number, number> {
    const out = new Map<number, number>();
    if (ids.length === 0) return out;
    const rows = this.db
      .prepare(
        'SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL AND id IN (SELECT value FROM json_each(?))',
      )
      .all(JSON.stringify(ids)) as Array<{ id: number; embedding: Buffer }>;
    for (const row of rows) {
      const vector = fromBlob(row.embedding);
      if (vector.length === query.length) out.set(row.id, clampScore(cosine(query, vector)));
    }
    return out;
  }

  private nearestInJs(
    query: Float32Array,
    limit: number,
    cosine: MemoryRanking['cosine'],
  ): Array<ChunkRow & { score: number }> {
    const best: Array<{ id: number; score: number }> = [];
    for (const row of this.db
      .prepare('SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL')
      .iterate() as Iterable<{ id: number; embedding: Buffer }>) {
      const vector = fromBlob(row.embedding);
      if (vector.length !== query.length) continue;
      const score = clampScore(cosine(query, vector));
      if (best.length === limit && score <= best[best.length - 1]!.score) continue;
      best.splice(sortedIndex(best, score), 0, { id: row.id, score });
      if (best.length > limit) best.pop();
    }
    if (best.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.id IN (SELECT value FROM json_each(?))`)
      .all(JSON.stringify(best.map((item) => item.id))) as ChunkRow[];
    const byId = new Map(rows.map((row) => [row.id, row]));
    return best.flatMap((item) => {
      const row = byId.get(item.id);
      return row ? [{ ...row, score: item.score }] : [];
    });
  }
}

function sortedIndex(items: ReadonlyArray<{ score: number }>, score: number): number {
  let index = 0;
  while (index < items.length && items[index]!.score >= score) index++;
  return index;
}

/** Opposite vectors are no match at all, and float error must not push a score past 1. */
function clampScore(score: number): number {
  return Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 0;
}

/** An index written by another version of this code: derived data, so it is rebuilt, not migrated. */
class SchemaVersionError extends Error {}

/** Creates the tables, or refuses a database that is not (this version of) a memory index. */
function prepareSchema(db: Db, path: string): void {
  const tables = tableNames(db);
  if (tables.size > 0 && !tables.has('meta')) {
    throw new ForeignDatabaseError(
      `${path} is a SQLite database but not a memory index (it has no meta table); move it away or point memorySearch.store.path elsewhere`,
    );
  }
  if (tables.has('meta')) {
    const version = readMeta(db).schemaVersion;
    if (version !== SCHEMA_VERSION) {
      throw new SchemaVersionError(
        `the index had schema version ${version ?? 'unknown'} and this code writes ${SCHEMA_VERSION}; it was deleted and is indexed again`,
      );
    }
  }
  db.exec(CORE_SCHEMA);
  if (readMeta(db).schemaVersion === undefined) writeMeta(db, { schemaVersion: SCHEMA_VERSION });
}

export function removeDatabaseFile(path: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(path + suffix, { force: true });
}

function probeFts(db: Db): { ok: boolean; error?: string } {
  try {
    db.exec(FTS_SCHEMA);
    db.prepare('SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1').all('"probe"');
    return { ok: true };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

function isCorruption(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT');
}
