/**
 * Pages the browser tests (and the bench) serve on 127.0.0.1, and a "private service" on
 * 127.0.0.2 that counts every request reaching it: the browser must never reach it while
 * only 127.0.0.1 is trusted.
 */
import { createServer, type Server } from 'node:http';

export interface TestSite {
  base: string;
  secret: string;
  secretHits: string[];
  close(): Promise<void>;
}

const html = (body: string, title = 'Test page') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

export function pages(secret: string): Record<string, string> {
  return {
    '/page': html(`<h1>Controls</h1>
      <label>Email <input id="email" name="email"></label>
      <label>Colour <select id="colour"><option value="r">Red</option><option value="g">Green</option></select></label>
      <button id="go" onclick="document.getElementById('out').textContent='clicked '+document.getElementById('email').value+' '+document.getElementById('colour').value">Go</button>
      <a href="/form">Form</a>
      <p id="out"></p>`),
    '/form': html(
      `<h1>Step 1</h1><form action="/step2" method="get"><label>Name <input name="name"></label><button type="submit">Next</button></form>`,
      'Step 1',
    ),
    '/delayed': html(`<h1>Loading</h1><script>
      setTimeout(() => { const m = document.createElement('div'); m.id = 'main'; m.textContent = 'Main ready'; document.body.appendChild(m); }, 300);
      setTimeout(() => { window.ready = true; history.pushState({}, '', '/dash'); }, 400);
    </script>`),
    '/hostile': html(`<h1>Hostile</h1>
      <img src="${secret}/img.png">
      <iframe src="${secret}/frame"></iframe>
      <script>fetch('${secret}/fetch').catch(() => {}); fetch('http://localhost:1/x').catch(() => {});</script>`),
    '/big': html(
      `<main>${Array.from({ length: 200 }, (_, i) => `<section><h2>Item ${i}</h2><p>Text ${i}</p><button>Act ${i}</button><a href="/page">Link ${i}</a></section>`).join('')}</main>`,
      'Big',
    ),
  };
}

/**
 * A page that asks a STUN server on 127.0.0.1:<port> for its addresses, the way a hostile page
 * would probe local UDP services, and says when ICE gathering is complete and what it found.
 */
function webrtcPage(stunPort: number): string {
  return html(
    `<h1>WebRTC</h1><p id="state">gathering</p><script>
    const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${stunPort}' }] });
    const found = [];
    pc.onicecandidate = (event) => { if (event.candidate) found.push(event.candidate.type); };
    pc.onicegatheringstatechange = () => {
      if (pc.iceGatheringState !== 'complete') return;
      document.getElementById('state').textContent = 'ICE gathering complete: [' + found.join(',') + ']';
    };
    pc.createDataChannel('probe');
    pc.createOffer().then((offer) => pc.setLocalDescription(offer));
  </script>`,
    'WebRTC',
  );
}

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as { port: number }).port)));
}

export async function startTestSite(): Promise<TestSite> {
  const secretHits: string[] = [];
  const secretServer = createServer((req, res) => {
    secretHits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p>secret</p>');
  });
  const secretPort = await listen(secretServer, '127.0.0.2');
  const secret = `http://127.0.0.2:${secretPort}`;
  const table = pages(secret);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/step2') {
      const name = url.searchParams.get('name') ?? '';
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          html(
            `<h1>Step 2</h1><p>Hello ${name.replace(/[<>&]/g, '')}</p><form action="/done" method="get"><input type="hidden" name="name" value="${name.replace(/["<>&]/g, '')}"><label>City <input name="city"></label><button type="submit">Finish</button></form>`,
            'Step 2',
          ),
        );
    }
    if (url.pathname === '/done') {
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          html(
            `<h1>Done</h1><p id="result">Registered ${url.searchParams.get('name')} from ${url.searchParams.get('city')}</p>`,
            'Done',
          ),
        );
    }
    if (url.pathname === '/go-private') return void res.writeHead(302, { location: `${secret}/redirected` }).end();
    if (url.pathname === '/webrtc') {
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(webrtcPage(Number(url.searchParams.get('stun'))));
    }
    const page = table[url.pathname];
    if (!page) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  });
  const port = await listen(server, '127.0.0.1');
  return {
    base: `http://127.0.0.1:${port}`,
    secret,
    secretHits,
    close: async () => {
      server.closeAllConnections();
      secretServer.closeAllConnections();
      await Promise.all([
        new Promise((resolve) => server.close(resolve)),
        new Promise((resolve) => secretServer.close(resolve)),
      ]);
    },
  };
}
