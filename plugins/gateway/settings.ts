/**
 * The gateway's settings: the `gateway` config section (command-line flags arrive merged
 * into it), then environment variables for anything left unset, then defaults.
 */
export type BindMode = 'loopback' | 'lan' | 'custom';
export type AuthMode = 'none' | 'token' | 'password';

export interface GatewaySection {
  port?: number;
  bind?: BindMode;
  customBindHost?: string;
  auth?: { mode?: AuthMode; token?: string; password?: string };
  tickIntervalMs: number;
  maxPayloadBytes: number;
  maxBufferedBytes: number;
  dropEventsAboveBytes: number;
  handshakeTimeoutMs: number;
  idempotencyWindowMs: number;
  shutdownDrainMs: number;
  pairing: { autoApproveLoopback: boolean; requestTtlMs: number };
  logs: { level: 'debug' | 'info' | 'warn' | 'error'; maxFileBytes: number };
  /** Browser origins (besides the gateway's own pages) allowed to open a WebSocket. */
  allowedOrigins?: string[];
}

export interface GatewaySettings extends Omit<GatewaySection, 'port' | 'bind' | 'auth' | 'customBindHost'> {
  port: number;
  bind: BindMode;
  host: string;
  /** True when only this machine can reach the listener. */
  loopbackOnly: boolean;
  auth: { mode: AuthMode; token?: string; password?: string };
}

export const DEFAULT_PORT = 18789;

export class GatewaySettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GatewaySettingsError';
  }
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::ffff:127.0.0.1';
}

export function resolveSettings(section: GatewaySection, env: Record<string, string | undefined>): GatewaySettings {
  const envPort = env.OPENCLAW_GATEWAY_PORT?.trim();
  let port = section.port;
  if (port === undefined && envPort) {
    port = Number(envPort);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new GatewaySettingsError(`OPENCLAW_GATEWAY_PORT "${envPort}" is not a port number`);
  }
  const bind = section.bind ?? 'loopback';
  let host: string;
  if (bind === 'loopback') host = '127.0.0.1';
  else if (bind === 'lan') host = '0.0.0.0';
  else {
    if (!section.customBindHost) throw new GatewaySettingsError('gateway.bind is "custom" but gateway.customBindHost is not set');
    host = section.customBindHost;
  }
  const token = section.auth?.token ?? (env.OPENCLAW_GATEWAY_TOKEN?.trim() || undefined);
  const password = section.auth?.password ?? (env.OPENCLAW_GATEWAY_PASSWORD?.trim() || undefined);
  const mode: AuthMode = section.auth?.mode ?? (token ? 'token' : password ? 'password' : 'none');
  if (mode === 'token' && !token) {
    throw new GatewaySettingsError('gateway.auth.mode is "token" but no token is set (gateway.auth.token, OPENCLAW_GATEWAY_TOKEN or --token)');
  }
  if (mode === 'password' && !password) {
    throw new GatewaySettingsError('gateway.auth.mode is "password" but no password is set (gateway.auth.password, OPENCLAW_GATEWAY_PASSWORD or --password)');
  }
  const loopbackOnly = isLoopbackHost(host);
  if (!loopbackOnly && mode === 'none') {
    throw new GatewaySettingsError(
      `refusing to listen on ${host} without auth: anyone on the network could control the assistant; set a token (--token, OPENCLAW_GATEWAY_TOKEN or gateway.auth.token)`,
    );
  }
  const { auth: _auth, customBindHost: _custom, port: _port, bind: _bind, ...rest } = section;
  return { ...rest, port: port ?? DEFAULT_PORT, bind, host, loopbackOnly, auth: { mode, token, password } };
}
