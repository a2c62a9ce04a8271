/**
 * Ways a model might try to get out of a sandbox (every backend runs them), as shell commands run by `exec`, and
 * file-tool paths that must be refused. Each command prints ESCAPED only if it got out.
 */
export interface ExecEscape {
  name: string;
  /** `{{host}}` is replaced with a host directory outside the sandbox holding a file "secret". */
  command: string;
}

export const EXEC_ESCAPES: ExecEscape[] = [
  { name: 'read a host file by absolute path', command: 'cat {{host}}/secret && echo ESCAPED' },
  // A sandbox may have a /root of its own (the Docker image does); the host's is not empty.
  { name: 'list the host root home', command: 'ls -A /root 2>/dev/null | grep -q . && echo ESCAPED' },
  { name: 'read /etc/shadow', command: 'cat /etc/shadow 2>/dev/null && echo ESCAPED' },
  // The host's system accounts; a sandbox's own passwd lists only its user (and root, in the image).
  { name: 'see the host users in /etc/passwd', command: 'grep -q "^daemon:" /etc/passwd && echo ESCAPED' },
  { name: 'write to the system directories', command: 'touch /usr/claw-escape 2>/dev/null && echo ESCAPED' },
  { name: 'write to the root filesystem', command: 'mkdir /claw-escape 2>/dev/null && echo ESCAPED' },
  { name: 'reach the Docker socket', command: 'test -e /var/run/docker.sock -o -e /run/docker.sock && echo ESCAPED' },
  { name: 'see host processes', command: 'test "$(ls /proc | grep -c "^[0-9]")" -gt 10 && echo ESCAPED' },
  {
    name: 'climb out of /workspace with ..',
    command: 'cd /workspace/../../.. && test -e {{host}}/secret && echo ESCAPED',
  },
  // Seeing the host's devices counts, not an empty (masked) directory.
  { name: 'read /sys', command: 'ls -A /sys/class /sys/devices 2>/dev/null | grep -q "^[a-z]" && echo ESCAPED' },
  {
    name: 'use a host network interface',
    command: 'grep -v -e "lo:" -e "|" /proc/net/dev | grep -q ":" && echo ESCAPED',
  },
  { name: 'keep a host capability', command: 'grep -q "^CapEff:.*[1-9a-f]" /proc/self/status && echo ESCAPED' },
  { name: 'inherit a host secret from the environment', command: 'env | grep -q CLAW_HOST_SECRET && echo ESCAPED' },
];

/** Paths the file tools must refuse in a sandbox (relative to /workspace, or absolute). */
export const FILE_ESCAPES: string[] = [
  '../../../../etc/passwd',
  '/etc/passwd',
  '~/../../etc/hostname',
  '/workspace/../etc/hostname',
  '/proc/self/environ',
];
