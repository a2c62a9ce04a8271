import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../sdk/index.js';
import { resolveSandboxRoute } from '../host/sandbox-route.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { CLI, REPO, tempDir, waitFor } from './helpers.js';
import { EXEC_ESCAPES, FILE_ESCAPES } from './sandbox-escape-cases.js';

// Exec approvals read the calling session from the sessions plugin's stores (which list models); the first four run exec without a backend.
const PLUGINS = ['tools-exec', 'exec-approvals', 'models', 'sessions', 'tools-fs', 'sandbox-bwrap'].map((id) =>
  join(REPO, 'plugins', id),
);
const MAIN = 'agent:main:main';
const GROUP = 'agent:main:telegram:group:42';

function text(result: ToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

async function sandboxKernel(sandbox: Record<string, unknown>, bwrap?: string): Promise<TestKernel> {
  return createTestKernel({
    plugins: PLUGINS,
    config: {
      plugins: {
        slots: { sandbox: 'sandbox-bwrap' },
        ...(bwrap ? { entries: { 'sandbox-bwrap': { config: { command: bwrap } } } } : {}),
      },
      agents: { defaults: { sandbox } },
    },
  });
}

function invoke(
  kernel: TestKernel,
  name: string,
  params: Record<string, unknown>,
  sessionKey: string,
  workspaceDir: string,
) {
  return kernel.plugins.kernelServices.tools.invoke({
    name,
    params,
    toolCallId: `t-${Math.random()}`,
    context: { agentId: 'main', sessionKey, workspaceDir },
  });
}

describe('sandbox routing with bubblewrap (mode non-main)', () => {
  let kernel: TestKernel;
  let workspace: string;
  let host: string;
  const exec = async (command: string, sessionKey = GROUP) =>
    (await invoke(kernel, 'exec', { command }, sessionKey, workspace)).result;

  beforeAll(async () => {
    kernel = await sandboxKernel({ mode: 'non-main', scope: 'session' });
    workspace = tempDir('claw-agent-ws-');
    host = tempDir('claw-host-');
    writeFileSync(join(host, 'secret'), 'host secret\n');
    writeFileSync(join(workspace, 'AGENTS.md'), 'agent workspace file\n');
  });
  afterAll(() => kernel.dispose());

  it('runs exec of a non-main session inside the sandbox: its hostname, /workspace, an unprivileged user, bwrap as pid 1', async () => {
    const result = await exec(`hostname; pwd; id -u; tr '\\0' ' ' < /proc/1/cmdline; echo`);
    expect(result.isError).toBeUndefined();
    const [name, cwd, uid, init] = text(result).split('\n');
    expect(name).toBe('claw-sandbox');
    expect(cwd).toBe('/workspace');
    expect(uid).toBe('1000');
    expect(init).toMatch(/^\S*bwrap --unshare-all /);
  });

  it('explain agrees with where commands actually ran, for the main session and a group session', async () => {
    for (const sessionKey of [MAIN, GROUP, 'agent:main:dm:someone']) {
      const route = resolveSandboxRoute(kernel.config.resolved, {
        agentId: 'main',
        sessionKey,
        workspaceDir: workspace,
        stateDir: kernel.stateDir,
      });
      const ran = text(await exec('hostname', sessionKey)).trim();
      expect(ran === 'claw-sandbox', sessionKey).toBe(route.sandboxed);
      expect(ran === hostname(), sessionKey).toBe(!route.sandboxed);
    }
  });

  it('the main session runs on the host, in the agent workspace', async () => {
    const result = await exec('pwd; cat AGENTS.md', MAIN);
    expect(text(result)).toBe(`${realpathSync(workspace)}\nagent workspace file\n`);
  });

  it('has no network: a server listening on the host loopback cannot be reached', async () => {
    const server: Server = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const probe = `node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>console.log('connected')).on('error',(e)=>console.log(e.code))"`;
      expect(text(await exec(probe, MAIN)).trim()).toBe('connected');
      expect(text(await exec(probe)).trim()).toBe('ECONNREFUSED');
    } finally {
      server.close();
    }
  });

  it('workspaceAccess "none": the sandbox has its own workspace under the state dir, shared by file tools and exec', async () => {
    const written = await invoke(
      kernel,
      'write',
      { path: 'notes/a.txt', content: 'from the write tool\n' },
      GROUP,
      workspace,
    );
    expect(written.result.isError).toBeFalsy();
    expect(text(await exec('cat /workspace/notes/a.txt; ls /workspace'))).toBe('from the write tool\nnotes\n');
    const route = resolveSandboxRoute(kernel.config.resolved, {
      agentId: 'main',
      sessionKey: GROUP,
      workspaceDir: workspace,
      stateDir: kernel.stateDir,
    });
    expect(route.spec!.workspaceRoot.startsWith(join(kernel.stateDir, 'sandboxes'))).toBe(true);
    expect(readFileSync(join(route.spec!.workspaceRoot, 'notes', 'a.txt'), 'utf8')).toBe('from the write tool\n');
    expect(existsSync(join(workspace, 'notes'))).toBe(false);
    // Absolute sandbox paths work for file tools too.
    expect(text((await invoke(kernel, 'read', { path: '/workspace/notes/a.txt' }, GROUP, workspace)).result)).toContain(
      'from the write tool',
    );
  });

  it('scope "session": two sessions get two sandboxes that cannot see each other', async () => {
    await exec('echo mine > /workspace/only-here', 'agent:main:telegram:group:1');
    expect(text(await exec('cat /workspace/only-here 2>&1 || echo missing', 'agent:main:telegram:group:2'))).toContain(
      'missing',
    );
    expect(text(await exec('cat /workspace/only-here', 'agent:main:telegram:group:1'))).toBe('mine\n');
  });

  it.each(EXEC_ESCAPES)('exec cannot escape: $name', async ({ command }) => {
    process.env.CLAW_HOST_SECRET = 'x';
    const result = await exec(command.replaceAll('{{host}}', host));
    expect(text(result)).not.toContain('ESCAPED');
  });

  it.each(FILE_ESCAPES)('file tools refuse %s', async (path) => {
    const result = (await invoke(kernel, 'read', { path }, GROUP, workspace)).result;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/outside the sandbox workspace/);
  });

  it('apply_patch cannot add or move a file out of the sandbox workspace', async () => {
    for (const input of [
      `*** Begin Patch\n*** Add File: ../../../../${host}/added\n+x\n*** End Patch`,
      `*** Begin Patch\n*** Add File: ${host}/added\n+x\n*** End Patch`,
    ]) {
      const result = (await invoke(kernel, 'apply_patch', { input }, GROUP, workspace)).result;
      expect(text(result)).toMatch(/outside the sandbox workspace/);
    }
    expect(existsSync(join(host, 'added'))).toBe(false);
  });

  it('file tools refuse a symbolic link planted in the workspace that leads out', async () => {
    await exec('ln -sfn / /workspace/rootlink && ln -sfn ' + host + ' /workspace/hostlink');
    for (const path of ['rootlink/etc/hostname', 'hostlink/secret']) {
      const result = (await invoke(kernel, 'read', { path }, GROUP, workspace)).result;
      expect(text(result)).toMatch(/through a symbolic link/);
    }
    const written = (await invoke(kernel, 'write', { path: 'hostlink/planted', content: 'x' }, GROUP, workspace))
      .result;
    expect(written.isError).toBe(true);
    expect(existsSync(join(host, 'planted'))).toBe(false);
  });

  it('the process tool of a sandboxed session neither sees nor signals host commands', async () => {
    const onHost = await invoke(kernel, 'exec', { command: 'sleep 20', background: true }, MAIN, workspace);
    const hostSession = (onHost.result.details as { sessionId: string }).sessionId;
    try {
      const listed = await invoke(kernel, 'process', { action: 'list' }, GROUP, workspace);
      expect(text(listed.result)).not.toContain(hostSession);
      const killed = await invoke(kernel, 'process', { action: 'kill', sessionId: hostSession }, GROUP, workspace);
      expect(text(killed.result)).toMatch(/no session/);
      expect(text((await invoke(kernel, 'process', { action: 'list' }, MAIN, workspace)).result)).toMatch(
        new RegExp(`${hostSession}  running`),
      );
    } finally {
      await invoke(kernel, 'process', { action: 'kill', sessionId: hostSession }, MAIN, workspace);
    }
  });

  it('a kill reaches everything the command started inside the sandbox', async () => {
    const marker = `sleep 31${Math.floor(Math.random() * 1000)}`;
    const started = await invoke(
      kernel,
      'exec',
      { command: `${marker} & ${marker} & wait`, background: true },
      GROUP,
      workspace,
    );
    const sessionId = (started.result.details as { sessionId: string }).sessionId;
    const count = () =>
      Number(
        execFileSync('sh', ['-c', `pgrep -fc "^${marker}$" || true`])
          .toString()
          .trim(),
      );
    // Both children are up once pgrep sees them; only then does the kill have two processes to reach.
    await waitFor(() => count() === 2, { what: `two "${marker}" processes` });
    const killed = await invoke(kernel, 'process', { action: 'kill', sessionId }, GROUP, workspace);
    expect(killed.result.isError).toBeFalsy();
    await waitFor(() => count() === 0, { intervalMs: 100, what: `every "${marker}" process to be gone` });
  });
});

