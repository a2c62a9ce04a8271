/**
 * Extra sandbox mounts (`docker.binds`, "host:sandbox[:ro|rw]") are checked here, by every
 * backend, before anything is mounted. A bind must not hand the sandbox the host's control
 * surfaces (the Docker socket, /proc, /sys, /dev, /etc, …), the claw state dir with its
 * credentials and transcripts, or a home directory as a whole. The host path is checked as
 * written (normalized) and again after symlinks resolve, so an innocent-looking link to
 * /etc is refused too.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, normalize, posix } from 'node:path';

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
] as const;

/** Under a home directory: keys and cloud credentials. */
const HOME_SECRETS = ['.ssh', '.gnupg', '.aws', '.kube', '.docker', '.config/gcloud', '.netrc'];

/** Where a bind may not land inside the sandbox. */
const RESERVED_TARGETS = ['/', '/proc', '/sys', '/dev'];

export interface Bind {
  source: string;
  target: string;
  readOnly: boolean;
}

export interface BindPolicy {
  /** The claw state dir (~/.openclaw): never mounted, nor anything holding it. */
  stateDir: string;
  /** Defaults to the current user's home. */
  home?: string;
}

const within = (path: string, root: string) => path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);

function blockedReason(path: string, policy: BindPolicy): string | undefined {
  if (path === '/') return 'it is the host root';
  for (const blocked of BLOCKED_BIND_PATHS) {
    if (within(path, blocked)) return `${blocked} is a protected host path`;
    if (within(blocked, path)) return `it contains the protected host path ${blocked}`;
  }
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
  const source = normalize(rawSource).replace(/(.)\/+$/, '$1');
  const target = posix.normalize(rawTarget).replace(/(.)\/+$/, '$1');
  const refused = (why: string) => new Error(`sandbox bind "${spec}" is refused: ${why}`);
  const written = blockedReason(source, policy);
  if (written) throw refused(written);
  const real = realpathOfDeepest(source);
  const resolved = real === source ? undefined : blockedReason(real, policy);
  if (resolved) throw refused(`it resolves to ${real} and ${resolved}`);
  if (RESERVED_TARGETS.some((reserved) => reserved === target || (reserved !== '/' && within(target, reserved)))) {
    throw refused(`${target} is reserved inside the sandbox`);
  }
  return { source: real, target, readOnly: mode === 'ro' };
}

export function validateBinds(binds: readonly string[], policy: BindPolicy): Bind[] {
  return binds.map((bind) => validateBind(bind, policy));
}
