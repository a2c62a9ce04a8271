/**
 * File helpers for everything under the state dir. Writes go to a temp file in the same
 * directory and are renamed over the target, so a crash leaves the old file or the new
 * one, never half of either.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync, existsSync, copyFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

export interface AtomicWriteOptions {
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

export function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true });
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(temp, 'w', options.mode ?? 0o600);
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
    if (options.backup && existsSync(file)) copyFileSync(file, `${file}.bak`);
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

export function writeJsonAtomic(file: string, value: unknown, options: AtomicWriteOptions = {}): void {
  writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, options);
}

/**
 * `writeFileAtomic` without blocking the event loop: for stores a server rewrites while
 * clients wait (same temp + fsync + rename, so a crash still leaves one whole file).
 */
export async function writeFileAtomicAsync(file: string, data: string | Uint8Array, options: Pick<AtomicWriteOptions, 'mode'> = {}): Promise<void> {
  const { mkdir, open, rename, rm } = await import('node:fs/promises');
  const dir = dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'w', options.mode ?? 0o600);
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
