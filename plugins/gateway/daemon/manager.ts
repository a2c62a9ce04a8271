/**
 * Talking to the OS service manager: `systemctl --user` on Linux, `launchctl` in the user's
 * GUI domain on macOS. A manager that cannot be reached (a container without a user
 * systemd, an SSH session with no user bus) is a ServiceManagerUnavailable, which commands
 * report as such — with the foreground alternative — rather than as a failed unit.
 */
import { spawn } from 'node:child_process';
import type { ServicePlatform } from './unit-files.js';

export class ServiceManagerUnavailable extends Error {
  constructor(
    readonly manager: string,
    reason: string,
  ) {
    super(`${manager} is not available here (${reason})`);
    this.name = 'ServiceManagerUnavailable';
  }
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ServiceState {
  /** running, stopped, failed, … as the manager words it. */
  active: string;
  /** Whether the manager knows the service at all (loaded / has a unit). */
  loaded: boolean;
  enabled?: boolean;
  pid?: number;
}

/** What a user systemd / launchd says when there is no manager to talk to. */
const NO_MANAGER =
  /Failed to connect to (user scope )?bus|No medium found|DBUS_SESSION_BUS_ADDRESS|XDG_RUNTIME_DIR|System has not been booted with systemd|Could not find (a )?domain|Bootstrap failed: 125|Operation not permitted while System Integrity/i;

function run(command: string, args: string[], env: Record<string, string | undefined>): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

export interface ServiceManager {
  readonly name: string;
  /** Make the manager read the (new or removed) service file. */
  reload(file: string): Promise<void>;
  /** Start at login from now on, and (when `now`) start it. */
  enable(file: string, now: boolean): Promise<void>;
  start(file: string): Promise<void>;
  stop(): Promise<void>;
  restart(file: string): Promise<void>;
  /** Stop, and no longer start at login. */
  disable(): Promise<void>;
  state(): Promise<ServiceState>;
}

export function serviceManager(
  platform: ServicePlatform,
  name: string,
  env: Record<string, string | undefined>,
): ServiceManager {
  return platform === 'darwin' ? launchd(name, env) : systemd(name, env);
}

async function call(
  manager: string,
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  accept: (result: RunResult) => boolean = (result) => result.code === 0,
): Promise<RunResult> {
  let result: RunResult;
  try {
    result = await run(command, args, env);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ServiceManagerUnavailable(
      manager,
      code === 'ENOENT' ? `no ${command} on PATH` : (error as Error).message,
    );
  }
  const said = `${result.stderr}\n${result.stdout}`.trim();
  if (result.code !== 0 && NO_MANAGER.test(said)) throw new ServiceManagerUnavailable(manager, firstLine(said));
  if (!accept(result)) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.code}): ${firstLine(said)}`);
  return result;
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((line) => line.trim())
      ?.trim() ?? 'no output'
  );
}

function systemd(unit: string, env: Record<string, string | undefined>): ServiceManager {
  const manager = 'the systemd user manager (systemctl --user)';
  const systemctl = (args: string[], accept?: (result: RunResult) => boolean) =>
    call(manager, 'systemctl', ['--user', ...args], env, accept);
  return {
    name: 'systemd',
    reload: async () => void (await systemctl(['daemon-reload'])),
    enable: async (_file, now) => void (await systemctl(['enable', ...(now ? ['--now'] : []), unit])),
    start: async () => void (await systemctl(['start', unit])),
    stop: async () => void (await systemctl(['stop', unit])),
    restart: async () => void (await systemctl(['restart', unit])),
    // A unit that is already gone is already disabled.
    disable: async () =>
      void (await systemctl(
        ['disable', '--now', unit],
        (result) => result.code === 0 || /not (be )?found|does not exist/i.test(result.stderr),
      )),
    async state() {
      const { stdout } = await systemctl([
        'show',
        unit,
        '--property=LoadState,ActiveState,SubState,UnitFileState,MainPID',
      ]);
      const props = Object.fromEntries(
        stdout
          .split('\n')
          .filter((line) => line.includes('='))
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1).trim()]),
      );
      const pid = Number(props.MainPID);
      return {
        active: props.SubState && props.ActiveState ? `${props.ActiveState} (${props.SubState})` : 'unknown',
        loaded: props.LoadState === 'loaded',
        enabled: props.UnitFileState ? props.UnitFileState === 'enabled' : undefined,
        ...(Number.isInteger(pid) && pid > 0 ? { pid } : {}),
      };
    },
  };
}

function launchd(label: string, env: Record<string, string | undefined>): ServiceManager {
  const manager = 'launchd (launchctl)';
  const uid = process.getuid?.() ?? 0;
  const domain = `gui/${uid}`;
  const target = `${domain}/${label}`;
  const launchctl = (args: string[], accept?: (result: RunResult) => boolean) =>
    call(manager, 'launchctl', args, env, accept);
  const loaded = async () => (await launchctl(['print', target], () => true)).code === 0;
  const bootstrap = async (file: string) => {
    if (!(await loaded())) await launchctl(['bootstrap', domain, file]);
  };
  const bootout = async () => {
    if (await loaded()) await launchctl(['bootout', target]);
  };
  return {
    name: 'launchd',
    // launchd reads the plist when the job is bootstrapped: a changed one needs a fresh bootstrap.
    reload: async (file) => {
      if (await loaded()) {
        await bootout();
        await bootstrap(file);
      }
    },
    enable: async (file, now) => {
      await launchctl(['enable', target]);
      if (now) await bootstrap(file);
    },
    start: async (file) => {
      if (await loaded()) await launchctl(['kickstart', target]);
      else await bootstrap(file);
    },
    stop: bootout,
    restart: async (file) => {
      if (await loaded()) await launchctl(['kickstart', '-k', target]);
      else await bootstrap(file);
    },
    disable: async () => {
      await bootout();
      await launchctl(['disable', target]);
    },
    async state() {
      const result = await launchctl(['print', target], () => true);
      if (result.code !== 0) return { active: 'not loaded', loaded: false };
      const pid = Number(/\bpid = (\d+)/.exec(result.stdout)?.[1]);
      const state = /\bstate = (\w+)/.exec(result.stdout)?.[1] ?? 'unknown';
      return { active: state, loaded: true, ...(pid > 0 ? { pid } : {}) };
    },
  };
}
