/**
 * QMD's MCP answers → the memory tool contract.
 *
 * QMD 2.8's `query` tool answers `structuredContent.results`, a list of
 *   { "docid": "#b04c46", "file": "memory-dir/2026-11-01.md", "title": "2026-11-01", "score": 1,
 *     "line": 3, "snippet": "3: @@ -2,4 @@ …" }
 * best first (`file` is `<collection>/<path>`; the REST and CLI forms prefix `qmd://`). The
 * order is what counts (query-plan.ts fuses the lists); QMD's snippet is replaced by one
 * centred on the question's terms, cut from the file itself the way the built-in index
 * does (snippetAround), with the line range it covers.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type MemorySearchHit, isInside } from '../../sdk/index.js';
import type { MemorySettings, MemoryText } from '../../sdk/memory/index.js';
import { displayPath, type QmdCollection } from './collections.js';
import { QmdError } from './qmd-cli.js';

export interface QmdHit {
  file: string;
  line?: number;
}

/** The hits of one `query` tool answer, or a QmdError('output') saying what was wrong with it. */
export function parseQueryResults(structured: unknown): QmdHit[] {
  const results = (structured as { results?: unknown } | undefined)?.results;
  if (!Array.isArray(results)) throw new QmdError('output', 'qmd query answered without a list of results');
  return results.map((item, index) => {
    const hit = item as Record<string, unknown> | null;
    if (!hit || typeof hit !== 'object' || typeof hit.file !== 'string')
      throw new QmdError('output', `qmd query answered a result without "file" (item ${index})`);
    return { file: hit.file, line: typeof hit.line === 'number' ? hit.line : undefined };
  });
}

/** `<collection>/<path>` or `qmd://<collection>/<path>[?index=…]` → its parts. */
export function parseVirtualPath(file: string): { collection: string; path: string } | undefined {
  const match = /^(?:qmd:\/\/)?([^/]+)\/(.+?)(?:\?index=[^/]*)?$/.exec(file);
  return match ? { collection: match[1]!, path: match[2]! } : undefined;
}

/** The file behind a hit, when it is one of these collections' files and still a plain file. */
export function resolveHit(
  hit: QmdHit,
  collections: readonly QmdCollection[],
): { key: string; absPath: string; collection: QmdCollection; relPath: string } | undefined {
  const virtual = parseVirtualPath(hit.file);
  const collection = virtual ? collections.find((item) => item.name === virtual.collection) : undefined;
  if (!virtual || !collection) return undefined;
  const absPath = resolve(collection.dir, virtual.path);
  if (!isInside(collection.dir, absPath)) return undefined;
  if (collection.file !== undefined && virtual.path !== collection.file) return undefined;
  return { key: absPath, absPath, collection, relPath: virtual.path };
}

function readText(absPath: string): string | undefined {
  try {
    // Symlinks are never memory (the built-in index skips them too); QMD may have indexed one.
    if (!lstatSync(absPath).isFile()) return undefined;
    return readFileSync(absPath, 'utf8');
  } catch {
    return undefined;
  }
}

/** 1-based lines of `text` that `snippet` (as snippetAround cut it from text.trim()) covers. */
export function linesOf(text: string, snippet: string): { startLine: number; endLine: number } {
  const body = snippet.replace(/^…/, '').replace(/…$/, '');
  const at = Math.max(0, text.indexOf(body));
  const startLine = text.slice(0, at).split('\n').length;
  return { startLine, endLine: startLine + body.split('\n').length - 1 };
}

/**
 * One search hit for a fused QMD result: the file named as memory_get accepts it, a snippet
 * centred on `terms`, its line range; undefined when the file is gone or is not a plain file.
 */
export function toSearchHit(
  target: { absPath: string; collection: QmdCollection; relPath: string },
  settings: MemorySettings,
  terms: string,
  score: number,
  snippet: { max: number; text: MemoryText },
): MemorySearchHit | undefined {
  const raw = readText(target.absPath);
  if (raw === undefined) return undefined;
  // Over the size cap the built-in index reads only the start; so does the snippet here.
  const text =
    settings.maxFileBytes > 0 && raw.length > settings.maxFileBytes ? raw.slice(0, settings.maxFileBytes) : raw;
  const cut = snippet.text.snippetAround(text, terms, snippet.max);
  const { startLine, endLine } = linesOf(text, cut);
  return {
    path: displayPath(settings, target.collection, target.relPath),
    startLine,
    endLine,
    score: Math.min(1, Math.max(0.01, score)),
    snippet: cut,
    source: target.collection.kind === 'extra' ? 'extra' : 'memory',
  };
}
