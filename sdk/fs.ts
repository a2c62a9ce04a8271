/**
 * File helpers the kernel does not need, beside its own (kernel/util/fs.ts: owner-only
 * modes, `writeFileAtomic`, `ensurePrivateDir`), with the same rules.
 */
import { chmodSync, closeSync, lstatSync, openSync, readdirSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ensurePrivateDir, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../kernel/index.js';

/** Permission bits for the group and for others: none of them belong on state files. */
export const NON_OWNER_BITS = 0o077;

/**
 * The owner-only mode for an entry of mode `mode`: 0700 for a directory, 0600 for a file,
 * 0700 for a file its owner may execute (so an installed plugin's binaries keep working).
 */
export function privateModeOf(mode: number, isDirectory: boolean): number {
  if (isDirectory || mode & 0o100) return PRIVATE_DIR_MODE;
  return PRIVATE_FILE_MODE;
}

/**
 * Make a tree claw has just created owner-only (files copied or unpacked keep the modes
 * they came with). Symlinks are neither followed nor changed. Returns the paths changed.
 */
export function restrictTree(root: string): string[] {
  const changed: string[] = [];
  const visit = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    const wanted = privateModeOf(stat.mode, stat.isDirectory());
    if ((stat.mode & 0o777) !== wanted) {
      chmodSync(path, wanted);
      changed.push(path);
    }
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return changed;
}

/** Forward slashes, the form names take in results and tool output on every platform. */
export function toPosix(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}

/**
 * Create `file` empty and 0600 if it does not exist yet, so a library that opens it by name
 * (SQLite, which gives its journals the database file's mode) never creates it with the
 * umask's mode. An existing file is untouched.
 */
export function ensurePrivateFile(file: string): void {
  ensurePrivateDir(dirname(file));
  try {
    closeSync(openSync(file, 'wx', PRIVATE_FILE_MODE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * `writeFileAtomic` without blocking the event loop: for stores a server rewrites while
 * clients wait (same temp + fsync + rename, so a crash still leaves one whole file).
 */
export async function writeFileAtomicAsync(file: string, data: string | Uint8Array, options: { mode?: number } = {}): Promise<void> {
  const { mkdir, open, rename, rm } = await import('node:fs/promises');
  const dir = dirname(file);
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'w', options.mode ?? PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    await rename(temp, file);
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
}
