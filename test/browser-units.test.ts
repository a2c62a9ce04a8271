/**
 * The browser plugin's parts without Chromium: the policy (wildcards, blocked names,
 * strict mode for sandboxed sessions), the SSRF proxy (one DNS answer, checked and then
 * connected to; CONNECT refused; every redirect hop is a new checked request), snapshot
 * shaping, launch settings, and that loading the plugin never imports playwright-core.
 */
import { createServer, request, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import JSON5 from 'json5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchImports } from './import-watch.js';

// Before anything can import it: loading and using the plugin's cheap paths must not.
const seen = watchImports('/node_modules/playwright-core/');

const { createTestKernel } = await import('../sdk/testing.js');
const { REPO } = await import('./helpers.js');
const { hostMatches, urlCheck } = await import('../plugins/browser/policy.js');
const { netService } = await import('../host/net/index.js');
const { startPolicyProxy } = await import('../plugins/browser/proxy.js');
const { shapeSnapshot } = await import('../plugins/browser/snapshot.js');
const { profileSettings } = await import('../plugins/browser/settings.js');
const { PLAYWRIGHT_CORE } = await import('../plugins/browser/playwright.js');
const { normalizeKey, normalizeRef } = await import('../plugins/browser/actions.js');

const PLUGIN = join(REPO, 'plugins', 'browser');

describe('loading', () => {
  it('a kernel with the browser plugin starts, lists and reports status without importing playwright-core', async () => {
    const kernel = await createTestKernel({
      plugins: [PLUGIN],
      config: { browser: { profiles: { work: { headless: true } } } },
    });
    try {
      await kernel.start();
      const status = await kernel.runTool('browser', { action: 'status' });
      expect(JSON.parse((status.content[0] as { text: string }).text)).toMatchObject({
        enabled: true,
        profile: 'openclaw',
        running: false,
        headless: true,
      });
      const profiles = await kernel.runTool('browser', { action: 'profiles' });
      expect(JSON.parse((profiles.content[0] as { text: string }).text).profiles).toEqual([
        { name: 'openclaw', running: false, default: true },
        { name: 'work', running: false, default: false },
      ]);
      const unknown = await kernel.runTool('browser', { action: 'status', profile: 'nope' });
      expect((unknown.content[0] as { text: string }).text).toMatch(
        /unknown browser profile "nope" \(profiles: openclaw, work\)/,
      );
      await seen.settled();
      expect(seen).toEqual([]);
    } finally {
      await kernel.dispose();
    }
  });

  it('browser.enabled=false refuses calls; the manifest lists playwright-core as PLAYWRIGHT_CORE', async () => {
    const kernel = await createTestKernel({ plugins: [PLUGIN], config: { browser: { enabled: false } } });
    try {
      const refused = await kernel.runTool('browser', { action: 'navigate', url: 'https://example.com/' });
      expect(refused).toMatchObject({ isError: true });
      expect((refused.content[0] as { text: string }).text).toMatch(/browser\.enabled is false/);
    } finally {
      await kernel.dispose();
    }
    const manifest = JSON5.parse(readFileSync(join(PLUGIN, 'openclaw.plugin.json'), 'utf8'));
    expect(manifest.runtimeDependencies).toEqual([PLAYWRIGHT_CORE]);
  });
});

describe('the tool choke point', () => {
  it('before_tool_call hooks see and can block browser calls; after_tool_call sees the result', async () => {
    const { definePlugin } = await import('../sdk/index.js');
    const after: string[] = [];
    const guard = definePlugin({
      id: 'browse-guard',
      register(api) {
        api.on('before_tool_call', (event) =>
          event.toolName === 'browser' && String(event.params.url ?? '').includes('forbidden')
            ? { block: true, blockReason: 'not that site' }
            : undefined,
        );
        api.on('after_tool_call', (event) => void after.push(`${event.toolName} ${String(event.params.action)}`));
      },
    });
    const kernel = await createTestKernel({ plugins: [PLUGIN, guard] });
    try {
      const blocked = await kernel.runTool('browser', { action: 'navigate', url: 'https://forbidden.example/' });
      expect(blocked.isError).toBe(true);
      expect((blocked.content[0] as { text: string }).text).toMatch(/not that site/);
      await kernel.runTool('browser', { action: 'status' });
      expect(after).toContain('browser status');
      await seen.settled();
      expect(seen).toEqual([]);
    } finally {
      await kernel.dispose();
    }
  });
});

describe('policy', () => {
  const resolver = (table: Record<string, string>) => async (host: string) => {
    if (!(host in table)) throw new Error(`ENOTFOUND ${host}`);
    return [{ address: table[host]!, family: table[host]!.includes(':') ? 6 : 4 }];
  };
  const dns = resolver({
    'public.test': '93.184.216.34',
    'lan.test': '192.168.1.20',
    'dev.corp.test': '10.0.0.7',
    'corp.test': '10.0.0.8',
  });

  it('matches exact hosts and *.wildcards (not the apex)', () => {
    expect(hostMatches('example.com', 'example.com')).toBe(true);
    expect(hostMatches('*.example.com', 'a.example.com')).toBe(true);
    expect(hostMatches('*.example.com', 'example.com')).toBe(false);
    expect(hostMatches('*.example.com', 'badexample.com')).toBe(false);
    expect(hostMatches('[::1]', '::1')).toBe(true);
  });

  it('refuses private names and addresses unless trusted; blockedHostnames wins; a sandboxed session ignores the allow rules', async () => {
    const check = urlCheck(
      netService(),
      { allowedHostnames: ['*.corp.test', '127.0.0.1'], blockedHostnames: ['evil.corp.test'] },
      false,
      dns,
    );
    expect(await check(new URL('http://public.test/'))).toMatchObject({ address: '93.184.216.34' });
    expect(await check(new URL('http://lan.test/'))).toEqual({
      refused: expect.stringMatching(/192\.168\.1\.20, a private .*allowedHostnames/),
    });
    expect(await check(new URL('http://dev.corp.test/'))).toMatchObject({ address: '10.0.0.7' });
    expect(await check(new URL('http://corp.test/'))).toEqual({ refused: expect.stringMatching(/10\.0\.0\.8/) });
    expect(await check(new URL('http://evil.corp.test/'))).toEqual({
      refused: expect.stringMatching(/blockedHostnames/),
    });
    expect(await check(new URL('http://127.0.0.1:9/'))).toMatchObject({ address: '127.0.0.1' });
    for (const url of [
      'http://localhost/',
      'http://printer.local/',
      'http://metadata.google.internal/',
      'http://app.localhost/',
    ]) {
      expect(await check(new URL(url)), url).toEqual({ refused: expect.stringMatching(/internal name/) });
    }
    for (const url of [
      'http://[::1]/',
      'http://2130706434/',
      'http://0x7f.2/',
      'http://[::ffff:10.0.0.1]/',
      'http://169.254.169.254/',
      'http://0.0.0.0/',
      'ftp://public.test/',
      'file:///etc/passwd',
    ]) {
      expect(await check(new URL(url)), url).toHaveProperty('refused');
    }
    const strict = urlCheck(
      netService(),
      { allowedHostnames: ['*.corp.test', '127.0.0.1'], dangerouslyAllowPrivateNetwork: true },
      true,
      dns,
    );
    expect(await strict(new URL('http://127.0.0.1/'))).toEqual({
      refused: expect.stringMatching(/sandboxed session reaches public addresses only/),
    });
    expect(await strict(new URL('http://dev.corp.test/'))).toHaveProperty('refused');
    expect(await strict(new URL('http://public.test/'))).toMatchObject({ address: '93.184.216.34' });
    const legacy = urlCheck(netService(), { allowPrivateNetwork: true }, false, dns);
    expect(await legacy(new URL('http://lan.test/'))).toMatchObject({ address: '192.168.1.20' });
  });
});

describe('the SSRF proxy', () => {
  let origin: Server;
  let port = 0;
  const hits: string[] = [];
  beforeAll(async () => {
    origin = createServer((req, res) => {
      hits.push(`${req.headers.host} ${req.url}`);
      if (req.url === '/hop') return void res.writeHead(302, { location: `http://lan.test:${port}/inside` }).end();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    port = (origin.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => origin.close(() => resolve())));

  type Proxy = { server: string; username: string; password: string };
  const basic = (proxy: Proxy | { server: string }) =>
    'username' in proxy ? `Basic ${Buffer.from(`${proxy.username}:${proxy.password}`).toString('base64')}` : '';
  const viaProxy = (proxy: Proxy | { server: string }, url: string) =>
    new Promise<{ status: number; body: string; blocked?: string }>((resolve, reject) => {
      const { port: proxyPort } = new URL(proxy.server);
      const auth = basic(proxy);
      const req = request(
        {
          host: '127.0.0.1',
          port: Number(proxyPort),
          path: url,
          headers: { host: new URL(url).host, ...(auth ? { 'proxy-authorization': auth } : {}) },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body,
              blocked: res.headers['x-claw-browser-blocked'] as string | undefined,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  const tunnel = (proxy: Proxy | { server: string }, authority: string) =>
    new Promise<string>((resolve) => {
      const auth = basic(proxy);
      const socket = connect(Number(new URL(proxy.server).port), '127.0.0.1', () =>
        socket.write(
          `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth ? `Proxy-Authorization: ${auth}\r\n` : ''}\r\n`,
        ),
      );
      let reply = '';
      socket.on('data', (chunk) => {
        reply += chunk;
        if (reply.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(reply.split('\r\n')[0]!);
        }
      });
      socket.on('close', () => resolve(reply.split('\r\n')[0]!));
    });

  it('resolves once and connects to the checked address: a rebinding name cannot swap in loopback', async () => {
    const lookups: string[] = [];
    let rebinding = 0;
    const resolve = async (host: string) => {
      lookups.push(host);
      if (host === 'rebind.test') return [{ address: rebinding++ === 0 ? '192.0.2.1' : '127.0.0.1', family: 4 }];
      if (host === 'trusted.test') return [{ address: '127.0.0.1', family: 4 }];
      return [{ address: '192.168.1.20', family: 4 }];
    };
    const proxy = await startPolicyProxy(
      urlCheck(netService(), { allowedHostnames: ['trusted.test'] }, false, resolve),
    );
    try {
      // 192.0.2.1 is documentation space: refused by the check, and never looked up again.
      const first = await viaProxy(proxy, `http://rebind.test:${port}/a`);
      expect(first).toMatchObject({ status: 403, blocked: expect.stringMatching(/192\.0\.2\.1/) });
      expect(lookups).toEqual(['rebind.test']);
      // A trusted name is reached at the address it resolved to, with its own Host header.
      const trusted = await viaProxy(proxy, `http://trusted.test:${port}/ok`);
      expect(trusted).toMatchObject({ status: 200, body: 'hello' });
      expect(hits).toEqual([`trusted.test:${port} /ok`]);
      // A redirect passes through as a response; the hop is a new request, checked again.
      const hop = await viaProxy(proxy, `http://trusted.test:${port}/hop`);
      expect(hop.status).toBe(302);
      expect(await viaProxy(proxy, `http://lan.test:${port}/inside`)).toMatchObject({ status: 403 });
      expect(hits).toEqual([`trusted.test:${port} /ok`, `trusted.test:${port} /hop`]);
      // HTTPS arrives as CONNECT: refused for a private name, tunnelled for a trusted one.
      expect(await tunnel(proxy, `lan.test:443`)).toBe('HTTP/1.1 403 Forbidden');
      expect(await tunnel(proxy, `trusted.test:${port}`)).toBe('HTTP/1.1 200 Connection Established');
      expect(proxy.blocked.map((entry) => entry.url)).toEqual([
        `http://rebind.test:${port}/a`,
        `http://lan.test:${port}/inside`,
        'https://lan.test/',
      ]);
      // Another local process without the browser's credentials cannot borrow the proxy (and its allowlist).
      expect(await viaProxy({ server: proxy.server }, `http://trusted.test:${port}/ok`)).toMatchObject({ status: 407 });
      expect(await tunnel({ server: proxy.server }, `trusted.test:${port}`)).toBe(
        'HTTP/1.1 407 Proxy Authentication Required',
      );
      expect(await viaProxy({ ...proxy, password: 'guess' }, `http://trusted.test:${port}/ok`)).toMatchObject({
        status: 407,
      });
      expect(hits).toHaveLength(2);
    } finally {
      await proxy.close();
    }
  });
});

describe('snapshot shaping, refs, keys and launch settings', () => {
  const raw = [
    '- generic [active] [ref=e1]:',
    '  - heading "Hi" [level=1] [ref=e2]',
    '  - generic [ref=e3]:',
    '    - generic [ref=e4]:',
    '      - text: Email',
    '      - textbox "Email" [ref=e5]',
    '    - button "Go" [ref=e6] [cursor=pointer]',
    '  - paragraph [ref=e7]: some text',
  ].join('\n');

  it('interactive keeps only controls, flat; compact lifts wrappers away; refs and stats are reported', () => {
    const interactive = shapeSnapshot(raw, { interactive: true });
    expect(interactive.snapshot).toBe('- textbox "Email" [ref=e5]\n- button "Go" [ref=e6] [cursor=pointer]');
    expect(interactive.refs).toEqual({ e5: { role: 'textbox', name: 'Email' }, e6: { role: 'button', name: 'Go' } });
    const compact = shapeSnapshot(raw, { compact: true });
    expect(compact.snapshot).toBe(
      [
        '- heading "Hi" [level=1] [ref=e2]',
        '- text: Email',
        '- textbox "Email" [ref=e5]',
        '- button "Go" [ref=e6]',
        '- paragraph [ref=e7]: some text',
      ].join('\n'),
    );
    expect(compact.stats).toMatchObject({ lines: 5, refs: 4, interactive: 2 });
    const cut = shapeSnapshot(raw, { maxChars: 40 });
    expect(cut.truncated).toBe(true);
    expect(cut.snapshot).toMatch(/snapshot truncated at 40 characters/);
  });

  it('refs, keys and flags', () => {
    expect(normalizeRef('12')).toBe('e12');
    expect(normalizeRef('f1e3')).toBe('f1e3');
    expect(() => normalizeRef('#go')).toThrow(/not a snapshot ref/);
    expect(() => normalizeRef(undefined)).toThrow(/ref is required/);
    expect(normalizeKey('Ctrl+Shift+T')).toBe('Control+Shift+T');
    expect(normalizeKey('Esc')).toBe('Escape');
    expect(normalizeKey('Control++')).toBe('Control++');
    const section = {
      enabled: true,
      evaluateEnabled: true,
      defaultProfile: 'openclaw',
      headless: true,
      noSandbox: false,
      idleTimeoutMs: 1,
      executablePath: '/usr/bin/chromium',
    };
    const settings = profileSettings({ ...section, profiles: { work: { headless: false } } }, 'work', '/state');
    expect(settings).toMatchObject({
      name: 'work',
      headless: false,
      userDataDir: '/state/browser/work/user-data',
      executablePath: '/usr/bin/chromium',
    });
    expect(settings.args).toEqual(
      expect.arrayContaining([
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ]),
    );
    expect(settings.args.includes('--no-sandbox')).toBe(process.getuid?.() === 0);
    expect(() =>
      profileSettings({ ...section, extraArgs: ['--proxy-server=http://x:1'] }, 'openclaw', '/state'),
    ).toThrow(/may not contain --proxy-server/);
    // WebRTC's UDP never meets the proxy: the flag that keeps it off cannot be undone from config.
    expect(settings.args).toContain('--webrtc-ip-handling-policy=disable_non_proxied_udp');
    const webrtc = { ...section, extraArgs: ['--webrtc-ip-handling-policy=default'] };
    expect(() => profileSettings(webrtc, 'openclaw', '/state')).toThrow(/may not contain --webrtc-ip-handling-policy/);
    expect(() => profileSettings(section, 'work', '/state')).toThrow(/unknown browser profile "work"/);
  });
});
