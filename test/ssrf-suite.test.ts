/**
 * The SSRF acceptance suite: hostile URLs, through the real web_fetch tool and the kernel's
 * tool choke point, every one refused before a byte is sent. Names are resolved by a DNS stub
 * on 127.0.0.1 (tools.web.fetch.dnsServers): "allowed.test" is the one host the config
 * trusts, "evil.test" is a name that resolves to 127.0.0.1. The trusted host is then fetched
 * and its article extracted.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { REPO } from './helpers.js';
import { startDnsStub, startWebServer, type DnsStub, type WebServer } from './web-helpers.js';

const WEB_FETCH = join(REPO, 'plugins', 'web-fetch');
const text = (result: { content: Array<{ type: string; text?: string }> }) =>
  result.content.map((part) => part.text ?? '').join('');

let web: WebServer;
let dns: DnsStub;
let kernel: TestKernel;

const fetchConfig = (extra: Record<string, unknown> = {}) => ({
  tools: {
    web: {
      fetch: {
        dnsServers: [`127.0.0.1:${dns.port}`],
        cacheTtlMinutes: 0,
        timeoutSeconds: 5,
        ssrfPolicy: { allowedHostnames: ['allowed.test'], blockedHostnames: ['*.blocked.test'] },
        ...extra,
      },
    },
  },
});

beforeAll(async () => {
  web = await startWebServer();
  dns = await startDnsStub({
    'allowed.test': { A: ['127.0.0.1'] },
    'evil.test': { A: ['127.0.0.1'] },
    'x.blocked.test': { A: ['93.184.216.34'] },
    'mixed.test': { A: ['93.184.216.34', '10.0.0.5'] },
    'v6only.test': { AAAA: ['::1'] },
    'metadata.test': { A: ['169.254.169.254'] },
    'cgnat.test': { A: ['100.100.100.100'] },
    'mapped.test': { AAAA: ['::ffff:7f00:1'] },
  });
  kernel = await createTestKernel({ plugins: [WEB_FETCH], config: fetchConfig() });
});

afterAll(async () => {
  await kernel?.dispose();
  await web?.close();
  await dns?.close();
});

describe('SSRF suite through web_fetch', () => {
  it('refuses every hostile URL before connecting, and prints the table', async () => {
    const p = () => web.port;
    const redirect = (to: string) => `http://allowed.test:${p()}/redirect?to=${encodeURIComponent(to)}`;
    const hostile: Array<[string, string]> = [
      // loopback and "this network", in every spelling
      ['loopback', `http://127.0.0.1:${p()}/private-data`],
      ['loopback', 'http://127.0.0.2/private-data'],
      ['loopback name', `http://localhost:${p()}/private-data`],
      ['loopback name', `http://localhost.:${p()}/private-data`],
      ['loopback name', `http://app.localhost:${p()}/private-data`],
      ['this network', `http://0.0.0.0:${p()}/private-data`],
      ['this network', `http://0:${p()}/private-data`],
      ['decimal IPv4', `http://2130706433:${p()}/private-data`],
      ['hex IPv4', `http://0x7f000001:${p()}/private-data`],
      ['hex short IPv4', `http://0x7f.1:${p()}/private-data`],
      ['octal IPv4', `http://0177.0.0.1:${p()}/private-data`],
      ['octal whole IPv4', `http://017700000001:${p()}/private-data`],
      ['short IPv4', `http://127.1:${p()}/private-data`],
      ['short IPv4', `http://127.0.1:${p()}/private-data`],
      ['percent-encoded', `http://%31%32%37.0.0.1:${p()}/private-data`],
      ['credentials in URL', `http://user:pass@127.0.0.1:${p()}/private-data`],
      // private, link-local, CGNAT, multicast, reserved
      ['private 10/8', 'http://10.0.0.1/'],
      ['private 10/8', 'http://10.255.255.254/'],
      ['private 172.16/12', 'http://172.16.0.1/'],
      ['private 172.16/12', 'http://172.31.255.254/'],
      ['private 192.168/16', 'http://192.168.1.1/'],
      ['link-local / metadata', 'http://169.254.169.254/latest/meta-data/'],
      ['metadata name', 'http://metadata.google.internal/computeMetadata/v1/'],
      ['CGNAT', 'http://100.64.0.1/'],
      ['CGNAT', 'http://100.127.255.254/'],
      ['multicast', 'http://224.0.0.1/'],
      ['multicast', 'http://239.255.255.250:1900/'],
      ['reserved', 'http://240.0.0.1/'],
      ['broadcast', 'http://255.255.255.255/'],
      ['benchmarking', 'http://198.18.0.1/'],
      ['documentation', 'http://192.0.2.1/'],
      ['IETF protocol', 'http://192.0.0.8/'],
      // IPv6
      ['v6 loopback', `http://[::1]:${p()}/private-data`],
      ['v6 unspecified', `http://[::]:${p()}/private-data`],
      ['v6 link-local', 'http://[fe80::1]/'],
      ['v6 ULA', 'http://[fd00::1]/'],
      ['v6 ULA', 'http://[fc00::1]/'],
      ['v6 site-local', 'http://[fec0::1]/'],
      ['v6 multicast', 'http://[ff02::1]/'],
      ['v4-mapped', `http://[::ffff:127.0.0.1]:${p()}/private-data`],
      ['v4-mapped', 'http://[::ffff:10.0.0.1]/'],
      ['v4-mapped full form', `http://[0:0:0:0:0:ffff:7f00:1]:${p()}/private-data`],
      ['v4-compatible', `http://[::127.0.0.1]:${p()}/private-data`],
      ['NAT64', 'http://[64:ff9b::7f00:1]/'],
      ['NAT64', 'http://[64:ff9b::a00:1]/'],
      ['6to4', 'http://[2002:7f00:1::]/'],
      ['6to4', 'http://[2002:c0a8:101::1]/'],
      ['Teredo', 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/'],
      ['ISATAP', 'http://[2607:f8b0::5efe:a00:1]/'],
      // names
      ['DNS → 127.0.0.1', `http://evil.test:${p()}/private-data`],
      ['DNS → public + private', 'http://mixed.test/'],
      ['DNS AAAA → ::1', `http://v6only.test:${p()}/private-data`],
      ['DNS → metadata', 'http://metadata.test/'],
      ['DNS → CGNAT', 'http://cgnat.test/'],
      ['DNS AAAA → mapped', `http://mapped.test:${p()}/private-data`],
      ['internal name', 'http://svc.internal/'],
      ['mDNS name', 'http://printer.local/'],
      ['blockedHostnames', 'http://x.blocked.test/'],
      // redirects from the trusted host
      ['redirect → loopback', redirect(`http://127.0.0.1:${p()}/private-data`)],
      ['redirect → DNS loopback', redirect(`http://evil.test:${p()}/private-data`)],
      ['redirect → mapped v6', redirect(`http://[::ffff:7f00:1]:${p()}/private-data`)],
      ['redirect → metadata', redirect('http://169.254.169.254/latest/meta-data/')],
      ['redirect → decimal', redirect(`http://2130706433:${p()}/private-data`)],
      ['redirect → file', redirect('file:///etc/passwd')],
      // schemes
      ['file scheme', 'file:///etc/passwd'],
      ['ftp scheme', 'ftp://allowed.test/'],
      ['gopher scheme', `gopher://127.0.0.1:${p()}/_x`],
      ['data scheme', 'data:text/html,<h1>hi</h1>'],
      ['javascript scheme', 'javascript:alert(1)'],
    ];
    expect(hostile.length).toBeGreaterThanOrEqual(40);
    const hitsBefore = web.hits.filter((hit) => hit.includes('/private-data')).length;
    const rows: Array<{ kind: string; url: string; blocked: boolean; reason: string }> = [];
    for (const [kind, url] of hostile) {
      const result = await kernel.runTool('web_fetch', { url });
      const message = text(result);
      const blocked = result.isError === true && /refused|blocked by the SSRF policy|only http and https/.test(message);
      rows.push({
        kind,
        url: url.length > 70 ? `${url.slice(0, 67)}...` : url,
        blocked,
        reason: message.replace(/^web_fetch: refused \S+: /, '').slice(0, 110),
      });
    }
    console.log(`\nSSRF suite: ${rows.filter((row) => row.blocked).length}/${rows.length} blocked`);
    console.table(rows);
    expect(rows.filter((row) => !row.blocked)).toEqual([]);
    // Nothing reached the secret: not directly, not through a redirect.
    expect(web.hits.filter((hit) => hit.includes('/private-data')).length).toBe(hitsBefore);
  });

  it('fetches the trusted host through its pinned address and extracts the article', async () => {
    const queriesBefore = dns.queries.filter((query) => query === 'allowed.test A').length;
    const result = await kernel.runTool('web_fetch', { url: `http://allowed.test:${web.port}/article` });
    expect(result.isError).toBeFalsy();
    const details = result.details as Record<string, any>;
    expect(details).toMatchObject({
      status: 200,
      title: 'Lighthouses of the North Sea',
      extractor: 'readability',
      extractMode: 'markdown',
      truncated: false,
    });
    expect(details.finalUrl).toBe(`http://allowed.test:${web.port}/article`);
    const body: string = details.text;
    expect(body).toContain('<<<EXTERNAL_UNTRUSTED_CONTENT');
    expect(body).toMatch(/The \*\*lighthouses\*\* along the North Sea coast/);
    expect(body).toContain('## Early towers');
    expect(body).toContain('*Fresnel lens*');
    expect(body).toContain(`[the Fresnel story](http://allowed.test:${web.port}/history/fresnel)`);
    expect(body).toMatch(/- Coal fires\n- Oil lamps\n- Electric lights/);
    expect(body).toContain('visitors can climb the spiral');
    for (const junk of [
      'SCRIPT-SHOULD-NOT-APPEAR',
      'SCRIPT2-SHOULD-NOT-APPEAR',
      'STYLE-SHOULD-NOT-APPEAR',
      'NAV-SHOULD-NOT-APPEAR',
      'BANNER-SHOULD-NOT-APPEAR',
    ]) {
      expect(body).not.toContain(junk);
    }
    // Resolved once for the fetch (A; the AAAA query runs alongside), and the Host header kept the name.
    expect(dns.queries.filter((query) => query === 'allowed.test A').length).toBe(queriesBefore + 1);
    expect(web.hits).toContain(`GET /article allowed.test:${web.port}`);
  });

  it('a sandboxed session cannot reach the host loopback even through the trusted name', async () => {
    const sandboxed = await createTestKernel({
      plugins: [WEB_FETCH],
      config: { ...fetchConfig(), agents: { defaults: { sandbox: { mode: 'all' } } } },
    });
    try {
      const result = await sandboxed.runTool(
        'web_fetch',
        { url: `http://allowed.test:${web.port}/article` },
        { sessionKey: 'agent:main:main', agentId: 'main' },
      );
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/sandboxed session cannot reach/);
    } finally {
      await sandboxed.dispose();
    }
  });

  it('dangerouslyAllowPrivateNetwork opens private addresses but blockedHostnames still wins', async () => {
    const open = await createTestKernel({
      plugins: [WEB_FETCH],
      config: fetchConfig({ ssrfPolicy: { dangerouslyAllowPrivateNetwork: true, blockedHostnames: ['evil.test'] } }),
    });
    try {
      const direct = await open.runTool('web_fetch', { url: `http://127.0.0.1:${web.port}/text` });
      expect(direct.isError).toBeFalsy();
      const blocked = await open.runTool('web_fetch', { url: `http://evil.test:${web.port}/private-data` });
      expect(text(blocked)).toMatch(/evil\.test is listed in blockedHostnames/);
    } finally {
      await open.dispose();
    }
  });
});
