/**
 * Keeping the file tools inside the workspace (`tools.fs.workspaceOnly`, and
 * `tools.exec.applyPatch.workspaceOnly` for apply_patch). Paths are judged by where they
 * really lead — `..`, absolute paths, `~`, symlinks anywhere along the way — and judged again
 * on the opened file descriptor, so a symlink swapped in between the check and the open is
 * caught. A regular file with more than one hard link may be the same inode as a file outside
 * the workspace, so it is refused for reading and writing.
 *
 * Always on, whatever the config: /proc (the gateway's own environment and memory) and files
 * that are not regular files or directories (devices, FIFOs, sockets) are refused.
 */
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';

/** Where a call may touch files; undefined when it is not contained. */
export interface Containment {
  /** The workspace as given (for messages). */
  workspace: string;
  /** Which setting contains the call, for the refusal text. */
  setting: string;
}

/** A path the tool must not touch; its message is written for the model. */
export class PathRefused extends Error {}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

const PROC_ROOTS = ['/proc'];

function isProc(path: string): boolean {
  return PROC_ROOTS.some((root) => path === root || path.startsWith(root + sep));
}

/**
 * Where `absolute` really leads: the real path of its deepest existing ancestor with the
 * missing rest appended (a missing component cannot be a link). `followLast` false leaves a
 * final symlink itself as the target (deleting a link removes the link).
 */
async function realTarget(absolute: string, followLast: boolean): Promise<string> {
  if (!followLast) return join(await realTarget(dirname(absolute), true), basename(absolute));
  let existing = absolute;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(await realpath(existing), ...rest);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A dangling symlink: where it points is what a write would create.
      if (
        code === 'ENOENT' &&
        (await lstat(existing).then(
          (info) => info.isSymbolicLink(),
          () => false,
        ))
      ) {
        const target = await readlink(existing);
        return realTarget(join(isAbsolute(target) ? '' : dirname(existing), target, ...rest), true);
      }
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      const parent = dirname(existing);
      if (parent === existing) return join(existing, ...rest);
      rest.unshift(basename(existing));
      existing = parent;
    }
  }
}

/** The workspace as the kernel sees it (it may not exist yet: judged by its deepest existing parent). */
function realRoot(workspace: string): Promise<string> {
  return realTarget(workspace, true);
}

function outside(display: string, real: string, containment: Containment): PathRefused {
  return new PathRefused(
    `Refused: ${display} resolves to ${real}, outside the workspace ${containment.workspace}. ` +
      `File tools may only touch files inside the workspace (${containment.setting} is on); use a path inside it.`,
  );
}

/**
 * The real path a tool should operate on, after checking it may: inside the workspace when
 * contained, never under /proc. `intent` "delete" does not follow a final symlink.
 */
export async function resolveChecked(
  absolute: string,
  display: string,
  containment: Containment | undefined,
  intent: 'read' | 'write' | 'delete',
): Promise<string> {
  const real = await realTarget(absolute, intent !== 'delete');
  if (isProc(real) || isProc(absolute))
    throw new PathRefused(
      `Refused: ${display} is under /proc; the file tools do not read or write process information.`,
    );
  if (containment && !within(await realRoot(containment.workspace), real)) throw outside(display, real, containment);
  if (containment && intent === 'write') {
    const info = await lstat(real).catch(() => undefined);
    if (info?.isFile() && info.nlink > 1) throw hardlinked(display, info.nlink, containment);
  }
  return real;
}

function hardlinked(display: string, links: number, containment: Containment): PathRefused {
  return new PathRefused(
    `Refused: ${display} has ${links} hard links, so it may be the same file as one outside the workspace; ` +
      `file tools do not read or write hard-linked files while ${containment.setting} is on.`,
  );
}

/** The real path of an open descriptor, as the kernel sees it now (Linux /proc/self/fd). */
async function descriptorPath(handle: FileHandle): Promise<string | undefined> {
  return readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
}

export interface OpenedFile {
  handle: FileHandle;
  real: string;
  size: number;
}

/**
 * Opens a file for reading after resolveChecked, without following a final symlink swapped in
 * since, and checks the descriptor itself: a regular file, inside the workspace, one link.
 * Directories come back as `directory` so the caller can word its own message.
 */
export async function openChecked(
  absolute: string,
  display: string,
  containment: Containment | undefined,
): Promise<OpenedFile | 'directory'> {
  const real = await resolveChecked(absolute, display, containment, 'read');
  // O_NONBLOCK: opening a FIFO must not hang the tool before fstat can refuse it.
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const checked = await checkDescriptor(handle, real, display, containment);
    if (checked === 'directory') await handle.close();
    return checked;
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/**
 * The check on what was actually opened (a parent swapped for a symlink after the path
 * check shows up here): a regular file, not under /proc, inside the workspace, one link.
 */
export async function checkDescriptor(
  handle: FileHandle,
  real: string,
  display: string,
  containment: Containment | undefined,
): Promise<OpenedFile | 'directory'> {
  const info = await handle.stat();
  if (info.isDirectory()) return 'directory';
  if (!info.isFile())
    throw new PathRefused(
      `Refused: ${display} is not a regular file (a device, FIFO or socket); the file tools only read regular files.`,
    );
  const opened = (await descriptorPath(handle)) ?? real;
  if (isProc(opened))
    throw new PathRefused(
      `Refused: ${display} is under /proc; the file tools do not read or write process information.`,
    );
  if (containment) {
    if (!within(await realRoot(containment.workspace), opened)) throw outside(display, opened, containment);
    if (info.nlink > 1) throw hardlinked(display, info.nlink, containment);
  }
  return { handle, real: opened, size: info.size };
}

/** Before a staged write is renamed into place: its directory must still lead inside the workspace. */
export async function recheckDirectory(
  dir: string,
  display: string,
  containment: Containment | undefined,
): Promise<void> {
  if (!containment) return;
  const real = await realpath(dir);
  if (!within(await realRoot(containment.workspace), real)) throw outside(display, real, containment);
}
