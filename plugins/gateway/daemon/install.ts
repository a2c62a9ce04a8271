/**
 * Installing the gateway's OS service, as `claw gateway install` does it and as the
 * `gateway-daemon` service offers it to `claw onboard`: one path, so both write the same
 * unit, refuse the same conflicts and say the same things.
 */
import { lockHolderAlive, readLockFile, type PluginApi } from '../../../sdk/index.js';
import { gatewayLockPath, UsageError, type GatewayLockInfo } from '../../../sdk/cli.js';
import { DEFAULT_PORT, type GatewaySection } from '../settings.js';
import { DaemonConflict, ServiceManagerUnavailable, type Daemon, type InstallResult } from './control.js';

export const FOREGROUND = 'Run the gateway in the foreground instead: claw gateway';

export type InstallOutcome =
  | { ok: true; port: number; result: InstallResult; message: string }
  | { ok: false; port: number; error: { code?: 'SERVICE_MANAGER_UNAVAILABLE'; message: string }; message: string };

/**
 * Write the unit and start it. A service manager that cannot be reached or a different unit
 * already there is an outcome with `ok: false` and the words to show; a port that cannot
 * be a service's (0) is a UsageError.
 */
export async function installService(
  api: PluginApi,
  daemon: Daemon,
  options: { port?: number; force?: boolean },
): Promise<InstallOutcome> {
  const port = options.port ?? configuredPort(api);
  if (port === 0) throw new UsageError('a service needs a fixed port: pass --port <n> or set gateway.port');
  try {
    const result = await daemon.install({
      port,
      force: options.force === true,
      foregroundPid: foregroundGateway(api.kernel.paths.stateDir),
    });
    const what = result.replaced ? 'Replaced' : result.written ? 'Wrote' : 'Already installed:';
    const then = result.notStarted
      ? `enabled, not started: ${result.notStarted}`
      : `${result.replaced ? 'restarted' : 'enabled and started'} (port ${port})`;
    return { ok: true, port, result, message: `${what} ${result.file}\nThe gateway service is ${then}.` };
  } catch (error) {
    if (error instanceof ServiceManagerUnavailable) {
      const written =
        daemon.installed() !== undefined
          ? `\nThe unit is written (${daemon.file}) but cannot be enabled or started from here.`
          : '';
      return {
        ok: false,
        port,
        error: { code: 'SERVICE_MANAGER_UNAVAILABLE', message: error.message },
        message: `${error.message}.${written}\n${FOREGROUND}`,
      };
    }
    if (error instanceof DaemonConflict)
      return { ok: false, port, error: { message: error.message }, message: error.message };
    throw error;
  }
}

/** A gateway already running for this state dir (its lock's pid), which the service's gateway would collide with. */
function foregroundGateway(stateDir: string): number | undefined {
  const lock = readLockFile<GatewayLockInfo>(gatewayLockPath(stateDir));
  return lock && lockHolderAlive(lock) ? lock.pid : undefined;
}

/** gateway.port, else OPENCLAW_GATEWAY_PORT, else the default — as the gateway picks it, without its auth checks. */
export function configuredPort(api: PluginApi): number {
  const { port } = api.section<GatewaySection>('gateway');
  if (port !== undefined) return port;
  const fromEnv = api.kernel.env.OPENCLAW_GATEWAY_PORT?.trim();
  return fromEnv ? parsePort(fromEnv, 'OPENCLAW_GATEWAY_PORT') : DEFAULT_PORT;
}

export function parsePort(value: string, what = '--port'): number {
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new UsageError(`${what} must be a port number from 1 to 65535, got "${value}"`);
  return port;
}
