/**
 * `claw node install|uninstall|start|stop|restart|status`: the node host kept running by the
 * OS as OpenClaw keeps it (systemd user unit openclaw-node.service, launchd agent
 * ai.openclaw.node), with OpenClaw's flags. The unit text and the systemctl/launchctl calls
 * are the gateway plugin's (its `service-units` service), the same code `claw gateway install`
 * runs. No secret goes into the unit: the node host signs in with the device token it saved
 * when it was paired, or gateway.auth.* from the config.
 */
import type { CliContext, KernelServices } from '../../sdk/index.js';
import { parseFlags, UsageError } from '../../sdk/cli.js';
import { requireService } from '../../sdk/services.js';

export const NODE_SERVICE_COMMANDS = ['install', 'uninstall', 'start', 'stop', 'restart', 'status'] as const;
export type NodeServiceCommand = (typeof NODE_SERVICE_COMMANDS)[number];

/** The node host stops its commands' children and closes its connection: no long drain. */
const STOP_TIMEOUT_SEC = 30;

export const NODE_SERVICE_HELP = `Usage: claw node install [--host <host>] [--port <port>] [--context-path <path>] [--tls|--no-tls]
                         [--tls-fingerprint <sha256>] [--node-id <id>] [--display-name <name>]
                         [--runtime node] [--force] [--json]
  Keep the node host running as a systemd user unit (~/.config/systemd/user/openclaw-node.service,
  openclaw-node-<profile>.service for a profile) or a launchd agent (~/Library/LaunchAgents/
  ai.openclaw.node.plist) that runs this Node and claw with \`node run\` and the flags given. No
  secret goes in it: pair once in the foreground (claw node run --pair <code>, or approve the node
  with claw devices approve) and the service signs in with the saved device token. The same unit
  again is a no-op; a different one needs --force (which replaces it and restarts the service).
  Without a service manager (a container, an SSH session with no user bus) the service commands
  exit 1: run the node host in the foreground with \`claw node run\` instead.`;

/** One line each, for `claw node`'s help (install's help covers them). */
const ONE_LINE_HELP: Record<Exclude<NodeServiceCommand, 'install'>, string> = {
  uninstall: 'Usage: claw node uninstall [--json]   stop and disable the node host service, remove its unit',
  start: 'Usage: claw node start [--json]       start the node host service',
  stop: 'Usage: claw node stop [--json]        stop the node host service',
  restart: 'Usage: claw node restart [--json]     restart the node host service',
  status: 'Usage: claw node status [--json]      the unit and what the service manager says about it',
};

const FOREGROUND = 'Run the node host in the foreground instead: claw node run';

/** The gateway plugin's `service-units` service, as this plugin uses it. */
interface UnitOutcome {
  ok: boolean;
  code?: string;
  message: string;
  written?: boolean;
  replaced?: boolean;
  started?: boolean;
}
interface ServiceUnit {
  name: string;
  file: string;
  managerName: string;
  install(options: { force?: boolean }): Promise<UnitOutcome>;
  start(): Promise<UnitOutcome>;
  stop(): Promise<UnitOutcome>;
  restart(): Promise<UnitOutcome>;
  uninstall(): Promise<UnitOutcome>;
  status(): Promise<{
    service: string;
    file: string;
    installed: boolean;
    current?: boolean;
    state?: { active: string; loaded: boolean; enabled?: boolean; pid?: number };
    unavailable?: string;
  }>;
}
interface ServiceUnits {
  unit(program: {
    kind: string;
    description: string;
    args: string[];
    stopTimeoutSec: number;
    what: string;
    installCommand: string;
  }): Promise<ServiceUnit | UnitOutcome>;
}

type Values = Record<string, string | boolean | undefined>;

/**
 * `claw node run` with the gateway flags given (the rest resolve as they do in the
 * foreground), as the service will run it; bad values are usage errors here, not a unit
 * that fails later.
 */
