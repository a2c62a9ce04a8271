/**
 * The index file, `<stateDir>/memory/<agentId>.minisearch.json`: MiniSearch's own
 * serialisation plus what it does not know — which files were indexed at which content
 * hash, every chunk with its path, lines and text, and the parameters the index was built
 * under (a change in any of them means a full rebuild).
 *
 * Parsing checks the whole structure and that the MiniSearch part holds exactly the
 * recorded chunks, so a torn or hand-edited file is reported and rebuilt instead of
 * answering from a half-index.
 */
import { dirname, basename, join } from 'node:path';
import type { MemorySyncStats } from '../../sdk/index.js';

const FORMAT = 'claw-memory-minisearch';
const VERSION = 1;

export type FileSource = 'memory' | 'extra';

export interface IndexParams {
  chunkTokens: number;
  chunkOverlap: number;
  /** See tokenizerFingerprint(). */
  tokenizer: string;
  /** The embedding provider's fingerprint; null when the index is keyword-only. */
  embedding: string | null;
}

export interface FileRecord {
  hash: string;
  source: FileSource;
  /** Chunk ids, in file order. */
  chunks: number[];
}

export interface ChunkRecord {
  id: number;
  path: string;
  source: FileSource;
  startLine: number;
  endLine: number;
  /** sha256 of `text`: the key of its embedding. */
  hash: string;
  text: string;
}

export interface LastSync {
  at: string;
  stats: MemorySyncStats;
}

export interface IndexSnapshot {
  params: IndexParams;
  /** Chunk ids are never reused, so a discarded id cannot collide with a new chunk. */
  nextId: number;
  files: Record<string, FileRecord>;
  chunks: ChunkRecord[];
  lastSync?: LastSync;
  /** MiniSearch's toJSON(). */
  minisearch: unknown;
}

export class IndexFileError extends Error {}

/** Index and vector files, derived from `store.path` so a custom `{agentId}` template is honoured. */
export function indexPaths(storePath: string): { index: string; vectors: string } {
  const stem = basename(storePath).replace(/\.[^.]*$/, '') || 'memory';
  const base = join(dirname(storePath), `${stem}.minisearch`);
  return { index: `${base}.json`, vectors: `${base}.vectors.bin` };
}

export function serializeIndex(snapshot: IndexSnapshot): string {
  return JSON.stringify({ format: FORMAT, version: VERSION, ...snapshot });
}

export function sameParams(a: IndexParams, b: IndexParams): boolean {
  return (
    a.chunkTokens === b.chunkTokens &&
    a.chunkOverlap === b.chunkOverlap &&
    a.tokenizer === b.tokenizer &&
    a.embedding === b.embedding
  );
}

/** Why an index built under `before` cannot serve `after`, in words for the log. */
export function paramsChange(before: IndexParams, after: IndexParams): string {
  const changes: string[] = [];
  if (before.chunkTokens !== after.chunkTokens || before.chunkOverlap !== after.chunkOverlap) {
    changes.push(`chunking ${before.chunkTokens}/${before.chunkOverlap} → ${after.chunkTokens}/${after.chunkOverlap}`);
  }
  if (before.tokenizer !== after.tokenizer) changes.push('the tokenizer changed');
  if (before.embedding !== after.embedding)
    changes.push(`embeddings ${before.embedding ?? 'none'} → ${after.embedding ?? 'none'}`);
  return changes.join(', ');
}

export function parseIndex(text: string): IndexSnapshot {
  let raw: any;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new IndexFileError(`not valid JSON (${(error as Error).message})`);
  }
  const fail = (what: string): never => {
    throw new IndexFileError(what);
  };
  if (!isObject(raw) || raw.format !== FORMAT) fail('not a memory-minisearch index');
  if (raw.version !== VERSION) fail(`index format version ${String(raw.version)}, expected ${VERSION}`);
  const params = raw.params;
  if (
    !isObject(params) ||
    !Number.isInteger(params.chunkTokens) ||
    !Number.isInteger(params.chunkOverlap) ||
    typeof params.tokenizer !== 'string' ||
    !(params.embedding === null || typeof params.embedding === 'string')
  ) {
    fail('params are missing or malformed');
  }
  if (!Number.isInteger(raw.nextId) || raw.nextId < 0) fail('nextId is missing');
  if (!isObject(raw.files) || !Array.isArray(raw.chunks)) fail('files or chunks are missing');
  if (!isObject(raw.minisearch)) fail('the MiniSearch index is missing');

  const chunks = new Map<number, ChunkRecord>();
  for (const chunk of raw.chunks as unknown[]) {
    if (!isChunk(chunk)) fail('a chunk record is malformed');
    const record = chunk as ChunkRecord;
    if (record.id >= raw.nextId || chunks.has(record.id)) fail(`chunk id ${record.id} is duplicated or out of range`);
    chunks.set(record.id, record);
  }
  let owned = 0;
  for (const [path, file] of Object.entries(raw.files as Record<string, unknown>)) {
    if (!isObject(file) || typeof file.hash !== 'string' || !isSource(file.source) || !Array.isArray(file.chunks))
      fail(`file record "${path}" is malformed`);
    for (const id of (file as FileRecord).chunks) {
      if (chunks.get(id)?.path !== path) fail(`file "${path}" names chunk ${String(id)}, which is not its own`);
      owned++;
    }
  }
  if (owned !== chunks.size) fail('some chunks belong to no file');

  // MiniSearch must hold exactly our chunks, or search would return ids we cannot resolve.
  const engineIds = raw.minisearch.documentIds;
  if (!isObject(engineIds) || raw.minisearch.documentCount !== chunks.size)
    fail('the MiniSearch index does not match the chunk records');
  const ids = new Set(Object.values(engineIds as Record<string, unknown>));
  if (ids.size !== chunks.size || [...chunks.keys()].some((id) => !ids.has(id)))
    fail('the MiniSearch index does not match the chunk records');

  return {
    params: params as IndexParams,
    nextId: raw.nextId,
    files: raw.files as Record<string, FileRecord>,
    chunks: [...chunks.values()],
    lastSync:
      isObject(raw.lastSync) && typeof raw.lastSync.at === 'string' && isObject(raw.lastSync.stats)
        ? (raw.lastSync as LastSync)
        : undefined,
    minisearch: raw.minisearch,
  };
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSource(value: unknown): value is FileSource {
  return value === 'memory' || value === 'extra';
}

function isChunk(value: unknown): value is ChunkRecord {
  return (
    isObject(value) &&
    Number.isInteger(value.id) &&
    value.id >= 0 &&
    typeof value.path === 'string' &&
    isSource(value.source) &&
    Number.isInteger(value.startLine) &&
    value.startLine >= 1 &&
    Number.isInteger(value.endLine) &&
    value.endLine >= value.startLine &&
    typeof value.hash === 'string' &&
    typeof value.text === 'string'
  );
}
