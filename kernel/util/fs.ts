/**
 * File helpers for everything under the state dir. The state dir holds config with
 * secrets, transcripts, credentials and keys, so whatever claw creates there is owner-only:
 * directories 0700, files 0600, whatever the process umask says. Modes already on disk
 * are left alone (`claw security audit --fix` is how looser ones get tightened).
 *
 * Writes go to a temp file in the same directory and are renamed over the target, so a
 * crash leaves the old file or the new one, never half of either.
 */
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync, existsSync, copyFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/**
 * Create `dir` (and missing parents) as 0700. An existing directory keeps its mode: a
 * looser one is reported by the audit, not changed behind the user's back.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

export interface AtomicWriteOptions {
  /** Mode of the file (default 0600). */
  mode?: number;
  /** Keep the previous content as `<file>.bak` before replacing it. */
  backup?: boolean;
  /**
   * Flush the data to the disk before the rename (default true). The rename alone already
   * keeps the file whole if the process dies; the flush also covers power loss. Files
   * rewritten on every agent turn may skip it.
   */
  fsync?: boolean;
}

/** Write `file` atomically; missing parent directories are created 0700, the file 0600. */
export function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const dir = dirname(file);
  ensurePrivateDir(dir);
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const mode = options.mode ?? PRIVATE_FILE_MODE;
  const fd = openSync(temp, 'w', mode);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    if (options.fsync !== false) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    if (options.backup && existsSync(file)) {
      // A copy takes the original's mode, which may predate owner-only files.
      copyFileSync(file, `${file}.bak`);
      chmodSync(`${file}.bak`, PRIVATE_FILE_MODE);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

export function writeJsonAtomic(file: string, value: unknown, options: AtomicWriteOptions = {}): void {
  writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, options);
}
