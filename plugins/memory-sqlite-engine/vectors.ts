/** Vectors as SQLite blobs: little-endian float32, the layout sqlite-vec reads. */

export function toBlob(vector: ArrayLike<number>): Buffer {
  const floats = vector instanceof Float32Array ? vector : Float32Array.from(vector as ArrayLike<number>);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}

/** A copy, because a blob's bytes need not be 4-byte aligned inside the Buffer pool. */
export function fromBlob(blob: Uint8Array): Float32Array {
  const out = new Float32Array(Math.floor(blob.byteLength / 4));
  new Uint8Array(out.buffer).set(blob.subarray(0, out.length * 4));
  return out;
}

export function isZeroVector(vector: ArrayLike<number>): boolean {
  for (let i = 0; i < vector.length; i++) if (vector[i] !== 0) return false;
  return true;
}
