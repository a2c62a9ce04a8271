/**
 * Checks every request (HTTP and WebSocket upgrade) passes before anything else runs:
 *
 * - Host: a browser tricked by DNS rebinding sends the attacker's name in `Host` while
 *   talking to 127.0.0.1. Only names that cannot be rebound (IP literals, `localhost`,
 *   this machine's own name) and names the owner lists in `gateway.allowedHosts` pass.
 * - Origin: any page the user visits can send requests to 127.0.0.1. A browser always
 *   says which page is asking; only the gateway's own pages and
 *   `gateway.controlUi.allowedOrigins` pass (and the canvas host's sandboxed pages reading
 *   their own folder). Clients that are not browsers send no Origin.
 * - Content type: a cross-site page can POST text/plain or form bodies without a CORS
 *   preflight, never application/json. Requiring JSON on every request that acts closes
 *   that door even where an Origin header is missing.
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { GatewaySettings } from './settings.js';

export interface Refusal {
  status: number;
  message: string;
}

/** The host name of a Host header, lower-cased, without port or IPv6 brackets. */
export function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(1, value.indexOf(']') > 0 ? value.indexOf(']') : undefined);
  const colon = value.lastIndexOf(':');
  return (colon >= 0 && value.indexOf(':') === colon ? value.slice(0, colon) : value).replace(/\.$/, '');
}

export function hostAllowed(name: string, settings: Pick<GatewaySettings, 'host' | 'allowedHosts'>): boolean {
  if (isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost')) return true;
  const machine = hostname().toLowerCase();
  if (name === machine || name === `${machine}.local`) return true;
  if (name === settings.host.toLowerCase()) return true;
  return (settings.allowedHosts ?? []).some((allowed) => allowed === '*' || allowed.toLowerCase() === name);
}

/** The refusal for a request whose Host or Origin is not this gateway's, if any. */
export function checkRequest(
  req: IncomingMessage,
  settings: Pick<GatewaySettings, 'host' | 'allowedHosts' | 'controlUi'>,
): Refusal | undefined {
  const host = req.headers.host;
  if (host !== undefined && !hostAllowed(hostName(host), settings)) {
    return {
      status: 421,
      message: `requests addressed to "${host}" are refused: add the name to gateway.allowedHosts if it is yours`,
    };
  }
  const origin = req.headers.origin;
  if (origin === undefined || crossOriginRead(req)) return undefined;
  if ((settings.controlUi.allowedOrigins ?? []).some((allowed) => allowed === '*' || allowed === origin))
    return undefined;
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host;
  } catch {
    // "null" (sandboxed frames, files) and garbage are never this gateway's pages.
  }
  if (originHost !== undefined && host !== undefined && originHost === host.toLowerCase()) return undefined;
  return { status: 403, message: `origin ${origin} may not call the gateway (gateway.controlUi.allowedOrigins)` };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Reads any page may make: the canvas host's pages run sandboxed (their origin is "null") and
 * fetch their own folder (the reload stream, data files) with the capability in the path,
 * which is their only authority. Never a WebSocket upgrade, never a request that acts.
 */
const CROSS_ORIGIN_READ_PREFIXES = ['/__openclaw__/canvas/'];

function crossOriginRead(req: IncomingMessage): boolean {
  return (
    (req.method === 'GET' || req.method === 'HEAD') &&
    req.headers.upgrade === undefined &&
    CROSS_ORIGIN_READ_PREFIXES.some((prefix) => (req.url ?? '').startsWith(prefix))
  );
}

/**
 * Requests that act must carry a JSON body type, which no page can send cross-site unasked.
 * `forms`: a route outside gateway auth that checks each request's own signature (Slack's
 * slash commands) also takes form bodies; no ambient credential rides on them.
 */
export function checkContentType(req: IncomingMessage, forms = false): Refusal | undefined {
  if (SAFE_METHODS.has(req.method ?? 'GET')) return undefined;
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || /^application\/[\w.+-]+\+json$/.test(type)) return undefined;
  if (forms && type === 'application/x-www-form-urlencoded') return undefined;
  return {
    status: 415,
    message: `${req.method} requests must send Content-Type: application/json${type ? ` (got ${type})` : ''}`,
  };
}
