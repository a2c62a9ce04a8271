/**
 * The bwrap command line for one sandboxed command: a new root assembled from read-only
 * host system directories, fresh /proc, /dev and /tmp, the workspace at `workdir`, every
 * namespace unshared (no network unless asked), a cleared environment, and the seccomp
 * filter (seccomp.ts) read from SECCOMP_FD. bwrap mounts every bind nosuid and nodev.
 */
import { lstatSync, readlinkSync } from 'node:fs';
import type { SandboxSpec } from '../../sdk/index.js';
import type { Bind } from '../../sdk/sandbox/index.js';

export const SANDBOX_HOSTNAME = 'claw-sandbox';
/** Inside the sandbox the command runs as an unprivileged user, whatever it is on the host. */
export const SANDBOX_UID = 1000;
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32'];
/** Just enough of /etc for programs to start (the dynamic loader, locale, time, alternatives). */
const ETC_FILES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/localtime',
  '/etc/nsswitch.conf',
];
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** The descriptor bwrap reads the seccomp program from: the spawn's first extra stdio slot. */
export const SECCOMP_FD = 3;

/** Merged-/usr systems have /bin → usr/bin: recreate the link instead of binding twice. */
function systemDir(dir: string): string[] {
  try {
    const info = lstatSync(dir);
    if (info.isSymbolicLink()) return ['--symlink', readlinkSync(dir), dir];
    return info.isDirectory() ? ['--ro-bind', dir, dir] : [];
  } catch {
    return [];
  }
}

export interface BwrapCommand {
  spec: SandboxSpec;
  binds: Bind[];
  /** Host directory with this sandbox's passwd, group and hosts files. */
  etcDir: string;
  cwd: string;
  env?: Record<string, string>;
  argv: string[];
}

export function bwrapArgs({ spec, binds, etcDir, cwd, env, argv }: BwrapCommand): string[] {
  const args = ['--unshare-all', '--unshare-user', '--uid', String(SANDBOX_UID), '--gid', String(SANDBOX_UID)];
  if (spec.network === 'host') args.push('--share-net');
  args.push(
    '--die-with-parent',
    '--new-session',
    '--hostname',
    SANDBOX_HOSTNAME,
    '--cap-drop',
    'ALL',
    '--seccomp',
    String(SECCOMP_FD),
  );
  for (const dir of SYSTEM_DIRS) args.push(...systemDir(dir));
  args.push('--dir', '/etc');
  for (const file of ETC_FILES) args.push('--ro-bind-try', file, file);
  for (const file of ['passwd', 'group', 'hosts', 'hostname'])
    args.push('--ro-bind', `${etcDir}/${file}`, `/etc/${file}`);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  args.push(spec.workspaceAccess === 'ro' ? '--ro-bind' : '--bind', spec.workspaceRoot, spec.workdir);
  for (const bind of binds) args.push(bind.readOnly ? '--ro-bind' : '--bind', bind.source, bind.target);
  if (spec.readOnlyRoot !== false) args.push('--remount-ro', '/');
  args.push('--clearenv');
  const fullEnv = { PATH, HOME: spec.workdir, LANG: 'C.UTF-8', HOSTNAME: SANDBOX_HOSTNAME, ...spec.env, ...env };
  for (const [key, value] of Object.entries(fullEnv)) args.push('--setenv', key, value);
  args.push('--chdir', cwd, '--', ...argv);
  return args;
}

/** The files bound over /etc/{passwd,group,hosts,hostname}: only the sandbox's own user. */
export function etcFiles(): Record<string, string> {
  return {
    passwd: `root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nsandbox:x:${SANDBOX_UID}:${SANDBOX_UID}:sandbox:/workspace:/bin/sh\n`,
    group: `root:x:0:\nsandbox:x:${SANDBOX_UID}:\n`,
    hosts: `127.0.0.1 localhost ${SANDBOX_HOSTNAME}\n::1 localhost\n`,
    hostname: `${SANDBOX_HOSTNAME}\n`,
  };
}
