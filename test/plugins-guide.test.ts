/**
 * PLUGINS.md's examples work as written: each `// <dir>/<file>` block is written to a
 * temporary folder and loaded the way a third-party plugin is (jiti, the SDK aliases).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createJiti } from 'jiti';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentService } from '../sdk/agent/index.js';
import type { PluginDefinition } from '../sdk/index.js';
import { readManifest } from '../kernel/index.js';
import { sdkAliases } from '../sdk/aliases.js';
import { useService } from '../sdk/services.js';
import { agentStackDirs, bundledPluginDir, createTestKernel, scriptedModel, type TestKernel } from '../sdk/testing.js';
import { REPO, tempDir } from './helpers.js';
import { until } from './agent-helpers.js';

const guide = readFileSync(join(REPO, 'PLUGINS.md'), 'utf8');
const root = tempDir('claw-guide-');
const kernels: TestKernel[] = [];
afterAll(async () => {
  for (const kernel of kernels) await kernel.dispose();
});

// Every fenced block whose first line names a file of a plugin folder.
for (const match of guide.matchAll(/```(?:json5|ts)\n\/\/ ([\w-]+)\/(openclaw\.plugin\.json|index\.ts)\n([\s\S]*?)```/g)) {
  mkdirSync(join(root, match[1]!), { recursive: true });
  writeFileSync(join(root, match[1]!, match[2]!), match[3]!);
}
const dir = (id: string) => join(root, id);

async function boot(options: Parameters<typeof createTestKernel>[0]): Promise<TestKernel> {
  const kernel = await createTestKernel(options);
  kernels.push(kernel);
  return kernel;
}

describe('PLUGINS.md examples', () => {
  it('has one of each kind, with a valid manifest', () => {
    for (const id of ['hello-tool', 'polite', 'echo-room', 'memory-grep', 'tiny-loop']) {
      const manifest = readManifest(dir(id));
      expect(manifest.ok, `${id}: ${JSON.stringify(manifest)}`).toBe(true);
    }
  });

  it('a tool', async () => {
    const kernel = await boot({ plugins: [dir('hello-tool')], config: { plugins: { entries: { 'hello-tool': { config: { greeting: 'Hi' } } } } } });
    const outcome = await kernel.plugins.kernelServices.tools.invoke({ name: 'hello', params: { name: 'Ada' }, toolCallId: 't1', context: {} });
    expect(outcome.result.content).toEqual([{ type: 'text', text: 'Hi, Ada!' }]);
  });

  it('a hook', async () => {
    const kernel = await boot({ plugins: [bundledPluginDir('channels'), dir('polite')] });
    const sent: string[] = [];
    const transport = async (message: { text?: string }) => void sent.push(message.text ?? '');
    const ok = await kernel.plugins.kernelServices.channels.send({ channel: 'cli', to: 'me', text: 'hello', transport });
    const cancelled = await kernel.plugins.kernelServices.channels.send({ channel: 'cli', to: 'me', text: 'damn it', transport });
    expect(ok.delivered).toBe(true);
    expect(cancelled.cancelled).toBe(true);
    expect(sent).toEqual(['hello 🙂']);
  });

  it('a channel', async () => {
    const jiti = createJiti(import.meta.url, { alias: sdkAliases() });
    const module = (await jiti.import(join(dir('echo-room'), 'index.ts'))) as { default: PluginDefinition; room: { contexts: Array<{ receive(message: unknown): Promise<unknown> }>; sent: Array<{ to: string; text?: string }> } };
    const kernel = await boot({
      plugins: [...agentStackDirs(), module.default, scriptedModel(() => 'pong')],
      config: { agents: { defaults: { model: 'scripted/x' } }, channels: { 'echo-room': { dmPolicy: 'allowlist', allowFrom: ['u1'] } } },
    });
    await kernel.start();
    expect(module.room.contexts).toHaveLength(1);
    await module.room.contexts[0]!.receive({ accountId: 'default', peer: { kind: 'direct', id: 'u1' }, sender: { id: 'u1' }, text: 'ping', messageId: 'm1' });
    await until(() => module.room.sent.length > 0, 5000, 'the reply');
    expect(module.room.sent[0]).toMatchObject({ to: 'u1', text: 'pong' });
  });

  it('a memory backend', async () => {
    const kernel = await boot({ plugins: [dir('memory-grep')], config: { plugins: { slots: { memory: 'memory-grep' } } } });
    mkdirSync(kernel.paths.workspaceDir, { recursive: true });
    writeFileSync(join(kernel.paths.workspaceDir, 'MEMORY.md'), '# Notes\nThe offsite is in Lisbon.\nBudget: 12k.\n');
    const outcome = await kernel.plugins.kernelServices.tools.invoke({ name: 'memory_search', params: { query: 'lisbon' }, toolCallId: 't1', context: { agentId: 'main' } });
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
});
