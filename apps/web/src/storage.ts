/**
 * What the app remembers in localStorage (per gateway origin): the gateway secret the user
 * signed in with, the device token the gateway issued to this browser, and WebChat's client
 * id. A token may arrive in the URL fragment (`#token=…`, never sent to the server); it is
 * taken from there and removed from the address bar and history at once.
 */
import { randomId } from './dom.js';

const KEYS = {
  secret: 'claw.auth.secret',
  deviceToken: 'claw.auth.deviceToken',
  clientId: 'claw.webchat.clientId',
} as const;

export interface Secret {
  kind: 'token' | 'password';
  value: string;
}

function read(key: string): string | undefined {
  try {
    return localStorage.getItem(key) ?? undefined;
  } catch {
    return undefined; // Storage disabled: nothing is remembered.
  }
}

function write(key: string, value: string | undefined): void {
  try {
    if (value === undefined) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // Storage disabled or full: the app still works for this page load.
  }
}

export function loadSecret(): Secret | undefined {
  const raw = read(KEYS.secret);
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as Secret;
    return (parsed.kind === 'token' || parsed.kind === 'password') && typeof parsed.value === 'string'
      ? parsed
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The secret this page signed in with, kept in memory after it leaves storage (once the
 * device has its own token): this tab's second connection, the canvas node, needs it once
 * for its own first admission. Gone when the page closes or the user signs out.
 */
let inMemory: Secret | undefined;

export function saveSecret(secret: Secret | undefined): void {
  inMemory = secret ?? loadSecret() ?? inMemory;
  write(KEYS.secret, secret ? JSON.stringify(secret) : undefined);
}

/** The stored secret, else the one this page signed in with. */
export function pageSecret(): Secret | undefined {
  return loadSecret() ?? inMemory;
}

/** Signing out: not even the page keeps the secret. */
export function forgetSecret(): void {
  saveSecret(undefined);
  inMemory = undefined;
}

export function loadDeviceToken(deviceId: string): string | undefined {
  const raw = read(KEYS.deviceToken);
  const [id, token] = raw?.split(' ') ?? [];
  return id === deviceId ? token : undefined;
}

export function saveDeviceToken(deviceId: string, token: string | undefined): void {
  write(KEYS.deviceToken, token ? `${deviceId} ${token}` : undefined);
}

/** Stable id of this browser for WebChat: its peer id, and so its conversations. */
export function clientId(): string {
  let id = read(KEYS.clientId);
  if (!id || !/^[A-Za-z0-9_-]+$/.test(id)) {
    id = `web-${randomId(8)}`;
    write(KEYS.clientId, id);
  }
  return id;
}

/** Per-feature settings (conversations, log filters) kept as JSON. */
export function loadJson<T>(key: string, fallback: T): T {
  try {
    const raw = read(key);
    return raw ? (JSON.parse(raw) as T) : fallback;
  } catch {
    return fallback;
  }
}

export function saveJson(key: string, value: unknown): void {
  write(key, JSON.stringify(value));
}

/**
 * Take `token=` out of the fragment (`#token=abc`, `#/chat?token=abc`), leaving the route.
 * Returns the token when there was one.
 */
export function takeTokenFromFragment(): string | undefined {
  const hash = location.hash.slice(1);
  const at = hash.indexOf('?');
  // "#token=abc" is all query; "#/chat?token=abc" is a route and a query.
  const [route, query] =
    at >= 0 ? [hash.slice(0, at), hash.slice(at + 1)] : hash.startsWith('/') ? [hash, ''] : ['', hash];
  const params = new URLSearchParams(query);
  const token = params.get('token')?.trim();
  if (token === undefined) return undefined;
  params.delete('token');
  const rest = route + (params.toString() ? `?${params}` : '');
  history.replaceState(null, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
  return token || undefined;
}
