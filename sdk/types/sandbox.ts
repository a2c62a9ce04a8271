/**
 * The sandbox slot's contract (`api.registerSandbox`). A backend (Docker, bubblewrap, …)
 * turns a SandboxSpec into an isolated place to run commands; the tool choke point decides
 * per call whether a session is sandboxed and hands the tools the instance. File tools do
 * not go through the backend: they work on the host directory that is the sandbox's
 * workspace (`workspaceRoot`), read-only when `workspaceAccess` is "ro".
 */
import type { Readable, Writable } from 'node:stream';

export type SandboxMode = 'off' | 'non-main' | 'all';
export type SandboxScope = 'session' | 'agent' | 'shared';
export type WorkspaceAccess = 'none' | 'ro' | 'rw';

/** Everything a backend needs to create (or find again) one sandbox. */
export interface SandboxSpec {
  /** Stable per scope: the session key, the agent id, or "shared". Same key → same sandbox. */
  scopeKey: string;
  scope: SandboxScope;
  agentId: string;
  sessionKey: string;
  /** Host directory mounted at `workdir` ("rw"/"ro"), or the sandbox's own directory ("none"). */
  workspaceRoot: string;
  workspaceAccess: WorkspaceAccess;
  /** Where the workspace appears inside the sandbox (OpenClaw: /workspace). */
  workdir: string;
  /** Backend-specific image or root filesystem name (Docker image; ignored by bwrap). */
  image?: string;
  /** "none" (default) or a backend-specific network name. */
  network: string;
  /** Extra binds "host:container[:ro]" (`docker.binds`); every backend checks them with the host's "sandbox-checks" service before mounting. */
  binds: string[];
  env: Record<string, string>;
  limits: { memoryBytes?: number; pids?: number; cpus?: number };
  /** `docker.readOnlyRoot` (default true): the sandbox's root filesystem is read-only. */
  readOnlyRoot?: boolean;
  /**
   * `docker.user`, "uid" or "uid:gid" (Docker backend): who commands run as. Unset, the owner
   * of the workspace, or 65534:65534 when that is root; root itself is refused.
   */
  user?: string;
  /** A hash of the spec's settings: a reused sandbox whose hash differs is recreated. */
  configHash: string;
}

export interface ExecRequest {
  command: string[];
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  stdin?: string;
  signal?: AbortSignal;
}

export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
}

/** A command running inside a sandbox, shaped like a child process so exec/process can drive it. */
export interface SandboxProcess {
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly stdin?: Writable;
  /** Settles once the command (and its output streams) ended. */
  readonly exited: Promise<{ exitCode: number | null; signal: string | null }>;
  /** Signals the command's whole process group inside the sandbox. */
  kill(signal: NodeJS.Signals): void;
}

export interface SandboxInstance {
  /** Backend-unique id (container id, bwrap instance dir name). */
  readonly id: string;
  readonly backend: string;
  readonly spec: SandboxSpec;
  /** `sh -c command` inside the sandbox, cwd relative to or under `spec.workdir`. */
  spawn(request: { command: string; cwd?: string; env?: Record<string, string> }): SandboxProcess;
  exec(request: ExecRequest): Promise<ExecResult>;
}

export interface SandboxInfo {
  id: string;
  backend: string;
  scopeKey: string;
  agentId: string;
  image?: string;
  running: boolean;
  createdAt?: number;
  lastUsedAt?: number;
  configHash?: string;
}

export interface SandboxBackend {
  /** "docker", "bwrap", … (shown by `claw sandbox explain|list`). */
  readonly id: string;
  /** Can this backend run here right now? A reason names what is missing (daemon, binary, image). */
  check(): Promise<{ ok: true } | { ok: false; reason: string }>;
  /**
   * Checks `spec` exactly as `ensure` will before it creates anything (workspace, binds,
   * network, user) and throws an Error naming what is refused. `claw sandbox explain` asks
   * this, so it never calls "ok" what the backend then refuses. Needs no daemon.
   */
  validate?(spec: SandboxSpec): void;
  /** Create, or reuse when one with the same scopeKey and configHash exists. */
  ensure(spec: SandboxSpec): Promise<SandboxInstance>;
  list(): Promise<SandboxInfo[]>;
  remove(id: string): Promise<void>;
  dispose?(): Promise<void> | void;
}
