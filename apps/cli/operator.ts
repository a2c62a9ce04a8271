/**
 * How command-line tools find and talk to the gateway of a state dir: the lock file a
 * running gateway writes (its pid, host and port), the operator's device identity and the
 * device token cached from an earlier handshake. `claw config set`, `claw security audit
 * --deep` and every plugin command (through `ctx.gateway`, cliGateway below) connect this
 * way, so they all connect the same way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../sdk/fs.js';
import { CLI_CLIENT_ID, OPERATOR_SCOPES } from '../../sdk/protocol/constants.js';
import { isLoopbackHost } from '../../sdk/net/auth-kit.js';
import { loadOrCreateDeviceIdentity } from '../../sdk/device-auth.js';
import { lockHolderAlive } from '../../sdk/file-lock.js';
import { clawVersion } from '../../sdk/version.js';
import {
  gatewayLockPath,
  UsageError,
  type CliGateway,
  type GatewayFlags,
  type GatewayLockInfo,
} from '../../sdk/cli.js';
import type { KernelServices } from '../../sdk/index.js';
import { GatewayClient, GatewayRequestError, type GatewayClientOptions } from './gateway-client.js';
import { editConfigFile, patchThroughGateway, ConfigChangeRefused } from './config-patch.js';
import { openGatewaySession } from './gateway-session.js';

export const DEFAULT_GATEWAY_PORT = 18789;

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

/** Client options from a command's gateway flags (`--timeout` in ms) and the `gateway` config section. */
function flagClientOptions(
  flags: GatewayFlags,
  stateDir: string,
  env: OperatorConnection['env'],
  gateway: OperatorConnection['gateway'],
  onEvent?: GatewayClientOptions['onEvent'],
): GatewayClientOptions {
  const timeout = flags.timeout === undefined ? undefined : Number(flags.timeout);
  if (timeout !== undefined && (!Number.isFinite(timeout) || timeout <= 0))
    throw new UsageError(`--timeout must be milliseconds, got "${flags.timeout}"`);
  return operatorClientOptions({
    stateDir,
    env,
    gateway,
    url: flags.url,
    token: flags.token,
    password: flags.password,
    timeoutMs: timeout,
    client: { id: CLI_CLIENT_ID, version: clawVersion(), mode: 'cli' },
    onEvent,
  });
}

/** `ctx.gateway` for a plugin command run against `kernel` (its state dir and `gateway` config). */
export function cliGateway(
  kernel: Pick<KernelServices, 'paths' | 'config' | 'configFile'>,
  env: OperatorConnection['env'],
): CliGateway {
  const stateDir = kernel.paths.stateDir;
  const section = () => (kernel.config() as { gateway?: OperatorConnection['gateway'] }).gateway;
  const connect: CliGateway['connect'] = (flags, work, options = {}) =>
    withGatewayClient(flagClientOptions(flags, stateDir, env, section(), options.onEvent), work);
  return {
    running: () => runningGateway(stateDir),
    target: (flags = {}) => {
      const { url, token, password } = flagClientOptions(flags, stateDir, env, section());
      return { url, token, password };
    },
    connect,
    session: openGatewaySession,
    async changeConfig(purpose, edit, flags = {}) {
      try {
        if (flags.url !== undefined || runningGateway(stateDir))
          return await connect(flags, (client) => patchThroughGateway(client, edit));
        return await editConfigFile(kernel, purpose, edit);
      } catch (error) {
        throw error instanceof ConfigChangeRefused ? new UsageError(error.message) : error;
      }
    },
  };
}
