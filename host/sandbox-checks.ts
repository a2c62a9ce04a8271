/**
 * Extra sandbox mounts (`docker.binds`, "host:sandbox[:ro|rw]") are checked here, for every
 * backend (through the host's "sandbox-checks" service) before anything is mounted. A bind must not hand the sandbox the host's control
 * surfaces (the Docker socket, /proc, /sys, /dev, /etc, …), the claw state dir with its
 * credentials and transcripts, or a home directory as a whole. The host path is checked as
 * written (normalized) and again after symlinks resolve, so an innocent-looking link to
 * /etc is refused too. A writable bind must exist and not belong to root: the sandbox would
 * otherwise change files root relies on (`/usr/local/bin`, `/opt`), and Docker creates a
 * missing source as a root-owned directory.
 */
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, normalize, posix } from 'node:path';
import type { Bind, BindPolicy, CheckedMounts, HostPathPolicy, SandboxChecks } from '../sdk/sandbox/index.js';
import { parseSandboxUser } from './sandbox-user.js';

/** Host paths a sandbox never sees, nor any directory that contains one of them. */
export const BLOCKED_BIND_PATHS = [
  '/etc',
  '/proc',
  '/sys',
  '/dev',
  '/root',
  '/boot',
  '/run',
  '/var/run',
  '/var/run/docker.sock',
  '/run/docker.sock',
  '/var/lib/docker',
  '/var/lib/containerd',
] as const;

/** A container engine's control socket wherever it lives: root on the host. */
const ENGINE_SOCKET = /(^|\/)(docker|containerd|podman)\.sock$/;

/** Under a home directory: keys and cloud credentials. */
const HOME_SECRETS = ['.ssh', '.gnupg', '.aws', '.kube', '.docker', '.config/gcloud', '.netrc'];

/** Where a bind may not land inside the sandbox. */
const RESERVED_TARGETS = ['/', '/proc', '/sys', '/dev'];

const within = (path: string, root: string) => path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);

/** Why no sandbox may see `path` at all (not even as its workspace). */
function hostReason(path: string, policy: HostPathPolicy): string | undefined {
  if (path === '/') return 'it is the host root';
  for (const blocked of [...BLOCKED_BIND_PATHS, ...(policy.protectedPaths ?? []).map((p) => normalize(p))]) {
    if (within(path, blocked)) return `${blocked} is a protected host path`;
    if (within(blocked, path)) return `it contains the protected host path ${blocked}`;
  }
  if (ENGINE_SOCKET.test(path)) return 'it is a container engine socket';
  return undefined;
}

function blockedReason(path: string, policy: BindPolicy): string | undefined {
  const host = hostReason(path, policy);
  if (host) return host;
  const home = normalize(policy.home ?? homedir());
  if (within(home, path)) return `it exposes the home directory ${home} as a whole`;
  const state = normalize(policy.stateDir);
  if (within(path, state) || within(state, path)) return `it exposes the claw state dir ${state}`;
  for (const secret of HOME_SECRETS) {
    if (within(path, join(home, secret))) return `${join(home, secret)} holds credentials`;
  }
  return undefined;
}

/** The real path of `path`, resolving through its deepest existing ancestor. */
function realpathOfDeepest(path: string): string {
  let existing = path;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(existing), ...rest.reverse());
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return path;
      rest.push(existing.slice(parent.length + (parent === '/' ? 0 : 1)));
      existing = parent;
    }
  }
}

const normalizeHost = (path: string) => normalize(path).replace(/(.)\/+$/, '$1');

/** Checks, as written and after symlinks, a path whose refusal `refused` words. */
function checkBoth(
  source: string,
  reasonOf: (path: string) => string | undefined,
  refused: (why: string) => Error,
): string {
  const written = reasonOf(source);
  if (written) throw refused(written);
  const real = realpathOfDeepest(source);
  const resolved = real === source ? undefined : reasonOf(real);
  if (resolved) throw refused(`it resolves to ${real} and ${resolved}`);
  return real;
}

/**
 * Checks the host directory a backend mounts as the sandbox's workspace. It may lie in the
 * state dir or a home (the agent workspace does), but never expose the host's control surfaces.
 */
export function checkWorkspaceRoot(path: string, policy: HostPathPolicy = {}): string {
  if (!isAbsolute(path)) throw new Error(`sandbox workspace "${path}" must be an absolute host path`);
  return checkBoth(
    normalizeHost(path),
    (candidate) => hostReason(candidate, policy),
    (why) => new Error(`sandbox workspace "${path}" is refused: ${why}`),
  );
}

/** Parses and checks one bind; throws an Error naming the bind and what is wrong with it. */
export function validateBind(spec: string, policy: BindPolicy): Bind {
  const parts = spec.split(':');
  const mode = parts.length === 3 ? parts[2] : undefined;
  if (parts.length < 2 || parts.length > 3 || (mode !== undefined && mode !== 'ro' && mode !== 'rw')) {
    throw new Error(`sandbox bind "${spec}" is not "host:sandbox[:ro|rw]"`);
  }
  const [rawSource, rawTarget] = parts as [string, string];
  if (!isAbsolute(rawSource)) throw new Error(`sandbox bind "${spec}": the host path must be absolute`);
  if (!posix.isAbsolute(rawTarget)) throw new Error(`sandbox bind "${spec}": the sandbox path must be absolute`);
  const target = posix.normalize(rawTarget).replace(/(.)\/+$/, '$1');
  const refused = (why: string) => new Error(`sandbox bind "${spec}" is refused: ${why}`);
  const real = checkBoth(normalizeHost(rawSource), (candidate) => blockedReason(candidate, policy), refused);
  if (RESERVED_TARGETS.some((reserved) => reserved === target || (reserved !== '/' && within(target, reserved)))) {
    throw refused(`${target} is reserved inside the sandbox`);
  }
  const readOnly = mode === 'ro';
  if (!readOnly) checkWritableSource(real, refused);
  return { source: real, target, readOnly };
}

/** A read-write bind's host side: present, and not root's. */
function checkWritableSource(real: string, refused: (why: string) => Error): void {
  let owner: number;
  try {
    owner = statSync(real).uid;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw refused(`cannot inspect ${real}: ${(error as Error).message}`);
    throw refused(
      `${real} does not exist; create it (owned by the user the sandbox runs as) or mount it read-only (":ro")`,
    );
  }
  if (owner === 0) {
    const fix = 'mount it read-only (":ro") or bind a directory owned by an unprivileged user';
    throw refused(`${real} is owned by root, and a writable bind would let the sandbox change it; ${fix}`);
  }
}

export function validateBinds(binds: readonly string[], policy: BindPolicy): Bind[] {
  return binds.map((bind) => validateBind(bind, policy));
}

/**
 * The mount checks of one sandbox spec — the workspace and every bind — as each backend runs
 * them in `validate()` before `ensure()` creates anything, and as `claw sandbox explain`
 * runs them through that same `validate()`.
 */
export function checkSandboxMounts(
  spec: { workspaceRoot: string; binds: readonly string[] },
  policy: BindPolicy,
): CheckedMounts {
  return { workspace: checkWorkspaceRoot(spec.workspaceRoot, policy), binds: validateBinds(spec.binds, policy) };
}

/** The host's "sandbox-checks" service. */
export const sandboxChecksService: SandboxChecks = {
  mounts: checkSandboxMounts,
  workspace: checkWorkspaceRoot,
  user: parseSandboxUser,
};
