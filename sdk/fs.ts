/**
 * File helpers for everything under the state dir. The state dir holds config with
 * secrets, transcripts, credentials and keys, so whatever claw creates there is owner-only:
 * directories 0700, files 0600, whatever the process umask says. Modes already on disk
 * are left alone (`claw security audit --fix` is how looser ones get tightened) — except
 * the state dir itself, which the gateway and the CLI tighten (tightenStateDir) because
 * a loose root exposes everything below it at once.
 *
 * Writes go to a temp file in the same directory and are renamed over the target, so a
 * crash leaves the old file or the new one, never half of either. (The kernel writes no
 * files: these are for the SDK, plugins and the CLI, openclaw.json included.)
 */
import { chmodSync, closeSync, constants, copyFileSync, existsSync, fsyncSync, mkdirSync } from 'node:fs';
import { openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
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

/**
 * Make an existing state dir 0700 when group or others have any access to it (a folder made
 * by hand, an older version, a restored backup). Returns the mode it had, for the caller to
 * log, or undefined when nothing changed. Left alone: a missing dir (it is created 0700), one
 * owned by another user (not ours to change, even as root; the audit reports it), and a sticky dir such as
 * /tmp, which OPENCLAW_STATE_DIR may name by mistake and which other users must keep.
 */
export function tightenStateDir(dir: string): number | undefined {
  let stat;
  try {
    stat = statSync(dir); // through a symlink: its target holds the files
  } catch {
    return undefined;
  }
  const mode = stat.mode & 0o7777;
  if (!stat.isDirectory() || (mode & 0o077) === 0 || (mode & 0o1000) !== 0) return undefined;
  if (process.getuid && stat.uid !== process.getuid()) return undefined;
  try {
    chmodSync(dir, PRIVATE_DIR_MODE);
  } catch {
    return undefined; // a read-only mount, say: nothing to gain by failing the start; the audit reports it
  }
  return mode;
}

/** The line logged when tightenStateDir changed something. */
export function stateDirTightenedMessage(dir: string, was: number): string {
  const what = (was & 0o022) !== 0 ? 'other users could change what is in it' : 'other users could read what is in it';
  return `state dir ${dir} was ${(was & 0o777).toString(8).padStart(4, '0')} (${what}): tightened to 0700`;
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

/**
 * Copies a state file that cannot be read (damaged JSON, say) to `<file>.corrupt-<ms since the epoch>`, owner-only,
 * before the caller replaces or removes it, and returns the copy's path. A copy rather than a rename: the file
 * stays in place until the caller writes its replacement whole, so no reader ever finds it missing. An earlier
 * copy is never overwritten (the copy is exclusive; a taken name gets a `-<n>` suffix).
 */
export function keepCorruptCopy(file: string, now: number = Date.now()): string {
  for (let attempt = 0; ; attempt++) {
    const copy = `${file}.corrupt-${now}${attempt === 0 ? '' : `-${attempt}`}`;
    try {
      copyFileSync(file, copy, constants.COPYFILE_EXCL);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    // A copy takes the original's mode, which may be looser (a file edited by hand).
    chmodSync(copy, PRIVATE_FILE_MODE);
    return copy;
  }
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
export async function writeFileAtomicAsync(
  file: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
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
