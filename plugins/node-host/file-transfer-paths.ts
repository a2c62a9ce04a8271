/**
 * Where a file-transfer command may reach on the node: only inside the roots configured in
 * `nodeHost.fileTransfer.roots`. A requested path is walked one component at a time from
 * the root's real path, so a `..`, a symlink leading out, or a symlink at the end (the file
 * itself) is refused before anything is opened; what is opened is checked again after the
 * open, so a component swapped for a link in between is caught too.
 */
import { constants, promises as fs, type BigIntStats } from 'node:fs';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { isInside } from '../../sdk/index.js';

/** OpenClaw's file-transfer result when a command is refused: part of the payload, not an invoke error. */
export interface FileFailure {
  ok: false;
  code: string;
  message: string;
  canonicalPath?: string;
}

export interface Identity {
  device: string;
  inode: string;
}

export function failure(code: string, message: string, canonicalPath?: string): FileFailure {
  return { ok: false, code, message, ...(canonicalPath ? { canonicalPath } : {}) };
}

export function identity(stats: Pick<BigIntStats, 'dev' | 'ino'>): Identity {
  return { device: String(stats.dev), inode: String(stats.ino) };
}

export function sameIdentity(stats: Pick<BigIntStats, 'dev' | 'ino'>, expected: Identity): boolean {
  return String(stats.dev) === expected.device && String(stats.ino) === expected.inode;
}

interface Root {
  configured: string;
  real?: string;
  error?: string;
}

async function realRoots(configured: string[]): Promise<Root[]> {
  return Promise.all(
    configured.map(async (root) => {
      if (!isAbsolute(root)) return { configured: root, error: 'not an absolute path' };
      try {
        return { configured: normalize(root), real: await fs.realpath(root) };
      } catch (error) {
        return { configured: normalize(root), error: (error as NodeJS.ErrnoException).code ?? String(error) };
      }
    }),
  );
}

/** A path given to a command: absolute, no NUL, no `..` (a caller that needs one is asking for a different path). */
export function requestedPath(input: unknown, what = 'path'): string | FileFailure {
  if (typeof input !== 'string' || input.length === 0) return failure('INVALID_PATH', `${what} is required`);
  if (input.includes('\0')) return failure('INVALID_PATH', `${what} contains a NUL byte`);
  if (!isAbsolute(input)) return failure('INVALID_PATH', `${what} must be absolute: ${input}`);
  if (input.split(/[/\\]/).includes('..')) return failure('INVALID_PATH', `${what} must not contain "..": ${input}`);
  return normalize(input).replace(/(.)[/\\]+$/, '$1');
}

export interface Resolved {
  ok: true;
  /** The canonical path (every component real, inside a root). */
  path: string;
  /** The canonical root it is inside. */
  root: string;
  /** false: the last component does not exist yet (a write). */
  exists: boolean;
  /** For a write whose parent directories are missing: the deepest existing one (canonical); the rest is created under it. */
  missingParentsFrom?: string;
}

export interface ResolveOptions {
  /** Follow symlinks in the middle of the path (never at its end) when they stay inside a root. */
  followSymlinks: boolean;
  /** A write: the last component (and, with createParents, its parents) may not exist yet. */
  forWrite?: { createParents: boolean };
  /** dir.list may follow a symlink at the end to a directory inside a root. */
  finalDirectoryLink?: boolean;
}

const SYMLINK_HINT = 'pass followSymlinks: true to follow links that stay inside the roots';

