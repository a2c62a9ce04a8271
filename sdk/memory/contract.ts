/**
 * The memory backend contract, as a vitest suite every memory plugin runs:
 *
 *   memoryContractSuite({ name: 'memory-x', plugin: '/path/to/plugins/memory-x', backend: 'x', config });
 *
 * It boots a kernel with just that plugin (holding the memory slot) and memory-core, which
 * serves every backend built with defineMemoryPlugin, writes a small
 * labelled corpus into the workspace, and checks: indexing, relevance on labelled queries
 * (English, Chinese, Japanese), the result shape, delta indexing, removal, the tools through
 * the kernel's one tool-call path, memory_get's path rules, and switching the slot through
 * config. Only imported by tests (it imports vitest).
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../kernel/index.js';
import type { MemoryBackend, MemorySearchResult } from '../types/memory.js';
import type { PluginDefinition } from '../types/plugin.js';
import { definePlugin } from '../index.js';
import { bundledPluginDir, createTestKernel, type TestKernel } from '../testing.js';

export interface MemoryContractTarget {
  /** Plugin id (also the describe() title). */
  name: string;
  /** The plugin: its directory, or a definition. */
  plugin: string | PluginDefinition;
  /** What results and status report as `backend`. */
  backend: string;
  /** openclaw.json for the kernel (merged with the slot setting). */
  config?: () => Record<string, unknown>;
  /** Extra plugins the backend needs besides memory-core (none for most). */
  plugins?: Array<string | PluginDefinition>;
  env?: Record<string, string | undefined>;
}

/** A labelled corpus: each query's answer is in exactly one file. */
export const CONTRACT_CORPUS: Record<string, string> = {
  'MEMORY.md': [
    '# Long-term memory',
    '',
    '## Preferences',
    '- The user prefers dark roast coffee from Ethiopia, brewed in a French press.',
    '- Meetings never before 10:00; the user is not a morning person.',
    '',
    '## People',
    '- Alice Moreau is the finance lead; she owns the quarterly budget.',
  ].join('\n'),
  'memory/2026-11-01.md': [
    '# 2026-11-01',
    '',
    '- Met Alice about the Q3 budget. Decision: cut conference travel by 20 percent.',
    '- Follow up on the invoice from the printing vendor next week.',
  ].join('\n'),
  'memory/2026-11-02.md': [
    '# 2026-11-02',
    '',
    '- Fixed the flaky websocket reconnect bug in the gateway: the backoff timer was never cleared.',
    '- Ticket OPS-4711 closed.',
  ].join('\n'),
  'memory/2026-11-03.md': ['# 2026-11-03', '', '今天和田中先生讨论了记忆系统的设计，决定使用混合检索。'].join('\n'),
  'memory/2026-11-04.md': [
    '# 2026-11-04',
    '',
    '東京で新しいプロジェクトを始めました。来週、大阪のチームと打ち合わせ。',
  ].join('\n'),
  'memory/projects/garden.md': [
    '# Garden',
    '',
    'Planted tomatoes, basil and chili peppers on the balcony in May.',
    'Water every second evening.',
  ].join('\n'),
  'memory/projects/reading.md': [
    '# Reading list',
    '',
    'Finished "The Dispossessed" by Ursula K. Le Guin; next up is a history of cartography.',
  ].join('\n'),
};

/** query → the file that answers it. */
export const CONTRACT_QUERIES: Array<[query: string, expected: string]> = [
  ['coffee preference Ethiopia', 'MEMORY.md'],
  ['Alice budget travel decision', 'memory/2026-11-01.md'],
  ['websocket reconnect bug', 'memory/2026-11-02.md'],
  ['OPS-4711', 'memory/2026-11-02.md'],
  ['记忆系统', 'memory/2026-11-03.md'],
  ['プロジェクト', 'memory/2026-11-04.md'],
  ['tomatoes basil balcony', 'memory/projects/garden.md'],
];

/** The target's config with the memory slot given to `holder` (other plugin settings kept). */
function withSlot(config: Record<string, unknown> | undefined, holder: string): Record<string, unknown> {
  const plugins = (config?.plugins ?? {}) as Record<string, unknown>;
  return {
    ...config,
    plugins: { ...plugins, slots: { ...(plugins.slots as Record<string, unknown> | undefined), memory: holder } },
  };
}

