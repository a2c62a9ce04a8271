/**
 * One command inside a container, through the Engine API's exec (create, start hijacked,
 * demultiplexed stdout/stderr), shaped like a child process.
 *
 * Killing: an exec'd process starts as the leader of its own session and process group
 * (runc gives it one, so no `setsid` is needed), and everything it starts stays in that
 * group unless it leaves on purpose. The wrapper reports its pid as the first line on
 * stderr before it execs the command; `kill` then signals the negative pid through a
 * second exec, which reaches the whole group inside the container, not just the shell.
 */
import { constants } from 'node:os';
import { PassThrough, type Duplex, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { ExecRequest, ExecResult, SandboxProcess } from '../../sdk/index.js';
import type { ContainerHandle, DockerClient } from './client.js';

/** `sh -c WRAPPER claw-exec argv…`: announce the pid (= process group id), then become the command. */
const WRAPPER = 'printf "%s\\n" "$$" >&2; exec "$@"';
const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]));

export interface ExecTarget {
  docker: DockerClient;
  container: ContainerHandle;
}

export interface ExecOptions {
  argv: string[];
  /** Absolute path inside the container. */
  cwd: string;
  env: Record<string, string>;
}

function envList(env: Record<string, string>): string[] {
  return Object.entries(env).map(([key, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`environment variable name "${key}" is not valid`);
    if (value.includes('\0')) throw new Error(`environment variable ${key} contains a NUL byte`);
    return `${key}=${value}`;
  });
}

function signalNumber(signal: NodeJS.Signals): number {
  const number = (constants.signals as Record<string, number | undefined>)[signal];
  if (number === undefined) throw new Error(`unknown signal "${signal}"`);
  return number;
}

/** Strips the wrapper's pid line off the front of stderr and hands the pid over. */
class PidLine extends PassThrough {
  private head = '';
  private seen = false;

  constructor(private readonly onPid: (pid: number) => void) {
    super();
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    callback: (error?: Error | null, data?: Buffer) => void,
  ): void {
    if (this.seen) return callback(null, chunk);
    this.head += chunk.toString('latin1');
    const newline = this.head.indexOf('\n');
    if (newline < 0) return callback();
    this.seen = true;
    const line = this.head.slice(0, newline);
    // Anything but a pid (the shell failed before the wrapper ran) is the command's output.
    const pid = /^\d+$/.test(line) ? Number(line) : undefined;
    if (pid) this.onPid(pid);
    const rest = Buffer.from(pid ? this.head.slice(newline + 1) : this.head, 'latin1');
    callback(null, rest.length > 0 ? rest : undefined);
  }

  override _flush(callback: (error?: Error | null, data?: Buffer) => void): void {
    callback(null, !this.seen && this.head ? Buffer.from(this.head, 'latin1') : undefined);
  }
}

export class DockerProcess implements SandboxProcess {
  readonly stdout = new PassThrough();
  readonly stderr: PassThrough;
  readonly stdin = new PassThrough();
  readonly exited: Promise<{ exitCode: number | null; signal: string | null }>;
  private pid?: number;
  private pending?: NodeJS.Signals;
  private sentSignal = false;
  private ended = false;

  constructor(
    private readonly target: ExecTarget,
    options: ExecOptions,
  ) {
    this.stderr = new PidLine((pid) => {
      this.pid = pid;
      if (this.pending) this.kill(this.pending);
    });
    // Writes after the command ended fail with EPIPE; a caller learns that from `writable`.
    this.stdin.on('error', () => {});
    this.exited = this.run(options).finally(() => {
      this.ended = true;
    });
  }

  private async run(options: ExecOptions): Promise<{ exitCode: number | null; signal: string | null }> {
    let stream: Duplex | undefined;
    try {
      const exec = await this.target.container.exec({
        Cmd: ['sh', '-c', WRAPPER, 'claw-exec', ...options.argv],
        WorkingDir: options.cwd,
        Env: envList(options.env),
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      });
      stream = await exec.start({ hijack: true, stdin: true });
      const hijacked = stream;
      const done = new Promise<void>((resolve, reject) => {
        hijacked.on('end', resolve);
        hijacked.on('close', resolve);
        hijacked.on('error', reject);
      });
      this.target.docker.modem.demuxStream(hijacked, this.stdout, this.stderr);
      this.stdin.pipe(hijacked);
      await done;
      const { ExitCode } = await exec.inspect();
      // 128 + n is how the runtime reports death by signal n.
      if (this.sentSignal && ExitCode !== null && ExitCode > 128 && SIGNAL_NAMES.has(ExitCode - 128)) {
        return { exitCode: null, signal: SIGNAL_NAMES.get(ExitCode - 128)! };
      }
      return { exitCode: ExitCode, signal: null };
    } catch (error) {
      const message = `sandbox exec failed: ${(error as Error).message}\n`;
      this.stderr.write(message);
      return { exitCode: null, signal: null };
    } finally {
      this.stdin.unpipe();
      stream?.destroy();
      this.stdout.end();
      this.stderr.end();
    }
  }

  kill(signal: NodeJS.Signals): void {
    if (this.ended) return;
    const number = signalNumber(signal);
    if (this.pid === undefined) {
      this.pending = signal;
      return;
    }
    this.sentSignal = true;
    const pgid = this.pid;
    void this.target.container
      .exec({ Cmd: ['kill', `-${number}`, '--', `-${pgid}`], AttachStdout: false, AttachStderr: false })
      .then((exec) => exec.start({ hijack: false, stdin: false }))
      .then((stream) => stream.resume())
      // The group may be gone already (ESRCH) or the container stopped: nothing left to kill.
      .catch(() => {});
  }
}

function collect(stream: Readable): () => string {
  const decoder = new StringDecoder('utf8');
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += decoder.write(chunk)));
  return () => text + decoder.end();
}

/** Runs a command to the end: stdin written and closed, timeout and abort kill the whole group. */
export async function execToEnd(
  process: DockerProcess,
  request: Pick<ExecRequest, 'stdin' | 'timeoutMs' | 'signal'>,
): Promise<ExecResult> {
  const stdout = collect(process.stdout);
  const stderr = collect(process.stderr);
  process.stdin.end(request.stdin ?? '');
  let timedOut = false;
  const timer =
    request.timeoutMs && request.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          process.kill('SIGKILL');
        }, request.timeoutMs)
      : undefined;
  const onAbort = (): void => process.kill('SIGKILL');
  if (request.signal?.aborted) onAbort();
  request.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const { exitCode } = await process.exited;
    return { exitCode, stdout: stdout(), stderr: stderr(), ...(timedOut ? { timedOut: true } : {}) };
  } finally {
    if (timer) clearTimeout(timer);
    request.signal?.removeEventListener('abort', onAbort);
  }
}
