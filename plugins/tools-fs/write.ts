/** The `write` tool: create or replace a whole file, atomically. */
import { stat } from 'node:fs/promises';
import {
  errorResult,
  textResult,
  type ToolResult,
  PathRefused,
  recheckDirectory,
  resolveChecked,
  type Containment,
} from '../../sdk/index.js';
import { atomicWrite, describeFsError, isNotFound } from './files.js';

export async function writeFileTool(
  path: string,
  absolutePath: string,
  content: string,
  containment?: Containment,
): Promise<ToolResult> {
  let created = true;
  let target: string;
  try {
    target = await resolveChecked(absolutePath, path, containment, 'write');
    const info = await stat(target);
    if (info.isDirectory()) return errorResult(`${path} is a directory`);
    if (!info.isFile())
      return errorResult(
        `Refused: ${path} is not a regular file (a device, FIFO or socket); write only replaces regular files.`,
      );
    created = false;
  } catch (error) {
    if (error instanceof PathRefused) return errorResult(error.message, { path, refused: true });
    if (!isNotFound(error)) return errorResult(describeFsError(error, path));
    target ??= absolutePath;
  }
  const bytes = Buffer.byteLength(content);
  try {
    await atomicWrite(target, content, (dir) => recheckDirectory(dir, path, containment));
  } catch (error) {
    if (error instanceof PathRefused) return errorResult(error.message, { path, refused: true });
    return errorResult(describeFsError(error, path));
  }
  return textResult(`${created ? 'Created' : 'Wrote'} ${path} (${bytes} bytes)`, { path: target, bytes, created });
}
