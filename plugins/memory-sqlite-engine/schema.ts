/**
 * The index's tables and its meta record. The index is derived data (the Markdown files
 * are the truth), so a schema change never migrates: an index of another schema version
 * is thrown away and built again.
 */
import type { Db } from '../../sdk/sqlite.js';

/** Bump when a table changes shape or meaning. */
export const SCHEMA_VERSION = 2;

export const CORE_SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
  path TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  hash TEXT NOT NULL,
  mtime REAL NOT NULL,
  size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  source TEXT NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  hash TEXT NOT NULL,
  text TEXT NOT NULL,
  embedding BLOB
);
CREATE INDEX IF NOT EXISTS chunks_by_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_awaiting_vector ON chunks(hash) WHERE embedding IS NULL;
CREATE TABLE IF NOT EXISTS embedding_cache (
  fingerprint TEXT NOT NULL,
  hash TEXT NOT NULL,
  vector BLOB NOT NULL,
  used INTEGER NOT NULL,
  PRIMARY KEY (fingerprint, hash)
);
CREATE INDEX IF NOT EXISTS embedding_cache_by_use ON embedding_cache(used);
`;

/**
 * unicode61 splits on anything that is not a letter or digit; CJK text reaches it already
 * split into single characters (segmentCjk), so Chinese and Japanese become findable.
 * SQLite's own Porter stemmer folds English word forms ("deployed", "deploys" → "deploy")
 * in the index and in every query alike. `context` holds a chunk's path words and headings
 * (context.ts). The vocabulary view lists the indexed terms, for typo tolerance.
 */
export const FTS_SCHEMA = `CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, context, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts_terms USING fts5vocab(chunks_fts, 'row')`;

/** bm25 column weights: a word in the path, title or headings counts this many times a word in the text. */
export const CONTEXT_WEIGHT = 2;

/** Exact KNN by cosine distance (1 − cosine), so a score is simply 1 − distance. */
export function vecSchema(dims: number): string {
  return `CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[${dims}] distance_metric=cosine)`;
}

export interface IndexMeta {
  schemaVersion?: number;
  /** The embedding provider fingerprint the stored vectors belong to ("none": no vectors). */
  fingerprint?: string;
  provider?: string;
  model?: string;
  dims?: number;
  chunkTokens?: number;
  chunkOverlap?: number;
  /** Written by a connection without sqlite-vec: chunks_vec no longer matches chunks. */
  vecStale?: boolean;
  lastSync?: Record<string, unknown>;
  /**
   * False from the moment a first index starts being written in place until its sync ends:
   * searches can already read it, but it does not hold every file yet.
   */
  complete?: boolean;
  /** While `complete` is false: who is building the index and how far it got. */
  building?: IndexBuilding;
}

export interface IndexBuilding {
  pid: number;
  files: number;
  filesTotal: number;
  startedAt: string;
  updatedAt: string;
}

const NUMBER_KEYS = new Set(['schemaVersion', 'dims', 'chunkTokens', 'chunkOverlap']);

export function readMeta(db: Db): IndexMeta {
  const meta: Record<string, unknown> = {};
  for (const row of db.prepare('SELECT key, value FROM meta').all() as Array<{ key: string; value: string }>) {
    if (NUMBER_KEYS.has(row.key)) meta[row.key] = Number(row.value);
    else if (row.key === 'vecStale' || row.key === 'complete') meta[row.key] = row.value === '1';
    else if (row.key === 'lastSync' || row.key === 'building') meta[row.key] = safeJson(row.value);
    else meta[row.key] = row.value;
  }
  return meta as IndexMeta;
}

export function writeMeta(db: Db, values: Partial<IndexMeta>): void {
  const upsert = db.prepare(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
  );
  const remove = db.prepare('DELETE FROM meta WHERE key = ?');
  db.transaction(() => {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) remove.run(key);
      else if (typeof value === 'boolean') upsert.run(key, value ? '1' : '0');
      else if (typeof value === 'object') upsert.run(key, JSON.stringify(value));
      else upsert.run(key, String(value));
    }
  })();
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function tableNames(db: Db): Set<string> {
  return new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map(
      (row) => row.name,
    ),
  );
}

/** The dimension chunks_vec was created with, read from its DDL (readable without the extension). */
export function vecTableDims(db: Db): number | undefined {
  const row = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'chunks_vec'").get() as
    { sql?: string } | undefined;
  const match = row?.sql ? /float\[(\d+)\]/.exec(row.sql) : null;
  return match ? Number(match[1]) : undefined;
}
