/** Applying the hunks of one "Update File" to a file's text, in memory. */
import { PatchError, type Hunk } from './patch-parse.js';

/**
 * Line comparisons from strict to lenient. Models often get trailing or leading
 * whitespace wrong when they copy context, so looser matches are tried only when the
 * exact one fails.
 */
const COMPARISONS: Array<(a: string, b: string) => boolean> = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
];

/** Index of the first run of `pattern` in `lines` at or after `from`; -1 when there is none. */
function seek(lines: readonly string[], pattern: readonly string[], from: number, atEnd: boolean): number {
  if (pattern.length > lines.length) return -1;
  const fits = (at: number, same: (a: string, b: string) => boolean) =>
    pattern.every((line, k) => same(lines[at + k]!, line));
  for (const same of COMPARISONS) {
    if (atEnd) {
      const at = lines.length - pattern.length;
      if (at >= from && fits(at, same)) return at;
      continue;
    }
    for (let at = from; at <= lines.length - pattern.length; at++) if (fits(at, same)) return at;
  }
  return -1;
}

export function applyHunks(original: string, hunks: readonly Hunk[], path: string): string {
  const eol = original.includes('\r\n') ? '\r\n' : '\n';
  const endsWithNewline = original === '' || original.endsWith('\n');
  const lines = original.split(/\r?\n/);
  if (original === '' || endsWithNewline) lines.pop();

  const out: string[] = [];
  let cursor = 0;
  hunks.forEach((hunk, index) => {
    const label = `${path}: hunk ${index + 1} (patch line ${hunk.patchLine})`;
    let from = cursor;
    for (const anchor of hunk.anchors) {
      const at = seek(lines, [anchor], from, false);
      if (at < 0)
        throw new PatchError(
          `${label}: context line "@@ ${anchor}" was not found${from > 0 ? ` after line ${from}` : ''}`,
        );
      from = at + 1;
    }
    const oldLines = hunk.lines.filter((line) => line.op !== '+').map((line) => line.text);
    let at: number;
    if (oldLines.length === 0) {
      // Pure insertion: after the anchors when there are any, otherwise at the end of the file.
      at = hunk.anchors.length > 0 && !hunk.endOfFile ? from : lines.length;
    } else {
      at = seek(lines, oldLines, from, hunk.endOfFile);
      if (at < 0) {
        const shown = oldLines
          .slice(0, 10)
          .map((line) => `  ${line}`)
          .join('\n');
        const more = oldLines.length > 10 ? `\n  … (${oldLines.length - 10} more lines)` : '';
        const where = hunk.endOfFile ? ' at the end of the file' : from > 0 ? ` after line ${from}` : '';
        throw new PatchError(`${label} did not match: these lines were not found${where}:\n${shown}${more}`);
      }
    }
    out.push(...lines.slice(cursor, at));
    // Context lines keep the file's own text: a lenient match must not rewrite their whitespace.
    let k = at;
    for (const line of hunk.lines) {
      if (line.op === '+') out.push(line.text);
      else if (line.op === ' ') out.push(lines[k++]!);
      else k++;
    }
    cursor = at + oldLines.length;
  });
  out.push(...lines.slice(cursor));

  if (out.length === 0) return '';
  return out.join(eol) + (endsWithNewline ? eol : '');
}
