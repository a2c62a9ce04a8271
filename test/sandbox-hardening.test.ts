/**
 * Issue 28's sandbox findings, each written as the attack. Here: a nested user namespace (or
 * another call Docker's seccomp profile refuses) inside bubblewrap, and a sandboxed command
 * trying to leave a setuid-root program on the host.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SandboxInstance } from '../sdk/index.js';
import { BwrapBackend } from '../plugins/sandbox-bwrap/backend.js';
import { ARCHES, seccompProgram } from '../plugins/sandbox-bwrap/seccomp.js';
import { sandboxSpec } from './docker-helpers.js';
import { tempDir } from './helpers.js';

function sh(instance: SandboxInstance, script: string) {
  return instance.exec({ command: ['sh', '-c', script] });
}

/** What is at `path` on the host, as far as privilege goes. */
function privilegeOf(path: string): { setuidRoot: boolean; setgidRoot: boolean } {
  if (!existsSync(path)) return { setuidRoot: false, setgidRoot: false };
  const info = statSync(path);
  return { setuidRoot: info.uid === 0 && (info.mode & 0o4000) !== 0, setgidRoot: info.gid === 0 && (info.mode & 0o2000) !== 0 };
}

/** Everything a command could try to leave a root-owned setuid program behind with. */
const PLANT_SETUID = [
  'cp "$(command -v busybox || command -v sh)" /workspace/rootshell',
  'chown 0:0 /workspace/rootshell',
  'chmod 6755 /workspace/rootshell',
  'chmod u+s,g+s /workspace/rootshell',
  'ls -ln /workspace/rootshell',
].join('; ');

describe('bubblewrap: the seccomp filter', () => {
  let sandbox: SandboxInstance;
  let workspace: string;
  const table = ARCHES[process.arch]!;

  beforeAll(async () => {
    const backend = new BwrapBackend({ command: '/usr/bin/bwrap', stateDir: tempDir('claw-bwrap-seccomp-') });
    workspace = tempDir('claw-bwrap-ws-');
    sandbox = await backend.ensure(sandboxSpec(workspace));
  });

  it('refuses nested user namespaces with EPERM: unshare -Urn, a nested bwrap, unshare(CLONE_NEWUSER), setns', async () => {
    const unshare = await sh(sandbox, 'unshare -Urn true');
    expect(unshare.exitCode).not.toBe(0);
    expect(unshare.stderr).toMatch(/unshare failed: Operation not permitted/);
    const nested = await sh(sandbox, 'bwrap --ro-bind / / true');
    expect(nested.exitCode).not.toBe(0);
    const unshareUser = `$! = 0; syscall(${table.denied.unshare}, 0x10000000); print "unshare:", $!+0, "\\n";`;
    const probe = `perl -e '${unshareUser} $! = 0; syscall(${table.denied.setns}, -1, 0); print "setns:", $!+0, "\\n"'`;
    expect((await sh(sandbox, probe)).stdout).toBe('unshare:1\nsetns:1\n');
  });

  it('refuses what Docker’s default profile refuses (keyring, ptrace, personality, userfaultfd, clone3 → ENOSYS, x32)', async () => {
    const calls: Array<[string, number, string, number]> = [
      ['keyctl', table.denied.keyctl!, '0, -3, 0', 1],
      ['add_key', table.denied.add_key!, '$type, $name, $payload, 1, -2', 1],
      ['ptrace', table.denied.ptrace!, '0, 0, 0, 0', 1],
      ['personality', table.personality, '0x0040000', 1],
      ['userfaultfd', table.denied.userfaultfd!, '1', 1],
      ['bpf', table.denied.bpf!, '0, 0, 0', 1],
      ['mount', table.denied.mount!, '$none, $tmp, $tmpfs, 0, 0', 1],
      ['clone3', table.clone3, '0, 0', 38],
      ...(process.arch === 'x64' ? [['x32 getpid', 0x40000000 | 39, '', 1] as [string, number, string, number]] : []),
    ];
    // perl passes a string as a pointer to its buffer, which must be a variable (a literal is read-only).
    const strings = 'my ($type, $name, $payload, $none, $tmp, $tmpfs) = ("user", "claw", "x", "none", "/tmp", "tmpfs");';
    const probes = calls.map(
      ([name, nr, args]) => `$! = 0; syscall(${[nr, args].filter(Boolean).join(', ')}); print "${name}:", $!+0, "\\n";`,
    );
    const script = strings + probes.join(' ');
    const result = await sh(sandbox, `perl -e '${script}'`);
    expect(result.stdout).toBe(calls.map(([name, , , errno]) => `${name}:${errno}\n`).join(''));
    // The one personality Docker allows, the query, still answers.
    expect((await sh(sandbox, `perl -e 'print syscall(${table.personality}, 0xffffffff) >= 0 ? "ok\\n" : "no\\n"'`)).stdout).toBe('ok\n');
  });

  it('refuses setuid and setgid bits, so no setuid-root program reaches the host (bwrap as root maps the sandbox onto root)', async () => {
    const create = `perl -e 'sysopen(F, "/workspace/created", 0100 | 01, 04755) or print "create: $!\\n"'`;
    const result = await sh(sandbox, `${PLANT_SETUID}; ${create}`);
    expect(result.stderr).toMatch(/chmod: .*Operation not permitted/);
    expect(result.stdout).toContain('create: Operation not permitted');
    expect(privilegeOf(join(workspace, 'rootshell'))).toEqual({ setuidRoot: false, setgidRoot: false });
    expect(existsSync(join(workspace, 'created'))).toBe(false);
  });

  it('leaves ordinary commands alone: modes, fork, threads (clone3 falls back to clone), node', async () => {
    const script = [
      'echo x > plain && chmod 750 plain && stat -c %a plain',
      '(sleep 0 & wait) && echo forked',
      'mkdir -p a/b && echo made > a/b/f',
      'cat a/b/f',
    ];
    expect(await sh(sandbox, script.join('; '))).toMatchObject({ exitCode: 0, stdout: '750\nforked\nmade\n' });
    // Node's fs promises run on libuv's thread pool: threads started through clone3's fallback.
    const read = "require('fs').promises.readFile('a/b/f', 'utf8').then((t) => console.log('node', t.trim()))";
    const node = await sh(sandbox, `node -e "${read}"`);
    expect(node.stdout).toBe('node made\n');
  });

  it('builds a filter only for architectures it knows', () => {
    const program = seccompProgram('x64');
    expect(program.length % 8).toBe(0);
    // The first instruction loads seccomp_data.arch, the second compares it with AUDIT_ARCH_X86_64.
    expect([program.readUInt16LE(0), program.readUInt32LE(4), program.readUInt32LE(12)]).toEqual([0x20, 4, 0xc000003e]);
    expect(seccompProgram('arm64').readUInt32LE(12)).toBe(0xc00000b7);
    expect(() => seccompProgram('riscv64')).toThrow(/no seccomp filter for the riscv64 architecture/);
  });
});
