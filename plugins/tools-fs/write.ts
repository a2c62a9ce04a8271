/** The `write` tool: create or replace a whole file, atomically. */
import { stat } from 'node:fs/promises';
import { errorResult, textResult, type ToolResult } from '../../sdk/index.js';
import { atomicWrite, describeFsError, isNotFound } from './files.js';

export async function writeFileTool(path: string, absolutePath: string, content: string): Promise<ToolResult> {
  let created = true;
  try {
    const info = await stat(absolutePath);
    if (info.isDirectory()) return errorResult(`${path} is a directory`);
    created = false;
  } catch (error) {
    if (!isNotFound(error)) return errorResult(describeFsError(error, path));
  }
  const bytes = Buffer.byteLength(content);
  try {
    await atomicWrite(absolutePath, content);
  } catch (error) {
    return errorResult(describeFsError(error, path));
  }
  return textResult(`${created ? 'Created' : 'Wrote'} ${path} (${bytes} bytes)`, { path: absolutePath, bytes, created });
}
