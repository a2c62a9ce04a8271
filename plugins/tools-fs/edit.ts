/** The `edit` tool: replace one exact, unique span of a text file. */
import {
  errorResult,
  textResult,
  type ToolResult,
  openChecked,
  PathRefused,
  recheckDirectory,
  type Containment,
} from '../../sdk/index.js';
import { unifiedDiff } from './diff.js';
import { atomicWrite, describeFsError, looksBinary } from './files.js';

export interface EditRequest {
  path: string;
  absolutePath: string;
  oldText: string;
  newText: string;
  containment?: Containment;
}

export async function editFileTool(request: EditRequest): Promise<ToolResult> {
  const { path, containment } = request;
  let absolutePath = request.absolutePath;
  if (request.oldText === '')
    return errorResult('edit: oldText must not be empty; use write to create or replace a whole file');
  if (request.oldText === request.newText)
    return errorResult(`edit: oldText and newText are identical; ${path} was not changed`);

  let raw: Buffer;
  try {
    const opened = await openChecked(absolutePath, path, containment);
    if (opened === 'directory') return errorResult(`${path} is a directory`);
    absolutePath = opened.real;
    try {
      raw = await opened.handle.readFile();
    } finally {
      await opened.handle.close();
    }
  } catch (error) {
    if (error instanceof PathRefused) return errorResult(error.message, { path, refused: true });
    return errorResult(describeFsError(error, path));
  }
  if (looksBinary(raw)) return errorResult(`${path} looks binary; edit only changes text files`);
  const before = raw.toString('utf8');

  let { oldText, newText } = request;
  let positions = occurrences(before, oldText);
  // Models write "\n" even when the file uses CRLF; match in the file's own line endings.
  if (positions.length === 0 && before.includes('\r\n') && oldText.includes('\n') && !oldText.includes('\r\n')) {
    const crlf = (text: string) => text.replace(/\r?\n/g, '\r\n');
    const converted = occurrences(before, crlf(oldText));
    if (converted.length > 0) {
      oldText = crlf(oldText);
      newText = crlf(newText);
      positions = converted;
    }
  }

  if (positions.length === 0) {
    return errorResult(
      `edit: oldText was not found in ${path}. It must match the file exactly, including whitespace and indentation; ` +
        'read the file again and copy the text to replace from it.',
      { path: absolutePath, occurrences: 0 },
    );
  }
  if (positions.length > 1) {
    const lines = positions.map((position) => lineOf(before, position));
    return errorResult(
      `edit: oldText occurs ${positions.length} times in ${path} (at lines ${lines.join(', ')}). ` +
        'Include more surrounding context in oldText so it matches exactly once.',
      { path: absolutePath, occurrences: positions.length, lines },
    );
  }

  const at = positions[0]!;
  // Slicing rather than String.replace, whose replacement string would expand "$&" and friends.
  const after = before.slice(0, at) + newText + before.slice(at + oldText.length);
  try {
    await atomicWrite(absolutePath, after, (dir) => recheckDirectory(dir, path, containment));
  } catch (error) {
    if (error instanceof PathRefused) return errorResult(error.message, { path, refused: true });
    return errorResult(describeFsError(error, path));
  }
  const firstLine = lineOf(before, at);
  const diff = unifiedDiff(path, before, after);
  return textResult(`Edited ${path}: replaced 1 occurrence at line ${firstLine}.`, {
    path: absolutePath,
    firstChangedLine: firstLine,
    diff,
  });
}

/** Start offsets of every occurrence, overlapping ones included (they are just as ambiguous). */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) found.push(at);
  return found;
}

function lineOf(text: string, offset: number): number {
  return countNewlines(text.slice(0, offset)) + 1;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count++;
  return count;
}
