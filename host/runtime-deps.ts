/**
 * Heavy dependencies installed on demand: the host's "runtime-deps" service (the contract is
 * sdk/runtime-deps.ts). A plain `npm install` of claw stays light: a package that only one
 * optional plugin needs (node-llama-cpp, discord.js, baileys, dockerode, playwright-core) is
 * not in claw's `dependencies`. When it is first needed it is found by
 *
 *   1. normal module resolution from claw's own files (a dev install, or a user who ran
 *      `npm install <name>` next to claw), else
 *   2. `<stateDir>/runtime-deps/node_modules/<name>` (dir created 0700), installed there by
 *      {@link installRuntimeDep}: `npm install <name>@<range> --prefix <dir> --omit=optional`,
 *      then only this machine's binary package (no GPU or foreign-platform variants).
 *
 * A plugin declares what it needs in its manifest (`runtimeDependencies`), which
 * `claw plugins enable <id>` installs ahead of time ({@link ensurePluginRuntimeDeps}); its code
 * imports the package through the service, which installs-or-explains on first use.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resolveStateDir } from '../kernel/config/paths.js';
import type { Logger } from '../kernel/index.js';
import type { RuntimeDependency, RuntimeDeps } from '../sdk/runtime-deps.js';

export type { RuntimeDependency } from '../sdk/runtime-deps.js';

export interface RuntimeDepProgress {
  /** `start`, then `fetch` per downloaded package, `platform` before the binary package, `done`. */
  phase: 'start' | 'fetch' | 'platform' | 'done';
  message: string;
  /** Packages fetched so far (phase `fetch`). */
  fetched?: number;
}

export interface RuntimeDepOptions {
  /** claw's state dir; default from the environment (OPENCLAW_STATE_DIR, ~/.openclaw). */
  stateDir?: string;
  /** Environment for npm (registry, cache, proxy…); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Progress lines while installing. */
  onProgress?: (progress: RuntimeDepProgress) => void;
  /** The npm executable (default `npm`). */
  npm?: string;
  /** Where normal resolution starts (a file path or file: URL); default this module. */
  resolveFrom?: string;
  /** Install when missing (default true); false throws the "not installed" explanation. */
  install?: boolean;
  /** The command the user should run to retry, for error messages. */
  retryCommand?: string;
  platform?: string;
  arch?: string;
}

/** The package is not there and may not be installed now. */
export class RuntimeDepMissingError extends Error {
  constructor(
    message: string,
    readonly packageName: string,
  ) {
    super(message);
    this.name = 'RuntimeDepMissingError';
  }
}

/** `npm install` failed. `offline` when the registry could not be reached. */
export class RuntimeDepInstallError extends Error {
  constructor(
    message: string,
    readonly packageName: string,
    readonly offline: boolean,
    readonly output: string,
  ) {
    super(message);
    this.name = 'RuntimeDepInstallError';
  }
}

export interface LocatedRuntimeDep {
  /** `resolved`: normal module resolution; `state`: the state dir's runtime-deps. */
  source: 'resolved' | 'state';
  /** The module file to import. */
  entry: string;
}

const MARKER = 'claw-runtime-deps.json';

export function runtimeDepsDir(stateDir: string): string {
  return join(stateDir, 'runtime-deps');
}

function stateDirOf(options: RuntimeDepOptions): string {
  return options.stateDir ?? resolveStateDir((options.env ?? process.env) as Record<string, string | undefined>);
}

function errorCode(error: unknown): string | undefined {
  return (error as { code?: string } | null)?.code;
}

/**
 * The package's ESM-or-CJS entry as `import()` would pick it: require's resolution first
 * (conditions node/require/default), then the `import` condition of `exports["."]` for
 * import-only packages. undefined when the package is not reachable from `base`.
 */
