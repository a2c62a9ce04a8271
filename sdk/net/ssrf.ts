/**
 * The SSRF guard for requests claw makes on someone else's say-so (a cron webhook URL, later
 * web_fetch): which addresses are not the public internet, and a resolve-once-then-connect
 * lookup so the address that was checked is the one connected to (no DNS rebinding).
 *
 * Hostnames reach here already normalised by the WHATWG URL parser, which turns decimal,
 * octal and hex IPv4 spellings into dotted quads and IPv4-mapped IPv6 into hex
 * (`[::ffff:127.0.0.1]` → `::ffff:7f00:1`); both forms are classified here.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

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
  if (all.length !== 8 || (halves.length === 2 && fill < 1) || !all.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
  return all.map((group) => parseInt(group, 16));
}

function v6Reason(g: number[]): string | undefined {
  const embedded = (hi: number, lo: number) => {
    const reason = v4Reason(hi * 65536 + lo);
    return reason ? `an IPv4 ${reason} address inside IPv6` : undefined;
  };
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeros(0, 8)) return 'unspecified (::)';
  if (zeros(0, 7) && g[7] === 1) return 'loopback (::1)';
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64): judged by the IPv4 inside.
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return embedded(g[6]!, g[7]!) ?? (g[5] === 0 ? 'IPv4-compatible (::/96)' : undefined);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'local-use NAT64 (64:ff9b:1::/48)';
  if (g[0] === 0x2002) return embedded(g[1]!, g[2]!) ?? undefined;
  if (g[0] === 0x2001 && g[1] === 0) return 'Teredo tunnel (2001::/32)';
  if (g[0] === 0x2001 && g[1] === 0xdb8) return 'documentation (2001:db8::/32)';
  if (g[0] === 0x100 && zeros(1, 4)) return 'discard (100::/64)';
  if ((g[0]! & 0xfe00) === 0xfc00) return 'unique local (fc00::/7)';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local (fe80::/10)';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'site-local (fec0::/10)';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast (ff00::/8)';
  return undefined;
}

/** Why an IP address is not on the public internet, or undefined when it is. */
export function nonPublicReason(address: string): string | undefined {
  const v4 = parseV4(address);
  if (v4 !== undefined) return v4Reason(v4);
  const v6 = parseV6(address);
  if (v6 !== undefined) return v6Reason(v6);
  return 'not an IP address';
}

export interface SsrfPolicy {
  /** Hostnames (exact, case-insensitive) the user trusts even on a private address. */
  allowedHostnames?: readonly string[];
  /** Every host allowed: the user's own network on purpose. */
  dangerouslyAllowPrivateNetwork?: boolean;
}

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface PinnedTarget {
  hostname: string;
  address: string;
  family: 4 | 6;
}

/**
 * Resolve a URL's host once and check every address it has; a refusal says why. The
 * answer names the one address to connect to (use `pinnedLookup`), so a second DNS answer
 * cannot swap in a private address after the check.
 */
export async function resolveTarget(url: URL, policy: SsrfPolicy = {}, resolve: Resolver = systemResolver): Promise<PinnedTarget | { refused: string }> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { refused: `only http and https URLs are allowed, not ${url.protocol}` };
  const hostname = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const trusted = policy.dangerouslyAllowPrivateNetwork === true || (policy.allowedHostnames ?? []).some((name) => name.toLowerCase() === hostname);
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(hostname)) addresses = [{ address: hostname, family: isIP(hostname) }];
  else {
    try {
      addresses = await resolve(hostname);
    } catch (error) {
      return { refused: `${hostname} does not resolve: ${(error as Error).message}` };
    }
  }
  if (addresses.length === 0) return { refused: `${hostname} has no address` };
  if (!trusted) {
    for (const { address } of addresses) {
      const reason = nonPublicReason(address);
      if (reason) return { refused: `${hostname} resolves to ${address}, a ${reason} address; trust the host explicitly to allow it` };
    }
  }
  const first = addresses[0]!;
  return { hostname, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A `lookup` for http(s).request that always answers the checked address. */
export function pinnedLookup(target: PinnedTarget) {
  return (_hostname: string, options: unknown, callback?: unknown) => {
    const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    if (all) done(null, [{ address: target.address, family: target.family }]);
    else done(null, target.address, target.family);
  };
}
