/**
 * The `apply_patch` tool. Every operation is worked out in memory first; only when all of
 * them succeed are files written (each staged to a temporary sibling, then renamed into
 * place), so a patch that does not apply leaves the workspace untouched.
 */
import { lstat, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  errorResult,
  textResult,
  type ToolResult,
  openChecked,
  PathRefused,
  recheckDirectory,
  resolveChecked,
  type Containment,
} from '../../sdk/index.js';
import { unifiedDiff } from './diff.js';
import { describeFsError, isNotFound, looksBinary, stageWrite, type StagedWrite } from './files.js';
import { applyHunks } from './patch-apply.js';
import { PatchError, parsePatch, type PatchOp } from './patch-parse.js';

interface PlannedFile {
  /** The path as the patch named it. */
  path: string;
  /** Text after the patch; null when the patch deletes the file. */
  contents: string | null;
}

export interface PatchSummary {
  added: string[];
  modified: string[];
  deleted: string[];
  moved: Array<{ from: string; to: string }>;
  diffs: Array<{ path: string; diff: string }>;
}

/** `resolve` turns a patch path into the file to change (and refuses paths out of a sandbox's reach). */
export async function applyPatchTool(
  input: string,
  resolve: (path: string) => Promise<string>,
  containment?: Containment,
): Promise<ToolResult> {
  let ops: PatchOp[];
  try {
    ops = parsePatch(input);
  } catch (error) {
    if (error instanceof PatchError)
      return errorResult(`apply_patch: invalid patch: ${error.message}. No files were changed.`);
    throw error;
  }

  const planned = new Map<string, PlannedFile>();
  const summary: PatchSummary = { added: [], modified: [], deleted: [], moved: [], diffs: [] };
  const lines: string[] = [];
  try {
    const current = async (absolute: string, path: string): Promise<string | null> => {
      const known = planned.get(absolute);
      return known ? known.contents : readExisting(absolute, path, containment);
    };
    // Every path is checked and used by where it really leads (contain.ts); a deleted symlink is removed itself.
    const locate = async (path: string, intent: 'write' | 'delete') =>
      resolveChecked(await resolve(path), path, containment, intent);
    for (const op of ops) {
      const absolute = await locate(op.path, op.kind === 'delete' ? 'delete' : 'write');
      const before =
        op.kind === 'delete' && !planned.has(absolute)
          ? await existingEntry(absolute, op.path)
          : await current(absolute, op.path);
      if (op.kind === 'add') {
        if (before !== null)
          throw new PatchError(`Add File: ${op.path} already exists (delete it earlier in the patch to replace it)`);
        planned.set(absolute, { path: op.path, contents: op.contents });
        summary.added.push(op.path);
        lines.push(`A ${op.path}`);
      } else if (op.kind === 'delete') {
        if (before === null) throw new PatchError(`Delete File: ${op.path} does not exist`);
        planned.set(absolute, { path: op.path, contents: null });
        summary.deleted.push(op.path);
        lines.push(`D ${op.path}`);
      } else {
        if (before === null) throw new PatchError(`Update File: ${op.path} does not exist`);
        const after = op.hunks.length > 0 ? applyHunks(before, op.hunks, op.path) : before;
        const target = op.moveTo === undefined ? absolute : await locate(op.moveTo, 'write');
        if (target !== absolute) {
          if ((await current(target, op.moveTo!)) !== null)
            throw new PatchError(`Move to: ${op.moveTo} already exists`);
          planned.set(absolute, { path: op.path, contents: null });
          planned.set(target, { path: op.moveTo!, contents: after });
          summary.moved.push({ from: op.path, to: op.moveTo! });
          lines.push(`R ${op.path} -> ${op.moveTo}`);
        } else {
          planned.set(absolute, { path: op.path, contents: after });
          summary.modified.push(op.path);
          lines.push(`M ${op.path}`);
        }
        const shownPath = op.moveTo ?? op.path;
        if (after !== before) summary.diffs.push({ path: shownPath, diff: unifiedDiff(shownPath, before, after) });
      }
    }
  } catch (error) {
    if (error instanceof PatchError || error instanceof PathRefused)
      return errorResult(`apply_patch: ${error.message}. No files were changed.`);
    throw error;
  }

  const failure = await commit(planned, containment);
  if (failure) {
    const outcome = failure.partial
      ? 'Some files were already changed; read them before retrying'
      : 'No files were changed';
    return errorResult(`apply_patch: ${failure.message}. ${outcome}.`);
  }
  return textResult(`Applied patch:\n${lines.join('\n')}`, summary);
}

/** A file's text, null when it does not exist; directories and binary files cannot be patched. */
async function readExisting(
  absolute: string,
  path: string,
  containment: Containment | undefined,
): Promise<string | null> {
  let data: Buffer;
  try {
    const opened = await openChecked(absolute, path, containment);
    if (opened === 'directory') throw new PatchError(`${path} is a directory`);
    try {
      data = await opened.handle.readFile();
    } finally {
      await opened.handle.close();
    }
  } catch (error) {
    if (isNotFound(error)) return null;
    if (error instanceof PatchError || error instanceof PathRefused) throw error;
    throw new PatchError(describeFsError(error, path));
  }
  if (looksBinary(data)) throw new PatchError(`${path} looks binary; apply_patch only changes text files`);
  return data.toString('utf8');
}

/** For Delete File: whether the entry (a file, or a symlink itself) exists; its content is not needed. */
async function existingEntry(absolute: string, path: string): Promise<string | null> {
  const info = await lstat(absolute).catch((error: unknown) => {
    if (isNotFound(error)) return undefined;
    throw new PatchError(describeFsError(error, path));
  });
  if (!info) return null;
  if (info.isDirectory()) throw new PatchError(`${path} is a directory`);
  return '';
}

/**
 * Stages every write, renames them into place only if all of them staged, then deletes.
 * Returns what went wrong, if anything.
 */
async function commit(
  planned: Map<string, PlannedFile>,
  containment: Containment | undefined,
): Promise<{ message: string; partial: boolean } | undefined> {
  const staged: Array<{ write: StagedWrite; path: string }> = [];
  for (const [absolute, file] of planned) {
    if (file.contents === null) continue;
    try {
      staged.push({
        write: await stageWrite(absolute, file.contents, (dir) => recheckDirectory(dir, file.path, containment)),
        path: file.path,
      });
    } catch (error) {
      for (const { write } of staged) await write.discard();
      return { message: `could not write ${describeFsError(error, file.path)}`, partial: false };
    }
  }
  // Renames and unlinks of files already read rarely fail; when one does, earlier ones stay.
  let done = 0;
  try {
    for (const { write, path } of staged) {
      await write.commit().catch((error: unknown) => {
        if (error instanceof PathRefused) throw error;
        throw new PatchError(`could not replace ${describeFsError(error, path)}`);
      });
      done++;
    }
    for (const [absolute, file] of planned) {
      if (file.contents !== null) continue;
      await recheckDirectory(dirname(absolute), file.path, containment);
      await rm(absolute, { force: true }).catch((error: unknown) => {
        throw new PatchError(`could not delete ${describeFsError(error, file.path)}`);
      });
      done++;
    }
  } catch (error) {
    for (const { write } of staged.slice(done)) await write.discard();
    return { message: (error as Error).message, partial: done > 0 };
  }
  return undefined;
}
