/**
 * Setup codes (OpenClaw's `oc-pair` codes): a gateway URL plus a single-use bootstrap token that
 * pairs one node without an operator approving it by hand — whoever minted the code (an admin)
 * already consented. Tokens live ten minutes, are kept only as SHA-256 hashes in
 * <stateDir>/devices/setup-codes.json (atomic, owner-only), and are taken in the synchronous
 * handshake, so two connections can never both redeem one. Like the pairing store, changes are
 * made in memory and written by `flush()`, which the handshake awaits before answering.
 */
import { createHash, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { Redactor } from '../../sdk/index.js';
import { BatchedJsonFile } from './batched-json-file.js';
import { isLoopbackHost } from '../../sdk/net/index.js';
import { generateDeviceToken } from './auth.js';

export const SETUP_CODE_TTL_MS = 10 * 60_000;
/** How long a completed setup can still be asked about (device.pair.setupStatus). */
const COMPLETION_TTL_MS = 24 * 60 * 60_000;
const SETUP_URL_PREFIX = 'oc-pair://';

/** The one access claw's setup codes grant: a node, no operator scopes. */
export type SetupAccess = 'node';

export interface SetupCompletion {
  setupId: string;
  deviceId: string;
  deviceName?: string;
  access: SetupAccess;
  completedAtMs: number;
}

interface TokenRecord {
  setupId: string;
  issuedAtMs: number;
  expiresAtMs: number;
}

interface StoreFile {
  version: 1;
  /** By SHA-256 of the token. */
  tokens: Record<string, TokenRecord>;
  completions: Record<string, SetupCompletion>;
}

export class SetupCodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SetupCodeError';
  }
}

export function setupCodesFile(stateDir: string): string {
  return join(stateDir, 'devices', 'setup-codes.json');
}

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

export class SetupCodes extends BatchedJsonFile<StoreFile> {
  constructor(
    file: string,
    private readonly redact: Pick<Redactor, 'text'>,
    private readonly now: () => number = Date.now,
  ) {
    super(
      file,
      () => ({ version: 1, tokens: {}, completions: {} }),
      (parsed) => Boolean(parsed.tokens && parsed.completions),
      (message) => new SetupCodeError(`setup code store ${message}`),
    );
  }

  private prune(): void {
    const now = this.now();
    let changed = false;
    for (const [key, record] of Object.entries(this.data.tokens)) {
      if (record.expiresAtMs <= now) {
        delete this.data.tokens[key];
        changed = true;
      }
    }
    for (const [key, completion] of Object.entries(this.data.completions)) {
      if (completion.completedAtMs + COMPLETION_TTL_MS <= now) {
        delete this.data.completions[key];
        changed = true;
      }
    }
    if (changed) this.changed();
  }

  /** Mint a bootstrap token; only its hash is kept, so this is the one time it exists here. */
  issue(): { token: string; setupId: string; expiresAtMs: number } {
    this.prune();
    const token = generateDeviceToken(this.redact);
    const issuedAtMs = this.now();
    const record: TokenRecord = { setupId: randomUUID(), issuedAtMs, expiresAtMs: issuedAtMs + SETUP_CODE_TTL_MS };
    this.data.tokens[hash(token)] = record;
    this.changed();
    return { token, setupId: record.setupId, expiresAtMs: record.expiresAtMs };
  }

  /** True while the token can still be redeemed (known, unexpired, unused). */
  valid(token: string): boolean {
    const record = this.data.tokens[hash(token)];
    return record !== undefined && record.expiresAtMs > this.now();
  }

  /** Take the token for a device: it can never be used again. Undefined when it is not valid. */
  redeem(token: string, deviceId: string, deviceName?: string): SetupCompletion | undefined {
    if (!this.valid(token)) return undefined;
    const key = hash(token);
    const record = this.data.tokens[key]!;
    delete this.data.tokens[key];
    const completion: SetupCompletion = {
      setupId: record.setupId,
      deviceId,
      ...(deviceName ? { deviceName } : {}),
      access: 'node',
      completedAtMs: this.now(),
    };
    this.data.completions[record.setupId] = completion;
    this.changed();
    return completion;
  }

  completion(setupId: string): SetupCompletion | undefined {
    this.prune();
    return this.data.completions[setupId];
  }
}

/** What a setup code carries, as OpenClaw encodes it. */
export interface SetupPayload {
  url: string;
  bootstrapToken: string;
  expiresAtMs?: number;
}

