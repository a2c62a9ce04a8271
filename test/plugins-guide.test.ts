/**
 * PLUGINS.md's examples work as written: each `// <dir>/<file>` block is written to a
 * temporary folder and loaded the way a third-party plugin is (jiti, the SDK aliases), the
 * CLI command by the built `claw` from an extensions folder.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createJiti } from 'jiti';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentService } from '../sdk/agent/index.js';
import type { PluginDefinition, ToolResult } from '../sdk/index.js';
import { readManifest } from '../host/manifest.js';
import { sdkAliases } from '../sdk/aliases.js';
import { useService } from '../sdk/services.js';
import { agentStackDirs, bundledPluginDir, createTestKernel, scriptedModel, type TestKernel } from '../sdk/testing.js';
import { claw, REPO, tempDir } from './helpers.js';
import { until } from './agent-helpers.js';

const guide = readFileSync(join(REPO, 'PLUGINS.md'), 'utf8');
const root = tempDir('claw-guide-');
const kernels: TestKernel[] = [];
afterAll(async () => {
  for (const kernel of kernels) await kernel.dispose();
});

// Every fenced block whose first line names a file of a plugin folder.
for (const match of guide.matchAll(
  /```(?:json5|ts)\n\/\/ ([\w-]+)\/(openclaw\.plugin\.json|index\.ts)\n([\s\S]*?)```/g,
)) {
  mkdirSync(join(root, match[1]!), { recursive: true });
  writeFileSync(join(root, match[1]!, match[2]!), match[3]!);
}
const dir = (id: string) => join(root, id);

const text = (result: ToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

async function boot(options: Parameters<typeof createTestKernel>[0]): Promise<TestKernel> {
  const kernel = await createTestKernel(options);
  kernels.push(kernel);
  return kernel;
}

describe('PLUGINS.md examples', () => {
  it('has one of each kind, with a valid manifest', () => {
    for (const id of [
      'hello-tool',
      'polite',
      'echo-room',
      'memory-grep',
      'tiny-loop',
      'tiny-search',
      'dir-sandbox',
      'notes-cli',
    ]) {
      const manifest = readManifest(dir(id));
      expect(manifest.ok, `${id}: ${JSON.stringify(manifest)}`).toBe(true);
    }
  });

  it('a tool', async () => {
    const kernel = await boot({
      plugins: [dir('hello-tool')],
      config: { plugins: { entries: { 'hello-tool': { config: { greeting: 'Hi' } } } } },
    });
    const outcome = await kernel.plugins.kernelServices.tools.invoke({
      name: 'hello',
      params: { name: 'Ada' },
      toolCallId: 't1',
      context: {},
    });
    expect(outcome.result.content).toEqual([{ type: 'text', text: 'Hi, Ada!' }]);
  });

  it('a hook', async () => {
    const kernel = await boot({ plugins: [bundledPluginDir('channels'), dir('polite')] });
    const sent: string[] = [];
    const transport = async (message: { text?: string }) => void sent.push(message.text ?? '');
    const ok = await kernel.plugins.kernelServices.channels.send({
      channel: 'cli',
      to: 'me',
      text: 'hello',
      transport,
    });
    const cancelled = await kernel.plugins.kernelServices.channels.send({
      channel: 'cli',
      to: 'me',
      text: 'damn it',
      transport,
    });
    expect(ok.delivered).toBe(true);
    expect(cancelled.cancelled).toBe(true);
    expect(sent).toEqual(['hello 🙂']);
  });

  it('a channel', async () => {
    const jiti = createJiti(import.meta.url, { alias: sdkAliases() });
    const module = (await jiti.import(join(dir('echo-room'), 'index.ts'))) as {
      default: PluginDefinition;
      room: {
        contexts: Array<{ receive(message: unknown): Promise<unknown> }>;
        sent: Array<{ to: string; text?: string }>;
      };
    };
    const kernel = await boot({
      plugins: [...agentStackDirs(), module.default, scriptedModel(() => 'pong')],
      config: {
        agents: { defaults: { model: 'scripted/x' } },
        channels: { 'echo-room': { dmPolicy: 'allowlist', allowFrom: ['u1'] } },
      },
    });
    await kernel.start();
    expect(module.room.contexts).toHaveLength(1);
    await module.room.contexts[0]!.receive({
      accountId: 'default',
      peer: { kind: 'direct', id: 'u1' },
      sender: { id: 'u1' },
      text: 'ping',
      messageId: 'm1',
    });
    await until(() => module.room.sent.length > 0, 5000, 'the reply');
    expect(module.room.sent[0]).toMatchObject({ to: 'u1', text: 'pong' });
  });

  it('a memory backend', async () => {
    const kernel = await boot({
      plugins: [dir('memory-grep'), bundledPluginDir('memory-core')],
      config: { plugins: { slots: { memory: 'memory-grep' } } },
    });
    mkdirSync(kernel.paths.workspaceDir, { recursive: true });
    writeFileSync(join(kernel.paths.workspaceDir, 'MEMORY.md'), '# Notes\nThe offsite is in Lisbon.\nBudget: 12k.\n');
    const outcome = await kernel.plugins.kernelServices.tools.invoke({
      name: 'memory_search',
      params: { query: 'lisbon' },
      toolCallId: 't1',
      context: { agentId: 'main' },
    });
    expect(outcome.result.isError, JSON.stringify(outcome.result)).toBeFalsy();
    expect(JSON.stringify(outcome.result.details)).toContain('The offsite is in Lisbon.');
  });

  it('an agent loop', async () => {
    const kernel = await boot({
      plugins: [...agentStackDirs(), dir('tiny-loop'), scriptedModel(() => 'tiny answer')],
      config: { agents: { defaults: { model: 'scripted/x' } }, plugins: { slots: { agentLoop: 'tiny-loop' } } },
    });
    const agent = await useService<AgentService>(kernel, 'agent');
    const result = await agent!.run({ sessionKey: 'agent:main:main', message: 'hi' });
    expect(result).toMatchObject({ status: 'ok', text: 'tiny answer' });
    expect(kernel.plugins.get('tiny-loop')!.status).toBe('active');
  });

  it('examples import only what package.json exports', () => {
    const exported = Object.keys(
      (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { exports: Record<string, string> }).exports,
    );
    const specs = [...guide.matchAll(/from '@claw-assistant\/claw\/([^']+)'/g)].map((match) => `./${match[1]}`);
    expect(specs.filter((spec) => !exported.includes(spec))).toEqual([]);
    for (const entry of ['./sdk/web-search', './sdk/cli']) expect(specs).toContain(entry);
  });

  it('a web search provider', async () => {
    const queries: string[] = [];
    const server = createServer((request, response) => {
      const url = new URL(request.url!, 'http://x');
      queries.push(url.searchParams.get('q')!);
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          hits: [
            { title: 'Claw', link: 'https://claw.example/', text: 'a <b>plugin</b> kernel' },
            { title: 'bad', link: 'javascript:alert(1)' },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const kernel = await boot({
        plugins: [bundledPluginDir('web-search'), dir('tiny-search')],
        config: {
          tools: { web: { search: { provider: 'tiny-search' } } },
          plugins: { entries: { 'tiny-search': { config: { baseUrl } } } },
        },
      });
      const result = await kernel.runTool('web_search', { query: 'microkernel plugins' });
      expect(result.isError, text(result)).toBeFalsy();
      expect(queries).toEqual(['microkernel plugins']);
      expect(result.details).toMatchObject({
        provider: 'tiny-search',
        count: 1,
        results: [{ title: 'Claw', url: 'https://claw.example/', snippet: 'a <b>plugin</b> kernel' }],
      });
      expect(text(result)).toContain('EXTERNAL_UNTRUSTED_CONTENT');
      // Unconfigured, the provider says what is missing.
      const unset = await boot({
        plugins: [bundledPluginDir('web-search'), dir('tiny-search')],
        config: { tools: { web: { search: { provider: 'tiny-search' } } } },
      });
      expect(text(await unset.runTool('web_search', { query: 'x' }))).toMatch(
        /Tiny Search is not set up: set plugins\.entries\.tiny-search\.config\.baseUrl/,
      );
    } finally {
      server.close();
    }
  });

  it('a sandbox backend', async () => {
    const sandboxed = (sandbox: Record<string, unknown>) =>
      boot({
        plugins: [bundledPluginDir('tools-exec'), bundledPluginDir('exec-approvals'), dir('dir-sandbox')],
        config: {
          plugins: { slots: { sandbox: 'dir-sandbox' } },
          agents: { defaults: { sandbox: { mode: 'all', ...sandbox } } },
        },
      });
    const workspaceDir = tempDir('claw-guide-ws-');
    const exec = (kernel: TestKernel, command: string) =>
      kernel.plugins.kernelServices.tools.invoke({
        name: 'exec',
        params: { command },
        toolCallId: 't1',
        context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir },
      });
    process.env.CLAW_GUIDE_SECRET = 'host-only';
    try {
      const kernel = await sandboxed({ docker: { network: 'host', readOnlyRoot: false } });
      const outcome = await exec(kernel, 'pwd; echo "secret=$CLAW_GUIDE_SECRET"; echo hi > note.txt');
      expect(outcome.result.isError, text(outcome.result)).toBeFalsy();
      const [pwd, secret] = text(outcome.result).split('\n');
      // workspaceAccess "none": the sandbox's own directory under the state dir, not the agent's workspace.
      expect(pwd).toMatch(new RegExp(`^${kernel.paths.stateDir}/sandboxes/`));
      expect(secret).toBe('secret=');
      expect(readFileSync(join(pwd!, 'note.txt'), 'utf8')).toBe('hi\n');
      expect(existsSync(join(workspaceDir, 'note.txt'))).toBe(false);
      // What it cannot enforce (the default: no network, a read-only root) it refuses; nothing runs on the host.
      const strict = await sandboxed({});
      const refused = await exec(strict, 'echo ran > ran.txt');
      expect(refused.result.isError).toBe(true);
      expect(text(refused.result)).toMatch(/dir-sandbox cannot enforce network "none", a read-only root/);
      expect(existsSync(join(workspaceDir, 'ran.txt'))).toBe(false);
    } finally {
      delete process.env.CLAW_GUIDE_SECRET;
    }
  });

  it('a command for claw (run by the built CLI from an extensions folder)', async () => {
    const stateDir = tempDir('claw-guide-state-');
    cpSync(dir('notes-cli'), join(stateDir, 'extensions', 'notes-cli'), { recursive: true });
    const env = { OPENCLAW_STATE_DIR: stateDir, OPENCLAW_CONFIG_PATH: join(stateDir, 'openclaw.json') };
    const added = await claw(['notes', 'add', 'buy', 'milk'], env);
    expect(added.code, added.stderr).toBe(0);
    expect(await claw(['notes', 'add', 'call Ada'], env)).toMatchObject({ code: 0 });
    expect(await claw(['notes', 'list'], env)).toMatchObject({ code: 0, stdout: '- buy milk\n- call Ada\n' });
    expect(JSON.parse((await claw(['notes', 'list', '--json'], env)).stdout)).toEqual({
      notes: ['buy milk', 'call Ada'],
    });
    expect(await claw(['notes', 'frobnicate'], env)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('claw: Usage: claw notes add'),
    });
    expect((await claw(['--help'], env)).stdout).toMatch(/ {2}notes\s+Keep short notes \(notes-cli\)\n/);
  }, 60_000);
});
