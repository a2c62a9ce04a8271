/**
 * Running the `qmd` executable: finding it, giving it a private home, and turning every way
 * it can fail (missing, non-zero exit, too slow) into a QmdError with a one-line reason.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expandHome } from '../../sdk/index.js';

export type QmdFailureKind = 'missing' | 'exit' | 'timeout' | 'output' | 'spawn';

export class QmdError extends Error {
  constructor(
    readonly kind: QmdFailureKind,
    /** One line, stable for the same cause (it keys the "log once" set). */
    readonly reason: string,
    readonly stderr = '',
  ) {
    super(reason);
    this.name = 'QmdError';
  }
}

export interface QmdCommand {
  /** What gets spawned: an absolute path when it was found. */
  path: string;
  /** Where it came from, for status and error messages. */
  source: 'config' | 'PATH' | 'project';
}

/** Output beyond this is a runaway process, not search results. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function whichOnPath(name: string, pathVariable: string | undefined): string | undefined {
  for (const dir of (pathVariable ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The claw checkout (or installed package) this plugin belongs to: the nearest folder above
 * it whose package.json is claw's. Works from plugins/memory-qmd/ and dist/plugins/memory-qmd/.
 */
export function findProjectRoot(from: string): string | undefined {
  let dir = from;
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === '@claw-assistant/claw')
          return dir;
      } catch {
        // Not JSON we can read; keep climbing.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

const PLUGIN_DIR = dirname(fileURLToPath(import.meta.url));

/** Where `npm run setup:qmd` (scripts/install-qmd.mjs) puts its wrapper. */
export function projectQmdPath(pluginDir = PLUGIN_DIR): string | undefined {
  const root = findProjectRoot(pluginDir);
  return root ? join(root, '.cache', 'qmd', 'bin', 'qmd') : undefined;
}

/**
 * The configured command (a path, or a name looked up on PATH); unset means `qmd` on PATH,
 * else the project-installed wrapper. When nothing is found the bare name is returned, so
 * the spawn fails as "missing" with the places that were tried.
 */
export function resolveQmdCommand(
  configured: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  pluginDir = PLUGIN_DIR,
): QmdCommand {
  const pathVariable = env.PATH ?? process.env.PATH;
  const wanted = configured?.trim();
  if (wanted) {
    if (wanted.includes('/') || wanted.startsWith('~')) {
      const expanded = expandHome(wanted, env.HOME ? env : process.env);
      return { path: isAbsolute(expanded) ? expanded : resolve(expanded), source: 'config' };
    }
    return { path: whichOnPath(wanted, pathVariable) ?? wanted, source: 'config' };
  }
  const onPath = whichOnPath('qmd', pathVariable);
  if (onPath) return { path: onPath, source: 'PATH' };
  const project = projectQmdPath(pluginDir);
  if (project && isExecutableFile(project)) return { path: project, source: 'project' };
  return { path: 'qmd', source: 'PATH' };
}

export interface RunOptions {
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  durationMs: number;
}

export function firstLine(text: string): string {
  // QMD prints colour codes when it thinks it has a terminal; they do not belong in a reason.
  const clean = text.replace(/\x1b\[[0-9;]*m/g, '').trim();
  const line = clean.split('\n').find((item) => item.trim() !== '') ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * Always the named default index: without `--index`, QMD prefers a `.qmd/index.yaml` found
 * above the working directory, which would swap the agent's private index for a stranger's.
 */
export const INDEX_ARGS = ['--index', 'index'];

/**
 * On POSIX, QMD starts through `sh -c 'umask 077; exec "$0" "$@"'`: its index and config
 * live in the state dir and must be created owner-only, and a child's umask can only be set
 * from inside it. The shell interprets none of the arguments ("$@" passes them as they are)
 * and `exec` keeps the pid, so the process group below is still QMD's own.
 */
export function privateSpawnArgs(path: string, args: readonly string[]): [string, string[]] {
  if (process.platform === 'win32') return [path, [...args]];
  return ['/bin/sh', ['-c', 'umask 077; exec "$0" "$@"', path, ...args]];
}

/** Why `command` cannot be started at all, before trying (undefined: it is there). */
export function missingCommand(command: QmdCommand): QmdError | undefined {
  // resolveQmdCommand leaves a bare name only when PATH has no such executable.
  if (!command.path.includes('/')) {
    const hint = command.source === 'config' ? '' : ', and the project copy is not installed (run "npm run setup:qmd")';
    return new QmdError('missing', `the qmd command "${command.path}" was not found on PATH${hint}`);
  }
  if (!existsSync(command.path)) return new QmdError('missing', `the qmd command ${command.path} does not exist`);
  return undefined;
}

/** A spawn 'error' event as a QmdError with the likely cause. */
export function spawnFailure(command: QmdCommand, error: NodeJS.ErrnoException): QmdError {
  // The file is there, so its interpreter (the #! line) is what is missing.
  if (error.code === 'ENOENT')
    return new QmdError('missing', `the qmd command ${command.path} could not be run (is its interpreter installed?)`);
  if (error.code === 'EACCES') return new QmdError('missing', `the qmd command ${command.path} is not executable`);
  return new QmdError('spawn', `could not start ${command.path}: ${error.message}`);
}

/**
 * Run `qmd args…` with no shell interpreting anything (arguments, the user's query included,
 * go through untouched). Resolves with the output on exit code 0; rejects with a QmdError
 * otherwise. The child leads its own process group so a timeout also ends anything it started.
 */
export function runQmd(command: QmdCommand, args: readonly string[], options: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const what = `qmd ${args[0] === 'collection' ? `collection ${args[1] ?? ''}` : (args[0] ?? '')}`.trim();
  return new Promise<RunResult>((resolvePromise, reject) => {
    if (options.signal?.aborted) {
      reject(options.signal.reason ?? new Error('aborted'));
      return;
    }
    const missing = missingCommand(command);
    if (missing) {
      reject(missing);
      return;
    }
    let child: ReturnType<typeof spawn>;
    try {
      const [file, argv] = privateSpawnArgs(command.path, [...INDEX_ARGS, ...args]);
      child = spawn(file, argv, {
        cwd: options.cwd,
        env: options.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
    } catch (error) {
      reject(new QmdError('spawn', `could not start ${command.path}: ${(error as Error).message}`));
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let settled = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const finish = (error: unknown, result?: RunResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolvePromise(result!);
    };
    const timer = setTimeout(() => {
      killGroup();
      finish(new QmdError('timeout', `${what} timed out after ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    const onAbort = () => {
      killGroup();
      finish(options.signal?.reason ?? new Error('aborted'));
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_OUTPUT_BYTES) {
        killGroup();
        finish(new QmdError('output', `${what} printed more than ${MAX_OUTPUT_BYTES} bytes`));
        return;
      }
      out.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (err.reduce((sum, item) => sum + item.length, 0) < 64 * 1024) err.push(chunk);
    });
    child.on('error', (error: NodeJS.ErrnoException) => finish(spawnFailure(command, error)));
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 0) {
        finish(undefined, { stdout, stderr, durationMs: Date.now() - started });
        return;
      }
      const detail = firstLine(stderr) || firstLine(stdout);
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      finish(new QmdError('exit', `${what} ${how}${detail ? `: ${detail}` : ''}`, stderr));
    });
  });
}
