/**
 * The bubblewrap sandbox backend. A bwrap sandbox is not a running thing: each command is a
 * fresh bwrap process over the same mounts, so "the sandbox" is its record (id, scope,
 * config hash) in <stateDir>/sandbox/bwrap.json plus its /etc files. The record is what
 * `claw sandbox list` shows and `recreate` removes; ensure() reads it on every call, so a
 * removal by another process (the CLI) takes effect at the next command.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Writable } from 'node:stream';
import {
  type ExecRequest,
  type ExecResult,
  type SandboxBackend,
  type SandboxInfo,
  type SandboxInstance,
  type SandboxProcess,
  type SandboxSpec,
  writeFileAtomicAsync,
} from '../../sdk/index.js';
import type { Bind, SandboxChecks } from '../../sdk/sandbox/index.js';
import { bwrapArgs, etcFiles, SECCOMP_FD } from './args.js';
import { seccompProgram } from './seccomp.js';

export interface BwrapOptions {
  /** The bwrap executable. */
  command: string;
  stateDir: string;
  /** The mount checks: the host's "sandbox-checks" service. */
  checks: SandboxChecks;
}

type Registry = { instances: SandboxInfo[] };

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    // The host-side group holds bwrap; when it dies its PID namespace, and with it every
    // process the command started inside, goes too.
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: already gone.
  }
}

class BwrapInstance implements SandboxInstance {
  readonly backend = 'bwrap';
  private readonly running = new Set<ChildProcess>();

  constructor(
    readonly id: string,
    readonly spec: SandboxSpec,
    private readonly binds: Bind[],
    private readonly etcDir: string,
    private readonly command: string,
    private readonly seccomp: Buffer,
  ) {}

  private start(argv: string[], cwd: string | undefined, env: Record<string, string> | undefined): ChildProcess {
    const inside = posix.resolve(this.spec.workdir, cwd ?? '.');
    const args = bwrapArgs({ spec: this.spec, binds: this.binds, etcDir: this.etcDir, cwd: inside, env, argv });
    // stdin, stdout, stderr, then SECCOMP_FD (3).
    const path = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    const child = spawn(this.command, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], env: path });
    // bwrap reads the program to its end before it runs anything; a bwrap that failed early just never reads it.
    const filter = child.stdio[SECCOMP_FD] as Writable;
    filter.on('error', () => {});
    filter.end(this.seccomp);
    this.running.add(child);
    child.on('close', () => this.running.delete(child));
    child.on('error', () => this.running.delete(child));
    return child;
  }

  spawn(request: { command: string; cwd?: string; env?: Record<string, string> }): SandboxProcess & { pid?: number } {
    const child = this.start(['/bin/sh', '-c', request.command], request.cwd, request.env);
    const exited = new Promise<{ exitCode: number | null; signal: string | null }>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (exitCode, signal) => resolve({ exitCode, signal }));
    });
    return {
      pid: child.pid,
      stdout: child.stdout!,
      stderr: child.stderr!,
      stdin: child.stdin!,
      exited,
      kill: (signal) => signalGroup(child, signal),
    };
  }

  exec(request: ExecRequest): Promise<ExecResult> {
    const child = this.start(request.command, request.cwd, request.env);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdin!.on('error', () => {});
    child.stdin!.end(request.stdin ?? '');
    const timer = request.timeoutMs
      ? setTimeout(() => ((timedOut = true), signalGroup(child, 'SIGKILL')), request.timeoutMs)
      : undefined;
    const abort = () => signalGroup(child, 'SIGKILL');
    request.signal?.addEventListener('abort', abort, { once: true });
    return new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (exitCode) => {
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', abort);
        resolve({ exitCode, stdout, stderr, ...(timedOut ? { timedOut } : {}) });
      });
    });
  }

  /** Ends every command still running in this sandbox. */
  killAll(): void {
    for (const child of this.running) signalGroup(child, 'SIGKILL');
  }
}

