/**
 * A compact unified diff for UIs. The tools here change one contiguous region per call
 * (or per file), so trimming the common prefix and suffix gives an exact single-hunk diff
 * without a general diff algorithm.
 */
export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  if (before === after) return '';
  const oldLines = splitLines(before);
  const newLines = splitLines(after);
  let prefix = 0;
  while (prefix < oldLines.length && prefix < newLines.length && oldLines[prefix] === newLines[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < oldLines.length - prefix &&
    suffix < newLines.length - prefix &&
    oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]
  ) {
    suffix++;
  }
  const from = Math.max(0, prefix - context);
  const oldChangeEnd = oldLines.length - suffix;
  const newChangeEnd = newLines.length - suffix;
  const oldTo = Math.min(oldLines.length, oldChangeEnd + context);
  const newTo = Math.min(newLines.length, newChangeEnd + context);

  const body = [
    ...oldLines.slice(from, prefix).map((line) => ` ${line}`),
    ...oldLines.slice(prefix, oldChangeEnd).map((line) => `-${line}`),
    ...newLines.slice(prefix, newChangeEnd).map((line) => `+${line}`),
    ...oldLines.slice(oldChangeEnd, oldTo).map((line) => ` ${line}`),
  ];
  const range = (start: number, count: number) => `${count === 0 ? start : start + 1},${count}`;
  return [
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -${range(from, oldTo - from)} +${range(from, newTo - from)} @@`,
    ...body,
  ].join('\n');
}

/** Lines of a text; a final newline ends the last line rather than starting an empty one. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
