/**
 * Which files are memory, and the only way to read one by name: memory-core's policy, handed
 * to every backend as `ctx.files` (the MemoryFiles contract in sdk/memory/files.ts).
 *
 * Memory is `MEMORY.md` (or `memory.md`) and every `.md` under `memory/` in the workspace,
 * plus the configured extra paths. Symlinks are never followed. Files are named by their
 * workspace-relative path; files under an extra path outside the workspace are named
 * `extra/<root name>/<path below it>`. `memory_get` accepts only those names: `..`,
 * absolute paths, other files and symlinks that lead out are refused with the reason.
 */
import {
  closeSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import { isInside, toPosix } from '../../sdk/index.js';
import {
  MemoryPathError,
  type CappedFile,
  type MemoryFile,
  type MemoryFiles,
  type MemoryGetLimits,
  type MemoryLines,
} from '../../sdk/memory/index.js';

function lstat(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** Every `.md` file under `dir`, recursively, skipping symlinks (files and folders) and hard-linked files. */
function walk(dir: string, out: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names.sort()) {
    const path = join(dir, name);
    const stat = lstat(path);
    if (!stat || stat.isSymbolicLink()) continue;
    if (stat.isDirectory()) walk(path, out);
    else if (stat.isFile() && stat.nlink === 1 && name.toLowerCase().endsWith('.md')) out.push(path);
  }
}

/** Stable short names for extra roots outside the workspace (`extra/<name>/…`). */
function extraRootNames(workspaceDir: string, extraPaths: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set<string>();
  for (const root of extraPaths) {
    const abs = resolve(workspaceDir, root);
    if (isInside(workspaceDir, abs)) continue;
    const base =
      basename(abs)
        .replace(/\.md$/i, '')
        .replace(/[^A-Za-z0-9._-]/g, '_') || 'root';
    let name = base;
    for (let i = 2; used.has(name); i++) name = `${base}-${i}`;
    used.add(name);
    names.set(abs, name);
  }
  return names;
}

function displayPath(workspaceDir: string, abs: string, extraNames: Map<string, string>): string {
  if (isInside(workspaceDir, abs)) return toPosix(relative(workspaceDir, abs));
  for (const [root, name] of extraNames) {
    if (abs === root) return `extra/${name}/${basename(abs)}`;
    if (isInside(root, abs)) return `extra/${name}/${toPosix(relative(root, abs))}`;
  }
  return toPosix(abs);
}

/** The memory files of a workspace, deduplicated, in a stable order. */
export function listMemoryFiles(workspaceDir: string, extraPaths: readonly string[] = []): MemoryFile[] {
  const found: Array<{ abs: string; source: MemoryFile['source'] }> = [];
  for (const name of ['MEMORY.md', 'memory.md']) {
    const abs = join(workspaceDir, name);
    const stat = lstat(abs);
    if (stat?.isFile() && stat.nlink === 1) found.push({ abs, source: 'memory' });
  }
  const memoryDir = join(workspaceDir, 'memory');
  const dirStat = lstat(memoryDir);
  if (dirStat?.isDirectory() && !dirStat.isSymbolicLink()) {
    const files: string[] = [];
    walk(memoryDir, files);
    for (const abs of files) found.push({ abs, source: 'memory' });
  }
  for (const extra of extraPaths) {
    const abs = resolve(workspaceDir, extra);
    const stat = lstat(abs);
    if (!stat || stat.isSymbolicLink()) continue;
    if (stat.isDirectory()) {
      const files: string[] = [];
      walk(abs, files);
      for (const file of files) found.push({ abs: file, source: 'extra' });
    } else if (stat.isFile() && stat.nlink === 1 && abs.toLowerCase().endsWith('.md')) {
      found.push({ abs, source: 'extra' });
    }
  }
  const names = extraRootNames(workspaceDir, extraPaths);
  const seen = new Set<string>();
  const out: MemoryFile[] = [];
  for (const item of found) {
    if (seen.has(item.abs)) continue;
    seen.add(item.abs);
    const stat = lstat(item.abs)!;
    out.push({
      path: displayPath(workspaceDir, item.abs, names),
      absPath: item.abs,
      source: item.source,
      mtimeMs: stat.mtimeMs,
      size: stat.size,
    });
  }
  return out;
}

/**
 * The absolute path of a memory file named by a tool call. Refuses, with the reason:
 * absolute paths, `..` segments, names that are not memory files, files whose real
 * location (after symlinks) is outside the memory roots, and hard-linked files.
 */
export function resolveMemoryPath(
  workspaceDir: string,
  extraPaths: readonly string[],
  requested: string,
): { path: string; absPath: string } {
  const name = requested.trim().replace(/\\/g, '/');
  if (!name) throw new MemoryPathError(requested, 'is empty: give a path such as MEMORY.md or memory/2026-01-31.md');
  if (isAbsolute(name) || /^[A-Za-z]:\//.test(name))
    throw new MemoryPathError(requested, 'is absolute: give the path relative to the workspace (MEMORY.md, memory/…)');
  if (name.split('/').includes('..'))
    throw new MemoryPathError(requested, 'contains "..": memory files are read by their own name only');
  // Session hits name their transcript, but memory_get serves memory files only (as in OpenClaw).
  if (/^sessions\/[^/]+\.jsonl$/.test(name))
    throw new MemoryPathError(
      requested,
      'is a session transcript: memory_get reads memory files only; use sessions_history to read a session',
    );
  if (!name.toLowerCase().endsWith('.md'))
    throw new MemoryPathError(
      requested,
      'is not a Markdown file: only MEMORY.md, memory/*.md and the configured extra paths can be read',
    );

  let abs: string | undefined;
  let roots: string[];
  const names = extraRootNames(workspaceDir, extraPaths);
  const extra = /^extra\/([^/]+)\/(.+)$/.exec(name);
  if (extra) {
    const root = [...names].find(([, short]) => short === extra[1])?.[0];
    if (!root) throw new MemoryPathError(requested, `names an unknown extra root "${extra[1]}"`);
    const rootStat = lstat(root);
    abs = rootStat?.isFile() ? (basename(root) === extra[2] ? root : undefined) : resolve(root, extra[2]!);
    if (!abs) throw new MemoryPathError(requested, 'is not a memory file');
    roots = [root];
  } else {
    abs = resolve(workspaceDir, name);
    const inMemoryDir = name.startsWith('memory/');
    const isRootFile = name === 'MEMORY.md' || name === 'memory.md';
    const inExtra = extraPaths.map((path) => resolve(workspaceDir, path)).filter((root) => isInside(root, abs!));
    if (!inMemoryDir && !isRootFile && inExtra.length === 0) {
      throw new MemoryPathError(
        requested,
        'is not a memory file: only MEMORY.md, memory/… and the configured extra paths can be read',
      );
    }
    roots = [...(inMemoryDir ? [join(workspaceDir, 'memory')] : []), ...(isRootFile ? [workspaceDir] : []), ...inExtra];
  }

  // Resolve symlinks: the real file must still be inside a memory root.
  let real: string;
  try {
    real = realpathSync(abs);
  } catch {
    throw new MemoryPathError(requested, 'does not exist');
  }
  const realRoots = roots.map((root) => {
    try {
      return realpathSync(root);
    } catch {
      return root;
    }
  });
  if (!realRoots.some((root) => isInside(root, real)))
    throw new MemoryPathError(requested, 'leads outside the memory files (through a symlink)');
  const stat = lstat(abs);
  if (stat?.isSymbolicLink())
    throw new MemoryPathError(requested, 'is a symlink; memory files are read only where they are');
  // Another name for the same file may be anywhere on the disk.
  if (stat?.isFile() && stat.nlink > 1)
    throw new MemoryPathError(
      requested,
      `has ${stat.nlink} hard links, so it may be a file from outside the memory folders`,
    );
  return { path: name, absPath: abs };
}

/**
 * Lines `from` (1-based) to `from + lines - 1` of a memory file, at most `limits.maxChars`
 * characters: whole lines while they fit, and a lone over-long first line cut at the cap,
 * so one huge file never floods the model's context.
 */
export function readMemoryLines(absPath: string, from = 1, lines?: number, limits?: MemoryGetLimits): MemoryLines {
  const all = readFileSync(absPath, 'utf8').split('\n');
  if (all.length > 1 && all[all.length - 1] === '') all.pop();
  const start = Math.max(1, Math.floor(from));
  const wanted =
    lines !== undefined ? Math.max(0, Math.floor(lines)) : limits ? limits.defaultLines : all.length - start + 1;
  const slice = all.slice(start - 1, start - 1 + wanted);
  const maxChars = limits?.maxChars ?? Infinity;
  let kept = 0;
  let chars = 0;
  let text = '';
  for (const line of slice) {
    const cost = (kept > 0 ? 1 : 0) + line.length;
    if (chars + cost > maxChars) {
      if (kept === 0) {
        text = line.slice(0, maxChars);
        kept = 1;
      }
      break;
    }
    text += (kept > 0 ? '\n' : '') + line;
    chars += cost;
    kept++;
  }
  const cut = kept < slice.length || (kept === 1 && text.length < (slice[0]?.length ?? 0));
  const next = start + kept;
  return {
    text,
    from: start,
    lines: kept,
    totalLines: all.length,
    ...(cut ? { truncated: true } : {}),
    ...(next <= all.length && (cut || lines === undefined) ? { nextFrom: next } : {}),
  };
}

/**
 * The text of a memory file for indexing: whole, or — past `maxFileBytes` (0: no cap) —
 * only its first `maxFileBytes` bytes, up to the last line break, read without loading the
 * rest (a 50 MB dump would otherwise become tens of thousands of chunks).
 */
export function readMemoryText(
  absPath: string,
  maxFileBytes: number,
): { text: string; size: number; indexedBytes?: number } {
  const fd = openSync(absPath, 'r');
  try {
    const size = fstatSync(fd).size;
    if (maxFileBytes <= 0 || size <= maxFileBytes) return { text: readFileSync(fd, 'utf8'), size };
    const buffer = Buffer.alloc(maxFileBytes);
    const read = readSync(fd, buffer, 0, maxFileBytes, 0);
    const newline = buffer.lastIndexOf(0x0a, read - 1);
    // No line break at all: cut at the byte cap, dropping a split UTF-8 sequence.
    let end = newline > 0 ? newline + 1 : read;
    if (newline <= 0) while (end > 0 && (buffer[end - 1]! & 0xc0) === 0x80) end--;
    if (newline <= 0 && end > 0 && buffer[end - 1]! >= 0xc0) end--;
    return { text: buffer.subarray(0, end).toString('utf8'), size, indexedBytes: end };
  } finally {
    closeSync(fd);
  }
}

/** The log and CLI line for files cut at the cap. */
export function cappedNote(capped: readonly CappedFile[], maxFileBytes: number): string {
  const names = capped
    .map((file) => `${file.path} (${file.size} bytes, first ${file.indexedBytes} indexed)`)
    .join(', ');
  return `memory index: ${capped.length} file${capped.length === 1 ? '' : 's'} over memorySearch.maxFileBytes (${maxFileBytes}) indexed only in part: ${names}`;
}

/** What memory-core hands every backend as `ctx.files`, so all of them see the same memory files. */
export const memoryFiles: MemoryFiles = {
  list: listMemoryFiles,
  resolve: resolveMemoryPath,
  readLines: readMemoryLines,
  readText: readMemoryText,
  cappedNote,
};
