/**
 * The Docker sandbox backend against a real daemon (DOCKER_HOST): what a command inside
 * sees (hostname, /workspace, no network, read-only root, no capabilities, limits), the
 * binds it refuses, container reuse and recreation, list/remove/prune, kill and timeout.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxInstance, SandboxProcess } from '../sdk/index.js';
import { DockerSandboxBackend } from '../plugins/sandbox-docker/backend.js';
import { daemonAddress, DOCKERODE } from '../plugins/sandbox-docker/client.js';
import { containerNameFor, hostnameFor } from '../plugins/sandbox-docker/container.js';
import { createTestKernel } from '../sdk/testing.js';
import { runtimeDepsService } from '../host/runtime-deps.js';
import { sandboxChecksService } from '../host/sandbox-checks.js';
import type { SandboxBackend } from '../sdk/index.js';
import type { SandboxDockerService } from '../plugins/sandbox-docker/index.js';
import {
  DOCKER_DEPS_STATE,
  dockerTestBackend,
  linkDockerDeps,
  requireDockerHost,
  sandboxSpec,
} from './docker-helpers.js';
import { REPO, tempDir } from './helpers.js';

let backend: DockerSandboxBackend;

beforeAll(async () => {
  backend = await dockerTestBackend();
}, 120_000);

afterAll(async () => {
  for (const info of (await backend?.list()) ?? []) await backend.remove(info.id).catch(() => {});
});

function ensure(...args: Parameters<typeof sandboxSpec>): Promise<SandboxInstance> {
  return backend.ensure(sandboxSpec(...args));
}

async function sh(instance: SandboxInstance, script: string, timeoutMs?: number) {
  return instance.exec({ command: ['sh', '-c', script], timeoutMs });
}

function firstLine(process: SandboxProcess): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    process.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(text.split('\n')[0]!);
    });
  });
}

describe('sandbox-docker: inside the container', () => {
  let workspace: string;
  let sandbox: SandboxInstance;

  beforeAll(async () => {
    workspace = tempDir('claw-sbx-ws-');
    writeFileSync(join(workspace, 'hello.txt'), 'from the host\n');
    sandbox = await ensure(workspace, { env: { SANDBOX_GREETING: 'hi' } });
  }, 60_000);

  it('runs in the container: its hostname, /workspace with the host files, the spec env', async () => {
    const name = containerNameFor(sandbox.spec.scopeKey, backend.prefix);
    const result = await sh(sandbox, 'hostname; pwd; cat hello.txt; echo "$SANDBOX_GREETING"; echo made > out.txt');
    expect(result).toEqual({
      exitCode: 0,
      stdout: `${hostnameFor(name)}\n/workspace\nfrom the host\nhi\n`,
      stderr: '',
    });
    expect(readFileSync(join(workspace, 'out.txt'), 'utf8')).toBe('made\n');
    expect(sandbox.backend).toBe('docker');
  });

  it('has no network: loopback is the only interface', async () => {
    const result = await sh(sandbox, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    expect(result.stdout.trim().split('\n')).toEqual(['lo']);
  });

  it('has a read-only root and writable tmpfs scratch space', async () => {
    const root = await sh(sandbox, 'touch /evil');
    expect(root.exitCode).not.toBe(0);
    expect(root.stderr).toMatch(/Read-only file system/);
    expect((await sh(sandbox, 'echo ok > /tmp/x && cat /tmp/x')).stdout).toBe('ok\n');
  });

  it('drops every capability and sets no-new-privileges', async () => {
    const status = (await sh(sandbox, 'cat /proc/self/status')).stdout;
    for (const field of ['CapEff', 'CapPrm', 'CapBnd']) expect(status).toMatch(new RegExp(`${field}:\\s+0{16}\\n`));
    expect(status).toMatch(/NoNewPrivs:\s+1\n/);
    // An init process reaps what commands leave behind.
    expect((await sh(sandbox, 'cat /proc/1/comm')).stdout).toBe('docker-init\n');
  });

  it('enforces the pids and memory limits', async () => {
    // Its own container: the fork bomb below leaves it full of processes.
    const limited = await ensure(tempDir('claw-sbx-pids-'), { limits: { pids: 40, memoryBytes: 128 * 1024 ** 2 } });
    try {
      // cgroup v2 files, or v1's on older hosts.
      const limits = await sh(
        limited,
        'cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max; cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes',
      );
      expect(limits.stdout).toBe(`40\n${128 * 1024 ** 2}\n`);
      // More processes than the limit: forks fail inside, the host is untouched.
      const bomb = await sh(
        limited,
        'for i in $(seq 60); do sleep 30 & done 2>/dev/null; ps | grep -c "sleep 30"',
        20_000,
      );
      expect(Number(bomb.stdout.trim())).toBeLessThan(40);
    } finally {
      await backend.remove(limited.id);
    }
  });

  it('passes stdin and keeps stdout and stderr apart; cwd stays inside the workdir', async () => {
    expect(await sandbox.exec({ command: ['sh', '-c', 'cat; echo oops >&2; exit 3'], stdin: 'piped in' })).toEqual({
      exitCode: 3,
      stdout: 'piped in',
      stderr: 'oops\n',
    });
    mkdirSync(join(workspace, 'sub'));
    expect((await sandbox.exec({ command: ['pwd'], cwd: 'sub' })).stdout).toBe('/workspace/sub\n');
    await expect(sandbox.exec({ command: ['pwd'], cwd: '../etc' })).rejects.toThrow(/outside the sandbox workdir/);
  });

  it('spawn: ends when the command exits even with stdin left open, and takes stdin while it runs', async () => {
    const quick = sandbox.spawn({ command: 'echo hi' });
    const out = firstLine(quick);
    expect(await quick.exited).toEqual({ exitCode: 0, signal: null });
    expect(await out).toBe('hi');
    const reader = sandbox.spawn({ command: 'read line; echo "got $line"' });
    const got = firstLine(reader);
    reader.stdin!.write('typed\n');
    expect(await got).toBe('got typed');
    expect(await reader.exited).toEqual({ exitCode: 0, signal: null });
  });

  it('kills the whole process group of a background command', async () => {
    const process = sandbox.spawn({ command: 'sleep 301 & sleep 302 & echo started; wait' });
    expect(await firstLine(process)).toBe('started');
    process.kill('SIGTERM');
    expect(await process.exited).toEqual({ exitCode: null, signal: 'SIGTERM' });
    const left = await sh(sandbox, 'ps -o args | grep -c "^sleep 30[12]" || true');
    expect(left.stdout.trim()).toBe('0');
  });

  it('dispose kills the commands still running, the container stays', async () => {
    const other = await dockerTestBackend({ containerPrefix: backend.prefix });
    const same = await other.ensure(sandbox.spec);
    expect(same.id).toBe(sandbox.id);
    const process = same.spawn({ command: 'sleep 306 & sleep 307' });
    await sh(sandbox, 'sleep 0.3');
    await other.dispose();
    expect(await process.exited).toMatchObject({ exitCode: null });
    expect((await sh(sandbox, 'ps -o args | grep -c "^sleep 30[67]" || true')).stdout.trim()).toBe('0');
  });

  it('times out a command and kills what it started', async () => {
    const started = Date.now();
    const result = await sh(sandbox, 'sleep 303 & sleep 304', 500);
    expect(result).toMatchObject({ timedOut: true, exitCode: null });
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await sh(sandbox, 'ps -o args | grep -c "^sleep 30[34]" || true')).stdout.trim()).toBe('0');
  });
});

describe('sandbox-docker: workspace access and binds', () => {
  it('mounts the workspace read-only for workspaceAccess "ro"', async () => {
    const workspace = tempDir('claw-sbx-ro-');
    // Readable by others, as a workspace is: the sandbox user need not own what it only reads.
    chmodSync(workspace, 0o755);
    const sandbox = await ensure(workspace, { workspaceAccess: 'ro' });
    const result = await sh(sandbox, 'echo x > /workspace/new.txt');
    expect(result.stderr).toMatch(/Read-only file system/);
  });

  it('refuses the Docker socket, its folder, sensitive host paths and symlinks to them, creating nothing', async () => {
    const workspace = tempDir('claw-sbx-bind-');
    const sneaky = join(tempDir('claw-sbx-link-'), 'innocent');
    symlinkSync('/etc', sneaky);
    const socket = (daemonAddress(process.env) as { socketPath: string }).socketPath;
    const cases: Array<[string, RegExp]> = [
      ['/var/run/docker.sock:/var/run/docker.sock', /protected host path/],
      [`${socket}:/docker.sock`, /protected host path|engine socket/],
      [`${join(socket, '..')}:/d`, new RegExp(`contains the protected host path ${socket}`)],
      [`${tempDir('claw-sbx-sock-')}/podman.sock:/p.sock`, /container engine socket/],
      ['/:/host', /host root/],
      ['/etc/passwd:/x:ro', /\/etc is a protected host path/],
      ['/home/u/../../etc:/x', /\/etc is a protected host path/],
      ['//etc//:/x', /\/etc is a protected host path/],
      ['/proc:/p', /\/proc is a protected host path/],
      ['/var/lib/containerd/io:/c', /protected host path/],
      [`${DOCKER_DEPS_STATE}/runtime-deps:/s`, /claw state dir/],
      ['etc:/x', /host path must be absolute/],
      [`${sneaky}:/x`, /resolves to \/etc/],
      [`${sneaky}/ssh:/x`, /resolves to \/etc\/ssh/],
      [`${workspace}:/proc/x`, /reserved inside the sandbox/],
      [`${workspace}:/x:z`, /not "host:sandbox\[:ro\|rw\]"/],
    ];
    const before = (await backend.list()).length;
    for (const [bind, reason] of cases) {
      await expect(backend.ensure(sandboxSpec(workspace, { binds: [bind] })), bind).rejects.toThrow(reason);
    }
    await expect(backend.ensure(sandboxSpec('/etc'))).rejects.toThrow(/sandbox workspace "\/etc" is refused/);
    await expect(backend.ensure(sandboxSpec(join(socket, '..')))).rejects.toThrow(
      /sandbox workspace .* contains the protected host path/,
    );
    await expect(backend.ensure(sandboxSpec(workspace, { network: 'host' }))).rejects.toThrow(
      /network "host" is refused/,
    );
    expect((await backend.list()).length).toBe(before);
  });

  it('mounts an allowed extra bind where asked', async () => {
    const workspace = tempDir('claw-sbx-ws-');
    const extra = tempDir('claw-sbx-extra-');
    chmodSync(extra, 0o755);
    writeFileSync(join(extra, 'data.txt'), 'extra\n');
    const sandbox = await ensure(workspace, { binds: [`${extra}:/data:ro`] });
    expect((await sh(sandbox, 'cat /data/data.txt; touch /data/y 2>&1 | grep -c Read-only')).stdout).toBe('extra\n1\n');
  });
});

describe('sandbox-docker: lifecycle', () => {
  it('reuses the container for the same scope and hash, recreates it when the hash changes', async () => {
    const workspace = tempDir('claw-sbx-life-');
    const spec = sandboxSpec(workspace);
    const first = await backend.ensure(spec);
    await sh(first, 'echo kept > /tmp/state');
    const again = await backend.ensure(spec);
    expect(again.id).toBe(first.id);
    expect((await sh(again, 'cat /tmp/state')).stdout).toBe('kept\n');
    // Two concurrent ensures share one container.
    const [a, b] = await Promise.all([backend.ensure(spec), backend.ensure(spec)]);
    expect(new Set([a.id, b.id, first.id]).size).toBe(1);

    // A stopped container (daemon restart, `docker stop`) is started again, not replaced.
    execFileSync('docker', ['stop', '-t', '0', first.id], { stdio: 'ignore' });
    const restarted = await backend.ensure(spec);
    expect(restarted.id).toBe(first.id);
    expect((await sh(restarted, 'echo up')).stdout).toBe('up\n');

    const changed = await backend.ensure({ ...spec, configHash: 'hash-2' });
    expect(changed.id).not.toBe(first.id);
    expect((await sh(changed, 'cat /tmp/state 2>/dev/null || echo fresh')).stdout).toBe('fresh\n');
    const listed = (await backend.list()).filter((info) => info.scopeKey === spec.scopeKey);
    expect(listed).toEqual([
      expect.objectContaining({
        id: changed.id,
        backend: 'docker',
        agentId: 'main',
        configHash: 'hash-2',
        running: true,
        image: 'claw-sandbox:busybox',
      }),
    ]);
  });

  it('lists and removes sandboxes; removing an unknown id names it', async () => {
    const sandbox = await ensure(tempDir('claw-sbx-rm-'));
    expect((await backend.list()).map((info) => info.id)).toContain(sandbox.id);
    await backend.remove(sandbox.id);
    expect((await backend.list()).map((info) => info.id)).not.toContain(sandbox.id);
    await expect(backend.remove('no-such-container')).rejects.toThrow('no sandbox container "no-such-container"');
  });

  it('prunes sandboxes idle longer than idleHours or older than maxAgeDays', async () => {
    let now = Date.now();
    const pruning = await dockerTestBackend({ prune: { idleHours: 24, maxAgeDays: 7 }, now: () => now });
    const idle = await pruning.ensure(sandboxSpec(tempDir('claw-sbx-prune-')));
    const busy = await pruning.ensure(sandboxSpec(tempDir('claw-sbx-prune-')));
    now += 23 * 3_600_000;
    await busy.exec({ command: ['true'] });
    now += 2 * 3_600_000;
    expect(await pruning.prune()).toEqual([idle.id]);
    now += 7 * 86_400_000;
    await busy.exec({ command: ['true'] });
    expect(await pruning.prune()).toEqual([busy.id]);
    expect(await pruning.list()).toEqual([]);
  });

  it('check() names what is missing: the daemon, or the image and how to build it', async () => {
    expect(await backend.check()).toEqual({ ok: true });
    const missing = new DockerSandboxBackend({
      stateDir: DOCKER_DEPS_STATE,
      env: process.env,
      deps: runtimeDepsService({ stateDir: DOCKER_DEPS_STATE }),
      checks: sandboxChecksService,
      defaultImage: 'claw-sandbox:never-built',
    });
    expect(await missing.check()).toEqual({
      ok: false,
      reason: expect.stringMatching(/image claw-sandbox:never-built is missing .*claw sandbox build/),
    });
    const down = new DockerSandboxBackend({
      stateDir: DOCKER_DEPS_STATE,
      env: { DOCKER_HOST: `unix://${tempDir('claw-nodocker-')}/docker.sock` },
      deps: runtimeDepsService({ stateDir: DOCKER_DEPS_STATE }),
      checks: sandboxChecksService,
    });
    expect(await down.check()).toEqual({
      ok: false,
      reason: expect.stringMatching(/Docker daemon at unix:\/\/.*docker\.sock is not reachable/),
    });
    await expect(down.buildImage()).rejects.toThrow(/Docker daemon at unix:\/\/.*docker\.sock is not reachable/);
  });

  it('builds an image from busybox-static that runs a shell', async () => {
    const image = `claw-sandbox:test-${process.pid}`;
    const docker = await backend.docker();
    try {
      expect(await backend.buildImage({ image })).toBe(image);
      const custom = await backend.ensure(sandboxSpec(tempDir('claw-sbx-img-'), { image }));
      expect((await sh(custom, 'echo $0; ls /bin/sh')).stdout).toBe('sh\n/bin/sh\n');
      await backend.remove(custom.id);
    } finally {
      await docker
        .getImage(image)
        .remove({ force: true })
        .catch(() => {});
    }
  });

  it('declares dockerode as a runtime dependency, not a package dependency', () => {
    const manifest = JSON5.parse(readFileSync(join(REPO, 'plugins', 'sandbox-docker', 'openclaw.plugin.json'), 'utf8'));
    expect(manifest.runtimeDependencies).toEqual([DOCKERODE]);
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
    expect({ ...pkg.dependencies, ...pkg.devDependencies }).not.toHaveProperty('dockerode');
  });
});

describe('sandbox-docker as a plugin', () => {
  it('fills the sandbox slot and offers the "sandbox-docker" service, dockerode from <stateDir>/runtime-deps', async () => {
    const stateDir = join(tempDir('claw-sbx-plugin-'), 'state');
    linkDockerDeps(stateDir);
    const kernel = await createTestKernel({
      plugins: [join(REPO, 'plugins', 'sandbox-docker')],
      config: { plugins: { slots: { sandbox: 'sandbox-docker' } } },
      env: { DOCKER_HOST: requireDockerHost() },
      stateDir,
    });
    try {
      const slot = (await kernel.capabilities.slot('sandbox')) as unknown as SandboxBackend;
      expect(slot.id).toBe('docker');
      expect(await slot.check()).toEqual({ ok: true });
      const sandbox = await slot.ensure(sandboxSpec(tempDir('claw-sbx-plugin-ws-')));
      try {
        expect((await sandbox.exec({ command: ['hostname'] })).stdout).toBe(
          `${hostnameFor(containerNameFor(sandbox.spec.scopeKey))}\n`,
        );
      } finally {
        await slot.remove(sandbox.id);
      }
      const service = (await kernel.capabilities.get('service', 'sandbox-docker')).api as SandboxDockerService;
      expect(service.defaultImage).toBe('claw-sandbox:busybox');
      const image = `claw-sandbox:plugin-${process.pid}`;
      try {
        expect(await service.buildImage({ image })).toBe(image);
      } finally {
        await (
          await backend.docker()
        )
          .getImage(image)
          .remove({ force: true })
          .catch(() => {});
      }
    } finally {
      await kernel.dispose();
    }
  });
});
