/**
 * Issue 28's sandbox findings, each written as the attack: a sandboxed command trying to
 * leave a setuid-root program on the host (Docker and bubblewrap), root inside the
 * container, a writable bind of a directory root owns, `claw sandbox explain` calling "ok"
 * a bind the backend then refuses, and a nested user namespace (or another call Docker's
 * seccomp profile refuses) inside bubblewrap. The Docker cases need DOCKER_HOST.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, linkSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judged, snapshotOf } from '../kernel/index.js';
import { type SandboxInstance, type ToolResult } from '../sdk/index.js';
import { clawPolicy } from '../host/policy.js';
import { createTestKernel } from '../sdk/testing.js';
import type { DockerSandboxBackend } from '../plugins/sandbox-docker/backend.js';
import { daemonAddress } from '../plugins/sandbox-docker/client.js';
import { containerNameFor, createOptions, LABELS } from '../plugins/sandbox-docker/container.js';
import { handOverWorkspace } from '../plugins/sandbox-docker/user.js';
import { BwrapBackend } from '../plugins/sandbox-bwrap/backend.js';
import { sandboxChecksService } from '../host/sandbox-checks.js';
import { ARCHES, seccompProgram } from '../plugins/sandbox-bwrap/seccomp.js';
import { dockerTestBackend, linkDockerDeps, requireDockerHost, sandboxSpec } from './docker-helpers.js';
import { CLI, REPO, tempDir } from './helpers.js';

const ROOT = process.getuid?.() === 0;

function sh(instance: SandboxInstance, script: string) {
  return instance.exec({ command: ['sh', '-c', script] });
}

/** What is at `path` on the host, as far as privilege goes. */
function privilegeOf(path: string): { setuidRoot: boolean; setgidRoot: boolean } {
  if (!existsSync(path)) return { setuidRoot: false, setgidRoot: false };
  const info = statSync(path);
  return {
    setuidRoot: info.uid === 0 && (info.mode & 0o4000) !== 0,
    setgidRoot: info.gid === 0 && (info.mode & 0o2000) !== 0,
  };
}

/** Everything a command could try to leave a root-owned setuid program behind with. */
const PLANT_SETUID = [
  'cp "$(readlink -f /bin/sh)" /workspace/rootshell',
  'chown 0:0 /workspace/rootshell',
  'chmod 6755 /workspace/rootshell',
  'chmod u+s,g+s /workspace/rootshell',
  'ls -ln /workspace/rootshell',
].join('; ');

