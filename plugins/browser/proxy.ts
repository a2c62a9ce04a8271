/**
 * The browser's one way out: a forward proxy on 127.0.0.1 that Chromium must use for every
 * request (launched with --proxy-server and loopback not bypassed).
 *
 * Why a proxy and not only page routing: Chromium resolves names itself, so a check made
 * in Playwright's route handler looks at one DNS answer while Chromium may connect to
 * another (DNS rebinding), and routing misses redirect hops, service workers and popups'
 * first requests. Behind a proxy Chromium never resolves: it hands the proxy the host name,
 * and the proxy resolves it once, checks every address (urlCheck) and connects to the
 * address it checked. Plain HTTP is forwarded request by request (each redirect hop is a
 * new request, so it is checked again); HTTPS and WebSocket-over-TLS arrive as CONNECT
 * host:port and are tunnelled to the checked address (TLS stays end to end, so Chromium
 * still verifies the certificate against the name).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { nodeHttp } from '../../sdk/net/index.js';
import type { UrlCheck } from './policy.js';

export interface BlockedRequest {
  url: string;
  reason: string;
  at: number;
}

export interface PolicyProxy {
  /** `http://127.0.0.1:<port>` for --proxy-server. */
  readonly server: string;
  /**
   * The credentials only this browser knows (Playwright answers the proxy's challenge): other
   * local processes cannot borrow the proxy, and with it the user's private-host allowlist.
   */
  readonly username: string;
  readonly password: string;
  /** The latest refusals, newest last (at most 50). */
  readonly blocked: BlockedRequest[];
  close(): Promise<void>;
}

const HOP_HEADERS = new Set([
  'proxy-connection',
  'proxy-authorization',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
]);

function refuse(res: ServerResponse, status: number, text: string, blockedReason?: string): void {
  if (res.headersSent) return void res.destroy();
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
  if (blockedReason) headers['x-claw-browser-blocked'] = encodeURIComponent(blockedReason);
  res.writeHead(status, headers).end(`${text}\n`);
}

export async function startPolicyProxy(check: UrlCheck): Promise<PolicyProxy> {
  const username = 'claw';
  const password = randomBytes(18).toString('base64url');
  const expected = Buffer.from(`Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`);
  const authorized = (req: IncomingMessage): boolean => {
    const given = Buffer.from(String(req.headers['proxy-authorization'] ?? ''));
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const CHALLENGE = 'Proxy-Authenticate: Basic realm="claw-browser"';
  const blocked: BlockedRequest[] = [];
  const sockets = new Set<Socket>();
  const note = (url: string, reason: string): void => {
    blocked.push({ url, reason, at: Date.now() });
    if (blocked.length > 50) blocked.shift();
  };

  const forward = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!authorized(req))
      return void res
        .writeHead(407, { 'proxy-authenticate': 'Basic realm="claw-browser"', 'content-type': 'text/plain' })
        .end('proxy authentication required\n');
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return refuse(res, 400, 'claw browser proxy: absolute http:// URL expected');
    }
    const target = await check(url);
    if ('refused' in target) {
      note(url.href, target.refused);
      return refuse(res, 403, `Blocked by the browser SSRF policy: ${target.refused}`, target.refused);
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value;
    const upstream = nodeHttp().request(
      {
        host: target.address,
        family: target.family,
        port: url.port || 80,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers,
        setHost: false,
      },
      (reply) => {
        const replyHeaders: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(reply.headers))
          if (value !== undefined && !HOP_HEADERS.has(name)) replyHeaders[name] = value;
        res.writeHead(reply.statusCode ?? 502, reply.statusMessage, replyHeaders);
        reply.pipe(res);
      },
    );
    upstream.on('error', (error) => refuse(res, 502, `claw browser proxy: ${url.host}: ${error.message}`));
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };

  const server = nodeHttp().createServer(
    (req, res) =>
      void forward(req, res).catch((error: Error) => refuse(res, 502, `claw browser proxy: ${error.message}`)),
  );
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    void (async () => {
      if (!authorized(req))
        return void client.end(`HTTP/1.1 407 Proxy Authentication Required\r\n${CHALLENGE}\r\n\r\n`);
      const authority = req.url ?? '';
      let url: URL;
      try {
        url = new URL(`https://${authority}/`);
      } catch {
        return void client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      }
      const target = await check(url);
      if ('refused' in target) {
        note(url.href, target.refused);
        return void client.end('HTTP/1.1 403 Forbidden\r\nx-claw-browser-blocked: 1\r\n\r\n');
      }
      const upstream = connect({ host: target.address, port: Number(url.port || 443), family: target.family });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      let established = false;
      upstream.once('connect', () => {
        established = true;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => (established ? client.destroy() : client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')));
      client.on('close', () => upstream.destroy());
    })();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    server: `http://127.0.0.1:${port}`,
    username,
    password,
    blocked,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
