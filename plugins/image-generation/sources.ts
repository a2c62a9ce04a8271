/**
 * Reference images for an edit: files in the workspace (relative paths resolve there) or in
 * the state dir's media folder (a photo someone sent). Judged by the real path, so `..`,
 * absolute paths and symlinks cannot lead out; checked again on the opened file, which must be
 * a regular file with one link, an image, and at most MAX_SOURCE_BYTES.
 */
import { open, realpath } from 'node:fs/promises';
import { basename, isAbsolute, relative, resolve } from 'node:path';
import { imageFormat } from '../../sdk/index.js';
import type { SourceImage } from './contract.js';

export const MAX_SOURCE_BYTES = 25 * 1024 * 1024;

export class SourceRefused extends Error {}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

async function realOr(path: string): Promise<string | undefined> {
  return realpath(path).catch(() => undefined);
}

export async function readSourceImage(given: string, workspace: string, mediaDir: string): Promise<SourceImage> {
  if (/^[a-z][a-z0-9+.-]*:/i.test(given))
    throw new SourceRefused(`image "${given}": give a file path in the workspace, not a URL`);
  const absolute = resolve(workspace, given.replace(/^~(?=\/|$)/, '\0'));
  if (absolute.includes('\0'))
    throw new SourceRefused(`image "${given}": give a path inside the workspace (${workspace})`);
  const real = await realOr(absolute);
  if (!real) throw new SourceRefused(`image "${given}" does not exist`);
  const roots = (await Promise.all([realOr(workspace), realOr(mediaDir)])).filter((root): root is string => !!root);
  if (!roots.some((root) => within(root, real)))
    throw new SourceRefused(
      `image "${given}" is outside the workspace (${workspace}); only workspace files can be edited`,
    );
  const handle = await open(real, 'r');
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new SourceRefused(`image "${given}" is not a regular file`);
    if (info.nlink > 1) throw new SourceRefused(`image "${given}" has more than one hard link; copy it first`);
    if (info.size > MAX_SOURCE_BYTES)
      throw new SourceRefused(`image "${given}" is larger than ${MAX_SOURCE_BYTES / 1024 / 1024} MB`);
    const data = await handle.readFile();
    const mimeType = imageFormat(data);
    if (!mimeType) throw new SourceRefused(`image "${given}" is not a PNG, JPEG, GIF or WebP image`);
    return { data, mimeType, fileName: basename(real) };
  } finally {
    await handle.close();
  }
}