export function nodeRunArgs(values: Values): string[] {
  const args = ['node', 'run'];
  if (values.host !== undefined) {
    const host = String(values.host).trim();
    if (!host || /\s/.test(host)) throw new UsageError(`--host must be a host name or address, got "${values.host}"`);
    args.push('--host', host);
  }
  if (values.port !== undefined) {
    const portText = String(values.port).trim();
    const port = Number(portText);
    if (!/^\d+$/.test(portText) || port < 1 || port > 65535)
      throw new UsageError(`--port must be a port number from 1 to 65535, got "${values.port}"`);
    args.push('--port', String(port));
  }
  if (typeof values['context-path'] === 'string') {
    const contextPath = values['context-path'].trim();
    if (!/^\/[A-Za-z0-9._~\-/]*$/.test(contextPath))
      throw new UsageError(`--context-path must be a URL path starting with /, got "${values['context-path']}"`);
    args.push('--context-path', contextPath);
  }
  if (values.tls === true && values['no-tls'] === true)
    throw new UsageError('--tls and --no-tls contradict each other');
  if (values.tls === true) args.push('--tls');
  if (values['no-tls'] === true) args.push('--no-tls');
  if (typeof values['tls-fingerprint'] === 'string') {
    const fingerprint = values['tls-fingerprint'].trim();
    if (!/^(sha256:)?[0-9a-fA-F]{2}(:?[0-9a-fA-F]{2}){31}$/.test(fingerprint))
      throw new UsageError(`--tls-fingerprint must be a SHA-256 fingerprint (64 hex digits), got "${fingerprint}"`);
    args.push('--tls-fingerprint', fingerprint);
  }
  for (const flag of ['node-id', 'display-name'] as const) {
    const value = values[flag];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !value.trim() || /[\r\n]/.test(value))
      throw new UsageError(`--${flag} must be a single line of text`);
    args.push(`--${flag}`, value.trim());
  }
  return args;
}

/** Run one of the service subcommands; `kernel` reaches the gateway plugin's `service-units` service. */
export async function nodeServiceCommand(
  command: NodeServiceCommand,
  argv: string[],
  ctx: CliContext,
  kernel: Pick<KernelServices, 'capabilities'> & Partial<Pick<KernelServices, 'plugins'>>,
): Promise<number> {
  const install = command === 'install';
  const flags = parseFlags(argv, {
    json: { type: 'boolean' },
    help: { type: 'boolean' },
    ...(install
      ? {
          host: { type: 'string' },
          port: { type: 'string' },
          'context-path': { type: 'string' },
          tls: { type: 'boolean' },
          'no-tls': { type: 'boolean' },
          'tls-fingerprint': { type: 'string' },
          'node-id': { type: 'string' },
          'display-name': { type: 'string' },
          runtime: { type: 'string' },
          force: { type: 'boolean' },
          pair: { type: 'string' },
        }
      : {}),
  } as const);
  const values = flags.values as Values;
  if (values.help) {
    ctx.stdout.write(`${install ? NODE_SERVICE_HELP : ONE_LINE_HELP[command as keyof typeof ONE_LINE_HELP]}\n`);
    return 0;
  }
  if (flags.positionals.length > 0)
    throw new UsageError(`unexpected argument "${flags.positionals[0]}" (see claw node ${command} --help)`);
  if (values.pair !== undefined)
    throw new UsageError(
      'claw node install does not take --pair: a short-lived setup code must not be stored in a service; pair once with claw node run --pair <code>, then install',
    );
  if (values.runtime !== undefined && values.runtime !== 'node')
    throw new UsageError(`--runtime: claw's node host runs on Node only (--runtime node), not "${values.runtime}"`);
  const args = install ? nodeRunArgs(values) : ['node', 'run'];
  const json = values.json === true;
  const report = (result: Record<string, unknown>, line: string, ok: boolean): number => {
    if (json) ctx.stdout.write(`${JSON.stringify({ ok, action: command, ...result }, null, 2)}\n`);
    else (ok ? ctx.stdout : ctx.stderr).write(`${line}\n`);
    return ok ? 0 : 1;
  };

  const units = await requireService<ServiceUnits>(kernel, 'service-units', `claw node ${command}`);
  const unit = await units.unit({
    kind: 'node',
    description: 'claw node host',
    args,
    stopTimeoutSec: STOP_TIMEOUT_SEC,
    what: 'node host',
    installCommand: 'claw node install',
  });
  if (!('name' in unit)) {
    const message =
      unit.code === 'UNSUPPORTED_PLATFORM'
        ? `claw installs the node host service on Linux (systemd) and macOS (launchd), not on ${process.platform}; ${FOREGROUND.toLowerCase()}`
        : unit.message;
    return report({ error: { code: unit.code, message } }, `claw: ${message}`, false);
  }
  if (command === 'status') return status(unit, ctx, json);

  const outcome = install ? await unit.install({ force: values.force === true }) : await unit[command]();
  const error = outcome.ok
    ? {}
    : { error: { ...(outcome.code ? { code: outcome.code } : {}), message: outcome.message } };
  const details = install
    ? { file: unit.file, written: outcome.written, replaced: outcome.replaced, started: outcome.started, args }
    : { service: unit.name };
  if (outcome.ok) return report(details, sentence(outcome.message), true);
  // Stopping or removing what is not there is not a failure (as claw gateway stop/uninstall).
  if (outcome.code === 'NOT_INSTALLED' && (command === 'stop' || command === 'uninstall'))
    return report(details, sentence(outcome.message), true);
  const hint =
    outcome.code === 'SERVICE_MANAGER_UNAVAILABLE'
      ? `\n${FOREGROUND}`
      : outcome.code === 'NOT_INSTALLED' && command === 'restart'
        ? '; install it with: claw node install'
        : '';
  return report({ ...details, ...error }, `claw: ${outcome.message}${hint}`, false);
}