describe('Docker sandbox: never root (sandbox.docker.user)', () => {
  let backend: DockerSandboxBackend;

  beforeAll(async () => {
    backend = await dockerTestBackend();
  }, 120_000);

  afterAll(async () => {
    for (const info of (await backend?.list()) ?? []) await backend.remove(info.id).catch(() => {});
  });

  it('a sandboxed command cannot leave a setuid-root program in the workspace on the host', async () => {
    const workspace = tempDir('claw-sbx-suid-');
    const sandbox = await backend.ensure(sandboxSpec(workspace));
    const planted = await sh(sandbox, PLANT_SETUID);
    // The copy is there (the sandbox may write its workspace); it is just not root's.
    expect(existsSync(join(workspace, 'rootshell')), planted.stderr).toBe(true);
    expect(privilegeOf(join(workspace, 'rootshell')), planted.stdout + planted.stderr).toEqual({
      setuidRoot: false,
      setgidRoot: false,
    });
  });

  it('runs as the workspace owner, or as 65534:65534 when root owns it, and can write the workspace root gave it', async () => {
    const workspace = tempDir('claw-sbx-owner-');
    writeFileSync(join(workspace, 'from-root.txt'), 'before\n');
    mkdirSync(join(workspace, 'made-by-the-host'));
    const sandbox = await backend.ensure(sandboxSpec(workspace));
    const expected = ROOT ? '65534:65534' : `${process.getuid!()}:${process.getgid!()}`;
    const script =
      'echo "$(id -u):$(id -g)"; echo "$HOME"; echo after >> from-root.txt && echo new > made-by-the-host/x && echo wrote';
    const result = await sh(sandbox, script);
    expect(result).toMatchObject({ exitCode: 0, stdout: `${expected}\n/workspace\nwrote\n` });
    expect(statSync(join(workspace, 'made-by-the-host', 'x')).uid).toBe(Number(expected.split(':')[0]));

    // A workspace an unprivileged user owns: the sandbox runs as that user.
    if (ROOT) {
      const owned = tempDir('claw-sbx-owned-');
      chownSync(owned, 1234, 1235);
      const theirs = await backend.ensure(sandboxSpec(owned));
      expect((await sh(theirs, 'echo "$(id -u):$(id -g)"; touch mine && echo ok')).stdout).toBe('1234:1235\nok\n');
    }
  });

  it('docker.user picks the ids; a name, root or group root is refused naming the key', async () => {
    const workspace = tempDir('claw-sbx-user-');
    const configured = await backend.ensure(sandboxSpec(workspace, { user: '4321:4322' }));
    expect((await sh(configured, 'echo "$(id -u):$(id -g)"')).stdout).toBe('4321:4322\n');
    const bare = await backend.ensure(sandboxSpec(workspace, { user: '4321' }));
    expect((await sh(bare, 'id -g')).stdout).toBe('4321\n');
    for (const [user, reason] of [
      ['0', /docker.user "0" is refused: as root/],
      ['0:0', /docker.user "0:0" is refused/],
      ['1000:0', /docker.user "1000:0" is refused/],
      ['root', /docker.user "root" must be "uid" or "uid:gid" in numbers/],
    ] as const) {
      expect(() => backend.validate(sandboxSpec(workspace, { user })), user).toThrow(reason);
      await expect(backend.ensure(sandboxSpec(workspace, { user })), user).rejects.toThrow(reason);
    }
  });

  it('a container made before docker.user existed (running as root) is replaced, not reused', async () => {
    const spec = sandboxSpec(tempDir('claw-sbx-old-'));
    const docker = await backend.docker();
    const name = containerNameFor(spec.scopeKey, backend.prefix);
    const old = createOptions(spec, {
      name,
      image: backend.defaultImage,
      checks: sandboxChecksService,
      bindPolicy: { stateDir: '/nonexistent-state' },
      now: Date.now(),
    });
    delete old.User;
    delete (old.Labels as Record<string, string>)[LABELS.user];
    const stale = await docker.createContainer(old);
    await stale.start();
    const fresh = await backend.ensure(spec);
    expect(fresh.id).not.toBe(stale.id);
    expect((await sh(fresh, 'id -u')).stdout).not.toBe('0\n');
  });

  it('the config refuses docker.user as root or as a name, naming the path', () => {
    const issues = (user: string) => {
      const config = {
        agents: { defaults: { sandbox: { docker: { user } } }, list: [{ id: 'main', sandbox: { docker: { user } } }] },
      };
      return judged(snapshotOf(config, '/x.json'), clawPolicy).issues;
    };
    expect(issues('0:0').map((issue) => `${issue.path}: ${issue.message}`)).toEqual([
      expect.stringMatching(/^agents.defaults.sandbox.docker.user: is refused: as root/),
      expect.stringMatching(/^agents.list\[0\].sandbox.docker.user: is refused: as root/),
    ]);
    const paths = ['agents.defaults.sandbox.docker.user', 'agents.list[0].sandbox.docker.user'];
    expect(issues('root').map((issue) => issue.path)).toEqual(paths);
    expect(issues('1000:1000')).toEqual([]);
  });
});

describe('handing a root-owned workspace to the sandbox user', () => {
  it('changes what root owns inside, and follows no link a sandbox planted to files outside', async () => {
    const workspace = tempDir('claw-handover-');
    const outside = tempDir('claw-handover-outside-');
    writeFileSync(join(outside, 'secret'), 'root only\n');
    writeFileSync(join(workspace, 'notes.txt'), 'x\n');
    mkdirSync(join(workspace, 'sub'));
    symlinkSync(join(outside, 'secret'), join(workspace, 'sub', 'link'));
    symlinkSync(outside, join(workspace, 'dirlink'));
    linkSync(join(outside, 'secret'), join(workspace, 'hardlink'));
    const changed = await handOverWorkspace(workspace, { uid: 65534, gid: 65534 });
    const owner = (path: string) => statSync(path).uid;
    if (ROOT) {
      expect(changed).toBe(3);
      expect([owner(workspace), owner(join(workspace, 'notes.txt')), owner(join(workspace, 'sub'))]).toEqual([
        65534, 65534, 65534,
      ]);
    } else {
      // Only root can give files away; anyone else leaves them as they are.
      expect(changed).toBe(0);
    }
    expect([owner(outside), owner(join(outside, 'secret'))]).toEqual([process.getuid!(), process.getuid!()]);
  });
});

