/**
 * Path arithmetic shared by every containment check (plugin entries, memory files, media
 * a channel may upload). Pure string work: callers resolve symlinks first when that matters.
 */
import { isAbsolute, relative, sep } from 'node:path';

/**
 * True when `path` is `root` or lies below it. Compared by path segment, so a sibling such
 * as `/work-old` is not inside `/work`, and a file named `..notes.md` is.
 */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