async function status(unit: ServiceUnit, ctx: CliContext, json: boolean): Promise<number> {
  // Whether the unit matches "what install would write now" needs install's flags, which status does not take.
  const { current: _unknown, ...service } = await unit.status();
  const ok = !service.unavailable;
  if (json) {
    ctx.stdout.write(`${JSON.stringify({ ok, action: 'status', service }, null, 2)}\n`);
    return ok ? 0 : 1;
  }
  const lines = [
    `Service: ${service.service} (${unit.managerName})`,
    `  File:    ${service.file} — ${service.installed ? 'installed' : 'not installed (claw node install)'}`,
  ];
  if (service.unavailable) lines.push(`  Manager: ${service.unavailable}`, `  ${FOREGROUND}`);
  else if (service.state) {
    const state = service.state;
    const enabled = state.enabled === undefined ? '' : state.enabled ? ', enabled' : ', not enabled';
    lines.push(
      `  State:   ${state.loaded ? state.active : 'not loaded'}${enabled}${state.pid ? `, pid ${state.pid}` : ''}`,
    );
  }
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return ok ? 0 : 1;
}

function sentence(text: string): string {
  const capital = `${text[0]!.toUpperCase()}${text.slice(1)}`;
  return /[.\n]/.test(capital.slice(-1)) || capital.includes('\n') ? capital : `${capital}.`;
}

type Kernel = Pick<KernelServices, 'capabilities'> & Partial<Pick<KernelServices, 'plugins'>>;

/** The subcommands as entries of `claw node`'s subcommand table (cli.ts). */
export const NODE_SERVICE_SUBCOMMANDS = Object.fromEntries(
  NODE_SERVICE_COMMANDS.map((command) => [
    command,
    {
      help: command === 'install' ? NODE_SERVICE_HELP : ONE_LINE_HELP[command],
      run: (argv: string[], ctx: CliContext, kernel: Kernel) => nodeServiceCommand(command, argv, ctx, kernel),
    },
  ]),
) as Record<
  NodeServiceCommand,
  { help: string; run: (argv: string[], ctx: CliContext, kernel: Kernel) => Promise<number> }
>;
