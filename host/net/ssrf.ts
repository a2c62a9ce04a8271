/**
 * The SSRF guard behind the host's "net" service (sdk/net/guard.ts) for requests claw makes
 * on someone else's say-so (a cron webhook URL, web_fetch, web_search providers, the
 * browser): which addresses are not the public
 * internet, which host names are local by name, the user's allow and block lists, and a
 * resolve-once-then-connect lookup so the address that was checked is the one connected to
 * (no DNS rebinding).
 *
 * The WHATWG URL parser already turns decimal, octal, hex and short IPv4 spellings into
 * dotted quads and IPv4-mapped IPv6 into hex (`[::ffff:127.0.0.1]` → `::ffff:7f00:1`), but a
 * host string that did not come through it (`0x7f.1`, `2130706433`) would be handed to
 * getaddrinfo, which reads those spellings the same way: so every inet_aton form is
 * classified here as the address it means.
 */
import { lookup as dnsLookup, Resolver as DnsResolver } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import type { PinnedTarget, Resolver, SsrfPolicy } from '../../sdk/net/guard.js';

/** [base, prefix length, what it is]. */
const V4_BLOCKED: ReadonlyArray<[string, number, string]> = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

function parseV4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return undefined;
  return parts.reduce((value, part) => value * 256 + Number(part), 0);
}

/**
 * inet_aton's spellings: one to four parts, each decimal, 0-prefixed octal or 0x hex, the
 * last filling the remaining bytes ("127.1", "0x7f.1", "2130706433", "0177.0.0.1").
 */
function parseV4Loose(text: string): number | undefined {
  const parts = text.replace(/\.$/, '').split('.');
  if (parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    if (/^0x[0-9a-f]*$/i.test(part)) numbers.push(part.length === 2 ? 0 : parseInt(part.slice(2), 16));
    else if (/^0[0-7]+$/.test(part)) numbers.push(parseInt(part, 8));
    else if (/^(0|[1-9]\d*)$/.test(part)) numbers.push(Number(part));
    else return undefined;
  }
  const last = numbers.pop()!;
  if (numbers.some((value) => value > 255) || last >= 256 ** (4 - numbers.length)) return undefined;
  return numbers.reduce((value, part, index) => value + part * 256 ** (3 - index), 0) + last;
}