/** Resolve `path` inside the configured roots, or say which rule refused it. */
export async function resolveInRoots(
  path: string,
  configuredRoots: string[],
  options: ResolveOptions,
): Promise<Resolved | FileFailure> {
  const roots = await realRoots(configuredRoots);
  const usable = roots.filter((root): root is Root & { real: string } => root.real !== undefined);
  // The longest root that holds the path, by its configured spelling or its real one.
  let base: { start: string; root: string } | undefined;
  for (const root of roots) {
    for (const spelling of root.real ? [root.configured, root.real] : [root.configured]) {
      if (!isInside(spelling, path) || (base && spelling.length <= base.start.length)) continue;
      if (!root.real)
        return failure('ROOT_UNAVAILABLE', `file transfer root ${root.configured} cannot be used (${root.error})`);
      base = { start: spelling, root: root.real };
    }
  }
  if (!base)
    return failure(
      'PATH_POLICY_DENIED',
      `${path} is outside this node's file transfer roots (nodeHost.fileTransfer.roots: ${roots.map((root) => root.configured).join(', ')})`,
    );
  const inAnyRoot = (candidate: string) => usable.find((root) => isInside(root.real, candidate))?.real;
  const parts = relative(base.start, path).split(sep).filter(Boolean);
  let current = base.root;
  let root = base.root;
  for (let index = 0; index < parts.length; index++) {
    const last = index === parts.length - 1;
    const next = join(current, parts[index]!);
    let stats;
    try {
      stats = await fs.lstat(next);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && options.forWrite) {
        if (last) return { ok: true, path: next, root, exists: false };
        if (!options.forWrite.createParents)
          return failure(
            'PARENT_NOT_FOUND',
            `parent directory does not exist: ${join(current, ...parts.slice(index, -1))}`,
          );
        return {
          ok: true,
          path: join(next, ...parts.slice(index + 1)),
          root,
          exists: false,
          missingParentsFrom: current,
        };
      }
      if (code === 'ENOENT' || code === 'ENOTDIR') return failure('NOT_FOUND', `${path}: not found`);
      if (code === 'EACCES' || code === 'EPERM')
        return failure('PERMISSION_DENIED', `${path}: permission denied (${next})`);
      return failure('READ_ERROR', `${path}: ${(error as Error).message}`);
    }
    if (stats.isSymbolicLink()) {
      if (last && !options.finalDirectoryLink)
        return failure(
          options.forWrite ? 'SYMLINK_TARGET_DENIED' : 'SYMLINK_REDIRECT',
          `${path} is a symlink; file transfer refuses to ${options.forWrite ? 'write' : 'read'} through a link at the end of a path`,
          next,
        );
      if (!options.followSymlinks)
        return failure('SYMLINK_REDIRECT', `${path} goes through a symlink (${next}); ${SYMLINK_HINT}`, next);
      let target: string;
      try {
        target = await fs.realpath(next);
      } catch {
        return failure('NOT_FOUND', `${path}: the symlink ${next} leads nowhere`);
      }
      const targetRoot = inAnyRoot(target);
      if (!targetRoot)
        return failure(
          'PATH_POLICY_DENIED',
          `${path}: the symlink ${next} leads outside the file transfer roots`,
          target,
        );
      if (last && !(await fs.stat(target)).isDirectory())
        return failure('SYMLINK_REDIRECT', `${path} is a symlink to a file; only directory links are followed`, target);
      current = target;
      root = targetRoot;
      continue;
    }
    if (!last && !stats.isDirectory()) return failure('NOT_FOUND', `${path}: ${next} is not a directory`);
    current = next;
  }
  return { ok: true, path: current, root, exists: true };
}

export interface Opened {
  ok: true;
  handle: fs.FileHandle;
  stats: BigIntStats;
}

/**
 * Open a resolved path without following a link at its end, then make sure what was opened
 * is still the file the real path names inside the root (an intermediate directory replaced
 * by a link after resolving would show up here).
 */
export async function openResolved(resolved: Resolved, flags: number): Promise<Opened | FileFailure> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(resolved.path, flags | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return failure('SYMLINK_REDIRECT', `${resolved.path} became a symlink`, resolved.path);
    if (code === 'ENOENT') return failure('NOT_FOUND', `${resolved.path}: not found`);
    if (code === 'EACCES' || code === 'EPERM')
      return failure('PERMISSION_DENIED', `${resolved.path}: permission denied`, resolved.path);
    if (code === 'EISDIR') return failure('IS_DIRECTORY', `${resolved.path} is a directory`, resolved.path);
    return failure('READ_ERROR', `${resolved.path}: ${(error as Error).message}`, resolved.path);
  }
  try {
    const stats = await handle.stat({ bigint: true });
    const real = await fs.realpath(resolved.path);
    const named = await fs.stat(real, { bigint: true });
    if (real !== resolved.path || !isInside(resolved.root, real) || !sameIdentity(named, identity(stats))) {
      await handle.close();
      return failure('CANONICAL_PATH_CHANGED', `${resolved.path} changed while it was being opened`, real);
    }
    return { ok: true, handle, stats };
  } catch (error) {
    await handle.close().catch(() => undefined);
    return failure('READ_ERROR', `${resolved.path}: ${(error as Error).message}`, resolved.path);
  }
}

/** OpenClaw's expectedCanonicalPath: the caller authorized this exact path; anything else is a change. */
export function canonicalChange(expected: unknown, actual: string): FileFailure | undefined {
  if (typeof expected !== 'string' || expected === actual) return undefined;
  return failure('CANONICAL_PATH_CHANGED', `canonical path ${actual} differs from the authorized ${expected}`, actual);
}

/** OpenClaw's expectedBinding {kind:"existing", device, inode}: the caller authorized this exact file. */
export function existingBinding(input: unknown): Identity | undefined | 'invalid' {
  if (input === undefined) return undefined;
  const record = input as Record<string, unknown> | null;
  if (!record || record.kind !== 'existing' || typeof record.device !== 'string' || typeof record.inode !== 'string')
    return 'invalid';
  return { device: record.device, inode: record.inode };
}