export class BwrapBackend implements SandboxBackend {
  readonly id = 'bwrap';
  private readonly live = new Map<string, BwrapInstance>();
  private readonly registryFile: string;
  private readonly baseDir: string;
  /** Built once; a machine without a filter for its architecture gets no sandbox (check() says why). */
  private seccomp?: Buffer;
  /** ensure() calls are serialized: two first calls for one scope must not make two sandboxes. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: BwrapOptions) {
    this.baseDir = join(options.stateDir, 'sandbox', 'bwrap');
    this.registryFile = join(options.stateDir, 'sandbox', 'bwrap.json');
  }

  async check(): Promise<{ ok: true } | { ok: false; reason: string }> {
    try {
      await access(this.options.command, constants.X_OK);
    } catch {
      return {
        ok: false,
        reason: `bubblewrap is not installed at ${this.options.command} (apt-get install bubblewrap, or set plugins.entries.sandbox-bwrap.config.command)`,
      };
    }
    try {
      this.filter();
    } catch (error) {
      return { ok: false, reason: (error as Error).message };
    }
    return { ok: true };
  }

  private filter(): Buffer {
    this.seccomp ??= seccompProgram();
    return this.seccomp;
  }

  /** Every check ensure() makes before it records or runs anything; `claw sandbox explain` asks it too. */
  validate(spec: SandboxSpec): Bind[] {
    if (spec.network !== 'none' && spec.network !== 'host') {
      throw new Error(
        `bwrap sandboxes have network "none" or "host", not "${spec.network}" (agents.*.sandbox.docker.network)`,
      );
    }
    return this.options.checks.mounts(spec, { stateDir: this.options.stateDir }).binds;
  }

  ensure(spec: SandboxSpec): Promise<SandboxInstance> {
    const next = this.queue.then(() => this.ensureNow(spec));
    this.queue = next.catch(() => {});
    return next;
  }

  private async ensureNow(spec: SandboxSpec): Promise<SandboxInstance> {
    const binds = this.validate(spec);
    const seccomp = this.filter();
    const registry = await this.read();
    const record = registry.instances.find((info) => info.scopeKey === spec.scopeKey);
    const live = record && this.live.get(record.id);
    if (record && record.configHash === spec.configHash && live) return live;
    if (record && record.configHash !== spec.configHash) await this.remove(record.id);
    // Removed elsewhere (`claw sandbox recreate`): what still runs in the old one ends now.
    for (const [id, old] of this.live) {
      if (old.spec.scopeKey === spec.scopeKey && id !== record?.id) (old.killAll(), this.live.delete(id));
    }
    const fresh = !record || record.configHash !== spec.configHash;
    const id = fresh ? `bwrap-${randomBytes(6).toString('hex')}` : record.id;
    const etcDir = join(this.baseDir, id, 'etc');
    await mkdir(etcDir, { recursive: true, mode: 0o700 });
    for (const [name, text] of Object.entries(etcFiles())) await writeFile(join(etcDir, name), text, { mode: 0o644 });
    const instance = new BwrapInstance(id, spec, binds, etcDir, this.options.command, seccomp);
    this.live.set(id, instance);
    if (fresh) {
      const info: SandboxInfo = {
        id,
        backend: 'bwrap',
        scopeKey: spec.scopeKey,
        agentId: spec.agentId,
        running: true,
        createdAt: Date.now(),
        configHash: spec.configHash,
      };
      const latest = await this.read();
      await this.write({ instances: [...latest.instances.filter((other) => other.scopeKey !== spec.scopeKey), info] });
    }
    return instance;
  }

  async list(): Promise<SandboxInfo[]> {
    return (await this.read()).instances.map((info) => ({ ...info, running: this.live.has(info.id) }));
  }

  /** Forgets the sandbox and ends its commands; the next command in that scope gets a new one. */
  async remove(id: string): Promise<void> {
    this.live.get(id)?.killAll();
    this.live.delete(id);
    const registry = await this.read();
    await this.write({ instances: registry.instances.filter((info) => info.id !== id) });
    await rm(join(this.baseDir, id), { recursive: true, force: true });
  }

  dispose(): void {
    for (const instance of this.live.values()) instance.killAll();
    this.live.clear();
  }

  private async read(): Promise<Registry> {
    try {
      const parsed = JSON.parse(await readFile(this.registryFile, 'utf8')) as Registry;
      return Array.isArray(parsed.instances) ? parsed : { instances: [] };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { instances: [] };
      throw new Error(`cannot read the bwrap sandbox registry ${this.registryFile}: ${(error as Error).message}`);
    }
  }

  private write(registry: Registry): Promise<void> {
    return writeFileAtomicAsync(this.registryFile, `${JSON.stringify(registry, null, 2)}\n`);
  }
}