function writeCorpus(workspace: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(workspace, name, '..'), { recursive: true });
    writeFileSync(join(workspace, name), `${text}\n`);
  }
}

/** Another memory plugin, to show the slot switching between holders. */
const otherMemory = definePlugin({
  id: 'memory-contract-other',
  register(api) {
    api.registerMemory({
      search: async () => ({ results: [], backend: 'other', mode: 'keyword' }),
      get: async (path) => ({ path, text: '', from: 1, lines: 0, totalLines: 0 }),
      status: () => ({ backend: 'other' }),
    });
  },
});

export function memoryContractSuite(target: MemoryContractTarget): void {
  describe(`memory contract: ${target.name}`, () => {
    let kernel: TestKernel;
    let memory: MemoryBackend;
    let workspace: string;
    const call = async (name: string, params: Record<string, unknown>): Promise<ToolResult & { isError?: boolean }> =>
      (
        await kernel.plugins.kernelServices.tools.invoke({
          name,
          params,
          toolCallId: `t-${name}`,
          context: { agentId: 'main', workspaceDir: workspace },
        })
      ).result;
    const search = (
      query: string,
      options: { maxResults?: number; minScore?: number } = {},
    ): Promise<MemorySearchResult> => memory.search(query, { agentId: 'main', ...options });

    beforeAll(async () => {
      kernel = await createTestKernel({
        plugins: [target.plugin, bundledPluginDir('memory-core'), ...(target.plugins ?? [])],
        config: withSlot(target.config?.(), target.name),
        env: target.env,
      });
      workspace = kernel.paths.workspaceDir;
      writeCorpus(workspace, CONTRACT_CORPUS);
      writeFileSync(join(kernel.stateDir, 'secret.md'), 'TOP SECRET outside the workspace\n');
      writeFileSync(join(workspace, 'notes.md'), 'Not a memory file.\n');
      const holder = await kernel.capabilities.slot('memory');
      if (!holder) throw new Error(`${target.name} did not register a memory backend`);
      memory = holder;
    });
    afterAll(async () => {
      await kernel?.dispose();
    });

    it('indexes every memory file and reports it in status', async () => {
      const stats = await memory.sync!({ agentId: 'main', force: true });
      expect(stats.files).toBe(Object.keys(CONTRACT_CORPUS).length);
      expect(stats.indexed).toBe(stats.files);
      expect(stats.chunks).toBeGreaterThanOrEqual(stats.files);
      const status = await memory.status({ agentId: 'main' });
      expect(status).toMatchObject({ backend: target.backend });
    });

    it.each(CONTRACT_QUERIES)('finds the answer to %j', async (query, expected) => {
      const result = await search(query);
      const paths = result.results.map((hit) => hit.path);
      expect(paths.slice(0, 3), `${query} → ${JSON.stringify(result)}`).toContain(expected);
    });

    it('returns results in the shared shape', async () => {
      const result = await search('Alice budget');
      expect(result.backend).toBe(target.backend);
      expect(['hybrid', 'keyword', 'vector']).toContain(result.mode);
      expect(result.results.length).toBeGreaterThan(0);
      for (const hit of result.results) {
        expect(hit.startLine).toBeGreaterThanOrEqual(1);
        expect(hit.endLine).toBeGreaterThanOrEqual(hit.startLine);
        expect(hit.score).toBeGreaterThan(0);
        expect(hit.score).toBeLessThanOrEqual(1);
        expect(hit.snippet.length).toBeLessThanOrEqual(700);
      }
      const sorted = [...result.results].sort((a, b) => b.score - a.score);
      expect(result.results).toEqual(sorted);
      expect((await search('Alice budget', { maxResults: 1 })).results.length).toBeLessThanOrEqual(1);
    });

    it('skips unchanged files, re-indexes a changed one, and forgets a removed one', async () => {
      const again = await memory.sync!({ agentId: 'main' });
      expect(again).toMatchObject({ indexed: 0, skipped: Object.keys(CONTRACT_CORPUS).length, rebuilt: false });
      writeFileSync(
        join(workspace, 'memory', 'projects', 'garden.md'),
        '# Garden\n\nThe zucchini plants got powdery mildew; sprayed milk solution.\n',
      );
      const changed = await memory.sync!({ agentId: 'main' });
      expect(changed).toMatchObject({ indexed: 1 });
      expect((await search('zucchini mildew')).results.map((hit) => hit.path)).toContain('memory/projects/garden.md');
      rmSync(join(workspace, 'memory', 'projects', 'reading.md'));
      const removed = await memory.sync!({ agentId: 'main' });
      expect(removed.removed).toBe(1);
      expect((await search('Dispossessed Le Guin')).results.map((hit) => hit.path)).not.toContain(
        'memory/projects/reading.md',
      );
    });

    it('memory_search works through the kernel tool path', async () => {
      const result = await call('memory_search', { query: 'websocket reconnect bug' });
      expect(result.isError).not.toBe(true);
      const payload = JSON.parse((result.content[0] as { text: string }).text) as MemorySearchResult;
      expect(payload.backend).toBe(target.backend);
      expect(payload.results[0]).toMatchObject({
        path: 'memory/2026-11-02.md',
        startLine: expect.any(Number),
        endLine: expect.any(Number),
        score: expect.any(Number),
        snippet: expect.any(String),
      });
    });

    it('memory_get reads a slice of a memory file', async () => {
      const whole = await call('memory_get', { path: 'MEMORY.md' });
      expect((whole.content[0] as { text: string }).text).toContain('dark roast coffee');
      const slice = await call('memory_get', { path: 'MEMORY.md', from: 4, lines: 2 });
      expect((slice.content[0] as { text: string }).text).toBe(
        CONTRACT_CORPUS['MEMORY.md']!.split('\n').slice(3, 5).join('\n'),
      );
      expect(slice.details).toMatchObject({ from: 4, lines: 2 });
    });

    it('memory_get refuses every way out of the memory files, saying why', async () => {
      symlinkSync(join(kernel.stateDir, 'secret.md'), join(workspace, 'memory', 'link.md'));
      const cases: Array<[string, RegExp]> = [
        ['../secret.md', /"\.\."/],
        ['memory/../../secret.md', /"\.\."/],
        [join(kernel.stateDir, 'secret.md'), /absolute/],
        ['/etc/passwd', /absolute/],
        ['notes.md', /not a memory file/],
        ['memory/link.md', /symlink/],
        ['memory/missing.md', /does not exist/],
        ['memory/2026-11-01.txt', /not a Markdown file/],
      ];
      for (const [path, reason] of cases) {
        const result = await call('memory_get', { path });
        expect(result.isError, path).toBe(true);
        const text = (result.content[0] as { text: string }).text;
        expect(text, path).toMatch(reason);
        expect(text, path).not.toContain('TOP SECRET');
      }
      rmSync(join(workspace, 'memory', 'link.md'));
    });

    it('is chosen by plugins.slots.memory, and another holder replaces it through config', async () => {
      const plugins = [target.plugin, bundledPluginDir('memory-core'), ...(target.plugins ?? []), otherMemory];
      const other = await createTestKernel({
        plugins,
        config: withSlot(target.config?.(), 'memory-contract-other'),
        env: target.env,
      });
      try {
        expect(await (await other.capabilities.slot('memory'))?.status()).toMatchObject({ backend: 'other' });
        expect(other.capabilities.list('tool').some((tool) => tool.name === 'memory_search')).toBe(false);
      } finally {
        await other.dispose();
      }
      const back = await createTestKernel({
        plugins,
        config: withSlot(target.config?.(), target.name),
        env: target.env,
      });
      try {
        expect(await (await back.capabilities.slot('memory'))?.status({ agentId: 'main' })).toMatchObject({
          backend: target.backend,
        });
        expect(back.capabilities.list('tool').find((tool) => tool.name === 'memory_search')?.pluginId).toBe(
          target.name,
        );
      } finally {
        await back.dispose();
      }
    });
  });
}