describe('explain and the runtime run the same checks', () => {
  it('the Docker socket folder, a writable bind root owns: explain says refused, and the runtime refuses in the same words', async () => {
    const dockerHost = requireDockerHost();
    const socket = (daemonAddress(process.env) as { socketPath: string }).socketPath;
    const stateDir = join(tempDir('claw-explain-'), 'state');
    linkDockerDeps(stateDir);
    const prefix = `claw-explain-${randomBytes(3).toString('hex')}-`;
    const sandbox = {
      mode: 'all',
      docker: { containerPrefix: prefix, binds: [`${dirname(socket)}:/engine:ro`, '/opt:/opt'] },
    };
    const config = { agents: { defaults: { sandbox } } };
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config));
    const configPath = join(stateDir, 'openclaw.json');
    const env = {
      ...process.env,
      DOCKER_HOST: dockerHost,
      OPENCLAW_STATE_DIR: stateDir,
      OPENCLAW_CONFIG_PATH: configPath,
    };
    const { stdout } = await promisify(execFile)('node', [CLI, 'sandbox', 'explain', '--json'], { env });
    const explained = JSON.parse(stdout);
    expect(explained.binds).toEqual([
      {
        bind: `${dirname(socket)}:/engine:ro`,
        ok: false,
        reason: expect.stringContaining(`contains the protected host path ${socket}`),
      },
      {
        bind: '/opt:/opt',
        ok: false,
        reason: expect.stringMatching(/sandbox bind "\/opt:\/opt" is refused: \/opt is owned by root/),
      },
    ]);
    expect(explained.commandsRunOn).toBe(`refused (fail closed: ${explained.binds[0].reason})`);

    const kernel = await createTestKernel({
      // Exec approvals read the calling session from the sessions plugin's stores (which list models).
      plugins: ['tools-exec', 'exec-approvals', 'models', 'sessions', 'sandbox-docker'].map((id) =>
        join(REPO, 'plugins', id),
      ),
      config,
      env: { DOCKER_HOST: dockerHost },
      stateDir,
    });
    try {
      const context = { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir: tempDir('claw-explain-ws-') };
      const call = { name: 'exec', params: { command: 'true' }, toolCallId: 't-1', context };
      const outcome = await kernel.plugins.kernelServices.tools.invoke(call);
      const text = (outcome.result as ToolResult).content
        .map((part) => (part.type === 'text' ? part.text : ''))
        .join('');
      expect(outcome.result.isError).toBe(true);
      expect(text).toContain(explained.binds[0].reason);
      expect(text).toMatch(/nothing was run on the host/);
    } finally {
      await kernel.dispose();
    }
  }, 60_000);
});

describe('bubblewrap: the seccomp filter', () => {
  let sandbox: SandboxInstance;
  let workspace: string;
  const table = ARCHES[process.arch]!;

  beforeAll(async () => {
    const backend = new BwrapBackend({
      command: '/usr/bin/bwrap',
      stateDir: tempDir('claw-bwrap-seccomp-'),
      checks: sandboxChecksService,
    });
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
    const strings =
      'my ($type, $name, $payload, $none, $tmp, $tmpfs) = ("user", "claw", "x", "none", "/tmp", "tmpfs");';
    const probes = calls.map(
      ([name, nr, args]) => `$! = 0; syscall(${[nr, args].filter(Boolean).join(', ')}); print "${name}:", $!+0, "\\n";`,
    );
    const script = strings + probes.join(' ');
    const result = await sh(sandbox, `perl -e '${script}'`);
    expect(result.stdout).toBe(calls.map(([name, , , errno]) => `${name}:${errno}\n`).join(''));
    // The one personality Docker allows, the query, still answers.
    expect(
      (await sh(sandbox, `perl -e 'print syscall(${table.personality}, 0xffffffff) >= 0 ? "ok\\n" : "no\\n"'`)).stdout,
    ).toBe('ok\n');
  });

  it('refuses setuid and setgid bits, so no setuid-root program reaches the host (bwrap as root maps the sandbox onto root)', async () => {
    const create = `perl -e 'sysopen(F, "/workspace/created", 0100 | 01, 04755) or print "create: $!\\n"'`;
    const result = await sh(sandbox, `${PLANT_SETUID}; ${create}`);
    expect(result.stderr).toMatch(/chmod: .*Operation not permitted/);
    expect(result.stdout).toContain('create: Operation not permitted');
    expect(existsSync(join(workspace, 'rootshell')), result.stderr).toBe(true);
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
