/**
 * OpenClaw's file-transfer node commands — dir.list, file.stat, file.fetch, file.write —
 * with its params and payloads, served only inside `nodeHost.fileTransfer.roots`. As in
 * OpenClaw, a refusal is a payload `{ok: false, code, message, canonicalPath?}` (the
 * gateway's tools read it), naming the path and the reason. Bytes travel as base64 up to
 * 16 MiB; file.write writes a temporary file beside the target and renames (or, when it must
 * not overwrite, hard-links) it into place, so a reader never sees half a file.
 */
import { createHash, randomUUID } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import { basename, dirname, extname, join, relative, sep } from 'node:path';
import type { NodeCommandContext, NodeCommandHandler } from './extra-command-types.js';
import {
  canonicalChange,
  existingBinding,
  failure,
  identity,
  openResolved,
  requestedPath,
  resolveInRoots,
  sameIdentity,
  type FileFailure,
  type Identity,
  type Resolved,
} from './file-transfer-paths.js';

export const FILE_TRANSFER_COMMANDS = ['dir.list', 'file.stat', 'file.fetch', 'file.write'] as const;

/** OpenClaw's limits: 8 MiB unless asked, 16 MiB at most, either way. */
export const FETCH_DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
export const TRANSFER_MAX_BYTES = 16 * 1024 * 1024;
const DIR_LIST_DEFAULT = 200;
const READ_CHUNK_BYTES = 1024 * 1024;
const DIR_LIST_MAX = 5000;

type Params = Record<string, unknown>;

function record(params: unknown): Params {
  return params && typeof params === 'object' && !Array.isArray(params) ? (params as Params) : {};
}

function roots(ctx: NodeCommandContext): string[] {
  return ctx.config.fileTransfer?.roots ?? [];
}

function errnoFailure(error: unknown, path: string, what: string): FileFailure {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return failure('NOT_FOUND', `${path}: not found`);
  if (code === 'EACCES' || code === 'EPERM') return failure('PERMISSION_DENIED', `${path}: permission denied`, path);
  return failure(what, `${path}: ${(error as Error).message}`, path);
}

const MIME_BY_EXTENSION: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.json': 'application/json',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.ts': 'text/typescript',
  '.html': 'text/html',
  '.css': 'text/css',
  '.csv': 'text/csv',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.mp4': 'video/mp4',
};