describe('workspaceAccess', () => {
  it('"ro" mounts the agent workspace read-only: write tools and shell writes are refused, reads work', async () => {
    const kernel = await sandboxKernel({ mode: 'all', workspaceAccess: 'ro' });
    try {
      const workspace = tempDir('claw-agent-ws-');
      writeFileSync(join(workspace, 'README.md'), 'hello\n');
      const call = (name: string, params: Record<string, unknown>) =>
        invoke(kernel, name, params, MAIN, workspace).then((o) => o.result);
      expect(text(await call('read', { path: 'README.md' }))).toContain('hello');
      for (const [name, params] of [
        ['write', { path: 'new.txt', content: 'x' }],
        ['edit', { path: 'README.md', oldText: 'hello', newText: 'bye' }],
        ['apply_patch', { input: '*** Begin Patch\n*** Add File: p.txt\n+x\n*** End Patch' }],
      ] as const) {
        const result = await call(name, params);
        expect(result.isError, name).toBe(true);
        expect(text(result)).toMatch(/read-only \(workspaceAccess "ro"\)/);
      }
      expect(text(await call('exec', { command: 'cat README.md; touch /workspace/x 2>&1' }))).toMatch(
        /hello\n.*Read-only file system/s,
      );
      expect(readdirSync(workspace)).toEqual(['README.md']);
    } finally {
      await kernel.dispose();
    }
  });

  it('"rw" mounts the agent workspace at /workspace: what the sandbox writes lands there', async () => {
    const kernel = await sandboxKernel({ mode: 'all', workspaceAccess: 'rw' });
    try {
      const workspace = tempDir('claw-agent-ws-');
      await invoke(kernel, 'exec', { command: 'echo made-inside > /workspace/out.txt' }, MAIN, workspace);
      expect(readFileSync(join(workspace, 'out.txt'), 'utf8')).toBe('made-inside\n');
    } finally {
      await kernel.dispose();
    }
  });
});

