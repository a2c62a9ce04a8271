/**
 * What a plugin package may hold: regular files, directories, and links that stay inside
 * the package. `tar` keeps whatever an archive says — a symlink to /etc or ~/.ssh, a hard
 * link, a FIFO that blocks whoever reads it, a device node (as root) — and a copied folder
 * may hold the same; a plugin folder in the state dir must not reach outside itself.
 *
 * An archive is checked from its headers before anything is unpacked (gzip, then ustar with
 * pax and GNU long-name records); a folder, and what an archive unpacked to, is walked.
 * Every refusal names the entry.
 */
import { createReadStream, lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { isAbsolute, join, posix, relative } from 'node:path';
import { createGunzip } from 'node:zlib';
import { isInside } from '../../../kernel/util/paths.js';
import { PluginManageError } from './manage.js';

const BLOCK = 512;
/** Pax and GNU long-name records are a few hundred bytes; more is no honest archive. */
const MAX_META_BYTES = 1024 * 1024;

const KINDS: Record<string, string> = {
  '0': 'file',
  '\0': 'file',
  '7': 'file', // "contiguous file": a regular file to every tar that unpacks it
  '1': 'hard link',
  '2': 'symlink',
  '3': 'character device',
  '4': 'block device',
  '5': 'directory',
  '6': 'FIFO',
};

interface Entry {
  name: string;
  kind: string;
  link: string;
}

/** Refuses an archive holding anything but files, directories and links inside the package. */
export async function checkArchive(file: string): Promise<void> {
  const entries = await readEntries(file);
  const root = packageRoot(entries);
  for (const { name, kind, link } of entries) {
    if (kind === 'symlink' || kind === 'hard link') {
      // A symlink's target is relative to its folder; a hard link names another member.
      const target = kind === 'symlink' ? posix.join(posix.dirname(name), link) : link;
      if (posix.isAbsolute(link) || !insidePackage(root, target)) {
        throw refusal(`archive entry "${name}" is a ${kind} to "${link}", outside the package`);
      }
    } else if (kind !== 'file' && kind !== 'directory') {
      throw refusal(`archive entry "${name}" is a ${kind}`);
    }
  }
}

/**
 * Refuses a folder holding anything but files, directories and relative symlinks that
 * resolve inside it. `skip` names folders left out at any depth (they are not copied).
 */
export function checkTree(dir: string, skip: readonly string[] = []): void {
  const root = realpathSync.native(dir);
  const visit = (path: string): void => {
    const stat = lstatSync(path);
    const name = relative(root, path);
    if (stat.isSymbolicLink()) {
      const target = readlinkSync(path);
      // An absolute target points at where the package happens to be now (or anywhere else).
      if (isAbsolute(target) || !isInside(root, resolvedLink(path, target))) {
        throw refusal(`"${name}" is a symlink to "${target}", outside the plugin directory`);
      }
    } else if (stat.isDirectory()) {
      for (const child of readdirSync(path)) if (!skip.includes(child)) visit(join(path, child));
    } else if (!stat.isFile()) {
      const kind = stat.isFIFO()
        ? 'FIFO'
        : stat.isSocket()
          ? 'socket'
          : stat.isCharacterDevice()
            ? 'character device'
            : 'block device';
      throw refusal(`"${name}" is a ${kind}`);
    }
  };
  visit(root);
}

/**
 * Where a link leads, through any links on the way; a dangling one is judged by its own text.
 * The native realpath: Node's own folds "a/link/.." to "a" before following "link", which
 * the system does not (x/y/top/.. with top → ../.. is the folder above, not x/y).
 */
function resolvedLink(path: string, target: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return join(realpathSync.native(join(path, '..')), target);
  }
}

function refusal(what: string): PluginManageError {
  return new PluginManageError(`${what}; a plugin may hold only files, directories and links that stay inside it`);
}

/** `path` (an archive path) is `root` or below it; every path is below the root ''. */
function insidePackage(root: string, path: string): boolean {
  const normal = posix.normalize(path).replace(/\/+$/, '');
  if (normal === '..' || normal.startsWith('../')) return false;
  return root === '' || normal === root || normal.startsWith(`${root}/`);
}

/**
 * The folder the installer takes as the plugin (see fetchInto): the archive's one top-level
 * folder (npm pack's `package/`), else the whole archive ('').
 */
function packageRoot(entries: readonly Entry[]): string {
  // `tar -C dir .` writes a "./" member first; it is no top-level folder of its own.
  const tops = new Set(entries.filter((entry) => entry.name !== '.').map((entry) => entry.name.split('/')[0]!));
  const [top] = tops;
  const folder = entries.some(
    (entry) => entry.name.includes('/') || (entry.name === top && entry.kind === 'directory'),
  );
  return tops.size === 1 && folder ? top! : '';
}