export function mimeFromName(name: string): string {
  return MIME_BY_EXTENSION[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

const MAGIC: Array<[number[], string]> = [
  [[0x89, 0x50, 0x4e, 0x47], 'image/png'],
  [[0xff, 0xd8, 0xff], 'image/jpeg'],
  [[0x47, 0x49, 0x46, 0x38], 'image/gif'],
  [[0x25, 0x50, 0x44, 0x46], 'application/pdf'],
  [[0x50, 0x4b, 0x03, 0x04], 'application/zip'],
  [[0x1f, 0x8b], 'application/gzip'],
];

/** The bytes decide first (a .txt that is a PNG is a PNG), then the name, then whether it reads as text. */
function detectMime(bytes: Buffer, name: string): string {
  const magic = MAGIC.find(([prefix]) => prefix.every((byte, index) => bytes[index] === byte));
  if (magic) return magic[1];
  const byName = mimeFromName(name);
  if (byName !== 'application/octet-stream') return byName;
  return looksLikeText(bytes) ? 'text/plain' : 'application/octet-stream';
}

function looksLikeText(bytes: Buffer): boolean {
  const sample = bytes.subarray(0, 8192);
  if (sample.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample);
  } catch {
    return false;
  }
  let control = 0;
  for (const byte of sample) if (byte < 32 && byte !== 9 && byte !== 10 && byte !== 13) control++;
  return sample.length === 0 || control / sample.length < 0.01;
}

/** The params every read command shares: the path, resolved inside the roots, checked against what the caller authorized. */
async function resolveForRead(
  params: Params,
  ctx: NodeCommandContext,
  finalDirectoryLink = false,
): Promise<Resolved | FileFailure> {
  const path = requestedPath(params.path);
  if (typeof path !== 'string') return path;
  const resolved = await resolveInRoots(path, roots(ctx), {
    followSymlinks: params.followSymlinks === true,
    finalDirectoryLink,
  });
  if (!resolved.ok) return resolved;
  return canonicalChange(params.expectedCanonicalPath, resolved.path) ?? resolved;
}

function bindingMismatch(params: Params, stats: { dev: bigint; ino: bigint }, path: string): FileFailure | undefined {
  const expected = existingBinding(params.expectedBinding);
  if (expected === undefined) return undefined;
  if (expected === 'invalid' || !sameIdentity(stats, expected))
    return failure('CANONICAL_PATH_CHANGED', `${path}: filesystem identity differs from the authorized target`, path);
  return undefined;
}

export async function dirList(input: unknown, ctx: NodeCommandContext): Promise<unknown> {
  const params = record(input);
  const resolved = await resolveForRead(params, ctx, true);
  if (!resolved.ok) return resolved;
  const kind = await fs.lstat(resolved.path).catch((error: unknown) => error as Error);
  if (kind instanceof Error) return errnoFailure(kind, resolved.path, 'READ_ERROR');
  if (!kind.isDirectory()) return failure('IS_FILE', `${resolved.path} is not a directory`, resolved.path);
  const opened = await openResolved(resolved, constants.O_RDONLY | constants.O_DIRECTORY);
  if (!opened.ok) return opened;
  try {
    const changed = bindingMismatch(params, opened.stats, resolved.path);
    if (changed) return changed;
    const binding = { kind: 'existing', ...identity(opened.stats) };
    if (params.preflightOnly === true)
      return { ok: true, path: resolved.path, entries: [], truncated: false, preflight: true, binding };
    const max =
      typeof params.maxEntries === 'number' && Number.isFinite(params.maxEntries) && params.maxEntries > 0
        ? Math.min(Math.floor(params.maxEntries), DIR_LIST_MAX)
        : DIR_LIST_DEFAULT;
    const offset =
      typeof params.pageToken === 'string' && /^\d+$/.test(params.pageToken) ? Number(params.pageToken) : 0;
    let names: string[];
    try {
      names = (await fs.readdir(resolved.path)).sort((a, b) => a.localeCompare(b));
    } catch (error) {
      return errnoFailure(error, resolved.path, 'READ_ERROR');
    }
    const entries = [];
    for (const name of names.slice(offset, offset + max)) {
      const path = join(resolved.path, name);
      // An entry removed while listing is simply not listed.
      const stats = await fs.lstat(path).catch(() => undefined);
      if (!stats) continue;
      const isDir = stats.isDirectory();
      entries.push({
        name,
        path,
        size: isDir ? 0 : stats.size,
        mimeType: isDir ? 'inode/directory' : mimeFromName(name),
        isDir,
        mtime: stats.mtimeMs,
      });
    }
    const truncated = offset + max < names.length;
    return {
      ok: true,
      path: resolved.path,
      entries,
      ...(truncated ? { nextPageToken: String(offset + max) } : {}),
      truncated,
      binding,
    };
  } finally {
    await opened.handle.close();
  }
}

export async function fileStat(input: unknown, ctx: NodeCommandContext): Promise<unknown> {
  const params = record(input);
  const resolved = await resolveForRead(params, ctx);
  if (!resolved.ok) return resolved;
  const kind = await fs.lstat(resolved.path).catch((error: unknown) => error as Error);
  if (kind instanceof Error) return errnoFailure(kind, resolved.path, 'READ_ERROR');
  if (!kind.isFile() && !kind.isDirectory())
    return failure('UNSUPPORTED_FILE_TYPE', `${resolved.path}: only regular files and directories`, resolved.path);
  const opened = await openResolved(resolved, constants.O_RDONLY | (kind.isDirectory() ? constants.O_DIRECTORY : 0));
  if (!opened.ok) return opened;
  try {
    const changed = bindingMismatch(params, opened.stats, resolved.path);
    if (changed) return changed;
    return {
      ok: true,
      path: resolved.path,
      type: opened.stats.isDirectory() ? 'directory' : 'file',
      size: Number(opened.stats.size),
      mtimeMs: Number(opened.stats.mtimeNs) / 1e6,
      binding: { kind: 'existing', ...identity(opened.stats) },
      ...(params.preflightOnly === true ? { preflightOnly: true } : {}),
    };
  } finally {
    await opened.handle.close();
  }
}

export async function fileFetch(input: unknown, ctx: NodeCommandContext): Promise<unknown> {
  const params = record(input);
  if (params.transport !== undefined)
    return failure(
      'INVALID_PARAMS',
      'file.fetch over a binary transport is not supported by this node; omit transport',
    );
  const maxBytes =
    typeof params.maxBytes === 'number' && Number.isFinite(params.maxBytes) && params.maxBytes > 0
      ? Math.min(Math.floor(params.maxBytes), TRANSFER_MAX_BYTES)
      : FETCH_DEFAULT_MAX_BYTES;
  const resolved = await resolveForRead(params, ctx);
  if (!resolved.ok) return resolved;
  if (params.rootPath !== undefined) {
    const rootPath = requestedPath(params.rootPath, 'rootPath');
    if (typeof rootPath !== 'string') return rootPath;
    const rootReal = await fs.realpath(rootPath).catch(() => undefined);
    const rel = rootReal === undefined ? '..' : relative(rootReal, resolved.path);
    if (rel === '..' || rel.startsWith(`..${sep}`) || rel.startsWith(sep))
      return failure('PATH_POLICY_DENIED', `${resolved.path} is outside rootPath ${rootPath}`, resolved.path);
  }
  const opened = await openResolved(resolved, constants.O_RDONLY);
  if (!opened.ok) return opened;
  const { handle, stats } = opened;
  try {
    if (stats.isDirectory()) return failure('IS_DIRECTORY', `${resolved.path} is a directory`, resolved.path);
    if (!stats.isFile())
      return failure('UNSUPPORTED_FILE_TYPE', `${resolved.path} is not a regular file`, resolved.path);
    const changed = bindingMismatch(params, stats, resolved.path);
    if (changed) return changed;
    const binding = { kind: 'existing', ...identity(stats) };
    if (stats.size > BigInt(maxBytes))
      return failure(
        'FILE_TOO_LARGE',
        `${resolved.path} is ${stats.size} bytes; the limit is ${maxBytes}`,
        resolved.path,
      );
    if (params.preflightOnly === true)
      return {
        ok: true,
        path: resolved.path,
        size: Number(stats.size),
        mimeType: '',
        base64: '',
        sha256: '',
        preflightOnly: true,
        binding,
      };
    // Read to the end, not to the size the stat gave: a file that grew past the limit since is refused, not cut short.
    const chunks: Buffer[] = [];
    let size = 0;
    for (;;) {
      ctx.signal.throwIfAborted();
      const chunk = Buffer.alloc(Math.min(READ_CHUNK_BYTES, maxBytes + 1 - size));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      size += bytesRead;
      if (size > maxBytes)
        return failure('FILE_TOO_LARGE', `${resolved.path} grew past the limit of ${maxBytes} bytes`, resolved.path);
    }
    const bytes = Buffer.concat(chunks, size);
    return {
      ok: true,
      path: resolved.path,
      size,
      mimeType: detectMime(bytes, resolved.path),
      base64: bytes.toString('base64'),
      sha256: createHash('sha256').update(bytes).digest('hex'),
      binding,
    };
  } finally {
    await handle.close();
  }
}

/** Strict base64 (standard or URL alphabet, padding optional): anything else would decode to different bytes silently. */
function decodeBase64(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text) || text.replace(/=+$/, '').length % 4 === 1) return undefined;
  return Buffer.from(text, 'base64');
}

