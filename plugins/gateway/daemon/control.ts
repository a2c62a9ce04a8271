/**
 * Installing and driving the gateway's OS service for one state dir: what `claw gateway
 * install|uninstall|start|stop|restart|status` do, and what `claw reset`/`claw uninstall`
 * reach through the `gateway-daemon` service.
 */
import { existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { clawPackageRoot, writeFileAtomic, type GatewayDaemon, type GatewayDaemonResult } from '../../../sdk/index.js';
import { serviceManager, ServiceManagerUnavailable, type ServiceManager, type ServiceState } from './manager.js';
import {
  LOCATION_ENV,
  serviceFile,
  serviceFileText,
  serviceName,
  type ServicePlatform,
  type ServiceSpec,
  type UnitProgram,
} from './unit-files.js';

export interface DaemonPaths {
  stateDir: string;
  configPath: string;
}

export interface InstallResult {
  file: string;
  /** The file was written (new, or replaced with --force). */
  written: boolean;
  replaced: boolean;
  started: boolean;
  /** Why the service was enabled but not started. */
  notStarted?: string;
}

export interface DaemonStatus {
  platform: ServicePlatform;
  service: string;
  file: string;
  installed: boolean;
  /** The installed file is what `install` would write now (undefined when not installed). */
  current?: boolean;
  state?: ServiceState;
  /** Why the manager could not be asked. */
  unavailable?: string;
}

export function servicePlatform(): ServicePlatform {
  if (process.platform === 'linux' || process.platform === 'darwin') return process.platform;
  throw new Error(
    `claw installs its service on Linux (systemd) and macOS (launchd), not on ${process.platform}; run the gateway in the foreground with \`claw gateway\`, or under a supervisor of your own`,
  );
}

/** claw's own bin script, as package.json names it. */
export function clawBin(): string {
  const root = clawPackageRoot();
  if (!root) throw new Error("cannot find claw's package.json, so the service would not know what to run");
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
  const bin = join(root, pkg.bin?.claw ?? 'dist/apps/cli/bin.cjs');
  if (!existsSync(bin)) throw new Error(`claw's bin script ${bin} does not exist (run npm run build)`);
  return realpathSync(bin);
}

// install is the outcome's raw material: install.ts words it, for the CLI and the service alike.
export class Daemon implements Omit<GatewayDaemon, 'install'> {
  readonly platform: ServicePlatform;
  readonly profile: string | undefined;
  readonly name: string;
  readonly file: string;
  private readonly manager: ServiceManager;
  /** What the messages call it, and the command that installs it. */
  private readonly what: string;
  private readonly installCommand: string;

  /** `program`: another claw program's unit (the node host's) instead of the gateway's; `port` is then unused. */
  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly paths: DaemonPaths,
    private readonly program?: UnitProgram & { what: string; installCommand: string },
  ) {
    this.platform = servicePlatform();
    const profile = env.OPENCLAW_PROFILE?.trim();
    this.profile = profile && profile !== 'default' ? profile : undefined;
    this.name = serviceName(this.platform, this.profile, program?.kind);
    // The service manager looks in the real home, whatever OPENCLAW_HOME says about claw's files.
    this.file = serviceFile(
      { platform: this.platform, home: env.HOME?.trim() || homedir(), profile: this.profile },
      program?.kind,
    );
    this.manager = serviceManager(this.platform, this.name, env);
    this.what = program?.what ?? 'gateway';
    this.installCommand = program?.installCommand ?? 'claw gateway install';
  }

  private text(port: number): string {
    return serviceFileText(this.spec(port), this.program);
  }

  get managerName(): string {
    return this.platform === 'darwin' ? 'launchd agent' : 'systemd user unit';
  }

  spec(port: number): ServiceSpec {
    const environment: Record<string, string> = {};
    for (const key of LOCATION_ENV) {
      const value = this.env[key]?.trim();
      if (value) environment[key] = value;
    }
    // Absolute, so the service finds them whatever its working directory.
    if (environment.OPENCLAW_STATE_DIR) environment.OPENCLAW_STATE_DIR = this.paths.stateDir;
    if (environment.OPENCLAW_CONFIG_PATH) environment.OPENCLAW_CONFIG_PATH = this.paths.configPath;
    return {
      platform: this.platform,
      home: this.env.HOME?.trim() || homedir(),
      profile: this.profile,
      nodePath: process.execPath,
      cliPath: clawBin(),
      port,
      environment,
      logDir: join(this.paths.stateDir, 'logs'),
    };
  }

  installed(): string | undefined {
    try {
      return readFileSync(this.file, 'utf8');
    } catch {
      return undefined;
    }
  }

  /**
   * Write the service file and start the service. An identical file is left as is (install
   * is idempotent); a different one is replaced only with `force`. `foregroundPid`: a gateway
   * already running outside the service, which would make the service's gateway fail on the lock.
   */
  async install(options: { port: number; force: boolean; foregroundPid?: number }): Promise<InstallResult> {
    const text = this.text(options.port);
    const existing = this.installed();
    if (existing !== undefined && existing !== text && !options.force) {
      throw new DaemonConflict(
        `${this.file} exists and differs from what this install would write (${firstDifference(existing, text)}); rerun with --force to replace it`,
      );
    }
    const written = existing !== text;
    // Not a secret (no token in it), and the service manager reads it as the user.
    if (written) writeFileAtomic(this.file, text, { mode: 0o644 });
    const result: InstallResult = {
      file: this.file,
      written,
      replaced: written && existing !== undefined,
      started: false,
    };
    await this.manager.reload(this.file);
    const state = await this.manager.state();
    if (options.foregroundPid !== undefined && options.foregroundPid !== state.pid) {
      await this.manager.enable(this.file, false);
      result.notStarted = `a gateway is already running outside the service (pid ${options.foregroundPid}); stop it, then run: claw gateway start`;
      return result;
    }
    await this.manager.enable(this.file, true);
    // A replaced file takes effect only when the running service restarts.
    if (result.replaced) await this.manager.restart(this.file);
    result.started = true;
    return result;
  }

  async unavailable(): Promise<string | undefined> {
    try {
      await this.manager.state();
      return undefined;
    } catch (error) {
      if (error instanceof ServiceManagerUnavailable) return error.message;
      throw error;
    }
  }

  private requireInstalled(): void {
    if (this.installed() === undefined)
      throw new DaemonConflict(
        `the ${this.what} service is not installed (${this.file}); install it with: ${this.installCommand}`,
      );
  }

  async start(): Promise<void> {
    this.requireInstalled();
    await this.manager.start(this.file);
  }

  async stop(): Promise<GatewayDaemonResult> {
    if (this.installed() === undefined)
      return { done: false, message: `no ${this.what} service is installed (${this.file})` };
    await this.manager.stop();
    return { done: true, message: `stopped ${this.name}` };
  }

  async restart(): Promise<GatewayDaemonResult> {
    if (this.installed() === undefined)
      return { done: false, message: `no ${this.what} service is installed (${this.file})` };
    await this.manager.restart(this.file);
    return { done: true, message: `restarted ${this.name}` };
  }

  /** Stop and disable the service, then remove its file; a manager that cannot be reached is noted, the file still goes. */
  async uninstall(): Promise<GatewayDaemonResult> {
    if (this.installed() === undefined)
      return { done: false, message: `no ${this.what} service is installed (${this.file})` };
    let note = '';
    try {
      await this.manager.disable();
    } catch (error) {
      if (!(error instanceof ServiceManagerUnavailable)) throw error;
      note = ` (${error.message}, so it was not asked to stop the service)`;
    }
    rmSync(this.file, { force: true });
    try {
      await this.manager.reload(this.file);
    } catch (error) {
      if (!(error instanceof ServiceManagerUnavailable)) throw error;
    }
    return { done: true, message: `removed ${this.file}${note}` };
  }

  async status(port: number): Promise<DaemonStatus> {
    const existing = this.installed();
    const out: DaemonStatus = {
      platform: this.platform,
      service: this.name,
      file: this.file,
      installed: existing !== undefined,
    };
    if (existing !== undefined) {
      try {
        out.current = existing === this.text(port);
      } catch {
        // No bin script to compare with: the file's freshness is unknown.
      }
    }
    try {
      out.state = await this.manager.state();
    } catch (error) {
      if (!(error instanceof ServiceManagerUnavailable)) throw error;
      out.unavailable = error.message;
    }
    return out;
  }
}

/** The service is in a state the command cannot proceed from (not installed, a different file). */
export class DaemonConflict extends Error {}

function firstDifference(a: string, b: string): string {
  const left = a.split('\n');
  const right = b.split('\n');
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    if (left[index] !== right[index])
      return `line ${index + 1}: "${left[index] ?? ''}" here, "${right[index] ?? ''}" now`;
  }
  return 'they differ';
}

export { ServiceManagerUnavailable };