/** Every member of a gzipped tar, pax and GNU long names applied; damaged or odd headers are refused. */
async function readEntries(file: string): Promise<Entry[]> {
  const entries: Entry[] = [];
  let next: Overrides = {};
  const source = createReadStream(file);
  const gunzip = createGunzip();
  source.on('error', (error) => gunzip.destroy(error));
  const tar = new TarStream(source.pipe(gunzip));
  try {
    for (;;) {
      const block = await tar.read(BLOCK);
      // The end-of-archive marker (or the end of the stream between members): tar reads no further.
      if (!block || block.every((byte) => byte === 0)) break;
      const header = parseHeader(block);
      // A pax "size" replaces the header's: tar skips that much data, and so must this reader.
      const size = next.size ?? header.size;
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      const raw = next.path ?? header.name;
      if (['x', 'g', 'L', 'K'].includes(header.type)) {
        if (size > MAX_META_BYTES) throw refusal(`archive entry "${raw}" has a ${size}-byte extended header`);
        const data = await tar.read(padded);
        if (!data) throw new Error('truncated tar archive');
        next = applyMeta(header.type, data.subarray(0, size), next);
        continue;
      }
      const kind = KINDS[header.type];
      if (!kind) throw refusal(`archive entry "${raw}" has tar entry type "${header.type}"`);
      if (posix.isAbsolute(raw) || raw.split('/').includes('..'))
        throw refusal(`archive entry "${raw}" names a path outside the package`);
      const name = posix.normalize(raw).replace(/\/+$/, '');
      // Only files carry data: a link or directory with data is read differently by different tars.
      if (kind !== 'file' && size !== 0)
        throw refusal(`archive entry "${name}" is a ${kind} with ${size} bytes of data`);
      entries.push({ name, kind, link: next.linkpath ?? header.link });
      await tar.skip(padded);
      next = {};
    }
  } catch (error) {
    if (error instanceof PluginManageError) throw error;
    throw new PluginManageError(`cannot read archive ${file}: ${(error as Error).message}`);
  } finally {
    gunzip.destroy();
    source.destroy();
  }
  return entries;
}

/** The unpacked stream: headers read whole, file data passed over a chunk at a time. */
class TarStream {
  private pending: Buffer = Buffer.alloc(0);
  private readonly chunks: AsyncIterator<Buffer>;

  constructor(stream: AsyncIterable<Buffer>) {
    this.chunks = stream[Symbol.asyncIterator]();
  }

  /** The next `length` bytes; undefined when the stream ends right here. */
  async read(length: number): Promise<Buffer | undefined> {
    while (this.pending.length < length) {
      const chunk = await this.chunks.next();
      if (chunk.done) {
        if (this.pending.length === 0) return undefined;
        throw new Error('truncated tar archive');
      }
      this.pending = this.pending.length === 0 ? chunk.value : Buffer.concat([this.pending, chunk.value]);
    }
    const out = this.pending.subarray(0, length);
    this.pending = this.pending.subarray(length);
    return out;
  }

  async skip(length: number): Promise<void> {
    for (let left = length; left > 0;) {
      if (this.pending.length === 0) {
        const chunk = await this.chunks.next();
        if (chunk.done) throw new Error('truncated tar archive');
        this.pending = chunk.value;
      }
      const step = Math.min(left, this.pending.length);
      this.pending = this.pending.subarray(step);
      left -= step;
    }
  }
}

/** What pax records or a GNU long name say about the next member. */
interface Overrides {
  path?: string;
  linkpath?: string;
  size?: number;
}

/** A pax record set (`<length> <key>=<value>\n` …) or a GNU long name. */
function applyMeta(type: string, data: Buffer, next: Overrides): Overrides {
  if (type === 'L') return { ...next, path: cString(data) };
  if (type === 'K') return { ...next, linkpath: cString(data) };
  const out = { ...next };
  for (let offset = 0; offset < data.length;) {
    const space = data.indexOf(0x20, offset);
    const length = Number(data.toString('latin1', offset, space));
    if (space === -1 || !Number.isInteger(length) || length <= space - offset || offset + length > data.length) {
      throw new Error('damaged pax header');
    }
    const record = data.toString('utf8', space + 1, offset + length - 1);
    const key = record.slice(0, record.indexOf('='));
    const value = record.slice(key.length + 1);
    offset += length;
    if (key !== 'path' && key !== 'linkpath' && key !== 'size') continue;
    // A global header would apply to every later member: no package needs one for these.
    if (type === 'g') throw refusal(`archive has a global pax "${key}" record`);
    if (key === 'size') {
      if (!/^\d+$/.test(value)) throw new Error(`damaged pax header (size "${value}")`);
      out.size = Number(value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function parseHeader(block: Buffer): { name: string; type: string; size: number; link: string } {
  const stored = number(block.subarray(148, 156));
  let sum = 0;
  for (let index = 0; index < BLOCK; index++) sum += index >= 148 && index < 156 ? 0x20 : block[index]!;
  if (stored !== sum) throw new Error('damaged tar header (checksum mismatch)');
  const posixUstar = block.subarray(257, 263).toString('latin1') === 'ustar\0';
  const prefix = posixUstar ? cString(block.subarray(345, 500)) : '';
  const name = cString(block.subarray(0, 100));
  return {
    name: prefix ? `${prefix}/${name}` : name,
    type: String.fromCharCode(block[156]!),
    size: number(block.subarray(124, 136)),
    link: cString(block.subarray(157, 257)),
  };
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString('utf8');
}

/** Octal ASCII, or GNU's base-256 (high bit set) for big values. */
function number(field: Buffer): number {
  if (field[0]! & 0x80) {
    let value = field[0]! & 0x7f;
    for (let index = 1; index < field.length; index++) value = value * 256 + field[index]!;
    return value;
  }
  const text = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .trim();
  if (!/^[0-7]*$/.test(text)) throw new Error('damaged tar header (bad number)');
  return text === '' ? 0 : parseInt(text, 8);
}
