/**
 * The MCP runtime's parts in process: the kernel's runtime tool namespace (a manifest glob,
 * registerTool's disposer), the stdio env safety filter, and the runtime against real
 * servers — resources and prompts as tools, toolFilter, profiles, list_changed, config changes.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { blockedEnvReason, serverEnvironment } from '../plugins/mcp/env-filter.js';
import { resolveServer, toolFilter } from '../plugins/mcp/config.js';
import { EMPTY_SCHEMA, REPO, tempDir, writePlugin } from './helpers.js';

const EVERYTHING = join(REPO, '.cache', 'mcp-servers', 'node_modules', '@modelcontextprotocol', 'server-everything');
const everything = {
  command: process.execPath,
  args: [join(EVERYTHING, 'dist', 'index.js'), 'stdio'],
  codex: { defaultToolsApprovalMode: 'approve' },
};
const crashy = {
  command: process.execPath,
  args: [join(REPO, 'test', 'fixtures', 'mcp-crash-server.mjs')],
  codex: { defaultToolsApprovalMode: 'approve' },
};

const kernels: TestKernel[] = [];
afterEach(async () => {
  for (const kernel of kernels.splice(0)) await kernel.dispose();
});

async function mcpKernel(config: Record<string, unknown>): Promise<TestKernel> {
  if (!existsSync(EVERYTHING)) throw new Error('run node scripts/install-mcp-servers.mjs first (npm test does)');
  const kernel = await createTestKernel({ plugins: [join(REPO, 'plugins', 'mcp')], config, env: process.env });
  kernels.push(kernel);
  await kernel.start();
  return kernel;
}

const startTurn = (kernel: TestKernel, agentId = 'main') =>
  kernel.hooks.runModifying('before_agent_start', { prompt: 'go' }, { agentId, sessionKey: `agent:${agentId}:main` });

const toolNames = (kernel: TestKernel, prefix: string) =>
  kernel.capabilities
    .list('tool')
    .map((tool) => tool.name)
    .filter((name) => name.startsWith(prefix));

const text = (result: { content: Array<{ type: string; text?: string }> }) =>
  result.content.map((part) => part.text ?? '').join('\n');

describe('the kernel: a runtime tool namespace', () => {
  it('a manifest glob admits matching names only, is not listed itself, and a disposer removes only its own registration', async () => {
    const dir = writePlugin(join(tempDir('claw-glob-'), 'ns'), {
      manifest: { id: 'ns', entry: './index.js', tools: ['ns__*'], configSchema: EMPTY_SCHEMA },
      code: `export default { register(api) {
        const tool = (text) => ({ name: 'ns__one', description: 'one', parameters: { type: 'object' },
          execute: () => ({ content: [{ type: 'text', text }] }) });
        const first = api.registerTool(tool('first'));
        first();
        const second = api.registerTool(tool('second'));
        first();
        globalThis.__nsSecond = second;
        try { api.registerTool({ ...tool('x'), name: 'other' }); } catch (error) { globalThis.__nsRefused = error.message; }
      } };`,
    });
    const kernel = await createTestKernel({ plugins: [dir] });
    kernels.push(kernel);
    expect(kernel.capabilities.list('tool').map((tool) => tool.name)).not.toContain('ns__*');
    await kernel.plugins.activate('ns');
    const g = globalThis as { __nsSecond?: () => void; __nsRefused?: string };
    expect(g.__nsRefused).toMatch(/tool "other" is not declared in the manifest "tools" list/);
    // The stale disposer of the first registration left the second in place.
    expect(text(await kernel.runTool('ns__one'))).toBe('second');
    g.__nsSecond!();
    expect(text(await kernel.runTool('ns__one'))).toMatch(/Unknown tool "ns__one"/);
  });
});

describe('stdio env safety filter', () => {
  it('drops interpreter start-up and loader variables, keeps credentials, and hands over only a minimal host env', () => {
    for (const name of [
      'NODE_OPTIONS',
      'PYTHONSTARTUP',
      'LD_PRELOAD',
      'DYLD_INSERT_LIBRARIES',
      'BASH_FUNC_x%%',
      'PERL5OPT',
    ])
      expect(blockedEnvReason(name), name).toBeDefined();
    for (const name of ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'DATABASE_URL', 'BRAVE_API_KEY', 'HTTP_PROXY'])
      expect(blockedEnvReason(name), name).toBeUndefined();
    expect(blockedEnvReason('AWS_CONFIG_FILE')).toBeDefined();
    const { env, dropped } = serverEnvironment(
      { NODE_OPTIONS: '--require /tmp/x.js', GITHUB_TOKEN: 'ghp_x' },
      { PATH: '/usr/bin', HOME: '/home/u', OPENAI_API_KEY: 'sk-gateway' },
    );
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/u', GITHUB_TOKEN: 'ghp_x' });
    expect(dropped.map((item) => item.name)).toEqual(['NODE_OPTIONS']);
  });
});

describe('server config', () => {
  it('resolves transports as OpenClaw (url alone is SSE) and names what is wrong', () => {
    expect(resolveServer('a', { url: 'http://127.0.0.1:1/sse' })).toMatchObject({ transport: 'sse' });
    expect(resolveServer('a', { command: 'x', workingDirectory: '/tmp' })).toMatchObject({
      transport: 'stdio',
      cwd: '/tmp',
    });
    expect(() => resolveServer('a', { command: 'x', url: 'http://h' })).toThrow(/both command and url/);
    expect(() => resolveServer('a__b', { command: 'x' })).toThrow(/may not contain "__"/);
    expect(() => resolveServer('a', {})).toThrow(/needs a command \(stdio\) or a url/);
    const filter = toolFilter({ include: ['get-*', 'echo'], exclude: ['get-env'] });
    expect(['echo', 'get-sum', 'get-env', 'add'].filter(filter)).toEqual(['echo', 'get-sum']);
  });

  it('the config schema refuses keys claw does not implement and bad server names', async () => {
    const dir = tempDir('claw-mcp-cfg-');
    const bad = { servers: { docs: { url: 'https://x.example/mcp', auth: 'oauth' }, a__b: { command: 'x' } } };
    const kernel = await createTestKernel({
      plugins: [join(REPO, 'plugins', 'mcp')],
      config: { mcp: bad },
      stateDir: dir,
    });
    kernels.push(kernel);
    const issues = JSON.stringify(kernel.issues());
    expect(issues).toContain('mcp.servers.docs.auth');
    expect(issues).toMatch(/a__b/);
  });
});

describe('the runtime against real servers', () => {
  it('resources and prompts become tools; toolFilter narrows the server tools', async () => {
    const kernel = await mcpKernel({
      mcp: { servers: { everything: { ...everything, toolFilter: { exclude: ['get-*', 'trigger-*'] } } } },
    });
    await startTurn(kernel);
    const names = toolNames(kernel, 'everything__');
    expect(names).toEqual(
      expect.arrayContaining([
        'everything__echo',
        'everything__resources_list',
        'everything__resources_read',
        'everything__prompts_list',
        'everything__prompts_get',
      ]),
    );
    expect(names.some((name) => name.startsWith('everything__get-'))).toBe(false);
    const listed = JSON.parse(text(await kernel.runTool('everything__resources_list')));
    expect(listed.resources.length).toBeGreaterThan(0);
    const uri = listed.resources[0].uri as string;
    const read = await kernel.runTool('everything__resources_read', { uri });
    expect(read.isError).not.toBe(true);
    const prompts = JSON.parse(text(await kernel.runTool('everything__prompts_list')));
    const simple = prompts.prompts.find((prompt: { arguments?: unknown[] }) => !prompt.arguments?.length);
    const got = JSON.parse(text(await kernel.runTool('everything__prompts_get', { name: simple.name })));
    expect(got.messages.length).toBeGreaterThan(0);
  });

  it('the minimal profile hides MCP tools, so the server never starts; codex.agents narrows by agent', async () => {
    const minimal = await mcpKernel({ tools: { profile: 'minimal' }, mcp: { servers: { everything } } });
    await startTurn(minimal);
    expect(toolNames(minimal, 'everything__')).toEqual([]);
    const service = (await minimal.capabilities.get('service', 'mcp')).api as { status(): Array<{ state: string }> };
    expect(service.status()[0]!.state).toBe('idle');
    const narrowed = await mcpKernel({
      mcp: { servers: { everything: { ...everything, codex: { agents: ['ops'] } } } },
    });
    await startTurn(narrowed, 'main');
    expect(toolNames(narrowed, 'everything__')).toEqual([]);
  });

  it('tools/list_changed adds the new tool; a config change retires the server and its tools', async () => {
    const kernel = await mcpKernel({ mcp: { servers: { crashy } } });
    await startTurn(kernel);
    expect(toolNames(kernel, 'crashy__')).not.toContain('crashy__extra');
    expect(text(await kernel.runTool('crashy__grow'))).toBe('grown');
    await expect.poll(() => toolNames(kernel, 'crashy__'), { timeout: 10_000 }).toContain('crashy__extra');
    expect(text(await kernel.runTool('crashy__extra'))).toBe('extra here');
    const before = text(await kernel.runTool('crashy__pid'));
    const configFile = kernel.plugins.kernelServices.configFile;
    const snapshot = configFile.read();
    const changed = { mcp: { servers: { crashy: { ...crashy, requestTimeoutMs: 5000 } } } };
    configFile.use({ ...snapshot, raw: changed, resolved: changed as never });
    await startTurn(kernel);
    // Restarted from the new entry: a new process, and the run-time tool is gone with the old one.
    expect(text(await kernel.runTool('crashy__pid'))).not.toBe(before);
    expect(toolNames(kernel, 'crashy__')).not.toContain('crashy__extra');
    configFile.use({ ...snapshot, raw: {}, resolved: {} as never });
    await startTurn(kernel);
    expect(toolNames(kernel, 'crashy__')).toEqual([]);
  });
});

describe('sandbox routing', () => {
  it('a sandboxed session gets its own instance of a stdio server, spawned inside its bubblewrap sandbox', async () => {
    const root = tempDir('claw-mcp-sbx-');
    const workspace = join(root, 'workspace');
    mkdirSync(workspace);
    copyFileSync(join(REPO, 'test', 'fixtures', 'mcp-where-server.mjs'), join(workspace, 'where.mjs'));
    const marker = join(root, 'host-only.txt');
    writeFileSync(marker, 'on the host');
    const where = { command: 'node', args: ['where.mjs', marker], codex: { defaultToolsApprovalMode: 'approve' } };
    const kernel = await createTestKernel({
      plugins: [join(REPO, 'plugins', 'mcp'), join(REPO, 'plugins', 'sandbox-bwrap')],
      env: process.env,
      config: {
        plugins: { slots: { sandbox: 'sandbox-bwrap' } },
        agents: {
          defaults: {
            workspace,
            sandbox: { mode: 'non-main', scope: 'session', workspaceAccess: 'rw', workspaceRoot: join(root, 'sbx') },
          },
        },
        mcp: { servers: { where } },
      },
    });
    kernels.push(kernel);
    await kernel.start();
    await startTurn(kernel);
    const main = JSON.parse(
      text(await kernel.runTool('where__where', {}, { agentId: 'main', sessionKey: 'agent:main:main' })),
    );
    expect(main.markerVisible).toBe(true);
    const sandboxed = await kernel.runTool('where__where', {}, { agentId: 'main', sessionKey: 'agent:main:other' });
    expect(sandboxed.isError, text(sandboxed)).not.toBe(true);
    expect(JSON.parse(text(sandboxed)).markerVisible).toBe(false);
    const service = (await kernel.capabilities.get('service', 'mcp')).api as {
      status(): Array<{ sandboxInstances: number; state: string }>;
    };
    expect(service.status()[0]).toMatchObject({ state: 'connected', sandboxInstances: 1 });
  });
});
