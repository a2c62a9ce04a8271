/**
 * A QR code encoder (ISO/IEC 18004: byte mode, error correction level L, versions 1-40,
 * best of the eight masks) and two renderers: text for a terminal and an SVG data: URL for
 * the web UI. Small on purpose: it exists so a channel login (WhatsApp's linking QR) can be
 * shown without a QR package, which claw does not ship.
 */

// Per version (index = version), error correction level L.
const ECC_PER_BLOCK_L = [-1, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28, 28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30];
const BLOCKS_L = [-1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8, 8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25];
/** Format-information bits of level L. */
const ECL_FORMAT_BITS_L = 1;

export interface QrCode {
  version: number;
  size: number;
  /** `modules[y][x]`: true is dark. */
  modules: boolean[][];
}

const bit = (value: number, index: number) => ((value >>> index) & 1) !== 0;

function rawDataModules(version: number): number {
  let result = (16 * version + 128) * version + 64;
  if (version >= 2) {
    const align = Math.floor(version / 7) + 2;
    result -= (25 * align - 10) * align - 55;
    if (version >= 7) result -= 36;
  }
  return result;
}

const dataCodewords = (version: number) => Math.floor(rawDataModules(version) / 8) - ECC_PER_BLOCK_L[version]! * BLOCKS_L[version]!;

function gfMultiply(x: number, y: number): number {
  let z = 0;
  for (let i = 7; i >= 0; i--) {
    z = (z << 1) ^ ((z >>> 7) * 0x11d);
    z ^= ((y >>> i) & 1) * x;
  }
  return z & 0xff;
}

function rsDivisor(degree: number): number[] {
  const result = new Array<number>(degree).fill(0);
  result[degree - 1] = 1;
  let root = 1;
  for (let i = 0; i < degree; i++) {
    for (let j = 0; j < result.length; j++) {
      result[j] = gfMultiply(result[j]!, root);
      if (j + 1 < result.length) result[j]! ^= result[j + 1]!;
    }
    root = gfMultiply(root, 0x02);
  }
  return result;
}

function rsRemainder(data: readonly number[], divisor: readonly number[]): number[] {
  const result = divisor.map(() => 0);
  for (const byte of data) {
    const factor = byte ^ result.shift()!;
    result.push(0);
    divisor.forEach((coefficient, i) => (result[i]! ^= gfMultiply(coefficient, factor)));
  }
  return result;
}

function alignmentPositions(version: number, size: number): number[] {
  if (version === 1) return [];
  const count = Math.floor(version / 7) + 2;
  const step = version === 32 ? 26 : Math.ceil((version * 4 + 4) / (count * 2 - 2)) * 2;
  const result = [6];
  for (let position = size - 7; result.length < count; position -= step) result.splice(1, 0, position);
  return result;
}

/** Data bytes → all codewords, blocks interleaved, error correction appended. */
function codewords(data: Uint8Array, version: number): number[] {
  const countBits = version <= 9 ? 8 : 16;
  const bits: number[] = [];
  const push = (value: number, length: number) => {
    for (let i = length - 1; i >= 0; i--) bits.push((value >>> i) & 1);
  };
  push(0b0100, 4);
  push(data.length, countBits);
  for (const byte of data) push(byte, 8);
  const capacity = dataCodewords(version) * 8;
  push(0, Math.min(4, capacity - bits.length));
  push(0, (8 - (bits.length % 8)) % 8);
  for (let pad = 0xec; bits.length < capacity; pad ^= 0xec ^ 0x11) push(pad, 8);
  const bytes: number[] = [];
  for (let i = 0; i < bits.length; i += 8) bytes.push(bits.slice(i, i + 8).reduce((acc, b) => (acc << 1) | b, 0));

  const blocks = BLOCKS_L[version]!;
  const eccLength = ECC_PER_BLOCK_L[version]!;
  const raw = Math.floor(rawDataModules(version) / 8);
  const shortBlocks = blocks - (raw % blocks);
  const shortLength = Math.floor(raw / blocks);
  const divisor = rsDivisor(eccLength);
  const all: number[][] = [];
  for (let i = 0, k = 0; i < blocks; i++) {
    const block = bytes.slice(k, k + shortLength - eccLength + (i < shortBlocks ? 0 : 1));
    k += block.length;
    const ecc = rsRemainder(block, divisor);
    if (i < shortBlocks) block.push(0);
    all.push([...block, ...ecc]);
  }
  const result: number[] = [];
  for (let i = 0; i < all[0]!.length; i++) {
    all.forEach((block, j) => {
      if (i !== shortLength - eccLength || j >= shortBlocks) result.push(block[i]!);
    });
  }
  return result;
}