function resolveEntry(name: string, base: string): string | undefined {
  const require = createRequire(base);
  try {
    return require.resolve(name);
  } catch (error) {
    if (errorCode(error) !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') return undefined;
  }
  // Import-only exports: find the package dir through the lookup paths, read its exports.
  for (const dir of require.resolve.paths(name) ?? []) {
    const pkgDir = join(dir, name);
    const manifest = join(pkgDir, 'package.json');
    if (!existsSync(manifest)) continue;
    let target: unknown = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown }).exports;
    if (target && typeof target === 'object' && '.' in target) target = (target as Record<string, unknown>)['.'];
    while (target && typeof target === 'object') {
      const conditions = target as Record<string, unknown>;
      target = conditions.import ?? conditions.node ?? conditions.default;
    }
    return typeof target === 'string' ? join(pkgDir, target) : undefined;
  }
  return undefined;
}

function readMarker(dir: string): Record<string, { version: string; installedAt: string; packages: string[] }> {
  try {
    return JSON.parse(readFileSync(join(dir, MARKER), 'utf8')) as ReturnType<typeof readMarker>;
  } catch {
    return {};
  }
}

/** Where `name` would be imported from, without importing it; undefined when absent. */
export function locateRuntimeDep(name: string, options: RuntimeDepOptions = {}): LocatedRuntimeDep | undefined {
  // CLAW_RUNTIME_DEPS_STATE_ONLY=1 ignores claw's own node_modules (tests; trying the install).
  const stateOnly = (options.env ?? process.env).CLAW_RUNTIME_DEPS_STATE_ONLY === '1';
  const resolved = stateOnly ? undefined : resolveEntry(name, options.resolveFrom ?? import.meta.url);
  if (resolved) return { source: 'resolved', entry: resolved };
  const dir = runtimeDepsDir(stateDirOf(options));
  // Only a completed install counts: a package whose binary step failed half-way is absent.
  if (!readMarker(dir)[packageName(name)]) return undefined;
  const entry = resolveEntry(name, join(dir, 'package.json'));
  return entry ? { source: 'state', entry } : undefined;
}

/**
 * The package a name belongs to: a name may be a subpath export (`@modelcontextprotocol/sdk/client/index.js`)
 * for packages whose main entry is not importable; the package is what gets installed.
 */
export function packageName(name: string): string {
  return name
    .split('/')
    .slice(0, name.startsWith('@') ? 2 : 1)
    .join('/');
}

function describeDep(dep: RuntimeDependency): string {
  return `${dep.name}@${dep.version}`;
}

function registryOf(env: NodeJS.ProcessEnv, output: string): string {
  const fromOutput = /request to (https?:\/\/[^\s/]+\/?)/.exec(output)?.[1];
  const configured = env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY;
  const registry = fromOutput ?? configured ?? 'https://registry.npmjs.org/';
  return registry.endsWith('/') ? registry : `${registry}/`;
}

const OFFLINE =
  /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|ENETUNREACH|EHOSTUNREACH|ENOTCONNECTED|socket hang up)\b/;

interface NpmRun {
  code: number;
  output: string;
}

async function runNpm(args: string[], options: RuntimeDepOptions, onFetch: () => void): Promise<NpmRun> {
  // Loaded here, not at start-up: most processes never install anything.
  const { spawn } = await import('node:child_process');
  return new Promise((resolve) => {
    const child = spawn(options.npm ?? 'npm', args, {
      env: { ...(options.env ?? process.env), npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // npm is npm.cmd on Windows, which only a shell runs.
      shell: process.platform === 'win32',
    });
    let output = '';
    let pending = '';
    const take = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      output += text;
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      // `--loglevel=http` prints one line per registry request: a cheap progress signal.
      for (const line of lines) if (/^npm http fetch GET 200 .*\.tgz/.test(line)) onFetch();
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (error) => resolve({ code: -1, output: `${output}\n${String(error)}` }));
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

function dirSizeMb(dir: string): number {
  let bytes = 0;
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) bytes += statSync(full).size;
    }
  };
  try {
    walk(dir);
  } catch {
    // A size is only for the message.
  }
  return Math.round(bytes / 1e6);
}

const installing = new Map<string, Promise<LocatedRuntimeDep>>();

/**
 * Installs `dep` into `<stateDir>/runtime-deps` (0700) and, when it names one for this
 * machine, its platform binary package — nothing else optional. Concurrent calls for the
 * same package share one install. Errors are one readable message (no npm log dump).
 */
