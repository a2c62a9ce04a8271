/**
 * Running one approved argv for system.run, as OpenClaw's node host does: no shell of our
 * own, stdin closed, output kept up to 200,000 bytes per stream (the start of it), an
 * optional time limit, and the whole process group ended on timeout or cancel.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { GroupWatchdog } from './group-watchdog.js';

const OUTPUT_CAP = 200_000;
/** After SIGTERM, how long a group gets before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** Read the go-ahead from fd 3 (end of file: the node host is gone, so do not run), then exec argv. */
const HOLD = 'IFS= read -r go <&3 || exit 125; exec 3<&-; exec "$@"';

export interface RunResult {
  exitCode?: number;
  timedOut: boolean;
  success: boolean;
  stdout: string;
  stderr: string;
  error: string | null;
  truncated: boolean;
}

class Capture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  add(chunk: Buffer): void {
    const room = OUTPUT_CAP - this.size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length < chunk.length) this.truncated = true;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** Why spawning in `cwd` failed, in words a caller can act on. */
function spawnFailure(error: NodeJS.ErrnoException, cwd: string | undefined): string {
  if (!cwd || (error.code !== 'ENOENT' && error.code !== 'ENOTDIR')) return error.message;
  try {
    if (statSync(cwd).isDirectory()) return error.message;
    return `node exec working directory is not a directory on the node host: ${cwd} (${error.message})`;
  } catch {
    return `node exec working directory does not exist on the node host: ${cwd} (${error.message})`;
  }
}

export function runCommand(
  argv: string[],
  options: {
    cwd?: string;
    env: Record<string, string>;
    timeoutMs?: number;
    signal?: AbortSignal;
    watchdog: GroupWatchdog;
  },
): Promise<RunResult> {
  return new Promise((resolve) => {
    const stdout = new Capture();
    const stderr = new Capture();
    let timedOut = false;
    let settled = false;
    // The command waits (on fd 3) until the watchdog knows its group: a node host killed in
    // between closes that pipe, and the command exits without running instead of outliving it.
    const child = spawn('/bin/sh', ['-c', HOLD, 'node-host-run', ...argv], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    const pgid = child.pid;
    const gate = child.stdio[3] as Writable | null;
    gate?.on('error', () => {});
    if (pgid !== undefined) options.watchdog.track(pgid, () => gate?.end('go\n'));
    const killGroup = () => {
      if (pgid === undefined) return;
      try {
        process.kill(-pgid, 'SIGTERM');
      } catch {
        return;
      }
      setTimeout(() => {
        try {
          process.kill(-pgid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }, KILL_GRACE_MS).unref();
    };
    const timer =
      options.timeoutMs && options.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            killGroup();
          }, options.timeoutMs)
        : undefined;
    const onAbort = () => killGroup();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (chunk: Buffer) => stdout.add(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.add(chunk));
    const finish = (result: RunResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (pgid !== undefined) options.watchdog.untrack(pgid);
      resolve(result);
    };
    child.on('error', (error) =>
      finish({
        timedOut: false,
        success: false,
        stdout: '',
        stderr: '',
        error: spawnFailure(error, options.cwd),
        truncated: false,
      }),
    );
    // A background process the command left behind could hold its output pipes open: when the
    // command exits, its group goes too, so the pipes close and the result is sent.
    child.on('exit', () => {
      if (pgid === undefined) return;
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // The group is empty.
      }
    });
    child.on('close', (code) => {
      const exitCode = code ?? undefined;
      finish({
        ...(exitCode !== undefined ? { exitCode } : {}),
        timedOut,
        success: exitCode === 0 && !timedOut,
        stdout: stdout.text(),
        stderr: stderr.text(),
        error: null,
        truncated: stdout.truncated || stderr.truncated,
      });
    });
  });
}
