/**
 * The `service-units` service: the gateway's OS-service code (unit text, systemctl --user,
 * launchctl) offered for another claw program, so `claw node install|start|stop|…` writes and
 * drives its unit exactly as `claw gateway install` does without a copy of that code. Every
 * call resolves to an outcome (ok, a code, the words to show): the caller is another plugin,
 * which cannot tell this plugin's error classes apart.
 */
import type { DaemonPaths, DaemonStatus } from './control.js';
import type { UnitProgram } from './unit-files.js';

export type UnitOutcomeCode = 'SERVICE_MANAGER_UNAVAILABLE' | 'NOT_INSTALLED' | 'CONFLICT' | 'UNSUPPORTED_PLATFORM';

export interface UnitOutcome {
  ok: boolean;
  code?: UnitOutcomeCode;
  message: string;
  /** install: the file was written, replaced, the service started. */
  written?: boolean;
  replaced?: boolean;
  started?: boolean;
}

export interface ProgramUnit extends UnitProgram {
  /** What messages call it ("node host"). */
  what: string;
  /** The command that installs it ("claw node install"), for "not installed" messages. */
  installCommand: string;
}

export interface ServiceUnit {
  name: string;
  file: string;
  /** "systemd user unit" or "launchd agent". */
  managerName: string;
  /** The unit file as it is now, if there is one. */
  installed(): string | undefined;
  install(options: { force?: boolean }): Promise<UnitOutcome>;
  start(): Promise<UnitOutcome>;
  stop(): Promise<UnitOutcome>;
  restart(): Promise<UnitOutcome>;
  uninstall(): Promise<UnitOutcome>;
  status(): Promise<DaemonStatus>;
}

export interface ServiceUnits {
  /** The unit for `program`; an OS with no supported service manager is an outcome, not a throw. */
  unit(program: ProgramUnit): Promise<ServiceUnit | UnitOutcome>;
}

export function serviceUnits(env: Record<string, string | undefined>, paths: DaemonPaths): ServiceUnits {
  return {
    async unit(program) {
      const { Daemon, DaemonConflict, ServiceManagerUnavailable } = await import('./control.js');
      let daemon: InstanceType<typeof Daemon>;
      try {
        daemon = new Daemon(env, paths, program);
      } catch (error) {
        return { ok: false, code: 'UNSUPPORTED_PLATFORM', message: (error as Error).message };
      }
      const outcome = async (work: () => Promise<UnitOutcome>): Promise<UnitOutcome> => {
        try {
          return await work();
        } catch (error) {
          if (error instanceof ServiceManagerUnavailable)
            return { ok: false, code: 'SERVICE_MANAGER_UNAVAILABLE', message: error.message };
          if (error instanceof DaemonConflict) return { ok: false, code: 'CONFLICT', message: error.message };
          throw error;
        }
      };
      const notInstalled = (result: { done: boolean; message: string }): UnitOutcome =>
        result.done
          ? { ok: true, message: result.message }
          : { ok: false, code: 'NOT_INSTALLED', message: result.message };
      return {
        name: daemon.name,
        file: daemon.file,
        managerName: daemon.managerName,
        installed: () => daemon.installed(),
        install: (options) =>
          outcome(async () => {
            const result = await daemon.install({ port: 0, force: options.force === true });
            const what = result.replaced ? 'Replaced' : result.written ? 'Wrote' : 'Already installed:';
            return {
              ok: true,
              written: result.written,
              replaced: result.replaced,
              started: result.started,
              message: `${what} ${result.file}\nThe ${program.what} service is ${result.replaced ? 'restarted' : 'enabled and started'}.`,
            };
          }).then((result) =>
            result.code === 'SERVICE_MANAGER_UNAVAILABLE' && daemon.installed() !== undefined
              ? {
                  ...result,
                  message: `${result.message}; the unit is written (${daemon.file}) but cannot be enabled or started from here`,
                }
              : result,
          ),
        start: () =>
          outcome(async () => {
            await daemon.start();
            return { ok: true, message: `started ${daemon.name}` };
          }).then((result) => (result.code === 'CONFLICT' ? { ...result, code: 'NOT_INSTALLED' } : result)),
        stop: () => outcome(async () => notInstalled(await daemon.stop())),
        restart: () => outcome(async () => notInstalled(await daemon.restart())),
        uninstall: () => outcome(async () => notInstalled(await daemon.uninstall())),
        status: () => daemon.status(0),
      };
    },
  };
}