describe('fail closed', () => {
  it('refuses exec and file tools when the bwrap binary is missing, and runs nothing on the host', async () => {
    const kernel = await sandboxKernel({ mode: 'all' }, '/nonexistent/bwrap');
    try {
      const workspace = tempDir('claw-agent-ws-');
      const marker = join(workspace, 'ran-on-host');
      for (const [name, params] of [
        ['exec', { command: `touch ${marker}` }],
        ['write', { path: marker, content: 'x' }],
        ['read', { path: 'x' }],
      ] as const) {
        const outcome = await invoke(kernel, name, params, MAIN, workspace);
        expect(outcome.result.isError, name).toBe(true);
        expect(text(outcome.result)).toMatch(
          /needs a sandbox .* bubblewrap is not installed at \/nonexistent\/bwrap.*nothing was run on the host/,
        );
      }
      expect(existsSync(marker)).toBe(false);
    } finally {
      await kernel.dispose();
    }
  });

  it('refuses when sandboxing is required but no backend holds the sandbox slot', async () => {
    for (const [slots, refusal] of [
      [{ sandbox: 'none' }, /no sandbox backend is configured \(plugins.slots.sandbox is "none"/],
      // Unset: the default holder (sandbox-docker), which is not installed in this kernel.
      [{}, /the sandbox backend "sandbox-docker" is not available/],
    ] as const) {
      const kernel = await createTestKernel({
        plugins: PLUGINS.slice(0, 4),
        config: { plugins: { slots }, agents: { defaults: { sandbox: { mode: 'non-main' } } } },
      });
      try {
        const outcome = await invoke(kernel, 'exec', { command: 'echo hi' }, GROUP, tempDir());
        expect(text(outcome.result)).toMatch(refusal);
        expect(text((await invoke(kernel, 'exec', { command: 'echo hi' }, MAIN, tempDir())).result)).toBe('hi\n');
      } finally {
        await kernel.dispose();
      }
    }
  });

  it('refuses a sandbox whose binds expose a protected host path', async () => {
    const kernel = await sandboxKernel({ mode: 'all', docker: { binds: ['/etc:/hostetc:ro'] } });
    try {
      const outcome = await invoke(kernel, 'exec', { command: 'ls /hostetc' }, MAIN, tempDir());
      expect(text(outcome.result)).toMatch(/sandbox bind "\/etc:\/hostetc:ro" is refused/);
    } finally {
      await kernel.dispose();
    }
  });

  it('refuses to mount an agent workspace that is a protected host path', async () => {
    const kernel = await sandboxKernel({ mode: 'all', workspaceAccess: 'rw' });
    try {
      const outcome = await invoke(kernel, 'exec', { command: 'ls' }, MAIN, '/etc');
      expect(text(outcome.result)).toMatch(/sandbox workspace "\/etc" is refused: \/etc is a protected host path/);
    } finally {
      await kernel.dispose();
    }
  });
});

describe('claw sandbox', () => {
  it('explain for a session that runs on the host checks no backend: no first-use install, no daemon probe', () => {
    // The default config: sandbox mode off, the Docker backend in the slot.
    const stateDir = tempDir('claw-explain-off-');
    const env = { ...process.env, OPENCLAW_STATE_DIR: stateDir, DOCKER_HOST: 'unix:///nonexistent/docker.sock' };
    const report = JSON.parse(execFileSync('node', [CLI, 'sandbox', 'explain', '--json'], { env }).toString());
    expect(report).toMatchObject({
      sandboxed: false,
      commandsRunOn: 'host',
      backend: { id: 'sandbox-docker', checked: false, reason: 'not checked: this session is not sandboxed' },
    });
    expect(existsSync(join(stateDir, 'runtime-deps'))).toBe(false);
  });

  it('explain, list and recreate: recreate removes the sandbox so the next command gets a new one', async () => {
    const stateDir = tempDir('claw-state-');
    const config = {
      plugins: { slots: { sandbox: 'sandbox-bwrap' } },
      agents: { defaults: { sandbox: { mode: 'non-main', scope: 'agent' } } },
    };
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config));
    const env = { ...process.env, OPENCLAW_STATE_DIR: stateDir, OPENCLAW_CONFIG_PATH: join(stateDir, 'openclaw.json') };
    const claw = (...args: string[]) =>
      JSON.parse(execFileSync('node', [CLI, 'sandbox', ...args, '--json'], { env }).toString());
    expect(claw('explain')).toMatchObject({ sessionKey: MAIN, sandboxed: false, commandsRunOn: 'host' });
    expect(claw('explain', '--session', 'telegram:group:42')).toMatchObject({
      sessionKey: GROUP,
      sandboxed: true,
      scopeKey: 'agent:main',
      commandsRunOn: 'sandbox (sandbox-bwrap)',
      workdir: '/workspace',
    });

    const kernel = await createTestKernel({ plugins: PLUGINS, config, stateDir });
    try {
      mkdirSync(join(stateDir, 'workspace'), { recursive: true });
      await invoke(kernel, 'exec', { command: 'true' }, GROUP, join(stateDir, 'workspace'));
      const [first] = claw('list').sandboxes;
      expect(first).toMatchObject({ backend: 'bwrap', scopeKey: 'agent:main', agentId: 'main' });
      expect(claw('recreate', '--agent', 'main')).toEqual({ removed: [first.id] });
      expect(claw('list').sandboxes).toEqual([]);
      await invoke(kernel, 'exec', { command: 'true' }, GROUP, join(stateDir, 'workspace'));
      const [second] = claw('list').sandboxes;
      expect(second.id).not.toBe(first.id);
    } finally {
      await kernel.dispose();
    }
  }, 90_000);
});
