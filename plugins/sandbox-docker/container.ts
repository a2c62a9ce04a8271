/**
 * How a SandboxSpec becomes a container: name, labels and the Engine API create options.
 * Hardened the way OpenClaw's Docker backend is: no network unless asked, read-only root,
 * every capability dropped, no-new-privileges, an init process, pids and memory limits,
 * writable tmpfs only where programs expect scratch space — and never root (user.ts).
 *
 * Docker's bind mounts take no nosuid/nodev (neither `Binds` modes nor `Mounts` BindOptions
 * have them): inside the container no-new-privileges already makes setuid bits inert, and
 * on the host what the sandbox writes is owned by the sandbox user, not root.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { SandboxSpec } from '../../sdk/index.js';
import type { BindPolicy, SandboxChecks } from '../../sdk/sandbox/index.js';
import { formatUser, resolveSandboxUser } from './user.js';

/** The image claw builds locally (scripts/build-sandbox-image.sh, `claw sandbox build`). */
export const DEFAULT_IMAGE = 'claw-sandbox:busybox';
export const DEFAULT_CONTAINER_PREFIX = 'claw-sbx-';
/** Used when the spec sets no limit: a fork bomb or a runaway allocation stays contained. */
export const DEFAULT_PIDS_LIMIT = 256;
export const DEFAULT_MEMORY_BYTES = 1024 ** 3;
export const TMPFS_PATHS = ['/tmp', '/var/tmp', '/run'];
/**
 * Hidden inside the container: Docker's own default list (setting MaskedPaths replaces it)
 * plus what /sys shows of the host's devices, firmware, kernel and filesystems, which Docker
 * otherwise leaves readable. /sys/fs/cgroup stays: it is the container's own cgroup, where
 * a command can see its limits.
 */
export const MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/interrupts',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/block',
  '/sys/bus',
  '/sys/class',
  '/sys/dev',
  '/sys/devices',
  '/sys/firmware',
  '/sys/hypervisor',
  '/sys/kernel',
  '/sys/module',
  '/sys/power',
  '/sys/fs/bpf',
  '/sys/fs/btrfs',
  '/sys/fs/ext4',
  '/sys/fs/fuse',
  '/sys/fs/pstore',
  '/sys/fs/selinux',
  '/sys/fs/xfs',
];

/** Label keys: `list` finds claw's containers by them, `ensure` compares the hash. */
export const LABELS = {
  sandbox: 'claw.sandbox',
  scopeKey: 'claw.sandbox.scopeKey',
  scope: 'claw.sandbox.scope',
  agentId: 'claw.sandbox.agentId',
  sessionKey: 'claw.sandbox.sessionKey',
  configHash: 'claw.sandbox.configHash',
  createdAt: 'claw.sandbox.createdAt',
  /** "uid:gid" the container runs as; a container without it (or another) is replaced. */
  user: 'claw.sandbox.user',
} as const;

/** Stable and readable: a slug of the scope key plus a hash, so distinct keys never collide. */
export function containerNameFor(scopeKey: string, prefix = DEFAULT_CONTAINER_PREFIX): string {
  const slug =
    scopeKey
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'sandbox';
  const hash = createHash('sha256').update(scopeKey).digest('hex').slice(0, 8);
  return `${prefix}${slug}-${hash}`;
}

/** The container's hostname: its name, cut to a DNS label. */
export function hostnameFor(name: string): string {
  return name
    .replace(/[^a-zA-Z0-9-]/g, '-')
    .slice(0, 63)
    .replace(/-+$/, '');
}

function checkNetwork(network: string): string {
  const value = network.trim() || 'none';
  // Sharing the host's or another container's network namespace undoes the isolation.
  if (value === 'host' || value.startsWith('container:')) {
    throw new Error(
      `sandbox network "${value}" is refused: it shares a network namespace outside the sandbox (use "none" or a named Docker network)`,
    );
  }
  return value;
}

function checkWorkdir(workdir: string): string {
  if (!posix.isAbsolute(workdir)) throw new Error(`sandbox workdir "${workdir}" must be an absolute container path`);
  const normalized = posix.normalize(workdir);
  if (normalized === '/' || /^\/(proc|sys|dev)(\/|$)/.test(normalized))
    throw new Error(`sandbox workdir "${workdir}" may not be /, /proc, /sys or /dev`);
  return normalized.length > 1 ? normalized.replace(/\/+$/, '') : normalized;
}

export interface CreateSettings {
  name: string;
  image: string;
  /** The host's "sandbox-checks" service, and its policy here: `protectedPaths` holds the daemon's socket. */
  checks: SandboxChecks;
  bindPolicy: BindPolicy;
  now: number;
}

/** Engine API create options for `spec`; throws a readable error for anything refused. */
export function createOptions(spec: SandboxSpec, settings: CreateSettings): Record<string, unknown> {
  const workdir = checkWorkdir(spec.workdir);
  const mounts = settings.checks.mounts(spec, settings.bindPolicy);
  const user = formatUser(resolveSandboxUser(spec.user, mounts.workspace, settings.checks));
  // "none" still gets a workspace: the sandbox's own directory, which the routing chose.
  const binds = [`${mounts.workspace}:${workdir}:${spec.workspaceAccess === 'ro' ? 'ro' : 'rw'}`];
  for (const bind of mounts.binds) binds.push(`${bind.source}:${bind.target}:${bind.readOnly ? 'ro' : 'rw'}`);
  const memory = spec.limits.memoryBytes ?? DEFAULT_MEMORY_BYTES;
  const hostConfig: Record<string, unknown> = {
    Init: true,
    ReadonlyRootfs: true,
    CapDrop: ['ALL'],
    SecurityOpt: ['no-new-privileges'],
    NetworkMode: checkNetwork(spec.network),
    PidsLimit: spec.limits.pids ?? DEFAULT_PIDS_LIMIT,
    Memory: memory,
    // Equal to Memory: no swap on top of the limit.
    MemorySwap: memory,
    MaskedPaths: MASKED_PATHS,
    Tmpfs: Object.fromEntries(TMPFS_PATHS.map((path) => [path, 'rw,nosuid,nodev,size=64m'])),
    Binds: binds,
    // Stopped containers are pruned or recreated by claw; Docker must not restart them.
    RestartPolicy: { Name: 'no' },
  };
  if (spec.limits.cpus !== undefined) hostConfig.NanoCpus = Math.round(spec.limits.cpus * 1e9);
  return {
    name: settings.name,
    Image: settings.image,
    // The container only hosts execs; tini (Init) reaps whatever they leave behind.
    Cmd: ['sleep', '2147483647'],
    Hostname: hostnameFor(settings.name),
    WorkingDir: workdir,
    User: user,
    // The sandbox user is rarely in the image's passwd (HOME would be "/", read-only); as with bwrap, home is the workspace.
    Env: Object.entries({ HOME: workdir, ...spec.env }).map(([key, value]) => `${key}=${value}`),
    Labels: {
      [LABELS.sandbox]: '1',
      [LABELS.scopeKey]: spec.scopeKey,
      [LABELS.scope]: spec.scope,
      [LABELS.agentId]: spec.agentId,
      [LABELS.sessionKey]: spec.sessionKey,
      [LABELS.configHash]: spec.configHash,
      [LABELS.createdAt]: String(settings.now),
      [LABELS.user]: user,
    },
    HostConfig: hostConfig,
  };
}
