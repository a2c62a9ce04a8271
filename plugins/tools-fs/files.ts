/** Path resolution, content sniffing and atomic writes shared by the file tools. */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

/** Relative paths are taken from the workspace; `~` keeps its home-directory meaning. */
export function resolvePath(input: string, workspaceDir: string): string {
  if (input === '~') return homedir();
  if (input.startsWith('~/')) return resolve(homedir(), input.slice(2));
  return isAbsolute(input) ? resolve(input) : resolve(workspaceDir, input);
}

const SNIFF_BYTES = 8192;

/**
 * True for content that is not worth showing as text: a NUL byte, or mostly control
 * characters and invalid UTF-8 in the first few KB. Judged on a sample so huge files
 * cost nothing extra.
 */
export function looksBinary(data: Uint8Array): boolean {
  const sample = data.subarray(0, SNIFF_BYTES);
  if (sample.includes(0)) return true;
  if (sample.length === 0) return false;
  const text = new TextDecoder('utf-8', { fatal: false }).decode(sample, { stream: true });
  let suspicious = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (
      code === 0xfffd ||
      (code < 0x20 && code !== 9 && code !== 10 && code !== 13 && code !== 12 && code !== 8 && code !== 27)
    ) {
      suspicious++;
    }
  }
  return suspicious / text.length > 0.1;
}

export type ImageMime = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** The image type the leading bytes announce, if any. */
export function sniffImage(data: Uint8Array): ImageMime | undefined {
  const ascii = (start: number, end: number) => String.fromCharCode(...data.subarray(start, end));
  if (data.length >= 8 && data[0] === 0x89 && ascii(1, 4) === 'PNG' && data[4] === 0x0d && data[5] === 0x0a)
    return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= 6 && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')) return 'image/gif';
  if (data.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

const IMAGE_EXTENSIONS: Record<string, ImageMime> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

export function imageMimeForName(path: string): ImageMime | undefined {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? undefined : IMAGE_EXTENSIONS[path.slice(dot).toLowerCase()];
}

/** A file written to a temporary sibling, waiting to be renamed over its target. */
export interface StagedWrite {
  readonly target: string;
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * Writes `data` next to `target` without touching it yet. The temporary file lives in the
 * same directory so the final rename is atomic; a symlinked target is written through (the
 * link stays a link) and an existing file keeps its permissions. `recheck` runs on the
 * directory again right before the rename (containment: it must not have been swapped).
 */
export async function stageWrite(
  target: string,
  data: string | Uint8Array,
  recheck?: (dir: string) => Promise<void>,
): Promise<StagedWrite> {
  const createdDir = await mkdir(dirname(target), { recursive: true });
  const real = await realpath(target).catch(() => target);
  const mode = await stat(real).then(
    (info) => info.mode & 0o7777,
    () => undefined,
  );
  const temp = join(dirname(real), `.${basename(real)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const discard = async () => {
    await rm(temp, { force: true });
    if (createdDir) await rm(createdDir, { recursive: true, force: true });
  };
  try {
    // "wx": a fresh file, never through something already sitting at the temporary name.
    await writeFile(temp, data, { flag: 'wx' });
    if (mode !== undefined) await chmod(temp, mode);
  } catch (error) {
    await discard();
    throw error;
  }
  const commit = async () => {
    await recheck?.(dirname(real));
    await rename(temp, real);
  };
  return { target: real, commit, discard };
}

export async function atomicWrite(
  target: string,
  data: string | Uint8Array,
  recheck?: (dir: string) => Promise<void>,
): Promise<void> {
  const staged = await stageWrite(target, data, recheck);
  try {
    await staged.commit();
  } catch (error) {
    await staged.discard();
    throw error;
  }
}

/** A filesystem error in words the model can act on. */
export function describeFsError(error: unknown, path: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return `${path}: no such file or directory`;
    case 'EISDIR':
      return `${path} is a directory`;
    case 'ENOTDIR':
      return `${path}: a parent of this path is not a directory`;
    case 'EACCES':
    case 'EPERM':
      return `${path}: permission denied`;
    case 'ELOOP':
      return `${path}: a symbolic link appeared where the checked file was; refused`;
    default:
      return `${path}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

export function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
