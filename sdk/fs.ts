/**
 * File helpers only plugins use, beside the kernel's own (kernel/util/fs.ts: owner-only
 * modes, `writeFileAtomic`, `ensurePrivateDir`), with the same rules.
 */
import { closeSync, openSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ensurePrivateDir, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../kernel/index.js';

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
