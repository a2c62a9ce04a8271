/**
 * What a sandbox backend and the plugins that ask where a session runs need besides the
 * backend contract (sdk/types/sandbox.ts): the host's "sandbox-route" service — which
 * sessions are sandboxed and with what settings, the answer the tool choke point routes with —
 * and its "sandbox-checks" service — the mount and user checks every backend runs before it
 * creates anything, and `claw sandbox explain` and config checking share, so all refuse the
 * same things in the same words.
 */
import type { KernelConfig } from '../../kernel/index.js';
import type { SandboxSpec } from '../types/sandbox.js';

export const SANDBOX_ROUTE_SERVICE = 'sandbox-route';

export interface SandboxRouter {
  route(config: KernelConfig, call: SandboxCall): SandboxRoute;
}

/** Who is calling: the session, and where its own workspace is (mounted for workspaceAccess "ro"/"rw"). */
export interface SandboxCall {
  agentId?: string;
  sessionKey?: string;
  workspaceDir: string;
  stateDir: string;
}

export interface SandboxRoute {
  agentId: string;
  sessionKey: string;
  mainSessionKey: string;
  settings: SandboxSettings;
  sandboxed: boolean;
  /** Why the session is (or is not) sandboxed, in words. */
  reason: string;
  /** Which plugin holds the sandbox slot ("none" when nobody does). */
  backend: string;
  /** Set when the session is sandboxed: what the backend is asked to ensure. */
  spec?: SandboxSpec & { readOnlyRoot: boolean };
}

/** `agents.defaults.sandbox` with the agent's `agents.list[].sandbox` on top. */
export interface SandboxSettings {
  mode: 'off' | 'non-main' | 'all';
  scope: 'session' | 'agent' | 'shared';
  workspaceAccess: 'none' | 'ro' | 'rw';
  /** Where per-scope sandbox workspaces live (workspaceAccess "none"). */
  workspaceRoot: string;
}

export const SANDBOX_CHECKS_SERVICE = 'sandbox-checks';

export interface SandboxChecks {
  /** The workspace (its real path) and every extra bind of `spec`, checked; throws an Error naming what is refused. */
  mounts(spec: { workspaceRoot: string; binds: readonly string[] }, policy: BindPolicy): CheckedMounts;
  /** The host directory a backend mounts as the workspace, checked; its real path. */
  workspace(path: string, policy?: HostPathPolicy): string;
  /** `docker.user` ("uid" or "uid:gid", never root), parsed; throws naming what is refused. */
  user(value: string): SandboxUser;
}

export interface Bind {
  source: string;
  target: string;
  readOnly: boolean;
}

export interface CheckedMounts {
  workspace: string;
  binds: Bind[];
}

export interface HostPathPolicy {
  /**
   * Further host paths never mounted, nor any directory holding them: the Docker backend
   * names its daemon's socket here (from DOCKER_HOST, wherever it lives).
   */
  protectedPaths?: readonly string[];
}

export interface BindPolicy extends HostPathPolicy {
  /** The claw state dir (~/.openclaw): never mounted, nor anything holding it. */
  stateDir: string;
  /** Defaults to the current user's home. */
  home?: string;
}

export interface SandboxUser {
  uid: number;
  gid: number;
}
