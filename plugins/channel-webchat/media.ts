/**
 * Files in chat — a generated image, a voice note, a document — shown by the browser. Only
 * files under the state dir's media folder (`<stateDir>/media/…`) are served. The browser,
 * signed in over the WebSocket (often with a device token the HTTP layer does not know), asks
 * `webchat.media` for a file and gets a short-lived link signed by this process; `GET /media`
 * serves the file for a valid link only. Judged by the real path (symlinks and `..` followed
 * before the check), regular files only, with the type fixed by the server and never sniffed.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { basename, extname, isAbsolute, join, relative } from 'node:path';
import { ErrorCodes, ProtocolError, type PluginApi } from '../../sdk/index.js';

export const MEDIA_LINK_TTL_MS = 60 * 60 * 1000;

export type MediaKind = 'image' | 'audio' | 'video' | 'document';

/** Types shown inline; anything else is a download (served as octet-stream). */
const TYPES: Record<string, { mimeType: string; kind: MediaKind }> = {
  '.png': { mimeType: 'image/png', kind: 'image' },
  '.jpg': { mimeType: 'image/jpeg', kind: 'image' },
  '.jpeg': { mimeType: 'image/jpeg', kind: 'image' },
  '.gif': { mimeType: 'image/gif', kind: 'image' },
  '.webp': { mimeType: 'image/webp', kind: 'image' },
  '.mp3': { mimeType: 'audio/mpeg', kind: 'audio' },
  '.ogg': { mimeType: 'audio/ogg', kind: 'audio' },
  '.oga': { mimeType: 'audio/ogg', kind: 'audio' },
  '.opus': { mimeType: 'audio/ogg', kind: 'audio' },
  '.wav': { mimeType: 'audio/wav', kind: 'audio' },
  '.m4a': { mimeType: 'audio/mp4', kind: 'audio' },
  '.aac': { mimeType: 'audio/aac', kind: 'audio' },
  '.flac': { mimeType: 'audio/flac', kind: 'audio' },
  '.webm': { mimeType: 'audio/webm', kind: 'audio' },
  '.mp4': { mimeType: 'video/mp4', kind: 'video' },
  '.pdf': { mimeType: 'application/pdf', kind: 'document' },
};

export function mediaType(path: string): { mimeType: string; kind: MediaKind } {
  return TYPES[extname(path).toLowerCase()] ?? { mimeType: 'application/octet-stream', kind: 'document' };
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

export class MediaLinks {
  private readonly key = randomBytes(32);

  constructor(
    private readonly stateDir: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The real path of a regular file under <stateDir>/media, or why not (never naming where it leads). */
  async resolve(path: string): Promise<{ path: string; size: number } | { refused: string }> {
    if (typeof path !== 'string' || !isAbsolute(path) || path.includes('\0'))
      return { refused: 'give the absolute path of a file in the media folder' };
    let root: string;
    let real: string;
    try {
      root = await realpath(join(this.stateDir, 'media'));
      real = await realpath(path);
    } catch {
      return { refused: 'no such file' };
    }
    if (!within(root, real)) return { refused: 'only files in the media folder are served' };
    const info = await stat(real);
    if (!info.isFile()) return { refused: 'not a regular file' };
    return { path: real, size: info.size };
  }

  private sign(path: string, expires: number): Buffer {
    return createHmac('sha256', this.key).update(`${expires}\n${path}`).digest();
  }

  link(path: string): string {
    const expires = this.now() + MEDIA_LINK_TTL_MS;
    const query = new URLSearchParams({
      path,
      exp: String(expires),
      sig: this.sign(path, expires).toString('base64url'),
    });
    return `/media?${query}`;
  }

  /** The path a link names, when its signature holds and it has not expired. */
  verify(query: URLSearchParams): string | undefined {
    const path = query.get('path');
    const expires = Number(query.get('exp'));
    const sig = Buffer.from(query.get('sig') ?? '', 'base64url');
    if (!path || !Number.isFinite(expires) || expires < this.now()) return undefined;
    const expected = this.sign(path, expires);
    return sig.length === expected.length && timingSafeEqual(sig, expected) ? path : undefined;
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const fail = (status: number, error: string) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' });
      res.end(JSON.stringify({ error }));
    };
    const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
    const path = this.verify(query);
    if (!path) return fail(401, 'this media link is missing, expired or not signed by this gateway');
    const found = await this.resolve(path);
    if ('refused' in found) return fail(404, found.refused);
    const type = mediaType(found.path);
    const inline = type.mimeType !== 'application/octet-stream';
    res.writeHead(200, {
      'content-type': type.mimeType,
      'content-length': String(found.size),
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'cache-control': 'private, max-age=3600',
      'content-disposition': `${inline ? 'inline' : 'attachment'}; filename="${basename(found.path).replace(/[^\w.-]/g, '_')}"`,
    });
    if (req.method === 'HEAD') return void res.end();
    await new Promise<void>((resolve) => {
      const stream = createReadStream(found.path);
      stream.on('error', () => (res.destroy(), resolve()));
      stream.on('end', resolve);
      stream.pipe(res);
    });
  }
}

export function registerMediaRoutes(api: PluginApi<any>, links: MediaLinks): void {
  api.registerGatewayMethod('webchat.media', {
    scope: 'operator.read',
    description:
      'A link the browser can load for a file in the media folder: {path} → {url, mimeType, kind, size, name}; the link expires after an hour.',
    params: {
      type: 'object',
      required: ['path'],
      additionalProperties: false,
      properties: { path: { type: 'string', minLength: 1, maxLength: 4096 } },
    },
    handler: async (params: { path: string }) => {
      const found = await links.resolve(params.path);
      if ('refused' in found)
        throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `webchat.media: ${found.refused}: ${params.path}`);
      return { url: links.link(found.path), ...mediaType(found.path), size: found.size, name: basename(found.path) };
    },
  });
  // The link is the credential: the browser loads it in <img>/<audio>, which send no header.
  api.registerHttpRoute({ method: 'GET', path: '/media', auth: 'none', handler: (req, res) => links.serve(req, res) });
}
