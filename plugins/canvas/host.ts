/**
 * The canvas host: GET /__openclaw__/canvas/<capability>/<path> serves a file from the
 * capability's agent's `<workspace>/canvas/` folder; `<capability>/.reload` is that folder's
 * live-reload event stream.
 *
 * Pages are written by the agent, so they must never act with the gateway origin's
 * authority: every response carries `Content-Security-Policy: sandbox allow-scripts`, which
 * gives the page an opaque origin (no access to the gateway origin's storage, cookies or
 * same-origin APIs, no forms, popups or top navigation). The route takes no gateway
 * credentials: the capability in the URL is the only authority, and the page can learn
 * nothing more from the host than the folder it already sees. CORS is open (`*`) because an
 * opaque page's own requests (its stylesheets for a snapshot, the reload stream) are
 * cross-origin; a reader still needs the capability.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CANVAS_PATH, checkCapability } from './capability.js';
import { CanvasPathError, contentType, isHtml, resolveCanvasFile, safeSegments } from './files.js';
import type { LiveReload } from './live-reload.js';
import { injectPageScript } from './page-script.js';

export interface CanvasHostDeps {
  secret(): Buffer;
  /** The agent's canvas folder (it may not exist). */
  folder(agentId: string): string;
  /** Create the folder (owner-only) when missing, for the reload watcher. */
  ensureFolder(agentId: string): string;
  /** Why the host is off, or undefined while it serves. */
  disabled(): string | undefined;
  reload: LiveReload;
}

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "sandbox allow-scripts; frame-ancestors 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'access-control-allow-origin': '*',
};

const RELOAD = '.reload';

function fail(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
}

function decodeSegments(raw: string): string[] {
  return raw
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        throw new CanvasPathError(400, `"${segment}" is not a valid URL path segment`);
      }
      if (decoded.includes('/')) throw new CanvasPathError(400, `"${segment}" encodes a "/": not a canvas path`);
      return decoded;
    });
}

export async function handleCanvasRequest(req: IncomingMessage, res: ServerResponse, deps: CanvasHostDeps) {
  const off = deps.disabled();
  if (off) return fail(res, 404, off);
  // The path as sent: a URL parser would resolve ".." segments before the checks could refuse them.
  const target = req.url ?? '/';
  const query = target.indexOf('?');
  const url = { pathname: query < 0 ? target : target.slice(0, query), search: query < 0 ? '' : target.slice(query) };
  const rest = url.pathname.startsWith(`${CANVAS_PATH}/`) ? url.pathname.slice(CANVAS_PATH.length + 1) : '';
  const slash = rest.indexOf('/');
  const capability = slash < 0 ? rest : rest.slice(0, slash);
  const checked = checkCapability(deps.secret(), capability);
  if (!checked.ok) return fail(res, checked.status, checked.reason);
  if (slash < 0) {
    res.writeHead(301, { ...SECURITY_HEADERS, location: `${CANVAS_PATH}/${capability}/${url.search}` });
    return void res.end();
  }
  try {
    const segments = decodeSegments(rest.slice(slash + 1));
    if (segments.length === 1 && segments[0] === RELOAD) {
      const dir = deps.ensureFolder(checked.agentId);
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-type': 'text/event-stream; charset=utf-8',
        connection: 'keep-alive',
      });
      if (req.method === 'HEAD') return void res.end();
      res.flushHeaders();
      return deps.reload.subscribe(dir, res);
    }
    safeSegments(segments.join('/'), 'canvas path');
    const found = resolveCanvasFile(deps.folder(checked.agentId), segments, url.pathname.endsWith('/'));
    if (found.redirect) {
      res.writeHead(301, { ...SECURITY_HEADERS, location: `${url.pathname}/${url.search}` });
      return void res.end();
    }
    const type = contentType(found.file);
    if (isHtml(found.file)) {
      const html = injectPageScript(await readFile(found.file, 'utf8'), `${CANVAS_PATH}/${capability}/${RELOAD}`);
      const body = Buffer.from(html, 'utf8');
      res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': String(body.length) });
      return void res.end(req.method === 'HEAD' ? undefined : body);
    }
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': type });
    if (req.method === 'HEAD') return void res.end();
    const stream = createReadStream(found.file);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  } catch (error) {
    if (error instanceof CanvasPathError) return fail(res, error.status, error.message);
    throw error;
  }
}
