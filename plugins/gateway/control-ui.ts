/**
 * OpenClaw's Control UI, served from its built files (`gateway.controlUi.root`, e.g. the
 * openclaw npm package's dist/control-ui) at `gateway.controlUi.basePath`, on the gateway's
 * own origin so the page may open the WebSocket. The files are the public bundle; the page
 * authenticates over the WebSocket like any client. claw's own web UI stays at `/`.
 */
import { createReadStream, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import type { GatewaySettings } from './settings.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** Bootstrap file names the Control UI asks for under its base path. */
const BOOTSTRAP = new Set(['control-ui-config.json', '__openclaw/control-ui-config.json']);

/** Files at the bundle's root that the page links to by name, whatever route is showing. */
const ROOT_FILES = [
  'apple-touch-icon.png',
  'favicon-32.png',
  'favicon.ico',
  'favicon.svg',
  'manifest.webmanifest',
  'sw.js',
];

export interface ControlUiInfo {
  version: string;
  assistantName?: string;
}

/** True when the request was for the Control UI (and has been answered). */
export function serveControlUi(
  req: IncomingMessage,
  res: ServerResponse,
  settings: Pick<GatewaySettings, 'controlUi'>,
  info: () => ControlUiInfo,
): boolean {
  const { enabled, root, basePath } = settings.controlUi;
  if (!enabled || !root || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const path = decodeURIComponentSafe(new URL(req.url ?? '/', 'http://gateway').pathname);
  if (path === undefined) return false;
  if (path === basePath) {
    res.writeHead(302, { location: `${basePath}/` }).end();
    return true;
  }
  if (!path.startsWith(`${basePath}/`)) return false;
  const rel = path.slice(basePath.length + 1);
  if (BOOTSTRAP.has(rel)) {
    const { version, assistantName } = info();
    send(
      res,
      200,
      'application/json; charset=utf-8',
      JSON.stringify({
        basePath,
        serverVersion: version,
        assistantName: assistantName ?? 'Assistant',
        communityInvite: false,
        terminalEnabled: false,
      }),
    );
    return true;
  }
  let rootReal: string;
  try {
    rootReal = realpathSync(root);
  } catch {
    send(res, 503, 'text/plain; charset=utf-8', `gateway.controlUi.root ${root} does not exist\n`);
    return true;
  }
  // A deep link (/openclaw/settings/devices) loads the page from a nested path, so relative
  // asset URLs the browser resolves against it still name a file under the bundle's assets/.
  const assets = rel.indexOf('assets/');
  const wanted = assets > 0 && rel[assets - 1] === '/' ? rel.slice(assets) : rel;
  const file = resolveInside(rootReal, wanted);
  const index = join(rootReal, 'index.html');
  if (file === index || (!file && extname(wanted) === '')) {
    sendIndex(req, res, index, basePath);
    return true;
  }
  if (!file) {
    send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    return true;
  }
  const headers: Record<string, string> = {
    'content-type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': String(statSync(file).size),
    'x-content-type-options': 'nosniff',
    // Hashed assets never change; the page itself is re-read so a new bundle is picked up.
    'cache-control': wanted.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  };
  res.writeHead(200, headers);
  if (req.method === 'HEAD') res.end();
  else createReadStream(file).pipe(res);
  return true;
}

/**
 * The page, with its relative links anchored at the base path (a page loaded from a nested
 * route would otherwise ask for /openclaw/settings/assets/…) and the attributes the UI reads
 * for its mount point and whether a terminal is offered (claw has none).
 */
function sendIndex(req: IncomingMessage, res: ServerResponse, file: string, basePath: string): void {
  let html = readFileSync(file, 'utf8')
    .replaceAll('src="./assets/', `src="${basePath}/assets/`)
    .replaceAll('href="./assets/', `href="${basePath}/assets/`);
  for (const name of ROOT_FILES) html = html.replaceAll(`href="./${name}"`, `href="${basePath}/${name}"`);
  html = html.replace(
    /<html\b/i,
    `<html data-openclaw-control-ui-base-path="${escapeAttribute(basePath)}" data-openclaw-terminal-enabled="false"`,
  );
  res.writeHead(200, {
    'content-type': TYPES['.html'],
    'content-length': String(Buffer.byteLength(html)),
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
  });
  res.end(req.method === 'HEAD' ? undefined : html);
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** The real path of `rel` under `root` when it is a file inside it (no `..`, no link out). */
function resolveInside(root: string, rel: string): string | undefined {
  if (!rel || rel.includes('\0')) return undefined;
  const candidate = normalize(join(root, rel));
  if (!candidate.startsWith(`${root}${sep}`) || !existsSync(candidate)) return undefined;
  const real = realpathSync(candidate);
  return real.startsWith(`${root}${sep}`) && statSync(real).isFile() ? real : undefined;
}

function decodeURIComponentSafe(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) }).end(body);
}
