/**
 * The gateway's settings: `claw gateway`'s command-line flags, then the `gateway` config
 * section, then environment variables for anything left unset, then defaults.
 */
import type { RateLimitSettings } from '../../sdk/index.js';
import { isLoopbackHost } from '../../sdk/net/index.js';
import { gatewayAuthUnset } from './auth.js';

export type BindMode = 'loopback' | 'lan' | 'custom';
export type AuthMode = 'none' | 'token' | 'password';

export type { RateLimitSettings };

export interface GatewaySection {
  port?: number;
  bind?: BindMode;
  customBindHost?: string;
  auth: { mode?: AuthMode; token?: string; password?: string; rateLimit: RateLimitSettings };
  tickIntervalMs: number;
  maxPayloadBytes: number;
  maxBufferedBytes: number;
  dropEventsAboveBytes: number;
  handshakeTimeoutMs: number;
  idempotencyWindowMs: number;
  reload: { mode: 'hybrid' | 'hot' | 'restart' | 'off' };
  shutdownDrainMs: number;
  pairing: { autoApproveLoopback: boolean; requestTtlMs: number };
  logs: { level: 'debug' | 'info' | 'warn' | 'error'; maxFileBytes: number };
  /** Browser origins (besides the gateway's own pages) allowed to call the gateway. */
  controlUi: { allowedOrigins?: string[]; enabled: boolean; root?: string; basePath: string };
  /** Host names besides loopback names, IP literals and this machine's name. */
  allowedHosts?: string[];
  http: { endpoints: { chatCompletions: { enabled: boolean } } };
  preauth: { maxConnections: number; maxPerAddress: number };
  presenceIntervalMs: number;
}

export interface GatewaySettings extends Omit<GatewaySection, 'port' | 'bind' | 'auth' | 'customBindHost'> {
  port: number;
  bind: BindMode;
  host: string;
  /** True when only this machine can reach the listener. */
  loopbackOnly: boolean;
  auth: { mode: AuthMode; token?: string; password?: string; rateLimit: RateLimitSettings };
}

/**
 * `claw gateway --port/--bind/--host/--token/--password`: they win over the config file
 * for this run and its in-place restarts, and are never written into the config.
 */
export interface GatewayOverrides {
  port?: number;
  bind?: BindMode;
  customBindHost?: string;
  auth?: { token?: string; password?: string };
}

export function withOverrides(section: GatewaySection, overrides: GatewayOverrides): GatewaySection {
  const { auth, ...rest } = overrides;
  return { ...section, ...rest, auth: { ...section.auth, ...auth } };
}

export const DEFAULT_PORT = 18789;
/** Shortest shared secret accepted on a listener other machines can reach. */
export const MIN_REMOTE_SECRET_LENGTH = 16;

export class GatewaySettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GatewaySettingsError';
  }
}

/** The secret from config, then the environment. */
function configuredSecrets(section: GatewaySection, env: Record<string, string | undefined>) {
  return {
    token: section.auth?.token ?? (env.OPENCLAW_GATEWAY_TOKEN?.trim() || undefined),
    password: section.auth?.password ?? (env.OPENCLAW_GATEWAY_PASSWORD?.trim() || undefined),
  };
}

/**
 * True when nothing says how clients authenticate: no mode, no token, no password. Such a
 * gateway gets a generated token on first start instead of running open.
 */
export function needsGeneratedToken(section: GatewaySection, env: Record<string, string | undefined>): boolean {
  // Beyond loopback the owner must choose the secret: refusing to start says so.
  return gatewayAuthUnset(section, env) && isLoopbackHost(bindHost(section) ?? '');
}

function bindHost(section: Pick<GatewaySection, 'bind' | 'customBindHost'>): string | undefined {
  const bind = section.bind ?? 'loopback';
  return bind === 'loopback' ? '127.0.0.1' : bind === 'lan' ? '0.0.0.0' : section.customBindHost;
}

export function resolveSettings(section: GatewaySection, env: Record<string, string | undefined>): GatewaySettings {
  const envPort = env.OPENCLAW_GATEWAY_PORT?.trim();
  let port = section.port;
  if (port === undefined && envPort) {
    port = Number(envPort);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new GatewaySettingsError(`OPENCLAW_GATEWAY_PORT "${envPort}" is not a port number`);
  }
  const bind = section.bind ?? 'loopback';
  const host = bindHost(section);
  if (!host) throw new GatewaySettingsError('gateway.bind is "custom" but gateway.customBindHost is not set');
  const loopbackOnly = isLoopbackHost(host);
  const { token, password } = configuredSecrets(section, env);
  const mode: AuthMode | undefined = section.auth?.mode ?? (token ? 'token' : password ? 'password' : undefined);
  if (mode === undefined && !loopbackOnly) {
    throw new GatewaySettingsError(
      `refusing to listen on ${host} without auth: anyone on the network could control the assistant; set a token (--token, OPENCLAW_GATEWAY_TOKEN or gateway.auth.token)`,
    );
  }
  if (mode === undefined) {
    throw new GatewaySettingsError(
      'no gateway auth is configured: set gateway.auth.token (claw setup generates one) or gateway.auth.mode',
    );
  }
  if (mode === 'token' && !token) {
    throw new GatewaySettingsError(
      'gateway.auth.mode is "token" but no token is set (gateway.auth.token, OPENCLAW_GATEWAY_TOKEN or --token)',
    );
  }
  if (mode === 'password' && !password) {
    throw new GatewaySettingsError(
      'gateway.auth.mode is "password" but no password is set (gateway.auth.password, OPENCLAW_GATEWAY_PASSWORD or --password)',
    );
  }
  if (!loopbackOnly) {
    if (mode === 'none') {
      throw new GatewaySettingsError(
        `refusing to listen on ${host} without auth: anyone on the network could control the assistant; set a token (--token, OPENCLAW_GATEWAY_TOKEN or gateway.auth.token)`,
      );
    }
    const secret = mode === 'token' ? token! : password!;
    if (secret.length < MIN_REMOTE_SECRET_LENGTH) {
      throw new GatewaySettingsError(
        `refusing to listen on ${host} with a ${secret.length}-character ${mode}: other machines can reach it, so it must be at least ${MIN_REMOTE_SECRET_LENGTH} characters (openssl rand -hex 32 makes a good one)`,
      );
    }
  }
  const { auth, customBindHost: _custom, port: _port, bind: _bind, ...rest } = section;
  return {
    ...rest,
    port: port ?? DEFAULT_PORT,
    bind,
    host,
    loopbackOnly,
    auth: { mode, token, password, rateLimit: auth.rateLimit },
  };
}
