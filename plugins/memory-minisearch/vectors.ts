/**
 * Chunk embeddings, keyed by the hash of the chunk text, all made under one provider
 * fingerprint. The same store is what vector search scans (the vectors of live chunks)
 * and the embedding cache (vectors of text no longer indexed, kept so re-adding it costs
 * no provider call), capped by `cache.maxEntries`.
 *
 * On disk it is a sidecar next to the index, binary so vectors cost 4 bytes a value:
 *
 *   "CLAWVEC1" | u32 LE header length | header JSON { fingerprint, dims, hashes } |
 *   zero padding to a multiple of 4 | float32 LE values, hashes.length × dims
 */

const MAGIC = 'CLAWVEC1';

export class VectorFileError extends Error {}

export class VectorStore {
  /** Insertion order is recency: the oldest stale entries are evicted first. */
  private readonly entries = new Map<string, Float32Array>();
  private width: number | undefined;

  constructor(readonly fingerprint: string) {}

  get size(): number {
    return this.entries.size;
  }

  get dims(): number | undefined {
    return this.width;
  }

  has(hash: string): boolean {
    return this.entries.has(hash);
  }

  get(hash: string): Float32Array | undefined {
    return this.entries.get(hash);
  }

  /** Mark an entry as just used, so eviction takes older ones first. */
  touch(hash: string): void {
    const vector = this.entries.get(hash);
    if (!vector) return;
    this.entries.delete(hash);
    this.entries.set(hash, vector);
  }

  /**
   * Store one vector. Returns false (and stores nothing) when its length differs from the
   * vectors already stored: the caller decides whether to start over with `clear()`.
   */
  set(hash: string, vector: ArrayLike<number>): boolean {
    if (this.width !== undefined && this.entries.size > 0 && vector.length !== this.width) return false;
    this.width = vector.length;
    this.entries.delete(hash);
    this.entries.set(hash, Float32Array.from(vector));
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.width = undefined;
  }

  /** Keep every live vector; of the rest keep the most recent, up to `maxEntries` in all. */
  prune(live: ReadonlySet<string>, maxEntries: number): number {
    let stale = 0;
    for (const hash of this.entries.keys()) if (!live.has(hash)) stale++;
    let excess = Math.min(stale, Math.max(0, this.entries.size - Math.max(0, maxEntries)));
    const evicted = excess;
    for (const hash of [...this.entries.keys()]) {
      if (excess === 0) break;
      if (live.has(hash)) continue;
      this.entries.delete(hash);
      excess--;
    }
    return evicted;
  }

  encode(): Buffer {
    const hashes = [...this.entries.keys()];
    const dims = this.width ?? 0;
    const header = Buffer.from(JSON.stringify({ fingerprint: this.fingerprint, dims, hashes }), 'utf8');
    const dataStart = align4(MAGIC.length + 4 + header.length);
    const out = Buffer.alloc(dataStart + hashes.length * dims * 4);
    out.write(MAGIC, 0, 'latin1');
    out.writeUInt32LE(header.length, MAGIC.length);
    header.copy(out, MAGIC.length + 4);
    let offset = dataStart;
    for (const vector of this.entries.values()) {
      for (const value of vector) {
        out.writeFloatLE(value, offset);
        offset += 4;
      }
    }
    return out;
  }

  /** Throws VectorFileError, saying what is wrong, for anything but a whole, valid file. */
  static decode(data: Buffer): VectorStore {
    const headerStart = MAGIC.length + 4;
    if (data.length < headerStart || data.toString('latin1', 0, MAGIC.length) !== MAGIC)
      throw new VectorFileError('not a claw vector file (bad magic)');
    const headerLength = data.readUInt32LE(MAGIC.length);
    if (headerStart + headerLength > data.length) throw new VectorFileError('truncated header');
    let header: { fingerprint?: unknown; dims?: unknown; hashes?: unknown };
    try {
      header = JSON.parse(data.toString('utf8', headerStart, headerStart + headerLength));
    } catch (error) {
      throw new VectorFileError(`unreadable header: ${(error as Error).message}`);
    }
    const { fingerprint, dims, hashes } = header;
    if (typeof fingerprint !== 'string') throw new VectorFileError('header has no fingerprint');
    if (!Number.isInteger(dims) || (dims as number) < 0) throw new VectorFileError('header has no valid dims');
    if (!Array.isArray(hashes) || !hashes.every((hash) => typeof hash === 'string'))
      throw new VectorFileError('header has no valid hash list');
    const width = dims as number;
    const dataStart = align4(headerStart + headerLength);
    const expected = dataStart + hashes.length * width * 4;
    if (data.length !== expected)
      throw new VectorFileError(
        `expected ${expected} bytes for ${hashes.length} vectors of ${width} values, found ${data.length}`,
      );
    const store = new VectorStore(fingerprint);
    let offset = dataStart;
    for (const hash of hashes as string[]) {
      const vector = new Float32Array(width);
      for (let i = 0; i < width; i++, offset += 4) vector[i] = data.readFloatLE(offset);
      store.set(hash, vector);
    }
    return store;
  }
}

function align4(value: number): number {
  return Math.ceil(value / 4) * 4;
}
