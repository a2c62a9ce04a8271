/**
 * Just enough of the tar format (POSIX ustar, with pax records for long paths) for claw's
 * backup archives: regular files and directories. Any tar reads what this writes; this
 * reader reports every other entry type (links, devices, …) so restore can refuse it.
 */
import { once } from 'node:events';

const BLOCK = 512;

export type TarEntryType = 'file' | 'dir' | 'other';

export interface TarEntry {
  path: string;
  type: TarEntryType;
  /** The raw type flag ('2' symlink, '1' hard link, …) for messages about refused entries. */
  typeflag: string;
  mode: number;
  size: number;
  mtime: number;
  data: Buffer;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** Split a path into ustar's prefix (≤155 bytes) and name (≤100 bytes) at a "/", if it fits. */
function splitPath(path: string): { name: string; prefix: string } | undefined {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  for (let index = path.indexOf('/'); index !== -1; index = path.indexOf('/', index + 1)) {
    const prefix = path.slice(0, index);
    const name = path.slice(index + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name) return { name, prefix };
  }
  return undefined;
}

/** One 512-byte header block. `path` must fit ustar (see splitPath); longer ones go in a pax record first. */
export function tarHeader(
  path: string,
  options: { typeflag: string; size?: number; mode: number; mtime: number; linkname?: string },
): Buffer {
  const split = splitPath(path) ?? { name: path.slice(0, 100), prefix: '' };
  const header = Buffer.alloc(BLOCK);
  header.write(split.name, 0, 100, 'utf8');
  header.write(octal(options.mode & 0o7777, 8), 100, 'ascii');
  header.write(octal(0, 8), 108, 'ascii');
  header.write(octal(0, 8), 116, 'ascii');
  header.write(octal(options.size ?? 0, 12), 124, 'ascii');
  header.write(octal(Math.floor(options.mtime / 1000), 12), 136, 'ascii');
  header.write('        ', 148, 'ascii');
  header.write(options.typeflag, 156, 'ascii');
  if (options.linkname) header.write(options.linkname, 157, 100, 'utf8');
  header.write('ustar\0', 257, 'ascii');
  header.write('00', 263, 'ascii');
  header.write(split.prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return header;
}

function padding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** A pax extended header carrying `path` for the entry that follows. */
function paxPath(path: string, mtime: number): Buffer[] {
  const body = (length: number) => `${length} path=${path}\n`;
  let length = Buffer.byteLength(body(0));
  while (Buffer.byteLength(body(length)) !== length) length = Buffer.byteLength(body(length));
  const record = Buffer.from(body(length), 'utf8');
  return [
    tarHeader('PaxHeader', { typeflag: 'x', size: record.length, mode: 0o644, mtime }),
    record,
    padding(record.length),
  ];
}

/** Writes entries to a stream (a gzip stream, say), waiting for it to drain. */
export class TarWriter {
  constructor(private readonly out: NodeJS.WritableStream) {}

  private async write(chunks: Buffer[]): Promise<void> {
    for (const chunk of chunks) {
      if (chunk.length === 0) continue;
      if (!this.out.write(chunk)) await once(this.out, 'drain');
    }
  }

  private headers(path: string, options: Parameters<typeof tarHeader>[1]): Buffer[] {
    return splitPath(path) ? [tarHeader(path, options)] : [...paxPath(path, options.mtime), tarHeader(path, options)];
  }

  file(path: string, data: Buffer, mode: number, mtime: number): Promise<void> {
    return this.write([
      ...this.headers(path, { typeflag: '0', size: data.length, mode, mtime }),
      data,
      padding(data.length),
    ]);
  }

  dir(path: string, mode: number, mtime: number): Promise<void> {
    return this.write(this.headers(`${path}/`, { typeflag: '5', mode, mtime }));
  }

  /** The two zero blocks that end an archive. */
  end(): Promise<void> {
    return this.write([Buffer.alloc(BLOCK * 2)]);
  }
}

/** Reads exactly n bytes at a time from a stream of chunks. */
class ByteReader {
  private chunks: Buffer[] = [];
  private length = 0;
  private readonly iterator: AsyncIterator<Buffer>;

  constructor(input: AsyncIterable<Buffer>) {
    this.iterator = input[Symbol.asyncIterator]();
  }

  /** n bytes, or undefined when the stream ends first. */
  async take(n: number): Promise<Buffer | undefined> {
    while (this.length < n) {
      const next = await this.iterator.next();
      if (next.done) return undefined;
      this.chunks.push(next.value);
      this.length += next.value.length;
    }
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
    const out = Buffer.from(all.subarray(0, n));
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.length = rest.length;
    return out;
  }
}

export class TarFormatError extends Error {}

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
}

function number(header: Buffer, start: number, length: number, what: string): number {
  const text = field(header, start, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarFormatError(`a tar header has a malformed ${what} field`);
  return parseInt(text, 8);
}

/** The entries of a tar stream, in order; a damaged header or a cut-off archive is a TarFormatError. */
export async function* readTar(input: AsyncIterable<Buffer>): AsyncGenerator<TarEntry> {
  const reader = new ByteReader(input);
  let paxPathOverride: string | undefined;
  for (;;) {
    const header = await reader.take(BLOCK);
    if (!header) throw new TarFormatError('the archive ends without its end marker (cut off?)');
    if (header.every((byte) => byte === 0)) return;
    const stored = number(header, 148, 8, 'checksum');
    let sum = 0;
    for (let index = 0; index < BLOCK; index++) sum += index >= 148 && index < 156 ? 0x20 : header[index]!;
    if (sum !== stored) throw new TarFormatError('a tar header is damaged (its checksum does not match)');
    const size = number(header, 124, 12, 'size');
    const data = size > 0 ? await reader.take(size) : Buffer.alloc(0);
    if (!data) throw new TarFormatError('the archive is cut off inside an entry');
    if (size % BLOCK !== 0 && !(await reader.take(BLOCK - (size % BLOCK))))
      throw new TarFormatError('the archive is cut off inside an entry');
    const typeflag = field(header, 156, 1) || '0';
    if (typeflag === 'x') {
      paxPathOverride = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'))?.[1];
      continue;
    }
    const name = field(header, 0, 100);
    const prefix = field(header, 257, 6) === 'ustar' ? field(header, 345, 155) : '';
    const path = paxPathOverride ?? (prefix ? `${prefix}/${name}` : name);
    paxPathOverride = undefined;
    yield {
      path,
      type: typeflag === '0' ? 'file' : typeflag === '5' ? 'dir' : 'other',
      typeflag,
      mode: number(header, 100, 8, 'mode'),
      size,
      mtime: number(header, 136, 12, 'mtime') * 1000,
      data,
    };
  }
}