export function installRuntimeDep(dep: RuntimeDependency, options: RuntimeDepOptions = {}): Promise<LocatedRuntimeDep> {
  const dir = runtimeDepsDir(stateDirOf(options));
  const key = `${dir}\0${dep.name}`;
  let running = installing.get(key);
  if (!running) {
    running = doInstall(dep, dir, options).finally(() => installing.delete(key));
    installing.set(key, running);
  }
  return running;
}

async function doInstall(dep: RuntimeDependency, dir: string, options: RuntimeDepOptions): Promise<LocatedRuntimeDep> {
  const env = options.env ?? process.env;
  const progress = options.onProgress ?? (() => {});
  const platformKey = `${options.platform ?? process.platform}-${options.arch ?? process.arch}`;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) {
    writeFileSync(
      manifest,
      `${JSON.stringify({ name: 'claw-runtime-deps', private: true, description: 'Packages claw installs on demand (see claw plugins enable).' }, null, 2)}\n`,
      { mode: 0o600 },
    );
  }
  const common = ['--prefix', dir, '--omit=optional', '--omit=dev', '--no-audit', '--no-fund', '--loglevel=http'];
  if (!dep.scripts) common.push('--ignore-scripts');
  const retry = options.retryCommand ?? `npm install ${describeDep(dep)} --prefix ${dir} --omit=optional`;
  const started = performance.now();
  let fetched = 0;
  const onFetch = (): void => {
    fetched++;
    progress({ phase: 'fetch', fetched, message: `  fetched ${fetched} package${fetched === 1 ? '' : 's'}` });
  };
  const fail = (run: NpmRun, what: string): never => {
    const offline = run.code !== 0 && OFFLINE.test(run.output);
    const reason = offline
      ? `the npm registry ${registryOf(env, run.output)} cannot be reached (${OFFLINE.exec(run.output)![1]})`
      : (run.output.match(/^npm error (?!code\b|A complete log|errno\b).+$/m)?.[0].replace(/^npm error /, '') ??
        `npm exited with code ${run.code}`);
    const message = `could not install ${what}: ${reason}. ${offline ? 'Connect to the network and retry' : 'Retry'}: ${retry}`;
    throw new RuntimeDepInstallError(message, dep.name, offline, run.output);
  };

  const size = dep.approxSizeMb ? ` (about ${dep.approxSizeMb} MB)` : '';
  progress({ phase: 'start', message: `Installing ${describeDep(dep)} into ${dir}${size}…` });
  const main = await runNpm(['install', describeDep(dep), ...common], options, onFetch);
  if (main.code !== 0) fail(main, describeDep(dep));

  const packages = [dep.name];
  const platformPackage = dep.platformPackages?.[platformKey];
  if (dep.platformPackages) {
    if (!platformPackage) {
      progress({ phase: 'platform', message: `  no prebuilt ${dep.name} binary is listed for ${platformKey}` });
    } else {
      const installed = JSON.parse(readFileSync(join(dir, 'node_modules', dep.name, 'package.json'), 'utf8')) as {
        optionalDependencies?: Record<string, string>;
      };
      const version = installed.optionalDependencies?.[platformPackage] ?? dep.version;
      progress({ phase: 'platform', message: `  adding the ${platformKey} binary (${platformPackage}@${version})…` });
      const binary = await runNpm(['install', `${platformPackage}@${version}`, ...common], options, onFetch);
      if (binary.code !== 0) fail(binary, `${platformPackage}@${version}`);
      packages.push(platformPackage);
    }
  }
  const marker = readMarker(dir);
  marker[dep.name] = { version: dep.version, installedAt: new Date().toISOString(), packages };
  writeFileSync(join(dir, MARKER), `${JSON.stringify(marker, null, 2)}\n`, { mode: 0o600 });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  progress({
    phase: 'done',
    message: `Installed ${describeDep(dep)} in ${seconds} s (${dirSizeMb(join(dir, 'node_modules'))} MB in ${dir}).`,
  });
  const located = locateRuntimeDep(dep.name, { ...options, resolveFrom: join(dir, 'package.json') });
  if (!located)
    throw new RuntimeDepInstallError(
      `installed ${describeDep(dep)} but cannot resolve it from ${dir}`,
      dep.name,
      false,
      main.output,
    );
  return { source: 'state', entry: located.entry };
}

