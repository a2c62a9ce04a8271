/**
 * The "net" service the host offers every kernel (sdk/net/guard.ts is its contract): the SSRF
 * guard (ssrf.ts) and the guarded GET (guarded-fetch.ts), the same for bundled and
 * third-party plugins.
 */
import type { GuardedNet, Resolver } from '../../sdk/net/guard.js';
import { guardedFetch } from './guarded-fetch.js';
import { checkUrlAllowed, dnsServersResolver, pinnedLookup } from './ssrf.js';

export function netService(): GuardedNet {
  // One resolver per list of DNS servers, kept for the life of the kernel.
  const resolvers = new Map<string, Resolver>();
  const resolverFor = (servers: readonly string[] | undefined): Resolver | undefined => {
    if (!servers) return undefined;
    const key = servers.join(',');
    if (!resolvers.has(key)) resolvers.set(key, dnsServersResolver(servers));
    return resolvers.get(key);
  };
  return {
    fetch: (url, { dnsServers, ...options } = {}) =>
      guardedFetch(url, { ...options, resolve: resolverFor(dnsServers) }),
    async checkUrl(url, policy, resolve) {
      const check = await checkUrlAllowed(url, policy, resolve);
      return check.allowed ? { ...check, lookup: pinnedLookup(check.target) } : check;
    },
  };
}