class Matrix {
  readonly modules: boolean[][];
  readonly reserved: boolean[][];
  constructor(readonly size: number) {
    this.modules = Array.from({ length: size }, () => new Array<boolean>(size).fill(false));
    this.reserved = Array.from({ length: size }, () => new Array<boolean>(size).fill(false));
  }
  fn(x: number, y: number, dark: boolean): void {
    this.modules[y]![x] = dark;
    this.reserved[y]![x] = true;
  }
}

function drawFunctionPatterns(matrix: Matrix, version: number): void {
  const size = matrix.size;
  for (let i = 0; i < size; i++) {
    matrix.fn(6, i, i % 2 === 0);
    matrix.fn(i, 6, i % 2 === 0);
  }
  for (const [cx, cy] of [[3, 3], [size - 4, 3], [3, size - 4]] as const) {
    for (let dy = -4; dy <= 4; dy++) {
      for (let dx = -4; dx <= 4; dx++) {
        const distance = Math.max(Math.abs(dx), Math.abs(dy));
        const x = cx + dx;
        const y = cy + dy;
        if (x >= 0 && x < size && y >= 0 && y < size) matrix.fn(x, y, distance !== 2 && distance !== 4);
      }
    }
  }
  const positions = alignmentPositions(version, size);
  const last = positions.length - 1;
  positions.forEach((cx, i) =>
    positions.forEach((cy, j) => {
      // Not where a finder pattern sits.
      if ((i === 0 && j === 0) || (i === 0 && j === last) || (i === last && j === 0)) return;
      for (let dy = -2; dy <= 2; dy++) for (let dx = -2; dx <= 2; dx++) matrix.fn(cx + dx, cy + dy, Math.max(Math.abs(dx), Math.abs(dy)) !== 1);
    }),
  );
  drawFormatBits(matrix, 0);
  if (version >= 7) {
    let remainder = version;
    for (let i = 0; i < 12; i++) remainder = (remainder << 1) ^ ((remainder >>> 11) * 0x1f25);
    const bits = (version << 12) | remainder;
    for (let i = 0; i < 18; i++) {
      const a = size - 11 + (i % 3);
      const b = Math.floor(i / 3);
      matrix.fn(a, b, bit(bits, i));
      matrix.fn(b, a, bit(bits, i));
    }
  }
}

function drawFormatBits(matrix: Matrix, mask: number): void {
  const data = (ECL_FORMAT_BITS_L << 3) | mask;
  let remainder = data;
  for (let i = 0; i < 10; i++) remainder = (remainder << 1) ^ ((remainder >>> 9) * 0x537);
  const bits = ((data << 10) | remainder) ^ 0x5412;
  const size = matrix.size;
  for (let i = 0; i <= 5; i++) matrix.fn(8, i, bit(bits, i));
  matrix.fn(8, 7, bit(bits, 6));
  matrix.fn(8, 8, bit(bits, 7));
  matrix.fn(7, 8, bit(bits, 8));
  for (let i = 9; i < 15; i++) matrix.fn(14 - i, 8, bit(bits, i));
  for (let i = 0; i < 8; i++) matrix.fn(size - 1 - i, 8, bit(bits, i));
  for (let i = 8; i < 15; i++) matrix.fn(8, size - 15 + i, bit(bits, i));
  matrix.fn(8, size - 8, true);
}

function drawCodewords(matrix: Matrix, data: readonly number[]): void {
  const size = matrix.size;
  let i = 0;
  for (let right = size - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    for (let vertical = 0; vertical < size; vertical++) {
      for (let j = 0; j < 2; j++) {
        const x = right - j;
        const upward = ((right + 1) & 2) === 0;
        const y = upward ? size - 1 - vertical : vertical;
        if (!matrix.reserved[y]![x] && i < data.length * 8) {
          matrix.modules[y]![x] = bit(data[i >>> 3]!, 7 - (i & 7));
          i++;
        }
      }
    }
  }
}

