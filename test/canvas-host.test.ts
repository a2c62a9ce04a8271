/**
 * The canvas host on a real gateway: capability URLs (missing, forged, expired, valid), the
 * sandbox and content-type headers, containment inside the agent's canvas folder (encoded
 * "..", dotfiles, symlinks out), and the live-reload stream announcing a change.
 */
import { request } from 'node:http';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCapability, loadCanvasSecret, mintCapability } from '../plugins/canvas/capability.js';
import { startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with the path sent exactly as written (fetch would resolve ".." and %2e%2e first). */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('canvas host', () => {
  let gw: RunningGateway;
  let secret: Buffer;
  let cap: string;
  const outside = tempDir('claw-canvas-outside-');

  beforeAll(async () => {
    gw = await startGateway({
      plugins: [join(REPO, 'plugins', 'canvas')],
      config: { agents: { list: [{ id: 'main' }, { id: 'ops' }] } },
    });
    const canvas = join(gw.stateDir, 'workspace', 'canvas');
    mkdirSync(join(canvas, 'sub'), { recursive: true });
    writeFileSync(
      join(canvas, 'index.html'),
      '<!doctype html><html><head><title>Hi</title></head><body>main page</body></html>',
    );
    writeFileSync(join(canvas, 'style.css'), 'body { color: red }');
    writeFileSync(join(canvas, 'dot.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    writeFileSync(join(canvas, 'data.bin'), 'raw');
    writeFileSync(join(canvas, '.env'), 'SECRET=1');
    writeFileSync(join(canvas, 'sub', 'index.html'), '<p>sub page</p>');
    writeFileSync(join(outside, 'private.txt'), 'PRIVATE');
    symlinkSync(join(outside, 'private.txt'), join(canvas, 'escape.txt'));
    symlinkSync(join(canvas, 'style.css'), join(canvas, 'alias.css'));
    const ops = join(gw.stateDir, 'workspace-ops', 'canvas');
    mkdirSync(ops, { recursive: true });
    writeFileSync(join(ops, 'index.html'), '<p>ops page</p>');
    secret = loadCanvasSecret(gw.stateDir);
    cap = mintCapability(secret, 'main', 60_000);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('refuses requests without a valid capability, saying why', async () => {
    const missing = await get(gw.port, '/__openclaw__/canvas/index.html');
    expect(missing.status).toBe(401);
    expect(missing.body).toMatch(/capability.*missing or malformed/);

    const forged = mintCapability(Buffer.alloc(32, 7), 'main', 60_000);
    const wrong = await get(gw.port, `/__openclaw__/canvas/${forged}/index.html`);
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatch(/signature does not match/);

    const expired = mintCapability(secret, 'main', -60_000);
    const late = await get(gw.port, `/__openclaw__/canvas/${expired}/index.html`);
    expect(late.status).toBe(403);
    expect(late.body).toMatch(/expired at \d{4}-/);

    // A capability for one agent says so in its signed text: renaming the agent breaks it.
    const renamed = cap.replace('.main.', '.ops.');
    expect((await get(gw.port, `/__openclaw__/canvas/${renamed}/index.html`)).status).toBe(403);
  });

  it('serves the agent folder with the sandbox headers and the page script', async () => {
    const page = await get(gw.port, `/__openclaw__/canvas/${cap}/index.html`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toMatch(/^sandbox allow-scripts(;|$)/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).toContain('main page');
    // The script sits first in <head> and listens to this capability's reload stream.
    expect(page.body).toMatch(
      new RegExp(`<head><script>.*/__openclaw__/canvas/${cap.replace(/\./g, '\\.')}/\\.reload`, 's'),
    );

    const root = await get(gw.port, `/__openclaw__/canvas/${cap}/`);
    expect(root.body).toContain('main page');
    const css = await get(gw.port, `/__openclaw__/canvas/${cap}/style.css`);
    expect([css.status, css.headers['content-type'], css.body]).toEqual([
      200,
      'text/css; charset=utf-8',
      'body { color: red }',
    ]);
    expect(css.headers['content-security-policy']).toMatch(/^sandbox allow-scripts/);
    expect((await get(gw.port, `/__openclaw__/canvas/${cap}/dot.png`)).headers['content-type']).toBe('image/png');
    expect((await get(gw.port, `/__openclaw__/canvas/${cap}/data.bin`)).headers['content-type']).toBe(
      'application/octet-stream',
    );
    expect((await get(gw.port, `/__openclaw__/canvas/${cap}/alias.css`)).body).toBe('body { color: red }');

    const ops = mintCapability(secret, 'ops', 60_000);
    expect((await get(gw.port, `/__openclaw__/canvas/${ops}/index.html`)).body).toContain('ops page');
  });

  it('redirects folders to their trailing slash so relative links work', async () => {
    const bare = await get(gw.port, `/__openclaw__/canvas/${cap}`);
    expect([bare.status, bare.headers.location]).toEqual([301, `/__openclaw__/canvas/${cap}/`]);
    const sub = await get(gw.port, `/__openclaw__/canvas/${cap}/sub`);
    expect([sub.status, sub.headers.location]).toEqual([301, `/__openclaw__/canvas/${cap}/sub/`]);
    expect((await get(gw.port, `/__openclaw__/canvas/${cap}/sub/`)).body).toContain('sub page');
  });

  it('keeps requests inside the canvas folder', async () => {
    const cases = {
      dotfile: `/__openclaw__/canvas/${cap}/.env`,
      dotdot: `/__openclaw__/canvas/${cap}/../../workspace/canvas/index.html`,
      encoded: `/__openclaw__/canvas/${cap}/%2e%2e/%2e%2e/openclaw.json`,
      slash: `/__openclaw__/canvas/${cap}/sub%2F..%2F..%2Fx`,
      symlink: `/__openclaw__/canvas/${cap}/escape.txt`,
      missing: `/__openclaw__/canvas/${cap}/nope.html`,
    };
    for (const [name, path] of Object.entries(cases)) {
      const answer = await get(gw.port, path);
      expect([name, answer.status]).toEqual([name, name === 'slash' ? 400 : 404]);
      expect(answer.body).not.toContain('PRIVATE');
      expect(answer.body).not.toContain('SECRET');
    }
    expect((await get(gw.port, cases.symlink)).body).toMatch(/outside the canvas folder/);
  });

  it('tells a listening page to reload when a file changes', async () => {
    const canvas = join(gw.stateDir, 'workspace', 'canvas');
    const seen: string[] = [];
    const stream = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      // As a sandboxed page asks: its origin is "null", which the gateway refuses anywhere else.
      const req = request(
        {
          host: '127.0.0.1',
          port: gw.port,
          path: `/__openclaw__/canvas/${cap}/.reload`,
          headers: { origin: 'null' },
        },
        resolve,
      );
      req.on('error', reject);
      req.end();
    });
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['access-control-allow-origin']).toBe('*');
    const waitFor = (text: string) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (seen.join('').includes(text)) {
            stream.off('data', onData);
            resolve();
          }
        };
        const onData = (chunk: Buffer) => (seen.push(chunk.toString('utf8')), check());
        stream.on('data', onData);
        check();
      });
    await waitFor('event: ready');
    writeFileSync(join(canvas, '.swap'), 'editor temp file');
    writeFileSync(join(canvas, 'index.html'), '<p>changed</p>');
    await waitFor('event: reload');
    const frame = seen.join('').split('event: reload\n')[1]!;
    expect(JSON.parse(/^data: (.*)$/m.exec(frame)![1]!)).toEqual({ paths: ['index.html'] });
    stream.destroy();
  });

  it('lets sandboxed pages read their folder, and nothing else of the gateway', async () => {
    const data = await get(gw.port, `/__openclaw__/canvas/${cap}/style.css`, { origin: 'null' });
    expect([data.status, data.headers['access-control-allow-origin']]).toEqual([200, '*']);
    expect((await get(gw.port, '/health', { origin: 'null' })).status).toBe(403);
    expect((await get(gw.port, '/__openclaw__/canvasX', { origin: 'null' })).status).toBe(403);
  });

  it('mints capabilities that check out until they expire', () => {
    const now = Date.now();
    const minted = mintCapability(secret, 'main', 60_000, now);
    expect(checkCapability(secret, minted, now)).toMatchObject({ ok: true, agentId: 'main' });
    expect(checkCapability(secret, minted, now + 61_000)).toMatchObject({ ok: false, status: 403 });
    expect(loadCanvasSecret(gw.stateDir).equals(secret)).toBe(true);
  });
});
