/**
 * Serving the built web app: `index.html` at "/" and content-hashed files under
 * "/assets/". The app authenticates over the WebSocket, so these files are public.
 *
 * The bundle is found through the `bundle.json` its build writes (apps/web/build.mjs),
 * looked for beside this plugin: `apps/web/dist` when claw runs from source, `dist/apps/web`
 * when it runs from the build. Only files listed there are ever served, which rules out
 * path traversal and keeps the app's source folder out of reach.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';

export interface BundleIndex {
  /** Paths relative to the bundle folder, "/"-separated: index.html, assets/app-<hash>.js, … */
  files: string[];
}

interface LoadedFile {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The page may talk only to its own gateway and load only its own files; it is never
 * framed, because its buttons change the gateway (clickjacking).
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

function contentType(path: string): string {
  const dot = path.lastIndexOf('.');
  return (dot >= 0 && TYPES[path.slice(dot).toLowerCase()]) || 'application/octet-stream';
}

/** The app's files, read once and read again when a rebuild rewrites bundle.json. */
export class StaticBundle {
  private files = new Map<string, LoadedFile>();
  private loadedStamp = '';
  private dir?: string;

  constructor(private readonly candidates: readonly string[]) {}

  /** Where the bundle was found, or undefined when the app has not been built. */
  location(): string | undefined {
    return this.refresh() ? this.dir : undefined;
  }

  private refresh(): boolean {
    for (const dir of this.candidates) {
      let stamp: string;
      try {
        const stat = statSync(join(dir, 'bundle.json'));
        stamp = `${dir}\u0000${stat.mtimeMs}\u0000${stat.size}`;
      } catch {
        continue;
      }
      if (stamp === this.loadedStamp) return true;
      const files = new Map<string, LoadedFile>();
      try {
        const index = JSON.parse(readFileSync(join(dir, 'bundle.json'), 'utf8')) as BundleIndex;
        for (const path of index.files) {
          const body = readFileSync(join(dir, ...path.split('/')));
          files.set(path, {
            body,
            type: contentType(path),
            etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
          });
        }
      } catch {
        // Caught mid-rebuild (watch mode): keep serving the previous build, try again next request.
        if (this.files.size > 0) return true;
        continue;
      }
      this.files = files;
      this.dir = dir;
      this.loadedStamp = stamp;
      return true;
    }
    this.files.clear();
    this.loadedStamp = '';
    return false;
  }

  /** GET / */
  servePage(req: IncomingMessage, res: ServerResponse): void {
    if (!this.refresh() || !this.files.has('index.html')) {
      const body =
        '<!doctype html><meta charset="utf-8"><title>claw</title><h1>The web app has not been built</h1>' +
        '<p>The gateway is running, but the WebChat / Control UI files are missing. Build them with ' +
        '<code>node apps/web/build.mjs</code> (or <code>npm run build</code>) and reload.</p>';
      res.writeHead(503, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...PAGE_HEADERS });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    // The page names the hashed assets, so it must be revalidated to pick up a new build.
    this.send(req, res, this.files.get('index.html')!, { 'cache-control': 'no-cache', ...PAGE_HEADERS });
  }

  /** GET /assets/<file> */
  serveAsset(req: IncomingMessage, res: ServerResponse): void {
    const raw = (req.url ?? '/').split(/[?#]/)[0]!;
    let path: string;
    try {
      path = decodeURIComponent(raw).replace(/^\/+/, '');
    } catch {
      return void res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end('bad path encoding\n');
    }
    if (
      path.includes('\0') ||
      path.includes('\\') ||
      path.split('/').some((segment) => segment === '..' || segment === '.')
    ) {
      return void res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end('bad path\n');
    }
    const file = this.refresh() && path.startsWith('assets/') ? this.files.get(path) : undefined;
    if (!file)
      return void res
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
        .end('not found\n');
    // Asset names carry a hash of their content: a changed file is a new name.
    this.send(req, res, file, { 'cache-control': 'public, max-age=31536000, immutable' });
  }

  private send(req: IncomingMessage, res: ServerResponse, file: LoadedFile, headers: Record<string, string>): void {
    const common = { etag: file.etag, 'x-content-type-options': 'nosniff', ...headers };
    if (req.headers['if-none-match'] === file.etag) return void res.writeHead(304, common).end();
    res.writeHead(200, { 'content-type': file.type, 'content-length': String(file.body.length), ...common });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  }
}
