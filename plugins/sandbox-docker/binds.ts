/**
 * What may be bound into a sandbox container. The caller (sandbox routing) validates binds
 * already; the backend checks again right before creating the container, because a
 * mistake here hands the sandbox the host (the Docker socket is root on the host).
 *
 * Two phases, as OpenClaw does it: the normalized string path, then the real path after
 * symlinks, so `/innocent → /etc` is caught too.
 */
import { realpathSync } from 'node:fs';
import { posix } from 'node:path';

/** Host paths never exposed, nor anything below them. */
export const BLOCKED_HOST_PATHS = ['/etc', '/proc', '/sys', '/dev', '/root', '/boot', '/run', '/var/run', '/var/lib/docker', '/var/lib/containerd'];
/** Container paths a bind may not cover (the kernel's views and the root). */
const RESERVED_TARGETS = ['/proc', '/sys', '/dev'];

export interface ParsedBind {
  source: string;
  target: string;
  readOnly: boolean;
}

function under(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

/** Why `hostPath` (absolute, normalized) may not be bound; undefined when it may. */
export function blockedHostReason(hostPath: string, daemonSocket?: string): string | undefined {
  if (hostPath === '/') return 'it is the host root';
  const blocked = BLOCKED_HOST_PATHS.find((root) => under(hostPath, root));
  if (blocked) return `${blocked} is never exposed to a sandbox`;
  if (/(^|\/)(docker|containerd|podman)\.sock$/.test(hostPath)) return 'it is a container engine socket';
  // Binding the socket's folder (or any parent) exposes the socket just the same.
  if (daemonSocket && under(daemonSocket, hostPath)) return `it holds the Docker daemon socket ${daemonSocket}`;
  return undefined;
}

function normalizeHost(path: string): string {
  const normalized = posix.normalize(path);
  return normalized.length > 1 ? normalized.replace(/\/+$/, '') : normalized;
}

/**
 * The real path: of the path itself, or, when it does not exist yet (Docker would create
 * it), of its deepest existing ancestor with the rest appended, so a symlinked parent counts.
 */
function realHost(path: string): string {
  let head = path;
  const tail: string[] = [];
  for (;;) {
    try {
      return posix.join(realpathSync(head), ...tail.reverse());
    } catch {
      if (head === '/') return path;
      tail.push(posix.basename(head));
      head = posix.dirname(head);
    }
  }
}

/** Checks one host directory the backend mounts itself (the workspace). */
export function checkHostPath(what: string, path: string, daemonSocket?: string): string {
  if (!posix.isAbsolute(path)) throw new Error(`${what} "${path}" must be an absolute host path`);
  const normalized = normalizeHost(path);
  for (const candidate of [normalized, realHost(normalized)]) {
    const reason = blockedHostReason(candidate, daemonSocket);
    if (reason) throw new Error(`${what} "${path}" is refused: ${candidate === normalized ? '' : `it resolves to ${candidate}, and `}${reason}`);
  }
  return normalized;
}

/** Parses and checks `host:container[:ro|rw]`; throws naming the bind and the reason. */
export function validateBind(bind: string, daemonSocket?: string): ParsedBind {
  const parts = bind.split(':');
  const mode = parts.length === 3 ? parts[2] : parts.length === 2 ? 'rw' : undefined;
  if (mode === undefined || (mode !== 'ro' && mode !== 'rw')) {
    throw new Error(`sandbox bind "${bind}" must be "host:container", "host:container:ro" or "host:container:rw"`);
  }
  const source = checkHostPath(`sandbox bind "${bind}": host path`, parts[0]!, daemonSocket);
  const target = parts[1]!;
  if (!posix.isAbsolute(target)) throw new Error(`sandbox bind "${bind}": container path "${target}" must be absolute`);
  const normalizedTarget = normalizeHost(target);
  if (normalizedTarget === '/' || RESERVED_TARGETS.some((root) => under(normalizedTarget, root))) {
    throw new Error(`sandbox bind "${bind}": container path "${target}" may not cover / , /proc, /sys or /dev`);
  }
  return { source, target: normalizedTarget, readOnly: mode === 'ro' };
}