/** base64url of the payload's JSON, unpadded: the string `openclaw node run --pair` reads. */
export function encodeSetupCode(payload: SetupPayload): string {
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/** A setup code or `oc-pair://` URL back to its payload; a clear error for anything else. */
export function decodeSetupCode(input: string, now = Date.now()): SetupPayload {
  const trimmed = input.trim();
  const code = trimmed.toLowerCase().startsWith(SETUP_URL_PREFIX) ? trimmed.slice(SETUP_URL_PREFIX.length) : trimmed;
  if (!/^[A-Za-z0-9_-]+$/.test(code)) throw new SetupCodeError('not a setup code (expected base64url or oc-pair://…)');
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(code, 'base64url').toString('utf8'));
  } catch {
    throw new SetupCodeError('not a setup code (its content is not JSON)');
  }
  const record = decoded as Record<string, unknown>;
  const url = typeof record?.url === 'string' ? normalizeGatewayUrl(record.url) : undefined;
  const bootstrapToken = typeof record?.bootstrapToken === 'string' ? record.bootstrapToken.trim() : '';
  if (!url || url !== record.url || !bootstrapToken)
    throw new SetupCodeError('setup code payload needs a ws:// or wss:// url and a bootstrapToken');
  const expiresAtMs = record.expiresAtMs;
  if (expiresAtMs !== undefined) {
    if (typeof expiresAtMs !== 'number' || !Number.isSafeInteger(expiresAtMs) || expiresAtMs < 0)
      throw new SetupCodeError('setup code expiresAtMs is not a time');
    if (expiresAtMs <= now) throw new SetupCodeError('setup code has expired: make a new one (claw qr)');
  }
  return { url, bootstrapToken, ...(expiresAtMs !== undefined ? { expiresAtMs } : {}) };
}

/** `ws(s)://host[:port][/path]`, or `host[:port]` taken as `ws://`; undefined when it is neither. */
export function normalizeGatewayUrl(raw: string, scheme: 'ws' | 'wss' = 'ws'): string | undefined {
  const trimmed = raw.trim();
  if (!trimmed) return undefined;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `${scheme}://${trimmed.split('/', 1)[0]}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    return undefined;
  }
  const protocol = parsed.protocol === 'http:' ? 'ws:' : parsed.protocol === 'https:' ? 'wss:' : parsed.protocol;
  if ((protocol !== 'ws:' && protocol !== 'wss:') || !parsed.hostname || parsed.username || parsed.password)
    return undefined;
  const path = parsed.pathname === '/' ? '' : parsed.pathname;
  return `${protocol}//${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${path}`;
}

const bareHost = (host: string) =>
  host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .split('%')[0]!;

function isPrivateIpv4(host: string): boolean {
  const parts = host.split('.').map(Number);
  const [a, b] = parts as [number, number];
  return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254);
}

/**
 * As OpenClaw: plaintext ws:// is for this machine, a private LAN (RFC 1918, link-local, IPv6
 * ULA), `.local` names and the Android emulator's host; anything else needs wss://.
 */
export function plaintextAllowed(host: string): boolean {
  const name = bareHost(host);
  if (name === 'localhost' || isLoopbackHost(name) || name === '10.0.2.2' || name.endsWith('.local')) return true;
  if (isIP(name) === 4) return isPrivateIpv4(name);
  if (isIP(name) === 6) return name.startsWith('fe80:') || name.startsWith('fc') || name.startsWith('fd');
  return false;
}

/** This machine's first private LAN IPv4 address (what `gateway.bind=lan` advertises). */
export function lanAddress(interfaces = networkInterfaces()): string | undefined {
  const addresses = Object.values(interfaces)
    .flat()
    .filter((entry) => entry && entry.family === 'IPv4' && !entry.internal)
    .map((entry) => entry!.address);
  return addresses.find(isPrivateIpv4) ?? addresses[0];
}

export interface SetupUrlInput {
  bind: 'loopback' | 'lan' | 'custom';
  host: string;
  port: number;
  /** `--url` / the request's publicUrl: where nodes should connect, overriding the bind address. */
  publicUrl?: string;
  lan?: () => string | undefined;
}

/** The URL a node should reach this gateway at, and where it came from; refuses plaintext beyond a LAN. */
export function setupGatewayUrl(input: SetupUrlInput): { url: string; source: string } {
  let resolved: { url: string; source: string };
  if (input.publicUrl !== undefined) {
    const url = normalizeGatewayUrl(input.publicUrl);
    if (!url) throw new SetupCodeError(`publicUrl "${input.publicUrl}" is not a ws:// or wss:// URL (or host:port)`);
    resolved = { url, source: 'request.publicUrl' };
  } else if (input.bind === 'loopback') {
    throw new SetupCodeError(
      'the gateway is only bound to loopback, which other machines cannot reach: run it with --bind lan, or give the URL nodes should use (claw qr --url ws://<host>:<port>)',
    );
  } else {
    const wildcard = input.host === '0.0.0.0' || input.host === '::';
    const host = input.bind === 'lan' || wildcard ? (input.lan ?? lanAddress)() : input.host;
    if (!host) throw new SetupCodeError(`gateway.bind=${input.bind} is set, but this machine has no LAN IPv4 address`);
    const literal = isIP(host) === 6 ? `[${host}]` : host;
    resolved = { url: `ws://${literal}:${input.port}`, source: `gateway.bind=${input.bind}` };
  }
  const parsed = new URL(resolved.url);
  if (parsed.protocol === 'ws:' && !plaintextAllowed(parsed.hostname))
    throw new SetupCodeError(
      `a setup code would send nodes to ${resolved.url} in plaintext (from ${resolved.source}): ws:// is only for this machine, a private LAN or .local hosts; give a wss:// URL (claw qr --url wss://…)`,
    );
  return resolved;
}
