/**
 * QMD's `--json` search output → the memory tool contract.
 *
 * QMD 2.8 prints an array of hits:
 *   { "docid": "#b04c46", "score": 0.54, "file": "qmd://memory-dir/2026-11-01.md", "line": 3,
 *     "title": "2026-11-01", "snippet": "@@ -2,4 @@ (1 before, 0 after)\n…lines…" }
 * `score` is in 0..1 (search: |bm25| / (1 + |bm25|), rounded to two decimals; vsearch: cosine
 * similarity; query: the reranker's blend); the snippet starts with a diff-style header giving
 * its first line and line count in the file.
 *
 * BM25 scores are made relative to the best hit (best = 1), as the built-in index does: QMD's
 * absolute mapping depends on the size of the corpus (in a workspace with one memory file
 * every hit prints as 0.00, because the terms occur in every document), so the shared
 * `minScore` (0.35) would hide everything from a new user.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { MemorySearchHit } from '../../sdk/index.js';
import { isInside } from '../../sdk/index.js';
import { snippetOf } from '../../sdk/memory/text.js';
import type { MemorySettings } from '../../sdk/memory/settings.js';
import { displayPath, type QmdCollection } from './collections.js';
import { QmdError } from './qmd-cli.js';

export interface QmdHit {
  file: string;
  score: number;
  line?: number;
  snippet?: string;
  body?: string;
  title?: string;
}

/** The parsed hits, or a QmdError('output') saying what was wrong with the text. */
export function parseQmdJson(stdout: string): QmdHit[] {
  const text = stdout.trim();
  let value: unknown;
  try {
    // QMD may print a notice before the JSON (e.g. about pending embeddings); the array is last.
    const start = text.startsWith('[') ? 0 : text.search(/^\[/m);
    value = JSON.parse(start > 0 ? text.slice(start) : text);
  } catch (error) {
    const excerpt = text.length > 80 ? `${text.slice(0, 79)}…` : text;
    throw new QmdError('output', `qmd printed output that is not JSON (${(error as Error).message}): ${JSON.stringify(excerpt)}`);
  }
  if (!Array.isArray(value)) throw new QmdError('output', `qmd printed JSON that is not a list of results (${typeof value})`);
  return value.map((item, index) => {
    const hit = item as Record<string, unknown> | null;
    if (!hit || typeof hit !== 'object' || typeof hit.file !== 'string' || typeof hit.score !== 'number' || !Number.isFinite(hit.score)) {
      throw new QmdError('output', `qmd printed a result without "file" and a numeric "score" (item ${index})`);
    }
    return {
      file: hit.file,
      score: hit.score,
      line: typeof hit.line === 'number' ? hit.line : undefined,
      snippet: typeof hit.snippet === 'string' ? hit.snippet : undefined,
      body: typeof hit.body === 'string' ? hit.body : undefined,
      title: typeof hit.title === 'string' ? hit.title : undefined,
    };
  });
}

/** `qmd://<collection>/<path>[?index=…]` → its parts. */
export function parseVirtualPath(file: string): { collection: string; path: string } | undefined {
  const match = /^qmd:\/\/([^/]+)\/(.+?)(?:\?index=[^/]*)?$/.exec(file);
  return match ? { collection: match[1]!, path: match[2]! } : undefined;
}

interface FileLines {
  lines: string[];
}

function readLines(absPath: string): FileLines | undefined {
  try {
    const stat = lstatSync(absPath);
    // Symlinks are never memory (the built-in index skips them too); QMD may have indexed one.
    if (!stat.isFile()) return undefined;
    const lines = readFileSync(absPath, 'utf8').split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    return { lines };
  } catch {
    return undefined;
  }
}

const HEADER = /^@@ -(\d+),(\d+) @@[^\n]*\n?/;

/** Where in the file the hit is, and the snippet text without QMD's header. */
function locate(hit: QmdHit, file: FileLines): { startLine: number; endLine: number; text: string } {
  const total = Math.max(1, file.lines.length);
  const raw = hit.snippet ?? '';
  const header = HEADER.exec(raw);
  let start: number;
  let end: number;
  if (header) {
    start = Number(header[1]);
    end = start + Math.max(1, Number(header[2])) - 1;
  } else {
    // No header (another QMD version, or --full): find the snippet's first line in the file.
    const first = raw.split('\n').find((line) => line.trim() !== '')?.trim();
    const found = first ? file.lines.findIndex((line) => line.includes(first)) : -1;
    start = found >= 0 ? found + 1 : (hit.line ?? 1);
    end = start + Math.max(0, raw.replace(/\n+$/, '').split('\n').length - 1);
  }
  start = Math.min(Math.max(1, start), total);
  end = Math.min(Math.max(start, end), total);
  // Blank edge lines carry nothing; narrow the range to the text.
  while (start < end && file.lines[start - 1]!.trim() === '') start++;
  while (end > start && file.lines[end - 1]!.trim() === '') end--;
  const fromFile = file.lines.slice(start - 1, end).join('\n');
  const fromQmd = header ? raw.slice(header[0].length).trim() : raw.trim();
  return { startLine: start, endLine: end, text: fromQmd || fromFile };
}

/**
 * Hits in the tool contract's shape: files named as memory_get accepts them, real line
 * ranges, scores in (0, 1] best first, duplicates (one file reached by two collections)
 * dropped, only files that are still there and are not symlinks.
 */
export function mapHits(
  hits: readonly QmdHit[],
  settings: MemorySettings,
  collections: readonly QmdCollection[],
  options: { snippetMax: number; relativeScores: boolean },
): MemorySearchHit[] {
  const byName = new Map(collections.map((item) => [item.name, item]));
  const cache = new Map<string, FileLines | undefined>();
  const seen = new Set<string>();
  const kept: Array<{ hit: MemorySearchHit; raw: number }> = [];
  for (const hit of hits) {
    const virtual = parseVirtualPath(hit.file);
    const collection = virtual ? byName.get(virtual.collection) : undefined;
    if (!virtual || !collection) continue;
    const absPath = resolve(collection.dir, virtual.path);
    if (!isInside(collection.dir, absPath)) continue;
    if (collection.file !== undefined && virtual.path !== collection.file) continue;
    if (!cache.has(absPath)) cache.set(absPath, readLines(absPath));
    const file = cache.get(absPath);
    if (!file) continue;
    const where = locate(hit, file);
    const key = `${absPath}:${where.startLine}`;
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push({
      raw: hit.score,
      hit: {
        path: displayPath(settings, collection, virtual.path),
        startLine: where.startLine,
        endLine: where.endLine,
        score: 0,
        snippet: snippetOf(where.text, options.snippetMax),
        source: collection.kind === 'extra' ? 'extra' : 'memory',
      },
    });
  }
  const top = Math.max(0, ...kept.map((item) => item.raw));
  const scoreOf = (raw: number, rank: number): number => {
    if (options.relativeScores) {
      // Every score rounded to 0: QMD's order is still BM25's, so rank decides (1, 1/2, 1/3, …).
      return top > 0 ? raw / top : 1 / (1 + rank);
    }
    // Already 0..1; a QMD with another scale is brought back into it.
    return top > 1 ? raw / top : raw;
  };
  return (
    kept
      // Two decimals can print a weak but real match as 0; a hit is still a hit.
      .map((item, rank) => ({ hit: { ...item.hit, score: Math.min(1, Math.max(0.01, scoreOf(item.raw, rank))) }, rank }))
      // Stable: QMD's own order breaks ties.
      .sort((a, b) => b.hit.score - a.hit.score || a.rank - b.rank)
      .map(({ hit }) => hit)
  );
}
