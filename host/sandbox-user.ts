/**
 * `sandbox.docker.user`: "uid" or "uid:gid", never root. Parsed here so config checking
 * (config-checks.ts) and the Docker backend (through the "sandbox-checks" service) refuse the
 * same values with the same words.
 */
import type { SandboxUser } from '../sdk/sandbox/index.js';

/** uid_t is 32 bits and (uid_t)-1 means "unchanged" to chown: stay below it. */
const MAX_ID = 0xfffffffe;

/**
 * Parses `docker.user`. Names are refused: they are looked up in the image's /etc/passwd
 * when the container starts, so claw could not tell beforehand whether "admin" is root.
 * A bare uid gets the same gid (Docker would take gid 0 for a uid the image does not list).
 * Root is refused: a command running as uid 0 owns what it creates in the bound workspace
 * as uid 0 on the host, so `chmod u+s` on a copied binary leaves a setuid-root program there.
 */
export function parseSandboxUser(value: string): SandboxUser {
  const match = /^(\d+)(?::(\d+))?$/.exec(value.trim());
  if (!match) {
    const why = 'names are resolved inside the image, after claw could check them';
    throw new Error(`sandbox docker.user "${value}" must be "uid" or "uid:gid" in numbers (${why})`);
  }
  const uid = Number(match[1]);
  const gid = match[2] === undefined ? uid : Number(match[2]);
  if (uid > MAX_ID || gid > MAX_ID)
    throw new Error(`sandbox docker.user "${value}" is out of range (ids up to ${MAX_ID})`);
  if (uid === 0 || gid === 0) {
    const why =
      'as root (uid or gid 0) a sandboxed command can leave setuid- or setgid-root files in the workspace on the host';
    throw new Error(`sandbox docker.user "${value}" is refused: ${why}; pick an unprivileged id`);
  }
  return { uid, gid };
}
