/**
 * The "net" service the host offers every kernel (sdk/net/guard.ts is its contract): the SSRF
 * guard (ssrf.ts) and the guarded GET (guarded-fetch.ts), the same for bundled and
 * third-party plugins. Both load on first use: they bring node:https, node:zlib and the DNS
 * resolver, which a gateway that fetches nothing never needs.
 */
import type { GuardedNet, Resolver } from '../../sdk/net/guard.js';

type Implementation = typeof import('./guarded-fetch.js') & typeof import('./ssrf.js');

export function netService(): GuardedNet {
  let implementation: Promise<Implementation> | undefined;
  const load = () =>
    (implementation ??= Promise.all([import('./guarded-fetch.js'), import('./ssrf.js')]).then(([fetch, ssrf]) => ({
      ...fetch,
      ...ssrf,
    })));
  // One resolver per list of DNS servers, kept for the life of the kernel.
  const resolvers = new Map<string, Resolver>();
  const resolverFor = (servers: readonly string[] | undefined, make: Implementation['dnsServersResolver']) => {
    if (!servers) return undefined;
    const key = servers.join(',');
    if (!resolvers.has(key)) resolvers.set(key, make(servers));
    return resolvers.get(key);
  };
  return {
    async fetch(url, { dnsServers, ...options } = {}) {
      const { guardedFetch, dnsServersResolver } = await load();
      return guardedFetch(url, { ...options, resolve: resolverFor(dnsServers, dnsServersResolver) });
    },
    async checkUrl(url, policy, resolve) {
      const { checkUrlAllowed, pinnedLookup } = await load();
      const check = await checkUrlAllowed(url, policy, resolve);
      return check.allowed ? { ...check, lookup: pinnedLookup(check.target) } : check;
    },
  };
}