const MASKS: Array<(x: number, y: number) => boolean> = [
  (x, y) => (x + y) % 2 === 0,
  (_x, y) => y % 2 === 0,
  (x) => x % 3 === 0,
  (x, y) => (x + y) % 3 === 0,
  (x, y) => (Math.floor(x / 3) + Math.floor(y / 2)) % 2 === 0,
  (x, y) => ((x * y) % 2) + ((x * y) % 3) === 0,
  (x, y) => (((x * y) % 2) + ((x * y) % 3)) % 2 === 0,
  (x, y) => (((x + y) % 2) + ((x * y) % 3)) % 2 === 0,
];

function applyMask(matrix: Matrix, mask: number): void {
  for (let y = 0; y < matrix.size; y++) for (let x = 0; x < matrix.size; x++) if (!matrix.reserved[y]![x] && MASKS[mask]!(x, y)) matrix.modules[y]![x] = !matrix.modules[y]![x];
}

/** The standard's penalty score: long runs, 2×2 blocks, finder-like patterns, dark balance. */
function penalty(modules: boolean[][]): number {
  const size = modules.length;
  let score = 0;
  const lines: boolean[][] = [...modules, ...modules.map((_, x) => modules.map((row) => row[x]!))];
  for (const line of lines) {
    let run = 1;
    for (let i = 1; i <= size; i++) {
      if (i < size && line[i] === line[i - 1]) run++;
      else {
        if (run >= 5) score += 3 + run - 5;
        run = 1;
      }
    }
    const text = line.map((dark) => (dark ? '1' : '0')).join('');
    score += 40 * ((text.match(/(?=10111010000)/g)?.length ?? 0) + (text.match(/(?=00001011101)/g)?.length ?? 0));
  }
  for (let y = 0; y + 1 < size; y++) {
    for (let x = 0; x + 1 < size; x++) {
      const c = modules[y]![x];
      if (c === modules[y]![x + 1] && c === modules[y + 1]![x] && c === modules[y + 1]![x + 1]) score += 3;
    }
  }
  const dark = modules.reduce((sum, row) => sum + row.filter(Boolean).length, 0);
  const total = size * size;
  score += (Math.ceil(Math.abs(dark * 20 - total * 10) / total) - 1) * 10;
  return score;
}

/** Encode text (UTF-8) as a QR code of the smallest version that holds it. */
export function encodeQr(text: string): QrCode {
  const data = new TextEncoder().encode(text);
  let version = 1;
  for (; version <= 40; version++) {
    const header = 4 + (version <= 9 ? 8 : 16);
    if (header + data.length * 8 <= dataCodewords(version) * 8) break;
  }
  if (version > 40) throw new Error(`text of ${data.length} bytes is too long for a QR code (at most 2953)`);
  const size = version * 4 + 17;
  const all = codewords(data, version);
  let best: { score: number; modules: boolean[][] } | undefined;
  for (let mask = 0; mask < 8; mask++) {
    const matrix = new Matrix(size);
    drawFunctionPatterns(matrix, version);
    drawCodewords(matrix, all);
    applyMask(matrix, mask);
    drawFormatBits(matrix, mask);
    const score = penalty(matrix.modules);
    if (!best || score < best.score) best = { score, modules: matrix.modules };
  }
  return { version, size, modules: best!.modules };
}

const QUIET = 2;

/**
 * Two module rows per text line with half blocks. Dark modules are blanks and light ones
 * blocks: terminals draw text light on dark, so the code comes out dark on light.
 */
export function qrToTerminal(text: string): string {
  const { size, modules } = encodeQr(text);
  const light = (x: number, y: number) => x < 0 || y < 0 || x >= size || y >= size || !modules[y]![x];
  const lines: string[] = [];
  for (let y = -QUIET; y < size + QUIET; y += 2) {
    let line = '';
    for (let x = -QUIET; x < size + QUIET; x++) {
      const top = light(x, y);
      const bottom = light(x, y + 1);
      line += top && bottom ? '█' : top ? '▀' : bottom ? '▄' : ' ';
    }
    lines.push(line);
  }
  return lines.join('\n');
}

/** The code as an SVG image in a data: URL (what `web.login.start` answers as `qrDataUrl`). */
export function qrToSvgDataUrl(text: string, moduleSize = 6): string {
  const { size, modules } = encodeQr(text);
  const full = size + QUIET * 2;
  let path = '';
  modules.forEach((row, y) => row.forEach((dark, x) => (path += dark ? `M${x + QUIET} ${y + QUIET}h1v1h-1z` : '')));
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${full} ${full}" width="${full * moduleSize}" height="${full * moduleSize}" shape-rendering="crispEdges"><rect width="${full}" height="${full}" fill="#fff"/><path d="${path}" fill="#000"/></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}
