/**
 * Memory files, as memory-core decides them and hands them to every backend as `ctx.files`:
 * `MEMORY.md` (or `memory.md`), every `.md` under `memory/` and the configured extra paths,
 * never through a symlink. Files are named by their workspace-relative path, or
 * `extra/<root name>/<path below it>` under an extra path outside the workspace.
 */
import type { CappedFile, MemoryLines } from '../types/memory.js';

export type { CappedFile, MemoryLines };

export interface MemoryFile {
  /** The name tools and results use (workspace-relative, or `extra/<root>/…`). */
  path: string;
  absPath: string;
  source: 'memory' | 'extra';
  mtimeMs: number;
  size: number;
}

/** A path `memory_get` refuses; the tool answers with its message. */
export class MemoryPathError extends Error {
  constructor(
    readonly requested: string,
    reason: string,
  ) {
    super(`memory_get: "${requested}" ${reason}`);
    this.name = 'MemoryPathError';
  }
}

/** How much `memory_get` returns when the caller does not say (OpenClaw's `contextLimits`). */
export interface MemoryGetLimits {
  /** Lines read when `lines` is omitted (`memoryGetDefaultLines`). */
  defaultLines: number;
  /** Characters returned at most (`memoryGetMaxChars`); the read stops before the line that would pass it. */
  maxChars: number;
}

export interface MemoryFiles {
  /** The memory files of a workspace, deduplicated, in a stable order (hard-linked files left out). */
  list(workspaceDir: string, extraPaths?: readonly string[]): MemoryFile[];
  /**
   * The file a tool call names. Throws MemoryPathError, with the reason, for absolute paths,
   * `..`, names that are not memory files, symlinks that lead out and hard-linked files.
   */
  resolve(workspaceDir: string, extraPaths: readonly string[], requested: string): { path: string; absPath: string };
  /**
   * Lines `from` (1-based) on, at most `limits.maxChars` characters: whole lines while they fit,
   * a lone over-long first line cut at the cap.
   */
  readLines(absPath: string, from?: number, lines?: number, limits?: MemoryGetLimits): MemoryLines;
  /** The text to index: whole, or past `maxFileBytes` (0: no cap) its first bytes up to a line break. */
  readText(absPath: string, maxFileBytes: number): { text: string; size: number; indexedBytes?: number };
  /** The log and CLI line for files cut at the cap. */
  cappedNote(capped: readonly CappedFile[], maxFileBytes: number): string;
}
