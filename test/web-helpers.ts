/**
 * Local stand-ins for the web in the web tool tests: an HTTP server on 127.0.0.1 that serves
 * an article page and misbehaves on request (huge, slow, redirect loops, redirects to private
 * addresses), and a tiny UDP DNS server answering A/AAAA from a table, so a name can resolve
 * to 127.0.0.1 without touching the real resolver.
 */
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';

export const ARTICLE_HTML = `<!doctype html>
<html><head><title>Lighthouses of the North Sea</title>
<script>window.tracker = "SCRIPT-SHOULD-NOT-APPEAR";</script>
<style>.x { color: red } /* STYLE-SHOULD-NOT-APPEAR */</style></head>
<body>
<nav class="site-nav"><a href="/">Home</a> <a href="/about">NAV-SHOULD-NOT-APPEAR</a></nav>
<header><div class="banner">Subscribe now! BANNER-SHOULD-NOT-APPEAR</div></header>
<main><article>
<h1>Lighthouses of the North Sea</h1>
<p class="byline">By Ada Keeper</p>
<p>The <strong>lighthouses</strong> along the North Sea coast guided ships for centuries. Their keepers lived
in isolation, tending lamps through storms and fog, and recording every passing vessel in careful logs.</p>
<h2>Early towers</h2>
<p>The earliest towers burned coal in open braziers. Later designs used oil lamps with polished reflectors,
and eventually the <em>Fresnel lens</em> concentrated the light into a beam visible for many miles.
See <a href="/history/fresnel">the Fresnel story</a> for details.</p>
<ul><li>Coal fires</li><li>Oil lamps</li><li>Electric lights</li></ul>
<p>Today most lighthouses are automated, yet many remain as museums where visitors can climb the spiral
stairs and look out over the grey water that once claimed so many ships.</p>
<pre><code>lamp.on()</code></pre>
</article></main>
<footer>Footer links FOOTER-LINKS</footer>
<script>console.log("SCRIPT2-SHOULD-NOT-APPEAR")</script>
</body></html>`;

export interface WebServer {
  port: number;
  origin: string;
  /** Requests seen, as "METHOD path host". */
  hits: string[];
  close(): Promise<void>;
}

/** Routes by path; `?to=` on /redirect names the target. */
export async function startWebServer(): Promise<WebServer> {
  const hits: string[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.push(`${req.method} ${url.pathname} ${req.headers.host}`);
    const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': type, ...headers }).end(body);
    switch (url.pathname) {
      case '/article':
        return send(200, 'text/html; charset=utf-8', ARTICLE_HTML);
      case '/private-data':
        return send(200, 'text/plain', 'PRIVATE-INTERNAL-DATA');
      case '/redirect':
        return res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      case '/loop-a':
        return res.writeHead(302, { location: '/loop-b' }).end();
      case '/loop-b':
        return res.writeHead(301, { location: '/loop-a' }).end();
      case '/big': {
        // 5 MB offered; the client should stop reading long before the end.
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(64 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < 80) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        return pump();
      }
      case '/slow':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<html><body><p>starting');
        return; // never ends
      case '/json':
        return send(200, 'application/json', '{"name":"claw","tools":["web_fetch","web_search"]}');
      case '/text':
        return send(200, 'text/plain; charset=utf-8', 'plain text body, kept as is: <b>not html</b>');
      case '/gzip':
        return send(200, 'text/plain', gzipSync(Buffer.from('compressed hello '.repeat(100))), {
          'content-encoding': 'gzip',
        });
      case '/image':
        return send(200, 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
      case '/missing':
        return send(404, 'text/html', '<html><body><h1>Not here</h1></body></html>');
      default:
        if (url.pathname.startsWith('/chain/')) {
          const n = Number(url.pathname.slice(7));
          return res.writeHead(302, { location: `/chain/${n + 1}` }).end();
        }
        if (url.pathname.startsWith('/big-page'))
          return send(200, 'text/html; charset=utf-8', bigArticle(Number(url.searchParams.get('kb') ?? 1024)));
        return send(404, 'text/plain', 'no such page');
    }
  };
  const server: Server = createServer(handle);
  server.on('connection', (socket) => (sockets.add(socket), socket.on('close', () => sockets.delete(socket))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An article page of about `kb` kilobytes: many sections of prose in a page with chrome around. */
export function bigArticle(kb: number): string {
  const paragraph =
    'Harbour records describe the keepers, their families and the ships they watched over; each entry notes the weather, ' +
    'the state of the lamp and any vessel that passed within sight of the tower during the long night watch. ';
  const sections: string[] = [];
  let size = 0;
  for (let i = 1; size < kb * 1024; i++) {
    const section = `<h2>Section ${i}</h2><p>${paragraph.repeat(3)}</p><p>${paragraph.repeat(2)} <a href="/s/${i}">more</a></p>`;
    sections.push(section);
    size += section.length;
  }
  return `<!doctype html><html><head><title>The Big Logbook</title><script>var t = 1;</script></head><body><nav><a href="/">Home</a></nav><article><h1>The Big Logbook</h1>${sections.join('')}</article><footer>f</footer></body></html>`;
}

export interface DnsStub {
  port: number;
  /** Queries seen, as "name TYPE". */
  queries: string[];
  close(): Promise<void>;
}

const TYPES: Record<number, 'A' | 'AAAA'> = { 1: 'A', 28: 'AAAA' };

/** A DNS server on 127.0.0.1 (UDP) answering from `records`; other names get NXDOMAIN. */
export async function startDnsStub(records: Record<string, { A?: string[]; AAAA?: string[] }>): Promise<DnsStub> {
  const queries: string[] = [];
  const socket: Socket = createSocket('udp4');
  socket.on('message', (message, remote) => {
    const labels: string[] = [];
    let offset = 12;
    while (message[offset]! > 0) {
      const length = message[offset]!;
      labels.push(message.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += length + 1;
    }
    const questionEnd = offset + 5;
    const qtype = message.readUInt16BE(offset + 1);
    const name = labels.join('.').toLowerCase();
    const type = TYPES[qtype];
    queries.push(`${name} ${type ?? qtype}`);
    const entry = records[name];
    const answers = entry && type ? (entry[type] ?? []) : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(message.readUInt16BE(0), 0);
    header.writeUInt16BE(entry ? 0x8180 : 0x8183, 2); // response, recursion available; NXDOMAIN for unknown names
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const parts: Buffer[] = [header, message.subarray(12, questionEnd)];
    for (const address of answers) {
      const rdata = type === 'A' ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0);
      record.writeUInt16BE(qtype, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(rdata.length, 10);
      parts.push(record, rdata);
    }
    socket.send(Buffer.concat(parts), remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    port: socket.address().port,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::');
  const groups = (text: string) => (text ? text.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = address.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  const bytes = Buffer.alloc(16);
  all.forEach((group, index) => bytes.writeUInt16BE(parseInt(group, 16), index * 2));
  return bytes;
}