interface WriteBinding {
  kind: 'write';
  anchorPath: string;
  anchorDevice: string;
  anchorInode: string;
  targetDevice?: string;
  targetInode?: string;
}

/** OpenClaw's write binding: the deepest existing directory (and the target, when it exists) the preflight saw. */
async function writeBinding(resolved: Resolved, target?: Identity): Promise<WriteBinding> {
  const anchorPath = resolved.missingParentsFrom ?? dirname(resolved.path);
  const anchor = identity(await fs.stat(anchorPath, { bigint: true }));
  return {
    kind: 'write',
    anchorPath,
    anchorDevice: anchor.device,
    anchorInode: anchor.inode,
    ...(target ? { targetDevice: target.device, targetInode: target.inode } : {}),
  };
}

function sameWriteBinding(expected: unknown, now: WriteBinding): boolean {
  const given = expected as Partial<WriteBinding> | null;
  return (
    !!given &&
    given.kind === 'write' &&
    given.anchorPath === now.anchorPath &&
    given.anchorDevice === now.anchorDevice &&
    given.anchorInode === now.anchorInode &&
    given.targetDevice === now.targetDevice &&
    given.targetInode === now.targetInode
  );
}

export async function fileWrite(input: unknown, ctx: NodeCommandContext): Promise<unknown> {
  const params = record(input);
  const path = requestedPath(params.path);
  if (typeof path !== 'string') return path;
  if (typeof params.contentBase64 !== 'string') return failure('INVALID_BASE64', 'contentBase64 is required');
  // 4 base64 characters carry 3 bytes: refuse an oversized upload before decoding it.
  if (Math.floor((params.contentBase64.length * 3) / 4) > TRANSFER_MAX_BYTES + 2)
    return failure('FILE_TOO_LARGE', `${path}: the content is over the ${TRANSFER_MAX_BYTES}-byte (16 MiB) limit`);
  const bytes = decodeBase64(params.contentBase64);
  if (!bytes) return failure('INVALID_BASE64', `${path}: contentBase64 is not valid base64`);
  if (bytes.length > TRANSFER_MAX_BYTES)
    return failure(
      'FILE_TOO_LARGE',
      `${path}: ${bytes.length} bytes is over the ${TRANSFER_MAX_BYTES}-byte (16 MiB) limit`,
    );
  const overwrite = params.overwrite === true;
  const resolved = await resolveInRoots(path, roots(ctx), {
    followSymlinks: params.followSymlinks === true,
    forWrite: { createParents: params.createParents === true },
  });
  if (!resolved.ok) return resolved;
  const changed = canonicalChange(params.expectedCanonicalPath, resolved.path);
  if (changed) return changed;

  let existing: Identity | undefined;
  let mode = 0o600;
  if (resolved.exists) {
    const stats = await fs.lstat(resolved.path, { bigint: true });
    if (stats.isDirectory()) return failure('IS_DIRECTORY', `${resolved.path} is a directory`, resolved.path);
    if (!stats.isFile())
      return failure('UNSUPPORTED_FILE_TYPE', `${resolved.path} is not a regular file`, resolved.path);
    if (!overwrite)
      return failure('EXISTS_NO_OVERWRITE', `${resolved.path} already exists and overwrite is false`, resolved.path);
    if (params.rejectHardlinks === true && stats.nlink > 1n)
      return failure(
        'HARDLINK_TARGET_DENIED',
        `${resolved.path} has other hard links; refusing to replace it`,
        resolved.path,
      );
    existing = identity(stats);
    // The replacement keeps the permissions the file had.
    mode = Number(stats.mode & 0o7777n);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (typeof params.expectedSha256 === 'string' && params.expectedSha256.toLowerCase() !== sha256)
    return failure(
      'INTEGRITY_FAILURE',
      `${resolved.path}: sha256 mismatch: expected ${params.expectedSha256.toLowerCase()}, got ${sha256}`,
      resolved.path,
    );
  const binding = await writeBinding(resolved, existing);
  if (params.preflightOnly === true)
    return { ok: true, path: resolved.path, size: bytes.length, sha256, overwritten: existing !== undefined, binding };
  if (params.expectedBinding !== undefined && !sameWriteBinding(params.expectedBinding, binding))
    return failure(
      'CANONICAL_PATH_CHANGED',
      `${resolved.path}: filesystem identity differs from the authorized target`,
      resolved.path,
    );

  ctx.signal.throwIfAborted();
  if (resolved.missingParentsFrom) {
    try {
      // Below a directory already checked to be real and inside the root: only plain directories are made.
      for (
        let dir = resolved.missingParentsFrom, rest = relative(dir, dirname(resolved.path)).split(sep);
        rest.length;
      ) {
        dir = join(dir, rest.shift()!);
        await fs.mkdir(dir, { mode: 0o700 });
      }
    } catch (error) {
      return errnoFailure(error, dirname(resolved.path), 'WRITE_ERROR');
    }
  }
  // A folder on the way swapped for a link since it was resolved would put the file somewhere else.
  const folder = await fs.realpath(dirname(resolved.path)).catch(() => undefined);
  if (folder !== dirname(resolved.path))
    return failure(
      'CANONICAL_PATH_CHANGED',
      `${dirname(resolved.path)} changed while writing ${resolved.path}`,
      folder,
    );
  const temp = join(dirname(resolved.path), `.${basename(resolved.path)}.${randomUUID()}.tmp`);
  try {
    const handle = await fs.open(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      mode,
    );
    try {
      await handle.writeFile(bytes);
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (existing) await fs.rename(temp, resolved.path);
    else {
      // link() never replaces: a file that appeared since the check stays, and the write is refused.
      await fs.link(temp, resolved.path);
      await fs.unlink(temp);
    }
  } catch (error) {
    await fs.unlink(temp).catch(() => undefined);
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      return failure('EXISTS_NO_OVERWRITE', `${resolved.path} already exists and overwrite is false`, resolved.path);
    return errnoFailure(error, resolved.path, 'WRITE_ERROR');
  }
  const directory = await fs.open(dirname(resolved.path), constants.O_RDONLY).catch(() => undefined);
  await directory?.sync().catch(() => undefined);
  await directory?.close();
  const written = await fs.stat(resolved.path, { bigint: true });
  return {
    ok: true,
    path: resolved.path,
    size: bytes.length,
    sha256,
    overwritten: existing !== undefined,
    binding: { kind: 'existing', ...identity(written) },
  };
}

export const fileTransferHandlers: Record<(typeof FILE_TRANSFER_COMMANDS)[number], NodeCommandHandler> = {
  'dir.list': dirList,
  'file.stat': fileStat,
  'file.fetch': fileFetch,
  'file.write': fileWrite,
};
