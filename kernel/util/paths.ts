/**
 * Path arithmetic shared by every containment check (plugin entries, memory files, media
 * a channel may upload, HTTP routes). Pure string work: callers resolve symlinks first when
 * that matters.
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

/** True when the URL path `path` is `prefix` or lies below it (`/hooks` holds `/hooks/x`, not `/hooksx`). */
export function pathUnder(path: string, prefix: string): boolean {
  const base = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  return path === base || path.startsWith(`${base}/`) || base === '';
}
