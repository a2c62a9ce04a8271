/**
 * The "net" service: claw's one rule for requests made on someone else's say-so (web_fetch,
 * web_search providers, the browser, cron webhooks). Private, loopback and local addresses
 * are refused unless the user trusts the host; the address that was checked is the one
 * connected to; every redirect is checked again. The host provides it (host/net), so a
 * third-party plugin gets the same guard as a bundled one: declare
 * `requires: { services: ["net"] }` and ask with `guardedNet(api.kernel, 'my plugin')`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { LookupFunction } from 'node:net';
import { requireService } from '../services.js';
import type { KernelServices } from '../types/plugin.js';

export const NET_SERVICE = 'net';

/**
 * The outbound policy, with OpenClaw's `ssrfPolicy` keys (tools.web.fetch.ssrfPolicy,
 * cron.webhookSsrfPolicy, browser.ssrfPolicy). Host patterns are exact names or
 * `*.example.com` (subdomains only, not the apex), matched without case or a trailing dot.
 */
export interface SsrfPolicy {
  /** Hosts the user trusts even on a private address (also lifts the local-name block, e.g. "localhost"). */
  allowedHostnames?: readonly string[];
  /** Hosts always refused, before DNS and before any allow rule. */
  blockedHostnames?: readonly string[];
  /** Every private address allowed: the user's own network on purpose. */
  dangerouslyAllowPrivateNetwork?: boolean;
  /** Legacy alias of dangerouslyAllowPrivateNetwork. */
  allowPrivateNetwork?: boolean;
  /** 198.18.0.0/15 allowed (fake-IP proxies such as Clash or Surge answer from it). */
  allowRfc2544BenchmarkRange?: boolean;
  /** fc00::/7 allowed (the same, for IPv6 fake-IP answers). */
  allowIpv6UniqueLocalRange?: boolean;
  /**
   * Set by the caller, not by config: the call comes from a sandboxed session, whose tools
   * must not reach the gateway host's own loopback services, even on a trusted name.
   */
  denyHostLoopback?: boolean;
}

/** How host names become addresses (default: the system's getaddrinfo). */
export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface PinnedTarget {
  hostname: string;
  address: string;
  family: 4 | 6;
}

/** `lookup`: for http(s).request, always answers the checked address (no second DNS answer). */
export type UrlCheck =
  { allowed: true; url: URL; target: PinnedTarget; lookup: LookupFunction } | { allowed: false; reason: string };

export interface GuardedFetchOptions {
  policy?: SsrfPolicy;
  /** DNS servers asked for A and AAAA records ("1.2.3.4", "127.0.0.1:5353") instead of getaddrinfo. */
  dnsServers?: readonly string[];
  /** Redirects followed before giving up (default 3; 0 refuses any redirect). */
  maxRedirects?: number;
  /** For the whole exchange, redirects and body included (default 30 s). */
  timeoutMs?: number;
  /** Body bytes kept (decoded); the rest is not read. Default 2 MB. */
  maxBytes?: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface GuardedResponse {
  url: string;
  finalUrl: string;
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body was longer than maxBytes and was cut. */
  truncated: boolean;
  /** The address the last hop connected to. */
  address: string;
}

/** A request the SSRF policy refused (as opposed to a network or HTTP failure). */
export class SsrfBlockedError extends Error {
  constructor(reason: string) {
    super(`blocked by the SSRF policy: ${reason}`);
    this.name = 'SsrfBlockedError';
  }
}

export interface GuardedNet {
  /** A GET whose every hop passes checkUrl; the body is cut at maxBytes. Throws SsrfBlockedError on a refusal. */
  fetch(url: string, options?: GuardedFetchOptions): Promise<GuardedResponse>;
  /**
   * May this URL be fetched under the policy, and at which address? For requests the caller
   * makes itself: connect to `target` only, through `lookup`.
   */
  checkUrl(url: string | URL, policy?: SsrfPolicy, resolve?: Resolver): Promise<UrlCheck>;
}

/** The service, asked for on each call, so a plugin can take it at register() before anything needs it. */
export function guardedNet(
  kernel: Pick<KernelServices, 'capabilities'> & Partial<Pick<KernelServices, 'plugins'>>,
  what: string,
): GuardedNet {
  const net = () => requireService<GuardedNet>(kernel, NET_SERVICE, what);
  return {
    fetch: async (url, options) => (await net()).fetch(url, options),
    checkUrl: async (url, policy, resolve) => (await net()).checkUrl(url, policy, resolve),
  };
}
