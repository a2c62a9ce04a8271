/**
 * Which QMD collections an agent needs, and how their files are named in results.
 *
 * QMD indexes folders ("collections") with a glob mask. An agent gets:
 *   memory       the workspace, mask MEMORY.md,memory.md,memory/**\/*.md (only those files;
 *                QMD does not follow symlinks while it collects them)
 *   one per extra path (a folder with **\/*.md, or a single file's folder masked to it)
 * One collection for the workspace, not one per folder: QMD runs its full-text query once per
 * collection searched, so every collection adds the cost of a search to each question.
 * Files inside the workspace keep their workspace-relative names (MEMORY.md,
 * memory/2026-11-01.md); files of extra roots outside it are `qmd/<collection>/<path>`.
 */
import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { basename, dirname, relative, resolve } from 'node:path';
import { isInside, toPosix } from '../../sdk/index.js';
import { MemoryPathError, type MemorySettings } from '../../sdk/memory/index.js';

export interface QmdCollection {
  name: string;
  /** The folder QMD indexes (absolute). */
  dir: string;
  /** QMD's --mask: a glob or a comma-separated list of them. */
  mask: string;
  kind: 'memory' | 'extra';
  /** For a single-file extra path: that file's name (the only file it may serve). */
  file?: string;
  /** Inside the workspace: results are named by their workspace-relative path. */
  insideWorkspace: boolean;
}

export const MEMORY_COLLECTION = 'memory';
const RESERVED = new Set([MEMORY_COLLECTION]);

function lstat(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function collectionName(abs: string, used: Set<string>): string {
  const base =
    basename(abs)
      .replace(/\.md$/i, '')
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^[._-]+/, '') || 'extra';
  let name = base;
  for (let i = 2; used.has(name); i++) name = `${base}-${i}`;
  used.add(name);
  return name;
}

/**
 * The collections for these settings, as things are on disk now: folders that do not exist
 * (yet) and symlinks (never followed, like the built-in index) are left out and picked up by
 * a later sync once they appear.
 */
export function planCollections(settings: MemorySettings): QmdCollection[] {
  const workspace = resolve(settings.workspaceDir);
  const out: QmdCollection[] = [];
  const workspaceStat = lstat(workspace);
  if (workspaceStat?.isDirectory()) {
    // A memory/ that is a symlink is not memory (as in the built-in index): the root files only.
    const memoryDir = lstat(resolve(workspace, 'memory'));
    const mask = memoryDir?.isSymbolicLink() ? 'MEMORY.md,memory.md' : 'MEMORY.md,memory.md,memory/**/*.md';
    out.push({ name: MEMORY_COLLECTION, dir: workspace, mask, kind: 'memory', insideWorkspace: true });
  }
  const used = new Set(RESERVED);
  const seen = new Set<string>();
  for (const extra of settings.extraPaths) {
    const abs = resolve(workspace, extra);
    // Already covered by the memory collection: a second collection would only duplicate hits.
    if (
      isInside(resolve(workspace, 'memory'), abs) ||
      abs === resolve(workspace, 'MEMORY.md') ||
      abs === resolve(workspace, 'memory.md')
    )
      continue;
    if (seen.has(abs)) continue;
    seen.add(abs);
    const stat = lstat(abs);
    if (!stat || stat.isSymbolicLink()) continue;
    const insideWorkspace = isInside(workspace, abs);
    if (stat.isDirectory()) {
      out.push({ name: collectionName(abs, used), dir: abs, mask: '**/*.md', kind: 'extra', insideWorkspace });
    } else if (stat.isFile() && abs.toLowerCase().endsWith('.md')) {
      out.push({
        name: collectionName(abs, used),
        dir: dirname(abs),
        mask: basename(abs),
        kind: 'extra',
        file: basename(abs),
        insideWorkspace,
      });
    }
  }
  return out;
}

/** A collection file as results name it. */
export function displayPath(settings: MemorySettings, collection: QmdCollection, relPath: string): string {
  const abs = resolve(collection.dir, relPath);
  if (collection.insideWorkspace) return toPosix(relative(resolve(settings.workspaceDir), abs));
  return `qmd/${collection.name}/${toPosix(relPath)}`;
}

/**
 * `qmd/<collection>/<path>` → the file, refusing (with the reason, like memory_get does for
 * other names) anything that is not a Markdown file of that collection.
 */
export function resolveQmdPath(
  collections: readonly QmdCollection[],
  requested: string,
): { path: string; absPath: string } {
  const name = requested.trim().replace(/\\/g, '/');
  const match = /^qmd\/([^/]+)\/(.+)$/.exec(name);
  if (!match) throw new MemoryPathError(requested, 'is not a qmd/<collection>/<path> name');
  const [, collectionId, rel] = match as unknown as [string, string, string];
  if (rel.split('/').includes('..'))
    throw new MemoryPathError(requested, 'contains "..": memory files are read by their own name only');
  if (!rel.toLowerCase().endsWith('.md'))
    throw new MemoryPathError(
      requested,
      'is not a Markdown file: only MEMORY.md, memory/*.md and the configured extra paths can be read',
    );
  const collection = collections.find((item) => item.name === collectionId);
  if (!collection) throw new MemoryPathError(requested, `names an unknown QMD collection "${collectionId}"`);
  if (collection.file !== undefined && rel !== collection.file)
    throw new MemoryPathError(requested, 'is not a memory file');
  const abs = resolve(collection.dir, rel);
  if (!isInside(collection.dir, abs)) throw new MemoryPathError(requested, 'is not a memory file');
  let real: string;
  let realRoot: string;
  try {
    real = realpathSync(abs);
  } catch {
    throw new MemoryPathError(requested, 'does not exist');
  }
  try {
    realRoot = realpathSync(collection.dir);
  } catch {
    realRoot = collection.dir;
  }
  if (!isInside(realRoot, real))
    throw new MemoryPathError(requested, 'leads outside the memory files (through a symlink)');
  if (lstat(abs)?.isSymbolicLink())
    throw new MemoryPathError(requested, 'is a symlink; memory files are read only where they are');
  return { path: name, absPath: abs };
}
