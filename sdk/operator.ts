/**
 * How command-line tools find and talk to the gateway of a state dir: the lock file a
 * running gateway writes (its pid, host and port), the operator's device identity and the
 * device token cached from an earlier handshake. `claw gateway call`, `claw agent` and any
 * plugin CLI that needs the running gateway use this, so they all connect the same way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from './fs.js';
import { OPERATOR_SCOPES } from './protocol/constants.js';
import { isLoopbackHost } from './net/auth-kit.js';
import { GatewayClient, GatewayRequestError, type GatewayClientOptions } from './client.js';
import { loadOrCreateDeviceIdentity } from './device-auth.js';
import { lockHolderAlive } from './file-lock.js';

export { lockHolderAlive };

export const DEFAULT_GATEWAY_PORT = 18789;

/** What `<stateDir>/gateway.lock` holds while a gateway runs. */
export interface GatewayLockInfo {
  pid: number;
  hostname: string;
  port?: number;
  host?: string;
  startedAt: string;
  /** The gateway process's start time (sdk/file-lock.ts processStartTime), so a recycled pid is not taken for it. */
  pidStartTime?: number;
}

export function gatewayLockPath(stateDir: string): string {
  return join(stateDir, 'gateway.lock');
}

/** The lock of the gateway running for this state dir, if one is. */
export function runningGateway(stateDir: string): GatewayLockInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(gatewayLockPath(stateDir), 'utf8')) as GatewayLockInfo;
    return lockHolderAlive(info) ? info : undefined;
  } catch {
    return undefined;
  }
}

export interface OperatorConnection {
  stateDir: string;
  env: Readonly<Record<string, string | undefined>>;
  /** The `gateway` config section (port, bind, auth), when there is one. */
  gateway?: { port?: number; bind?: string; customBindHost?: string; auth?: { token?: string; password?: string } };
  url?: string;
  token?: string;
  password?: string;
  timeoutMs?: number;
  client: { id: string; version: string; mode?: string };
  onEvent?: GatewayClientOptions['onEvent'];
}

interface DeviceAuthCache {
  [url: string]: { deviceToken: string; role: string; scopes: string[] };
}

/**
 * Client options for an operator on this machine: the URL from flags, env, the running
 * gateway's lock or config; the shared secret from flags, env or config; otherwise the
 * device token this identity was issued before.
 */
export function operatorClientOptions(options: OperatorConnection): GatewayClientOptions {
  const { env, gateway = {} } = options;
  const running = runningGateway(options.stateDir);
  const port = running?.port ?? gateway.port ?? (Number(env.OPENCLAW_GATEWAY_PORT) || DEFAULT_GATEWAY_PORT);
  const bindHost = running?.host ?? (gateway.bind === 'custom' ? gateway.customBindHost : undefined);
  const host = bindHost && bindHost !== '0.0.0.0' && !isLoopbackHost(bindHost) ? bindHost : '127.0.0.1';
  const url = options.url ?? env.OPENCLAW_GATEWAY_URL ?? `ws://${host}:${port}`;
  const token = options.token ?? (env.OPENCLAW_GATEWAY_TOKEN?.trim() || gateway.auth?.token);
  const password = options.password ?? (env.OPENCLAW_GATEWAY_PASSWORD?.trim() || gateway.auth?.password);
  const identityDir = join(options.stateDir, 'identity');
  const cacheFile = join(identityDir, 'device-auth.json');
  let cache: DeviceAuthCache = {};
  try {
    cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as DeviceAuthCache;
  } catch {
    // First use.
  }
  return {
    url,
    token,
    password,
    deviceToken: token || password ? undefined : cache[url]?.deviceToken,
    identity: loadOrCreateDeviceIdentity(join(identityDir, 'device.json')),
    role: 'operator',
    scopes: [...OPERATOR_SCOPES],
    client: options.client,
    requestTimeoutMs: options.timeoutMs,
    connectTimeoutMs: options.timeoutMs,
    onEvent: options.onEvent,
    onHello: (hello) => {
      if (hello.auth.deviceToken) {
        cache[url] = { deviceToken: hello.auth.deviceToken, role: hello.auth.role, scopes: hello.auth.scopes };
        writeJsonAtomic(cacheFile, cache);
      }
    },
  };
}

/** Connect, run `work`, close. An unreachable gateway gets an error that says what to do. */
export async function withGatewayClient<T>(
  options: GatewayClientOptions,
  work: (client: GatewayClient) => Promise<T>,
): Promise<T> {
  const client = new GatewayClient(options);
  try {
    await client.connect();
  } catch (error) {
    if (error instanceof GatewayRequestError && error.code === 'UNAVAILABLE') {
      throw new GatewayRequestError({
        code: 'UNAVAILABLE',
        message: `gateway not reachable at ${options.url} (${error.message}); is \`claw gateway\` running?`,
        retryable: true,
      });
    }
    throw error;
  }
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}
