/**
 * browser.ssrfPolicy: which destinations the browser may reach. The address checks are the
 * host's "net" service; this adds OpenClaw's browser keys on top: wildcard host rules,
 * blockedHostnames before DNS, internal-looking names, and the strict mode a sandboxed
 * session gets (no allow rule applies there, so it never reaches the host's loopback).
 */
import type { GuardedNet, PinnedTarget, Resolver } from '../../sdk/net/index.js';

export interface BrowserSsrfPolicy {
  dangerouslyAllowPrivateNetwork?: boolean;
  /** Legacy alias of dangerouslyAllowPrivateNetwork. */
  allowPrivateNetwork?: boolean;
  allowedHostnames?: string[];
  blockedHostnames?: string[];
}

export type UrlCheck = (url: URL) => Promise<PinnedTarget | { refused: string }>;

/** `example.com` matches itself; `*.example.com` matches its subdomains, not the apex. */
export function hostMatches(pattern: string, host: string): boolean {
  const rule = pattern
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (rule.startsWith('*.')) return host.endsWith(rule.slice(1)) && host.length > rule.length - 1;
  return rule === host;
}

/** Names that only mean something inside a network: refused unless trusted (spec §16 layer 5). */
const INTERNAL_NAME = /(^|\.)(localhost|local|internal)$/;

/**
 * The check every browser request passes. `strict` (a sandboxed session) ignores the allow
 * rules: only public addresses, whatever the owner trusts for their own sessions.
 */
export function urlCheck(
  net: Pick<GuardedNet, 'checkUrl'>,
  policy: BrowserSsrfPolicy,
  strict: boolean,
  resolve?: Resolver,
): UrlCheck {
  const allowAll = !strict && (policy.dangerouslyAllowPrivateNetwork === true || policy.allowPrivateNetwork === true);
  return async (url) => {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { refused: `only http and https URLs are allowed, not ${url.protocol}` };
    const host = url.hostname
      .replace(/^\[|\]$/g, '')
      .toLowerCase()
      .replace(/\.$/, '');
    if ((policy.blockedHostnames ?? []).some((rule) => hostMatches(rule, host)))
      return { refused: `${host} is in browser.ssrfPolicy.blockedHostnames` };
    const trusted = allowAll || (!strict && (policy.allowedHostnames ?? []).some((rule) => hostMatches(rule, host)));
    if (!trusted && INTERNAL_NAME.test(host))
      return { refused: `${host} is an internal name; trust it in browser.ssrfPolicy.allowedHostnames to allow it` };
    const check = await net.checkUrl(url, trusted ? { dangerouslyAllowPrivateNetwork: true } : {}, resolve);
    if (check.allowed) return check.target;
    if (trusted) return { refused: check.reason };
    const hint = strict
      ? ' (a sandboxed session reaches public addresses only)'
      : '; trust it in browser.ssrfPolicy.allowedHostnames';
    // The guard's own advice ("trust the host…") is replaced by the browser's key or the sandbox rule.
    return { refused: `${check.reason.split('; trust')[0]}${hint}` };
  };
}
