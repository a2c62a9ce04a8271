/**
 * Parser for the apply_patch format:
 *
 *   *** Begin Patch
 *   *** Add File: <path>        followed by "+" lines
 *   *** Delete File: <path>
 *   *** Update File: <path>     optionally "*** Move to: <path>", then hunks:
 *   @@ [context line to find first]
 *    context / -removed / +added lines, optionally ending with "*** End of File"
 *   *** End Patch
 */

export class PatchError extends Error {}

export interface HunkLine {
  op: ' ' | '-' | '+';
  text: string;
}

export interface Hunk {
  /** Lines named after "@@", found in order before the hunk is matched. */
  anchors: string[];
  lines: HunkLine[];
  /** The hunk must match at the end of the file. */
  endOfFile: boolean;
  /** 1-based line of the patch where the hunk starts, for error messages. */
  patchLine: number;
}

export type PatchOp =
  | { kind: 'add'; path: string; contents: string }
  | { kind: 'delete'; path: string }
  | { kind: 'update'; path: string; moveTo?: string; hunks: Hunk[] };

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File: ';
const DELETE = '*** Delete File: ';
const UPDATE = '*** Update File: ';
const MOVE = '*** Move to: ';
const END_OF_FILE = '*** End of File';

function isFileHeader(line: string): boolean {
  return line.startsWith(ADD) || line.startsWith(DELETE) || line.startsWith(UPDATE) || line.trim() === END;
}

export function parsePatch(input: string): PatchOp[] {
  const lines = input.replace(/\r\n/g, '\n').split('\n');
  let first = 0;
  while (first < lines.length && lines[first]!.trim() === '') first++;
  let last = lines.length - 1;
  while (last >= first && lines[last]!.trim() === '') last--;
  if (lines[first]?.trim() !== BEGIN) throw new PatchError(`the patch must start with "${BEGIN}"`);
  if (last <= first || lines[last]!.trim() !== END) throw new PatchError(`the patch must end with "${END}"`);

  const ops: PatchOp[] = [];
  let i = first + 1;
  const where = () => `patch line ${i + 1}`;
  const pathAfter = (prefix: string) => {
    const path = lines[i]!.slice(prefix.length).trim();
    if (!path) throw new PatchError(`${where()}: "${prefix.trim()}" needs a path`);
    return path;
  };

  while (i < last) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
    } else if (line.startsWith(ADD)) {
      const path = pathAfter(ADD);
      i++;
      const body: DraftLine[] = [];
      while (i < last && !isFileHeader(lines[i]!)) {
        const row = lines[i]!;
        if (row.startsWith('+')) body.push({ op: '+', text: row.slice(1), explicit: true });
        else if (row === '') body.push({ op: '+', text: '', explicit: false });
        else throw new PatchError(`${where()}: in "Add File: ${path}" every line must start with "+"`);
        i++;
      }
      const contents = dropTrailingSpacing(body).map((row) => row.text);
      ops.push({ kind: 'add', path, contents: contents.length === 0 ? '' : `${contents.join('\n')}\n` });
    } else if (line.startsWith(DELETE)) {
      ops.push({ kind: 'delete', path: pathAfter(DELETE) });
      i++;
    } else if (line.startsWith(UPDATE)) {
      const path = pathAfter(UPDATE);
      i++;
      let moveTo: string | undefined;
      if (i < last && lines[i]!.startsWith(MOVE)) {
        moveTo = pathAfter(MOVE);
        i++;
      }
      const parsed = parseHunks(lines, i, last, path);
      i = parsed.next;
      if (parsed.hunks.length === 0 && moveTo === undefined)
        throw new PatchError(`"Update File: ${path}" has no hunks`);
      ops.push({ kind: 'update', path, ...(moveTo === undefined ? {} : { moveTo }), hunks: parsed.hunks });
    } else {
      throw new PatchError(
        `patch line ${i + 1}: expected "${ADD.trim()}", "${UPDATE.trim()}", "${DELETE.trim()}" or "${END}", got: ${line.slice(0, 80)}`,
      );
    }
  }
  if (ops.length === 0) throw new PatchError('the patch contains no file operations');
  return ops;
}

/** A body line; `explicit` is false for a bare empty line, which may just be spacing. */
interface DraftLine extends HunkLine {
  explicit: boolean;
}

/** Bare blank lines at the end of a body are spacing before the next header, not content. */
function dropTrailingSpacing(lines: DraftLine[]): HunkLine[] {
  let end = lines.length;
  while (end > 0 && !lines[end - 1]!.explicit) end--;
  return lines.slice(0, end).map(({ op, text }) => ({ op, text }));
}

function parseHunks(lines: string[], start: number, last: number, path: string): { hunks: Hunk[]; next: number } {
  const hunks: Hunk[] = [];
  let draft: (Omit<Hunk, 'lines'> & { lines: DraftLine[] }) | undefined;
  const pushDraft = () => {
    const hunkLines = dropTrailingSpacing(draft!.lines);
    if (hunkLines.length === 0) {
      throw new PatchError(
        `"Update File: ${path}": hunk ${hunks.length + 1} (patch line ${draft!.patchLine}) has no lines`,
      );
    }
    hunks.push({ anchors: draft!.anchors, lines: hunkLines, endOfFile: draft!.endOfFile, patchLine: draft!.patchLine });
    draft = undefined;
  };

  let i = start;
  while (i < last && !isFileHeader(lines[i]!)) {
    const line = lines[i]!;
    if (line.startsWith('@@')) {
      const anchor = line.slice(2).trim();
      // Consecutive "@@" lines narrow the search step by step (a class, then a method in it).
      if (draft && (draft.lines.length > 0 || draft.endOfFile)) pushDraft();
      draft ??= { anchors: [], lines: [], endOfFile: false, patchLine: i + 1 };
      if (anchor) draft.anchors.push(anchor);
    } else if (line.trim() === END_OF_FILE) {
      if (!draft)
        throw new PatchError(`patch line ${i + 1}: "${END_OF_FILE}" outside a hunk of "Update File: ${path}"`);
      draft.endOfFile = true;
    } else {
      if (draft?.endOfFile)
        throw new PatchError(
          `patch line ${i + 1}: "${END_OF_FILE}" must be the last line of its hunk ("Update File: ${path}")`,
        );
      // The first hunk may leave out its "@@" line.
      draft ??= { anchors: [], lines: [], endOfFile: false, patchLine: i + 1 };
      const op = line[0];
      if (op === ' ' || op === '-' || op === '+') draft.lines.push({ op, text: line.slice(1), explicit: true });
      else if (line === '') draft.lines.push({ op: ' ', text: '', explicit: false });
      else {
        throw new PatchError(
          `patch line ${i + 1}: in "Update File: ${path}" a hunk line must start with " ", "-" or "+", got: ${line.slice(0, 80)}`,
        );
      }
    }
    i++;
  }
  if (draft) pushDraft();
  return { hunks, next: i };
}
