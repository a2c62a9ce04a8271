/**
 * `claw update [status] [--check] [--tag <dist-tag|version>] [--dry-run] [--yes] [--no-restart]`:
 * asks npm (so the user's registry, proxy and auth settings apply) for the version a dist-tag
 * names, compares it with this claw, and updates the way claw was installed: a global npm
 * install is replaced with `npm install -g`, then the gateway service restarts; a git clone or
 * a project dependency is told the command that updates it.
 */
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { CLAW_PACKAGE_NAME, clawPackageRoot, clawVersion } from '../../../../sdk/version.js';
import { printHelp } from '../../help.js';
import { CliError, printJson, println, usageError, warn, type Io } from '../../io.js';
import { confirmOrStop, flags, gatewayDaemon } from './shared.js';

export type InstallKind = 'npm-global' | 'git' | 'npm-local';

export interface UpdateStatus {
  packageName: string;
  currentVersion: string;
  tag: string;
  latestVersion: string;
  updateAvailable: boolean;
  install: { kind: InstallKind; root: string; nextAction?: string };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function npm(
  args: string[],
  env: Record<string, string | undefined>,
  timeoutMs: number,
  stderr?: NodeJS.WritableStream,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, {
      env: env as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.stdout.on('data', (chunk) => ((stdout += chunk), stderr?.write(chunk)));
    child.stderr.on('data', (chunk) => ((err += chunk), stderr?.write(chunk)));
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new CliError(`cannot run npm: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGTERM') reject(new CliError(`npm ${args[0]} took longer than ${timeoutMs / 1000} s`));
      else resolve({ code: code ?? 1, stdout, stderr: err });
    });
  });
}

/** -1, 0 or 1 by semver precedence (numbers, then a release above its pre-releases). */
export function compareVersions(a: string, b: string): number {
  const parse = (version: string) => {
    const [core = '', pre] = version.replace(/^v/, '').split('+')[0]!.split(/-(.*)/s);
    return { nums: core.split('.').map((part) => Number(part) || 0), pre: pre ? pre.split('.') : [] };
  };
  const left = parse(a);
  const right = parse(b);
  for (let index = 0; index < 3; index++) {
    const diff = (left.nums[index] ?? 0) - (right.nums[index] ?? 0);
    if (diff !== 0) return Math.sign(diff);
  }
  if (left.pre.length === 0 || right.pre.length === 0) return Math.sign(right.pre.length - left.pre.length);
  for (let index = 0; index < Math.max(left.pre.length, right.pre.length); index++) {
    const x = left.pre[index];
    const y = right.pre[index];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    if (x === y) continue;
    const numeric = /^\d+$/.test(x) && /^\d+$/.test(y);
    return numeric ? Math.sign(Number(x) - Number(y)) : x < y ? -1 : 1;
  }
  return 0;
}

async function installKind(
  env: Record<string, string | undefined>,
  timeoutMs: number,
): Promise<UpdateStatus['install']> {
  const root = clawPackageRoot();
  if (!root) throw new CliError("cannot find claw's package.json, so there is nothing to compare");
  if (existsSync(join(root, '.git')))
    return { kind: 'git', root, nextAction: `git -C ${root} pull && npm --prefix ${root} install` };
  const globalRoot = await npm(['root', '-g'], env, timeoutMs).catch(() => undefined);
  const globalPackage = globalRoot?.code === 0 ? join(globalRoot.stdout.trim(), ...CLAW_PACKAGE_NAME.split('/')) : '';
  const real = (path: string) => {
    try {
      return realpathSync(path);
    } catch {
      return path;
    }
  };
  if (globalPackage && real(globalPackage) === real(root)) return { kind: 'npm-global', root };
  return {
    kind: 'npm-local',
    root,
    nextAction: `npm install ${CLAW_PACKAGE_NAME}@latest (in the project that depends on claw)`,
  };
}

export async function updateStatus(
  env: Record<string, string | undefined>,
  tag: string,
  timeoutMs: number,
): Promise<UpdateStatus> {
  const spec = `${CLAW_PACKAGE_NAME}@${tag}`;
  const [view, install] = await Promise.all([
    npm(['view', spec, 'version', '--json'], env, timeoutMs),
    installKind(env, timeoutMs),
  ]);
  if (view.code !== 0) {
    const code = /npm (?:ERR!|error) code (\w+)/.exec(view.stderr)?.[1];
    const registry = env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY ?? "npm's registry";
    const why =
      code === 'E404' || code === 'ETARGET'
        ? `${spec} is not on the registry`
        : code && /^(ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|ECONNRESET|ENETUNREACH)$/.test(code)
          ? `${registry} could not be reached (${code})`
          : view.stderr.trim().split('\n').slice(0, 3).join(' ');
    throw new CliError(`cannot check for updates: ${why || `npm view exited ${view.code}`}`);
  }
  let version: unknown;
  try {
    version = JSON.parse(view.stdout);
  } catch {
    version = undefined;
  }
  // A range can name several versions: npm lists them all, the last is the highest.
  const latest = Array.isArray(version) ? version.at(-1) : version;
  if (typeof latest !== 'string') throw new CliError(`cannot check for updates: npm view ${spec} named no version`);
  const currentVersion = clawVersion();
  return {
    packageName: CLAW_PACKAGE_NAME,
    currentVersion,
    tag,
    latestVersion: latest,
    updateAvailable: compareVersions(latest, currentVersion) > 0,
    install,
  };
}

export async function run(args: string[], io: Io, help: boolean): Promise<number> {
  if (help) {
    printHelp(io, 'update');
    return 0;
  }
  const { values, positionals } = flags(args, {
    check: { type: 'boolean' },
    tag: { type: 'string' },
    'dry-run': { type: 'boolean' },
    yes: { type: 'boolean' },
    'no-restart': { type: 'boolean' },
    timeout: { type: 'string' },
  });
  const [sub, ...extra] = positionals;
  if ((sub !== undefined && sub !== 'status') || extra.length > 0)
    throw usageError(`unexpected argument "${sub !== 'status' ? sub : extra[0]}" (claw update [status] …)`);
  const timeoutSeconds = values.timeout === undefined ? 60 : Number(values.timeout);
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1)
    throw usageError(`--timeout must be a whole number of seconds, got "${values.timeout}"`);
  const tag = values.tag ?? 'latest';
  if (!/^[A-Za-z0-9._~^<>=| -]+$/.test(tag)) throw usageError(`--tag must be a dist-tag or a version, got "${tag}"`);
  const status = await updateStatus(io.env, tag, timeoutSeconds * 1000);
  const relation = status.updateAvailable
    ? `${status.latestVersion} is available`
    : compareVersions(status.latestVersion, status.currentVersion) < 0
      ? `${status.tag} is ${status.latestVersion}, older than this one`
      : 'up to date';
  const summary = `claw ${status.currentVersion} (${status.install.kind} at ${status.install.root}): ${relation}`;

  if (sub === 'status' || values.check) {
    if (io.json) printJson(io, { ok: true, ...status });
    else {
      println(io, summary);
      if (status.updateAvailable && status.install.nextAction) println(io, `Update with: ${status.install.nextAction}`);
      else if (status.updateAvailable) println(io, 'Update with: claw update');
    }
    return 0;
  }

  const target = status.latestVersion;
  const same = compareVersions(target, status.currentVersion) === 0;
  if (same || (!status.updateAvailable && values.tag === undefined)) {
    if (io.json) printJson(io, { ok: true, ...status, action: 'none' });
    else println(io, summary);
    return 0;
  }
  if (status.install.kind !== 'npm-global') {
    // Not ours to replace: tell the user the command that updates this kind of install.
    if (io.json) printJson(io, { ok: true, ...status, action: 'skipped' });
    else
      println(
        io,
        `${summary}\nclaw was not installed with npm -g, so it is not updated here. Update with:\n  ${status.install.nextAction}`,
      );
    return 0;
  }
  const command = ['install', '-g', `${CLAW_PACKAGE_NAME}@${target}`];
  if (values['dry-run']) {
    if (io.json) printJson(io, { ok: true, ...status, action: 'would-install', command: `npm ${command.join(' ')}` });
    else
      println(
        io,
        `${summary}\nWould run: npm ${command.join(' ')}${values['no-restart'] ? '' : ', then restart the gateway service'}`,
      );
    return 0;
  }
  if (!status.updateAvailable)
    await confirmOrStop(io, `Install ${target}, older than ${status.currentVersion}?`, values.yes === true);
  // npm's own output goes to stderr: stdout stays the command's answer.
  const installed = await npm(command, io.env, timeoutSeconds * 10_000, io.stderr);
  if (installed.code !== 0) throw new CliError(`npm ${command.join(' ')} failed (exit ${installed.code})`);
  let restart = 'not restarted (--no-restart)';
  if (!values['no-restart']) {
    const daemon = await gatewayDaemon(io);
    if (typeof daemon === 'string') restart = `not restarted: ${daemon}`;
    else {
      try {
        const result = await daemon.restart();
        restart = result.done ? 'restarted' : 'no gateway service installed';
      } catch (error) {
        restart = `not restarted: ${(error as Error).message}`;
      }
    }
  }
  if (io.json) printJson(io, { ok: true, ...status, action: 'installed', service: restart });
  else {
    println(io, `Updated claw ${status.currentVersion} → ${target}. Gateway service: ${restart}.`);
    if (restart.startsWith('not restarted:'))
      warn(io, 'a gateway running in the foreground keeps the old version until it restarts');
  }
  return 0;
}
