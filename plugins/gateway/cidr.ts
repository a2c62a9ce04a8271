/**
 * Whether a client address lies in one of a list of CIDR ranges (gateway.nodes.pairing.autoApproveCidrs).
 * IPv4 clients reached over an IPv6 socket (::ffff:a.b.c.d) are matched as IPv4.
 */
import { BlockList, isIP } from 'node:net';

/** The ranges as a matcher; throws naming the first entry that is not a CIDR range. */
export function cidrMatcher(cidrs: readonly string[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const entry of cidrs) {
    const [network, bits, extra] = entry.trim().split('/');
    const family = isIP(network ?? '');
    const prefix = Number(bits);
    const max = family === 6 ? 128 : 32;
    if (family === 0 || extra !== undefined || !/^\d+$/.test(bits ?? '') || prefix > max)
      throw new Error(`"${entry}" is not a CIDR range (expected e.g. 192.168.1.0/24 or fd00::/8)`);
    list.addSubnet(network!, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return (address) => {
    if (!address) return false;
    const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const family = isIP(plain);
    return family !== 0 && list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  };
}
