/**
 * The host's SSRF guard (host/net/ssrf.ts) and the cron webhook that uses it: every spelling
 * of a non-public address is refused, the checked address is the one connected to, and a
 * trusted host is reached through its pinned address.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkAddressAllowed,
  checkHostnameAllowed,
  checkUrlAllowed,
  dnsServersResolver,
  nonPublicReason,
} from '../host/net/ssrf.js';
import { netService } from '../host/net/index.js';
import { startDnsStub } from './web-helpers.js';
import { postWebhook } from '../plugins/cron/webhook.js';

const host = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, '');

describe('non-public addresses', () => {
  it('classifies IPv4, IPv6 and IPv4 inside IPv6, in the forms the URL parser produces', () => {
    const refused = [
      '127.0.0.1',
      '127.9.9.9',
      '0.0.0.0',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '192.0.0.1',
      '::',
      '::1',
      'fe80::1',
      'fd00::1',
      'fc00::1',
      'fec0::1',
      'ff02::1',
      '2001:db8::1',
      '100::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '::127.0.0.1',
      '64:ff9b::7f00:1',
      '64:ff9b:1::1',
      '2002:7f00:1::',
      '2002:c0a8:101::1',
      '2001:0:4136:e378::1',
      // Spellings the URL parser turns into these.
      host('http://2130706433/'),
      host('http://0x7f.1/'),
      host('http://017700000001/'),
      host('http://[::ffff:127.0.0.1]/'),
      host('http://127.1/'),
      host('http://0/'),
    ];
    for (const address of refused) expect(nonPublicReason(address), address).toBeDefined();
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
    ]) {
      expect(nonPublicReason(address), address).toBeUndefined();
    }
    expect(nonPublicReason('localhost')).toBe('not an IP address');
  });

  it('resolves once, refuses a name with any non-public address, and trusts only what the policy names', async () => {
    let lookups = 0;
    const rebinding = async () =>
      lookups++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
    const check = await checkUrlAllowed(new URL('https://rebind.test/x'), {}, rebinding);
    expect(check).toMatchObject({ target: { hostname: 'rebind.test', address: '93.184.216.34', family: 4 } });
    expect(lookups).toBe(1);
    const mixed = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ];
    expect(await checkUrlAllowed(new URL('http://mixed.test/'), {}, mixed)).toEqual({
      allowed: false,
      reason: expect.stringMatching(/10\.0\.0\.5, a private/),
    });
    expect(await checkUrlAllowed(new URL('http://[::ffff:127.0.0.1]:9/'))).toEqual({
      allowed: false,
      reason: expect.stringMatching(/loopback/),
    });
    expect(await checkUrlAllowed(new URL('file:///etc/passwd'))).toEqual({
      allowed: false,
      reason: expect.stringMatching(/only http and https/),
    });
    expect(await checkUrlAllowed(new URL('http://127.0.0.1/'), { allowedHostnames: ['127.0.0.1'] })).toMatchObject({
      target: { address: '127.0.0.1' },
    });
  });
});

describe('checkUrlAllowed and the policy keys', () => {
  const never = async () => {
    throw new Error('no DNS lookup expected');
  };

  it('reads every inet_aton spelling as the address it means, even outside the URL parser, without a DNS lookup', async () => {
    for (const spelling of [
      '0x7f.1',
      '2130706433',
      '0177.0.0.1',
      '127.1',
      '017700000001',
      '0x7f000001',
      '0',
      '0.0.0.0',
      '127.0.0.1.',
    ]) {
      expect(nonPublicReason(spelling), spelling).toMatch(/loopback|this network/);
    }
    expect(nonPublicReason('0x8.0x8.0x8.0x8')).toBeUndefined();
    expect(nonPublicReason('4294967296')).toBe('not an IP address');
    expect(nonPublicReason('1.2.3.4.5')).toBe('not an IP address');
    expect(await checkUrlAllowed('http://0x7f.1/', {}, never)).toEqual({
      allowed: false,
      reason: expect.stringMatching(/127\.0\.0\.1 is a loopback/),
    });
  });

  it('matches allowed and blocked hosts exactly or by *.subdomain, blocked first; local names need an explicit entry', () => {
    const policy = { allowedHostnames: ['*.corp.example', 'localhost'], blockedHostnames: ['bad.corp.example'] };
    expect(checkAddressAllowed('wiki.corp.example', '10.1.1.1', policy)).toBeUndefined();
    expect(checkAddressAllowed('WIKI.Corp.Example.', '10.1.1.1', policy)).toBeUndefined();
    expect(checkAddressAllowed('corp.example', '10.1.1.1', policy)).toMatch(/private/);
    expect(checkHostnameAllowed('bad.corp.example', policy)).toMatch(/listed in blockedHostnames/);
    expect(checkHostnameAllowed('localhost', policy)).toBeUndefined();
    expect(checkHostnameAllowed('localhost', {})).toMatch(/local host name/);
    expect(checkHostnameAllowed('printer.local', { dangerouslyAllowPrivateNetwork: true })).toBeUndefined();
    expect(
      checkHostnameAllowed('x.bad.test', { dangerouslyAllowPrivateNetwork: true, blockedHostnames: ['*.bad.test'] }),
    ).toMatch(/blockedHostnames/);
    expect(checkAddressAllowed('a.test', '10.0.0.1', { allowPrivateNetwork: true })).toBeUndefined();
  });

  it('opens the fake-IP ranges only when asked, and keeps host loopback closed for sandboxed callers', () => {
    expect(checkAddressAllowed('p.test', '198.18.5.5', {})).toMatch(/benchmarking/);
    expect(checkAddressAllowed('p.test', '198.18.5.5', { allowRfc2544BenchmarkRange: true })).toBeUndefined();
    expect(checkAddressAllowed('p.test', '198.20.0.1', { allowRfc2544BenchmarkRange: true })).toBeUndefined();
    expect(checkAddressAllowed('p.test', '10.0.0.1', { allowRfc2544BenchmarkRange: true })).toMatch(/private/);
    expect(checkAddressAllowed('p.test', 'fd12::1', { allowIpv6UniqueLocalRange: true })).toBeUndefined();
    expect(checkAddressAllowed('p.test', 'fe80::1', { allowIpv6UniqueLocalRange: true })).toMatch(/link-local/);
    const sandboxed = { allowedHostnames: ['box.test'], dangerouslyAllowPrivateNetwork: true, denyHostLoopback: true };
    expect(checkAddressAllowed('box.test', '127.0.0.1', sandboxed)).toMatch(/sandboxed session cannot reach/);
    expect(checkAddressAllowed('box.test', '::ffff:7f00:1', sandboxed)).toMatch(/sandboxed session cannot reach/);
    expect(checkAddressAllowed('box.test', '0.0.0.0', sandboxed)).toMatch(/sandboxed session cannot reach/);
    expect(checkAddressAllowed('box.test', '192.168.1.5', sandboxed)).toBeUndefined();
    expect(checkHostnameAllowed('localhost', { ...sandboxed, allowedHostnames: ['localhost'] })).toMatch(
      /sandboxed session/,
    );
  });

  it('resolves through configured DNS servers (A and AAAA) and refuses names that do not resolve', async () => {
    const dns = await startDnsStub({
      'dual.test': { A: ['93.184.216.34'], AAAA: ['2606:2800:220:1::1'] },
      'v6.test': { AAAA: ['fd00::7'] },
    });
    try {
      const resolve = dnsServersResolver([`127.0.0.1:${dns.port}`]);
      expect(await resolve('dual.test')).toEqual([
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ]);
      expect(await checkUrlAllowed('https://dual.test/x', {}, resolve)).toMatchObject({
        allowed: true,
        target: { address: '93.184.216.34', family: 4 },
      });
      expect(await checkUrlAllowed('https://v6.test/x', {}, resolve)).toEqual({
        allowed: false,
        reason: expect.stringMatching(/v6\.test resolves to fd00::7, a unique local/),
      });
      expect(await checkUrlAllowed('https://nowhere.test/x', {}, resolve)).toEqual({
        allowed: false,
        reason: expect.stringMatching(/nowhere\.test does not resolve/),
      });
    } finally {
      await dns.close();
    }
  });
});

describe('cron webhook delivery through the guard', () => {
  let server: Server;
  let port = 0;
  const received: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push(`${req.headers.host} ${req.headers.authorization ?? ''} ${body}`);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const entry = { ts: 1, jobId: 'j', action: 'finished', status: 'ok' } as never;
  const net = netService();

  it('refuses the IPv4-mapped IPv6 spelling of loopback (it bypassed the first guard)', async () => {
    const outcome = await postWebhook(net, `http://[::ffff:127.0.0.1]:${port}/hook`, entry, {});
    expect(outcome).toMatchObject({
      deliveryStatus: 'not-delivered',
      deliveryError: expect.stringMatching(/loopback/),
    });
    expect(received).toEqual([]);
  });

  it('connects to the pinned address of a trusted name, with the Host header of the name', async () => {
    let lookups = 0;
    const resolver = async () => (lookups++, [{ address: '127.0.0.1', family: 4 }]);
    const refused = await postWebhook(net, `http://hooks.internal.test:${port}/hook`, entry, {}, 2000, resolver);
    expect(refused.deliveryError).toMatch(/hooks\.internal\.test resolves to 127\.0\.0\.1, a loopback/);
    const sent = await postWebhook(
      net,
      `http://hooks.internal.test:${port}/hook`,
      entry,
      { webhookToken: 'tok', webhookSsrfPolicy: { allowedHostnames: ['hooks.internal.test'] } },
      2000,
      resolver,
    );
    expect(sent).toEqual({ deliveryStatus: 'delivered' });
    expect(received).toEqual([`hooks.internal.test:${port} Bearer tok ${JSON.stringify(entry)}`]);
    expect(lookups).toBe(2);
  });
});
