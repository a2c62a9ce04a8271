/**
 * Issue 13 part 5: memory_get reads a window with a character cap (OpenClaw's
 * contextLimits.memoryGetMaxChars / memoryGetDefaultLines), search snippets centred on the
 * matched terms (Chinese too), and a per-file size cap for indexing with a note.
 * Run against both built-in backends through the kernel's tool path.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../kernel/index.js';
import { resolveMemorySettings } from '../plugins/memory-core/settings.js';
import { snippetAround } from '../plugins/memory-core/text.js';
import type { MemoryBackend, MemorySearchResult } from '../sdk/types/memory.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { claw, REPO, tempDir } from './helpers.js';

const FILLER = 'Nothing of note happened in this part of the day, just routine chores and errands.';
const ZH_FILLER = '今天天气很好我们去公园散步了';

function lines(count: number, make: (n: number) => string): string {
  return Array.from({ length: count }, (_, i) => make(i + 1)).join('\n');
}

const FILES: Record<string, string> = {
  // 5,000 lines of ~200 characters: about 1 MB.
  'memory/big.md': lines(5000, (n) => `line ${n} ${'x'.repeat(190)}`),
  'memory/short-lines.md': lines(500, (n) => `entry ${n}`),
  'memory/one-line.md': 'y'.repeat(30_000),
  // One chunk (chunking.tokens 1500 below) whose only match lies past 700 characters.
  'memory/long.md': [
    ...Array.from({ length: 15 }, () => FILLER),
    'The Lisbon offsite hotel is the Pestana Palace, booked for March.',
    ...Array.from({ length: 3 }, () => FILLER),
  ].join('\n'),
  'memory/long-zh.md': [ZH_FILLER.repeat(60), '周五下午三点和王经理开预算会议。', ZH_FILLER.repeat(5)].join('\n'),
  // Over maxFileBytes (100,000): only its start is indexed.
  'memory/dump.md': [
    'Kilimanjaro trip notes at the top.',
    lines(20_000, (n) => `dump line ${n} ${'z'.repeat(40)}`),
    'Zanzibar appears only at the very end.',
  ].join('\n'),
};

function text(result: ToolResult): string {
  return (result.content[0] as { text: string }).text;
}

for (const plugin of ['memory-sqlite', 'memory-minisearch']) {
  describe(`memory limits: ${plugin}`, () => {
    let kernel: TestKernel;
    let memory: MemoryBackend;
    const call = async (name: string, params: Record<string, unknown>) =>
      (
        await kernel.plugins.kernelServices.tools.invoke({
          name,
          params,
          toolCallId: `t-${name}`,
          context: { agentId: 'main', workspaceDir: kernel.paths.workspaceDir },
        })
      ).result;

    beforeAll(async () => {
      kernel = await createTestKernel({
        plugins: [plugin, 'memory-core', 'memory-sqlite-engine', 'embeddings'].map((id) => join(REPO, 'plugins', id)),
        config: {
          plugins: { slots: { memory: plugin } },
          agents: {
            defaults: {
              memorySearch: { provider: 'none', chunking: { tokens: 1500, overlap: 100 }, maxFileBytes: 100_000 },
            },
          },
        },
      });
      for (const [name, body] of Object.entries(FILES)) {
        mkdirSync(join(kernel.paths.workspaceDir, name, '..'), { recursive: true });
        writeFileSync(join(kernel.paths.workspaceDir, name), `${body}\n`);
      }
      memory = (await kernel.capabilities.slot('memory'))!;
    });
    afterAll(async () => {
      await kernel?.dispose();
    });

    it('memory_get without lines reads a window capped at memoryGetMaxChars and says how to read on', async () => {
      const first = await call('memory_get', { path: 'memory/big.md' });
      const body = text(first);
      const [excerpt, note] = body.split('\n\n');
      expect(excerpt!.length).toBeLessThanOrEqual(12_000);
      expect(excerpt!.startsWith('line 1 x')).toBe(true);
      const shown = excerpt!.split('\n').length;
      expect(shown).toBeLessThan(120);
      expect(first.details).toMatchObject({
        from: 1,
        lines: shown,
        totalLines: 5000,
        truncated: true,
        nextFrom: shown + 1,
      });
      expect(note).toContain('12000 characters');
      expect(note).toContain(`from=${shown + 1}`);
      const next = await call('memory_get', { path: 'memory/big.md', from: shown + 1 });
      expect(text(next).startsWith(`line ${shown + 1} x`)).toBe(true);
    });

    it('memory_get without lines reads 120 lines by default (memoryGetDefaultLines)', async () => {
      const read = await call('memory_get', { path: 'memory/short-lines.md' });
      expect(read.details).toMatchObject({ from: 1, lines: 120, totalLines: 500, nextFrom: 121 });
      expect(read.details).not.toHaveProperty('truncated');
      expect(text(read)).toContain('entry 120\n');
      expect(text(read)).not.toContain('entry 121\n');
      expect(text(read)).toContain('from=121');
      const tail = await call('memory_get', { path: 'memory/short-lines.md', from: 450, lines: 100 });
      expect(tail.details).toMatchObject({ from: 450, lines: 51 });
      expect(tail.details).not.toHaveProperty('nextFrom');
      expect(text(tail).endsWith('entry 500')).toBe(true);
    });

    it('memory_get cuts a single over-long line at the cap', async () => {
      const read = await call('memory_get', { path: 'memory/one-line.md' });
      expect(text(read).split('\n\n')[0]).toBe('y'.repeat(12_000));
      expect(read.details).toMatchObject({ lines: 1, truncated: true });
    });

    it('centres a snippet on the match when it lies past 700 characters of the chunk', async () => {
      await memory.sync!({ agentId: 'main', force: true });
      const result: MemorySearchResult = await memory.search('Lisbon offsite hotel', { agentId: 'main' });
      const hit = result.results.find((item) => item.path === 'memory/long.md');
      expect(hit, JSON.stringify(result)).toBeDefined();
      expect(FILES['memory/long.md']!.indexOf('Lisbon')).toBeGreaterThan(700);
      expect(hit!.snippet).toContain('The Lisbon offsite hotel is the Pestana Palace');
      expect(hit!.snippet.length).toBeLessThanOrEqual(700);
    });

    it('centres a Chinese snippet on the matched characters', async () => {
      const result = await memory.search('预算会议', { agentId: 'main' });
      const hit = result.results.find((item) => item.path === 'memory/long-zh.md');
      expect(hit, JSON.stringify(result)).toBeDefined();
      expect(FILES['memory/long-zh.md']!.indexOf('预算会议')).toBeGreaterThan(700);
      expect(hit!.snippet).toContain('和王经理开预算会议');
      expect(hit!.snippet.length).toBeLessThanOrEqual(700);
    });

    it('indexes only the first memorySearch.maxFileBytes of a large file, with a note in stats, status and the log', async () => {
      const stats = await memory.sync!({ agentId: 'main', force: true });
      const size = Buffer.byteLength(`${FILES['memory/dump.md']}\n`);
      // memory/big.md (1 MB) is over the cap too; the small files are not.
      expect(stats.capped?.map((file) => file.path)).toEqual(['memory/big.md', 'memory/dump.md']);
      const dump = stats.capped!.find((file) => file.path === 'memory/dump.md')!;
      expect(dump).toEqual({ path: 'memory/dump.md', size, indexedBytes: expect.any(Number) });
      expect(dump.indexedBytes).toBeLessThanOrEqual(100_000);
      expect(dump.indexedBytes).toBeGreaterThan(90_000);
      // 2 MB of big.md and dump.md would be hundreds of chunks at this size; the cap keeps each to its first 100 kB.
      expect(stats.chunks).toBeLessThan(80);
      const top = await memory.search('Kilimanjaro', { agentId: 'main' });
      expect(top.results.map((hit) => hit.path)).toContain('memory/dump.md');
      const end = await memory.search('Zanzibar', { agentId: 'main' });
      expect(end.results.map((hit) => hit.path)).not.toContain('memory/dump.md');
      const status = await memory.status({ agentId: 'main' });
      expect(JSON.stringify(status)).toContain('"capped"');
      expect(
        kernel.logs.some(
          (record) =>
            record.level === 'warn' &&
            record.message.includes('memory/dump.md') &&
            record.message.includes('maxFileBytes'),
        ),
      ).toBe(true);
    });
  });
}

describe('memory limit settings', () => {
  it("defaults to OpenClaw's memory_get limits and a 2 MiB file cap; contextLimits override per agent", () => {
    const base = { agentId: 'main', workspaceDir: '/w', stateDir: '/s' };
    const plain = resolveMemorySettings({}, base);
    expect(plain.get).toEqual({ defaultLines: 120, maxChars: 12_000 });
    expect(plain.maxFileBytes).toBe(2 * 1024 * 1024);
    const config = {
      agents: {
        defaults: { contextLimits: { memoryGetMaxChars: 5000 }, memorySearch: { maxFileBytes: 0 } },
        list: [{ id: 'main', contextLimits: { memoryGetDefaultLines: 40 } }],
      },
    };
    const tuned = resolveMemorySettings(config, base);
    expect(tuned.get).toEqual({ defaultLines: 40, maxChars: 5000 });
    expect(tuned.maxFileBytes).toBe(0);
  });

  it('snippetAround picks the window with the most distinct query terms', () => {
    const text = `${'alpha '.repeat(200)}beta gamma delta ${'omega '.repeat(200)}`;
    const snippet = snippetAround(text, 'gamma delta', 100);
    expect(snippet).toContain('beta gamma delta');
    expect(snippet.length).toBeLessThanOrEqual(100);
    expect(snippetAround('short text', 'nothing', 100)).toBe('short text');
    expect(snippetAround(text, 'missing', 50).startsWith('alpha')).toBe(true);
  });
});

describe('memory limits through the claw CLI', () => {
  it('claw memory index notes a file over maxFileBytes; the config keys are validated', async () => {
    const stateDir = join(tempDir('claw-memlimits-'), 'state');
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const ok = async (args: string[]) => {
      const result = await claw(args, env);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      return result;
    };
    await ok(['config', 'set', 'agents.defaults.memorySearch.maxFileBytes', '4096']);
    await ok(['config', 'set', 'agents.defaults.memorySearch.provider', 'none']);
    await ok(['config', 'set', 'agents.defaults.contextLimits.memoryGetMaxChars', '8000']);
    const bad = await claw(['config', 'set', 'agents.defaults.contextLimits.memoryGetMaxChars', '0'], env);
    expect(bad.code).not.toBe(0);
    expect(`${bad.stdout}${bad.stderr}`).toMatch(/memoryGetMaxChars/);
    const workspace = join(stateDir, 'workspace');
    mkdirSync(join(workspace, 'memory'), { recursive: true });
    writeFileSync(join(workspace, 'memory', 'huge.md'), `${lines(1000, (n) => `row ${n} of a large export`)}\n`);
    const index = await ok(['memory', 'index']);
    expect(index.stdout).toMatch(
      /Note: memory\/huge\.md is \d+ bytes, over memorySearch\.maxFileBytes: only its first \d+ bytes are indexed/,
    );
    const status = await ok(['memory', 'status']);
    expect(status.stdout).toContain('memory/huge.md');
  });
});
