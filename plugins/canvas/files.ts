/**
 * Which file a canvas URL names, kept inside the agent's `<workspace>/canvas/` folder: no
 * dot segments or dotfiles (editor temp files, .git, .env stay private), and the real path
 * (symlinks followed) must still lie inside the folder's real path.
 */
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { agentPaths } from '../../sdk/agent/index.js';
import { PRIVATE_DIR_MODE, type KernelConfig } from '../../sdk/index.js';

export class CanvasPathError extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.wasm': 'application/wasm',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.pdf': 'application/pdf',
};

export function contentType(file: string): string {
  return TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export function isHtml(file: string): boolean {
  return /\.html?$/i.test(file);
}

/** The agent's canvas folder (not created). */
export function canvasDir(config: KernelConfig, agentId: string, paths: { stateDir: string; workspaceDir: string }) {
  return join(agentPaths(config, agentId, paths).workspaceDir, 'canvas');
}

/** The canvas folder, made owner-only when it does not exist yet. */
export function ensureCanvasDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  return dir;
}

/** "/"-separated segments of a request path or tool argument, refusing anything that could step out. */
export function safeSegments(path: string, what: string): string[] {
  const segments = path.split('/').filter((segment) => segment !== '');
  for (const segment of segments) {
    if (segment.startsWith('.')) {
      throw new CanvasPathError(
        404,
        `${what} "${path}": names starting with "." (dotfiles, "..") are never served from the canvas folder`,
      );
    }
    if (/[\\\0]/.test(segment)) throw new CanvasPathError(400, `${what} "${path}" has a backslash or NUL in it`);
  }
  return segments;
}

export interface ResolvedFile {
  /** Real path of a regular file inside the folder. */
  file: string;
  /** Its path inside the folder, "/"-separated. */
  relPath: string;
}

/**
 * The file `segments` name inside `root`: a directory means its index.html. `redirect` is set
 * when the path names a directory without its trailing slash (relative links would break).
 */
export function resolveCanvasFile(
  root: string,
  segments: string[],
  trailingSlash: boolean,
): ResolvedFile & { redirect?: boolean } {
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    throw new CanvasPathError(404, 'the canvas folder is empty: nothing has been written to <workspace>/canvas yet');
  }
  const display = segments.join('/') || '/';
  let real: string;
  try {
    real = realpathSync(join(realRoot, ...segments));
  } catch {
    throw new CanvasPathError(404, `no file ${display} in the canvas folder`);
  }
  const inside = relative(realRoot, real);
  if (inside.startsWith('..') || inside.startsWith(sep) || inside.split(sep).some((part) => part.startsWith('.'))) {
    throw new CanvasPathError(404, `${display} leads outside the canvas folder (or to a dotfile): not served`);
  }
  const stat = statSync(real);
  if (stat.isDirectory()) {
    if (!trailingSlash && segments.length > 0) return { file: real, relPath: inside, redirect: true };
    return resolveCanvasFile(root, [...segments, 'index.html'], false);
  }
  if (!stat.isFile()) throw new CanvasPathError(404, `${display} is not a regular file`);
  return { file: real, relPath: inside.split(sep).join('/') };
}