const dotted = (value: number) => [24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join('.');

function v4Reason(value: number): string | undefined {
  for (const [base, bits, what] of V4_BLOCKED) {
    const size = 2 ** (32 - bits);
    const start = parseV4(base)!;
    if (value >= start && value < start + size) return `${what} (${base}/${bits})`;
  }
  return undefined;
}

/** Eight 16-bit groups, or undefined when the text is not IPv6. */
function parseV6(text: string): number[] | undefined {
  let body = text.toLowerCase().replace(/^\[|\]$/g, '');
  const zone = body.indexOf('%');
  if (zone >= 0) body = body.slice(0, zone);
  const lastColon = body.lastIndexOf(':');
  const dotted = body.slice(lastColon + 1);
  if (dotted.includes('.')) {
    const v4 = parseV4(dotted);
    if (v4 === undefined) return undefined;
    body = `${body.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = body.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string) => (half ? half.split(':') : []);
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...tail];
  if (all.length !== 8 || (halves.length === 2 && fill < 1) || !all.every((group) => /^[0-9a-f]{1,4}$/.test(group)))
    return undefined;
  return all.map((group) => parseInt(group, 16));
}

function v6Reason(g: number[]): string | undefined {
  const embedded = (hi: number, lo: number) => {
    const reason = v4Reason(hi * 65536 + lo);
    return reason ? `${reason} IPv4 inside IPv6` : undefined;
  };
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeros(0, 8)) return 'unspecified (::)';
  if (zeros(0, 7) && g[7] === 1) return 'loopback (::1)';
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64): judged by the IPv4 inside.
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0))
    return embedded(g[6]!, g[7]!) ?? (g[5] === 0 ? 'IPv4-compatible (::/96)' : undefined);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'local-use NAT64 (64:ff9b:1::/48)';
  if (g[0] === 0x2002) return embedded(g[1]!, g[2]!) ?? undefined;
  // Teredo hides the client's IPv4 (inverted) in the last group pair: the whole range is refused.
  if (g[0] === 0x2001 && g[1] === 0) return 'Teredo tunnel (2001::/32)';
  if (g[0] === 0x2001 && g[1] === 0xdb8) return 'documentation (2001:db8::/32)';
  if (g[0] === 0x100 && zeros(1, 4)) return 'discard (100::/64)';
  // ISATAP: any prefix, interface id 0:5efe or 200:5efe, then the IPv4.
  if ((g[4] === 0 || g[4] === 0x200) && g[5] === 0x5efe) return embedded(g[6]!, g[7]!);
  if ((g[0]! & 0xfe00) === 0xfc00) return 'unique local (fc00::/7)';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local (fe80::/10)';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'site-local (fec0::/10)';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast (ff00::/8)';
  return undefined;
}

/** Why an IP address is not on the public internet, or undefined when it is. */
export function nonPublicReason(address: string): string | undefined {
  const v4 = parseV4Loose(address);
  if (v4 !== undefined) return v4Reason(v4);
  const v6 = parseV6(address);
  if (v6 !== undefined) return v6Reason(v6);
  return 'not an IP address';
}

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * A resolver that asks these DNS servers ("1.2.3.4", "127.0.0.1:5353", "[::1]:53") for A
 * and AAAA records instead of the system's getaddrinfo (no hosts file, no mDNS).
 */
export function dnsServersResolver(servers: readonly string[], timeoutMs = 5000): Resolver {
  const resolver = new DnsResolver({ timeout: timeoutMs, tries: 2 });
  resolver.setServers([...servers]);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const found = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (found.length === 0 && v4.status === 'rejected') throw v4.reason;
    return found;
  };
}

/** Names that mean this machine or its LAN, refused before DNS unless allowlisted. */
const LOCAL_NAMES = [
  'localhost',
  '*.localhost',
  'localhost.localdomain',
  'metadata.google.internal',
  '*.internal',
  '*.local',
  '*.home.arpa',
];

/** A URL's host as matched here: lower case, no brackets, no trailing dot. */
export function normalizeHostname(hostname: string): string {
  return hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

function hostMatches(patterns: readonly string[] | undefined, hostname: string): boolean {
  return (patterns ?? []).some((raw) => {
    const pattern = normalizeHostname(raw.trim());
    return pattern.startsWith('*.')
      ? hostname.endsWith(pattern.slice(1)) && hostname.length > pattern.length - 1
      : pattern === hostname;
  });
}

const privateAllowed = (policy: SsrfPolicy) =>
  policy.dangerouslyAllowPrivateNetwork === true || policy.allowPrivateNetwork === true;

/** Why a host name is refused before any DNS lookup, or undefined. */
export function checkHostnameAllowed(hostname: string, policy: SsrfPolicy = {}): string | undefined {
  const host = normalizeHostname(hostname);
  if (host === '') return 'the URL has no host';
  if (hostMatches(policy.blockedHostnames, host)) return `${host} is listed in blockedHostnames`;
  if (policy.denyHostLoopback && hostMatches(['localhost', '*.localhost'], host))
    return `${host} is the gateway host's loopback, which a sandboxed session cannot reach`;
  if (hostMatches(policy.allowedHostnames, host) || privateAllowed(policy)) return undefined;
  if (hostMatches(LOCAL_NAMES, host))
    return `${host} is a local host name; trust it explicitly (allowedHostnames) to allow it`;
  return undefined;
}

/**
 * Why connecting to `address` for `hostname` is refused under the policy, or undefined.
 * For callers that learn the address another way (a browser's response, a proxy's answer).
 */
export function checkAddressAllowed(hostname: string, address: string, policy: SsrfPolicy = {}): string | undefined {
  const host = normalizeHostname(hostname);
  const reason = nonPublicReason(address);
  if (!reason) return undefined;
  const where = host === address ? `${address} is` : `${host} resolves to ${address},`;
  if (policy.denyHostLoopback && /loopback|this network|unspecified/.test(reason)) {
    return `${where} the gateway host's own ${reason} address, which a sandboxed session cannot reach`;
  }
  if (privateAllowed(policy) || hostMatches(policy.allowedHostnames, host)) return undefined;
  const v4 = parseV4Loose(address);
  if (policy.allowRfc2544BenchmarkRange && v4 !== undefined && v4 >>> 17 === (198 * 256 + 18) >>> 1) return undefined;
  const v6 = v4 === undefined ? parseV6(address) : undefined;
  if (policy.allowIpv6UniqueLocalRange && v6 && (v6[0]! & 0xfe00) === 0xfc00) return undefined;
  return `${where} ${/^(?:[aeio]|un[^i])/i.test(reason) ? 'an' : 'a'} ${reason} address; trust the host explicitly (allowedHostnames) to allow it`;
}

type Checked = { allowed: true; url: URL; target: PinnedTarget } | { allowed: false; reason: string };

/**
 * The one question every guarded request asks: may this URL be fetched under the policy,
 * and at which address? The scheme must be http(s); the host passes the block list and the
 * local-name rule; its name is resolved once (IP literals in any spelling are not looked
 * up) and every address it has must pass. Connect to `target` only (`pinnedLookup`), so a
 * second DNS answer cannot swap in a private address after the check.
 */
export async function checkUrlAllowed(
  input: string | URL,
  policy: SsrfPolicy = {},
  resolve: Resolver = systemResolver,
): Promise<Checked> {
  let url: URL;
  try {
    url = typeof input === 'string' ? new URL(input) : input;
  } catch {
    return { allowed: false, reason: `not a valid URL: ${String(input).slice(0, 200)}` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { allowed: false, reason: `only http and https URLs are allowed, not ${url.protocol}` };
  const hostname = normalizeHostname(url.hostname);
  const named = checkHostnameAllowed(hostname, policy);
  if (named) return { allowed: false, reason: named };
  let addresses: Array<{ address: string; family: number }>;
  const v4 = parseV4Loose(hostname);
  if (v4 !== undefined) addresses = [{ address: dotted(v4), family: 4 }];
  else if (isIP(hostname)) addresses = [{ address: hostname, family: isIP(hostname) }];
  else {
    try {
      addresses = await resolve(hostname);
    } catch (error) {
      return { allowed: false, reason: `${hostname} does not resolve: ${(error as Error).message}` };
    }
  }
  if (addresses.length === 0) return { allowed: false, reason: `${hostname} has no address` };
  for (const { address } of addresses) {
    const refused = checkAddressAllowed(hostname, address, policy);
    if (refused) return { allowed: false, reason: refused };
  }
  const first = addresses[0]!;
  return { allowed: true, url, target: { hostname, address: first.address, family: first.family === 6 ? 6 : 4 } };
}

/** A `lookup` for http(s).request that always answers the checked address. */
export function pinnedLookup(target: PinnedTarget): LookupFunction {
  const lookup = (_hostname: string, options: unknown, callback?: unknown) => {
    const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    if (all) done(null, [{ address: target.address, family: target.family }]);
    else done(null, target.address, target.family);
  };
  return lookup as LookupFunction;
}
