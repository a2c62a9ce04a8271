/**
 * One shell command and everything known about it. Where it runs is the spawner's business:
 * on the host (`hostSpawner`: its own process group via `detached`, so a kill reaches whatever
 * the shell started too) or inside a sandbox (`SandboxInstance.spawn`).
 */
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import type { SandboxProcess } from '../../sdk/index.js';
import { OutputBuffer } from './output.js';

/** A started command; host processes also have a pid. */
export type Spawned = SandboxProcess & { readonly pid?: number };
export type Spawner = (request: { command: string; cwd: string; env: Record<string, string> }) => Spawned;

export type SessionStatus = 'running' | 'completed' | 'failed' | 'killed' | 'timeout' | 'aborted';
type StopReason = 'killed' | 'timeout' | 'aborted';

export interface SessionOptions {
  id: string;
  command: string;
  cwd: string;
  env: Record<string, string>;
  /** 0 means no limit. */
  timeoutMs: number;
  maxOutputChars: number;
  agentId?: string;
  /** Default: the host's /bin/sh. */
  spawn?: Spawner;
  /** "host", or the id of the sandbox it runs in. */
  place?: string;
}

/** How long a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2000;
/**
 * After the shell exits, how long to wait for its output pipes to close. Anything it left
 * running in the background keeps them open, and the command must not wait for that.
 */
const PIPE_DRAIN_MS = 200;
/** setTimeout fires at once for delays beyond this. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the whole group is already gone.
  }
}

/** `/bin/sh -c` on the host, in a new process group. Throws on arguments the OS refuses (a NUL byte). */
export const hostSpawner: Spawner = ({ command, cwd, env }) => {
  const child = spawn('/bin/sh', ['-c', command], { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<{ exitCode: number | null; signal: string | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (exitCode, signal) => resolve({ exitCode, signal }));
  });
  return {
    pid: child.pid,
    stdout: child.stdout,
    stderr: child.stderr,
    stdin: child.stdin,
    exited,
    kill: (signal) => signalGroup(child.pid, signal),
  };
};

export class ProcessSession {
  readonly id: string;
  readonly command: string;
  readonly cwd: string;
  readonly agentId?: string;
  readonly place: string;
  readonly timeoutMs: number;
  readonly startedAt = Date.now();
  readonly pid: number | undefined;
  readonly output: OutputBuffer;
  /** Resolves once the command has ended and its output is complete. */
  readonly done: Promise<void>;
  status: SessionStatus = 'running';
  exitCode: number | null = null;
  signal: NodeJS.Signals | null = null;
  endedAt?: number;
  error?: string;
  /** Handed to the process tool (explicitly, or because it outlived the wait). */
  backgrounded = false;
  /** Output position the last poll (or the exec call that backgrounded it) read up to. */
  pollCursor = 0;

  private readonly child: Spawned;
  private openStreams = 2;
  private exited = false;
  private readonly listeners = new Set<() => void>();
  private stopReason?: StopReason;
  private timeoutTimer?: NodeJS.Timeout;
  private drainTimer?: NodeJS.Timeout;
  private resolveDone!: () => void;

  constructor(options: SessionOptions) {
    this.id = options.id;
    this.command = options.command;
    this.cwd = options.cwd;
    this.agentId = options.agentId;
    this.place = options.place ?? 'host';
    this.timeoutMs = options.timeoutMs;
    this.output = new OutputBuffer(options.maxOutputChars);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));

    this.child = (options.spawn ?? hostSpawner)({ command: options.command, cwd: options.cwd, env: options.env });
    this.pid = this.child.pid;

    // One decoder per stream: a multi-byte character may straddle two chunks.
    for (const stream of [this.child.stdout, this.child.stderr]) {
      const decoder = new StringDecoder('utf8');
      stream.on('data', (chunk: Buffer) => this.append(decoder.write(chunk)));
      stream.on('end', () => this.append(decoder.end()));
      stream.on('close', () => {
        this.openStreams--;
        if (this.exited && this.openStreams === 0) this.finish();
      });
    }
    // Writing to a command that has exited raises EPIPE here; write() reports it instead.
    this.child.stdin?.on('error', () => {});
    this.child.exited.then(
      ({ exitCode, signal }) => {
        this.exitCode = exitCode;
        this.signal = signal as NodeJS.Signals | null;
        this.exited = true;
        if (this.openStreams === 0) this.finish();
        else this.drainTimer = setTimeout(() => this.finish(), PIPE_DRAIN_MS);
      },
      (error: Error) => {
        this.error = error.message;
        this.finish();
      },
    );

    if (options.timeoutMs > 0) {
      this.timeoutTimer = setTimeout(() => this.stop('timeout'), Math.min(options.timeoutMs, MAX_TIMER_MS));
    }
  }

  get running(): boolean {
    return this.status === 'running';
  }

  get durationMs(): number {
    return (this.endedAt ?? Date.now()) - this.startedAt;
  }

  /** Called on new output and when the command ends; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** SIGTERM to the whole group, SIGKILL to whatever is left after a grace period. */
  stop(reason: StopReason): void {
    if (!this.running || this.stopReason) return;
    this.stopReason = reason;
    this.child.kill('SIGTERM');
    // Deliberately outlives finish(): children that ignore SIGTERM may still hold on.
    setTimeout(() => this.child.kill('SIGKILL'), KILL_GRACE_MS).unref();
  }

  /** For process exit, when there is no time for grace. */
  killNow(): void {
    this.stopReason ??= 'killed';
    this.child.kill('SIGKILL');
  }

  /** Returns an error message when the input cannot be delivered. */
  write(data: string, close: boolean): string | undefined {
    if (!this.running) return `session ${this.id} has already ended`;
    const stdin = this.child.stdin;
    if (!stdin?.writable) return `the stdin of session ${this.id} is closed`;
    if (data) stdin.write(data);
    if (close) stdin.end();
    return undefined;
  }

  private append(text: string): void {
    if (!text) return;
    this.output.append(text);
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private finish(): void {
    if (!this.running) return;
    clearTimeout(this.timeoutTimer);
    clearTimeout(this.drainTimer);
    // Output still buffered in a pipe held by a leftover background child is abandoned.
    this.child.stdout.destroy();
    this.child.stderr.destroy();
    this.child.stdin?.destroy();
    this.endedAt = Date.now();
    if (this.stopReason) this.status = this.stopReason;
    else if (this.error !== undefined) this.status = 'failed';
    else if (this.signal !== null) this.status = 'killed';
    else this.status = this.exitCode === 0 ? 'completed' : 'failed';
    this.notify();
    this.listeners.clear();
    this.resolveDone();
  }
}
