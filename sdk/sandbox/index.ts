/**
 * What a sandbox backend needs besides its contract (sdk/types/sandbox.ts): which sessions
 * are sandboxed and with what settings (route.ts), and the host's "sandbox-checks" service —
 * the mount and user checks every backend runs before it creates anything, and `claw sandbox
 * explain` and config checking share, so all refuse the same things in the same words.
 */
export * from './route.js';

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
