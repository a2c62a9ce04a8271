/**
 * The gateway (and the node host, through the `service-units` service) as an OS service: a
 * systemd user unit on Linux, a launchd agent on macOS,
 * named as OpenClaw names them (openclaw-gateway[-<profile>].service, ai.openclaw.gateway
 * or ai.openclaw.<profile>) so one guide serves both. Pure text generation, no I/O: the
 * files hold no secret — the gateway reads its token from the config when it starts.
 */
import { delimiter, dirname, join } from 'node:path';

export type ServicePlatform = 'linux' | 'darwin';

export interface ServiceSpec {
  platform: ServicePlatform;
  home: string;
  /** OPENCLAW_PROFILE, when not the default one. */
  profile?: string;
  /** The Node binary that runs claw (absolute). */
  nodePath: string;
  /** claw's bin script (absolute). */
  cliPath: string;
  port: number;
  /** Where claw's files are, when not the default (OPENCLAW_STATE_DIR, OPENCLAW_CONFIG_PATH, OPENCLAW_PROFILE, OPENCLAW_HOME). */
  environment: Record<string, string>;
  /** launchd's stdout/stderr files (systemd keeps them in the journal). */
  logDir: string;
}

/** The environment variables that say where claw's files are: copied into the unit when set. */
export const LOCATION_ENV = [
  'OPENCLAW_HOME',
  'OPENCLAW_PROFILE',
  'OPENCLAW_STATE_DIR',
  'OPENCLAW_CONFIG_PATH',
] as const;

/**
 * Another claw program kept running the same way (the node host: `claw node run …`), named
 * as OpenClaw names it: openclaw-<kind>[-<profile>].service, ai.openclaw.<kind>[.<profile>].
 */
export interface UnitProgram {
  kind: string;
  /** The unit's description ("claw node host"). */
  description: string;
  /** claw's arguments (after node and claw's bin script). */
  args: string[];
  /** How long a stop may take before the manager kills it. */
  stopTimeoutSec: number;
}

export function serviceName(platform: ServicePlatform, profile: string | undefined, kind = 'gateway'): string {
  if (kind !== 'gateway')
    return platform === 'darwin'
      ? `ai.openclaw.${kind}${profile ? `.${profile}` : ''}`
      : `openclaw-${kind}${profile ? `-${profile}` : ''}.service`;
  if (platform === 'darwin') return profile ? `ai.openclaw.${profile}` : 'ai.openclaw.gateway';
  return profile ? `openclaw-gateway-${profile}.service` : 'openclaw-gateway.service';
}

export function serviceFile(spec: Pick<ServiceSpec, 'platform' | 'home' | 'profile'>, kind = 'gateway'): string {
  const name = serviceName(spec.platform, spec.profile, kind);
  return spec.platform === 'darwin'
    ? join(spec.home, 'Library', 'LaunchAgents', `${name}.plist`)
    : join(spec.home, '.config', 'systemd', 'user', name);
}

/** The gateway's unit (`program` absent) or another program's, with the same environment and restart policy. */
export function serviceFileText(spec: ServiceSpec, program?: UnitProgram): string {
  const unit = program ? programUnit(spec, program) : gatewayUnit(spec);
  return spec.platform === 'darwin' ? plistText(spec, unit) : systemdText(spec, unit);
}

/** What differs between claw's units. */
interface UnitShape {
  label: string;
  description: string;
  args: string[];
  stopTimeoutSec: number;
  /** launchd's log file names: <logName>.service.out.log / .err.log. */
  logName: string;
}

function gatewayUnit(spec: ServiceSpec): UnitShape {
  return {
    label: serviceName(spec.platform, spec.profile),
    description: `claw gateway${spec.profile ? ` (profile ${spec.profile})` : ''}`,
    args: ['gateway', '--port', String(spec.port)],
    // SIGTERM lets running agent turns finish (gateway.agentDrainMs, 5 minutes by default) before the stop.
    stopTimeoutSec: 330,
    logName: 'gateway',
  };
}

function programUnit(spec: ServiceSpec, program: UnitProgram): UnitShape {
  return {
    label: serviceName(spec.platform, spec.profile, program.kind),
    description: `${program.description}${spec.profile ? ` (profile ${spec.profile})` : ''}`,
    args: program.args,
    stopTimeoutSec: program.stopTimeoutSec,
    logName: program.kind,
  };
}

/** Node's folder first, so what the gateway spawns (npm, node) is the same Node that runs it. */
function servicePath(spec: ServiceSpec): string {
  const standard =
    spec.platform === 'darwin'
      ? ['/usr/local/bin', '/opt/homebrew/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']
      : ['/usr/local/bin', '/usr/bin', '/bin'];
  return [...new Set([dirname(spec.nodePath), ...standard])].join(delimiter);
}

/**
 * One word of a systemd command line or assignment: double-quoted, with `\` and `"` escaped
 * and `%` doubled (systemd expands %-specifiers even inside quotes).
 */
function systemdWord(value: string): string {
  if (/[\n\r]/.test(value)) throw new Error(`a systemd unit cannot hold a line break: ${JSON.stringify(value)}`);
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%')}"`;
}

export function systemdUnit(spec: ServiceSpec): string {
  return systemdText(spec, gatewayUnit(spec));
}

function systemdText(spec: ServiceSpec, unit: UnitShape): string {
  const command = [spec.nodePath, spec.cliPath, ...unit.args].map(systemdWord).join(' ');
  const environment = Object.entries({ ...spec.environment, PATH: servicePath(spec) }).map(
    ([key, value]) => `Environment=${systemdWord(`${key}=${value}`)}`,
  );
  return [
    '[Unit]',
    `Description=${unit.description}`,
    'After=network-online.target',
    'Wants=network-online.target',
    // A program that keeps failing (a broken config) stops being restarted after 10 tries in 5 minutes.
    'StartLimitBurst=10',
    'StartLimitIntervalSec=300',
    '',
    '[Service]',
    `ExecStart=${command}`,
    ...environment,
    'Restart=always',
    'RestartSec=5',
    `TimeoutStopSec=${unit.stopTimeoutSec}`,
    'KillMode=mixed',
    'SuccessExitStatus=0 143',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

function xml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function launchdPlist(spec: ServiceSpec): string {
  return plistText(spec, gatewayUnit({ ...spec, platform: 'darwin' }));
}

function plistText(spec: ServiceSpec, unit: UnitShape): string {
  const label = unit.label;
  const string = (value: string) => `<string>${xml(value)}</string>`;
  const args = [spec.nodePath, spec.cliPath, ...unit.args];
  const environment = Object.entries({ ...spec.environment, PATH: servicePath(spec) });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  ${string(label)}`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...args.map((arg) => `    ${string(arg)}`),
    '  </array>',
    '  <key>EnvironmentVariables</key>',
    '  <dict>',
    ...environment.flatMap(([key, value]) => [`    <key>${xml(key)}</key>`, `    ${string(value)}`]),
    '  </dict>',
    '  <key>RunAtLoad</key>',
    '  <true/>',
    '  <key>KeepAlive</key>',
    '  <true/>',
    '  <key>ThrottleInterval</key>',
    '  <integer>5</integer>',
    '  <key>ExitTimeOut</key>',
    `  <integer>${unit.stopTimeoutSec}</integer>`,
    '  <key>StandardOutPath</key>',
    `  ${string(join(spec.logDir, `${unit.logName}.service.out.log`))}`,
    '  <key>StandardErrorPath</key>',
    `  ${string(join(spec.logDir, `${unit.logName}.service.err.log`))}`,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}
