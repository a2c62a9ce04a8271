/**
 * Who commands run as in a Docker sandbox (`sandbox.docker.user`, parsed by the host's
 * "sandbox-checks" service, as config checking does), and making the workspace theirs. Never root: a process running as uid 0
 * in the container owns what it creates in the bound workspace as uid 0 on the host, so
 * `chmod u+s` on a copied binary would leave a setuid-root program there for anyone on the
 * host to run. With `CapDrop: ALL` a non-root user cannot chown anything to root, so what
 * the sandbox leaves behind belongs to it.
 *
 * Unset, the sandbox runs as the owner of the workspace (the gateway's user, normally): what
 * it writes is then owned by the same person as the rest. When root owns the workspace — a
 * gateway running as root — it runs as 65534:65534 (nobody:nogroup, owner of nothing), and
 * the gateway hands the workspace over to that user so commands can write it.
 */
import { constants, statSync } from 'node:fs';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import type { SandboxChecks, SandboxUser } from '../../sdk/sandbox/index.js';

export const formatUser = (user: SandboxUser): string => `${user.uid}:${user.gid}`;

/** nobody:nogroup: the sandbox user when root owns the workspace. */
export const UNPRIVILEGED_USER: SandboxUser = { uid: 65534, gid: 65534 };

/** The configured user, or the workspace owner, or nobody when root owns it. */
export function resolveSandboxUser(
  configured: string | undefined,
  workspace: string,
  checks: Pick<SandboxChecks, 'user'>,
): SandboxUser {
  if (configured !== undefined) return checks.user(configured);
  let owner: SandboxUser | undefined;
  try {
    const info = statSync(workspace);
    owner = { uid: info.uid, gid: info.gid };
  } catch {
    // Not made yet (workspaceAccess "none" is created right before the container): the gateway will own it.
    const uid = process.getuid?.();
    owner = uid === undefined ? undefined : { uid, gid: process.getgid?.() ?? uid };
  }
  if (!owner || owner.uid === 0) return UNPRIVILEGED_USER;
  // Group root would let the sandbox leave setgid-root files: the user's own id stands in.
  return owner.gid === 0 ? { uid: owner.uid, gid: owner.uid } : owner;
}

/** Each level holds a descriptor open; a sandbox could nest directories without end. */
const MAX_DEPTH = 128;
const OPEN_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Opening a FIFO must not wait for a writer; a terminal must not become ours. */
const OPEN_FILE = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

async function openQuietly(path: string, flags: number): Promise<FileHandle | undefined> {
  try {
    return await open(path, flags);
  } catch {
    // Gone, a symlink (ELOOP), a socket (ENXIO), or swapped under us: not ours to change.
    return undefined;
  }
}

/**
 * Gives the workspace to `user`: every directory and regular file in it that root owns is
 * chowned to the sandbox user. Only a gateway running as root does this (only root can).
 *
 * The workspace is writable by a sandbox that may be running right now, so nothing here
 * follows a path the sandbox could redirect: each entry is opened relative to its parent's
 * open descriptor (/proc/self/fd/N/name, which the kernel resolves from that descriptor, not
 * by walking the path again), with O_NOFOLLOW, and changed through its own descriptor. A
 * symlink is never followed, and a file with more than one link is left alone (it may be a
 * hard link to a file elsewhere on the host). Returns how many entries changed owner.
 */
export async function handOverWorkspace(workspace: string, user: SandboxUser): Promise<number> {
  if (process.getuid?.() !== 0) return 0;
  const root = await openQuietly(workspace, OPEN_DIR);
  if (!root) throw new Error(`cannot open the sandbox workspace ${workspace} to hand it to ${formatUser(user)}`);
  let changed = 0;
  const visit = async (dir: FileHandle, depth: number): Promise<void> => {
    try {
      const info = await dir.stat();
      if (info.uid === 0) (await dir.chown(user.uid, user.gid), changed++);
      const here = `/proc/self/fd/${dir.fd}`;
      for (const entry of await readdir(here, { withFileTypes: true })) {
        if (entry.isSymbolicLink()) continue;
        const child = await openQuietly(`${here}/${entry.name}`, entry.isDirectory() ? OPEN_DIR : OPEN_FILE);
        if (!child) continue;
        const childInfo = await child.stat();
        if (childInfo.isDirectory()) {
          if (depth < MAX_DEPTH) await visit(child, depth + 1);
          else await child.close();
          continue;
        }
        try {
          if (childInfo.isFile() && childInfo.nlink === 1 && childInfo.uid === 0)
            (await child.chown(user.uid, user.gid), changed++);
        } finally {
          await child.close();
        }
      }
    } finally {
      await dir.close();
    }
  };
  await visit(root, 0);
  return changed;
}