/**
 * Makes sure `dep` can be imported: already resolvable, already in the state dir, or
 * installed now. Returns where it is.
 */
export async function ensureRuntimeDep(
  dep: RuntimeDependency,
  options: RuntimeDepOptions = {},
): Promise<LocatedRuntimeDep> {
  const found = locateRuntimeDep(dep.name, options);
  if (found) return found;
  const pkg = packageName(dep.name);
  if (pkg !== dep.name) {
    await ensureRuntimeDep({ ...dep, name: pkg }, options);
    const entry = locateRuntimeDep(dep.name, options);
    if (!entry) throw new RuntimeDepMissingError(`${pkg} is installed but has no module "${dep.name}"`, pkg);
    return entry;
  }
  if (options.install === false) {
    const retry =
      options.retryCommand ??
      `npm install ${describeDep(dep)} --prefix ${runtimeDepsDir(stateDirOf(options))} --omit=optional`;
    throw new RuntimeDepMissingError(
      `${dep.name} is not installed (it is installed on demand, not with claw). Install it with: ${retry}`,
      dep.name,
    );
  }
  return installRuntimeDep(dep, options);
}

/** Imports `dep`, installing it first when needed (see {@link ensureRuntimeDep}). */
export async function importRuntimeDep<T = unknown>(
  dep: RuntimeDependency,
  options: RuntimeDepOptions = {},
): Promise<T> {
  const located = await ensureRuntimeDep(dep, options);
  return (await import(pathToFileURL(located.entry).href)) as T;
}

/** A manifest's `runtimeDependencies`, checked; malformed entries are dropped. */
export function manifestRuntimeDeps(manifest: unknown): RuntimeDependency[] {
  const list = (manifest as { runtimeDependencies?: unknown } | null | undefined)?.runtimeDependencies;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (item): item is RuntimeDependency =>
      !!item &&
      typeof item === 'object' &&
      typeof (item as RuntimeDependency).name === 'string' &&
      typeof (item as RuntimeDependency).version === 'string',
  );
}

/**
 * What `claw plugins enable <id>` calls: installs every `runtimeDependencies` entry of the
 * plugin's manifest that is not already there. Returns the names it installed.
 */
export async function ensurePluginRuntimeDeps(
  pluginId: string,
  manifest: unknown,
  options: RuntimeDepOptions = {},
): Promise<string[]> {
  const installed: string[] = [];
  for (const dep of manifestRuntimeDeps(manifest)) {
    if (locateRuntimeDep(dep.name, options)) continue;
    await installRuntimeDep(dep, { retryCommand: `claw plugins enable ${pluginId}`, ...options });
    installed.push(dep.name);
  }
  return installed;
}

/**
 * Progress for a terminal: step lines, and on a TTY one self-updating "fetched N packages"
 * line in between (non-TTY output gets only the step lines).
 */
export function progressPrinter(stream: NodeJS.WritableStream): (progress: RuntimeDepProgress) => void {
  const tty = (stream as { isTTY?: boolean }).isTTY === true;
  let open = false;
  return (progress) => {
    if (progress.phase === 'fetch') {
      if (tty) {
        stream.write(`\r${progress.message}`);
        open = true;
      }
      return;
    }
    stream.write(`${open ? '\n' : ''}${progress.message}\n`);
    open = false;
  };
}

/**
 * The "runtime-deps" service of one kernel: installs into its state dir and runs npm with its
 * environment over the process's (where a test or an operator points the registry, proxy, cache).
 * Every install's step lines go to the kernel's log marked `progress`, whichever plugin asked:
 * the gateway logs them, and the CLI prints them on stderr although it hides other info lines.
 */
export function runtimeDepsService(options: {
  stateDir: string;
  env?: Readonly<Record<string, string | undefined>>;
  logger?: Pick<Logger, 'info'>;
}): RuntimeDeps {
  const env = { ...process.env, ...options.env } as NodeJS.ProcessEnv;
  return {
    import: (dep, importOptions = {}) =>
      importRuntimeDep(dep, {
        stateDir: options.stateDir,
        env,
        onProgress: (progress) => {
          if (progress.phase !== 'fetch') options.logger?.info(progress.message, { progress: true });
        },
        ...importOptions,
      }),
  };
}
