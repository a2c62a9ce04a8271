/**
 * Issue 13 part 6: session transcripts as a memory source (OpenClaw's
 * memorySearch.sources ["memory", "sessions"] with experimental.sessionMemory). Only the
 * agent's own transcripts, user and assistant text only, indexed incrementally; SQLite only.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveMemorySettings } from '../plugins/memory-core/settings.js';
import { Transcript } from '../plugins/sessions/transcript.js';
import type { MemoryBackend } from '../sdk/types/memory.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { REPO } from './helpers.js';

const SESSION_MEMORY = { provider: 'none', experimental: { sessionMemory: true }, sources: ['memory', 'sessions'] };

let kernel: TestKernel | undefined;
afterEach(async () => {
  await kernel?.dispose();
  kernel = undefined;
});

async function start(
  memorySearch: Record<string, unknown>,
  plugin = 'memory-sqlite',
): Promise<{ memory: MemoryBackend; sessions: (agent: string) => string }> {
  kernel = await createTestKernel({
    plugins: [plugin, 'memory-core', 'memory-sqlite-engine', 'embeddings'].map((id) => join(REPO, 'plugins', id)),
    config: { plugins: { slots: { memory: plugin } }, agents: { defaults: { memorySearch } } },
  });
  mkdirSync(join(kernel.paths.workspaceDir, 'memory'), { recursive: true });
  writeFileSync(join(kernel.paths.workspaceDir, 'MEMORY.md'), 'The user likes green tea.\n');
  const sessions = (agent: string) => {
    const dir = join(kernel!.paths.stateDir, 'agents', agent, 'sessions');
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  return { memory: (await kernel.capabilities.slot('memory'))!, sessions };
}

function chat(file: string, turns: Array<[role: 'user' | 'assistant' | 'tool', text: string]>): void {
  const transcript = new Transcript(file);
  for (const [role, text] of turns) {
    if (role === 'user') transcript.appendMessage({ role: 'user', content: text });
    else if (role === 'assistant') transcript.appendMessage({ role: 'assistant', content: [{ type: 'text', text }] });
    else
      transcript.appendMessage({
        role: 'toolResult',
        toolCallId: 'c1',
        toolName: 'exec',
        content: [{ type: 'text', text }],
        isError: false,
      } as never);
  }
}

const paths = async (memory: MemoryBackend, query: string) =>
  (await memory.search(query, { agentId: 'main' })).results.map((hit) => `${hit.source}:${hit.path}`);

describe('memory: session transcripts as a source', () => {
  it("finds the agent's own user and assistant text with sources including sessions, and nothing from tool results, silent turns or other agents", async () => {
    const { memory, sessions } = await start(SESSION_MEMORY);
    chat(join(sessions('main'), 's1.jsonl'), [
      ['user', 'Remember that my locker code at the Zurich gym is 4417.'],
      ['tool', 'quarterly ledger reconciled by the tool'],
      ['assistant', 'NO_REPLY'],
      ['assistant', 'Noted: your Zurich locker code.'],
    ]);
    chat(join(sessions('other'), 's2.jsonl'), [['user', 'The Tromso aurora cabin is booked for February.']]);
    const stats = await memory.sync!({ agentId: 'main' });
    expect(stats.files).toBe(2);

    // Line 1 is the session header, 3 the tool result, 4 the silent turn.
    const hits = (await memory.search('Zurich locker code', { agentId: 'main' })).results;
    expect(hits.map((hit) => [hit.source, hit.path, hit.startLine]).sort()).toEqual([
      ['sessions', 'sessions/s1.jsonl', 2],
      ['sessions', 'sessions/s1.jsonl', 5],
    ]);
    expect(hits.find((hit) => hit.startLine === 2)!.snippet).toContain('User: Remember that my locker code');
    expect(hits.find((hit) => hit.startLine === 5)!.snippet).toContain('Assistant: Noted: your Zurich locker code.');
    expect(await paths(memory, 'quarterly ledger reconciled')).toEqual([]);
    expect(await paths(memory, 'NO_REPLY')).toEqual([]);
    expect(await paths(memory, 'Tromso aurora cabin')).toEqual([]);
    expect(await paths(memory, 'green tea')).toEqual(['memory:MEMORY.md']);

    await expect(memory.get('sessions/s1.jsonl', { agentId: 'main' })).rejects.toThrow(
      /session transcript.*sessions_history/,
    );
  });

  it('does not index transcripts with the default sources', async () => {
    const { memory, sessions } = await start({ provider: 'none' });
    chat(join(sessions('main'), 's1.jsonl'), [['user', 'My locker code at the Zurich gym is 4417.']]);
    await memory.sync!({ agentId: 'main' });
    expect(await paths(memory, 'Zurich locker code')).toEqual([]);
    expect(await paths(memory, 'green tea')).toEqual(['memory:MEMORY.md']);
  });

  it('indexes only the lines appended since the last sync, and a complete line only', async () => {
    const { memory, sessions } = await start(SESSION_MEMORY);
    const file = join(sessions('main'), 's1.jsonl');
    chat(file, [['user', 'The Lisbon offsite hotel is the Pestana Palace.']]);
    expect(await memory.sync!({ agentId: 'main' })).toMatchObject({ indexed: 2, chunks: 2 });
    expect(await memory.sync!({ agentId: 'main' })).toMatchObject({ indexed: 0, skipped: 2, chunks: 2 });

    chat(file, [['assistant', 'The Kyoto ryokan is confirmed for April.']]);
    // Half a line (a writer mid-append) waits until it is complete.
    appendFileSync(
      file,
      '{"type":"message","id":"x","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"Oslo fjord',
    );
    const second = await memory.sync!({ agentId: 'main' });
    expect(second).toMatchObject({ indexed: 1, chunks: 3 });
    expect(await paths(memory, 'Kyoto ryokan')).toEqual(['sessions:sessions/s1.jsonl']);
    expect(await paths(memory, 'Lisbon offsite hotel')).toEqual(['sessions:sessions/s1.jsonl']);
    expect(await paths(memory, 'Oslo fjord')).toEqual([]);

    appendFileSync(file, ' cruise"}}\n');
    expect(await memory.sync!({ agentId: 'main' })).toMatchObject({ indexed: 1, chunks: 4 });
    const oslo = (await memory.search('Oslo fjord cruise', { agentId: 'main' })).results;
    expect(oslo.map((hit) => [hit.path, hit.startLine])).toEqual([['sessions/s1.jsonl', 4]]);
  });

  it('picks up a grown transcript in the background (watcher, debounced), with searches not syncing by themselves', async () => {
    const { memory, sessions } = await start({ ...SESSION_MEMORY, sync: { onSearch: false, watchDebounceMs: 200 } });
    const file = join(sessions('main'), 's1.jsonl');
    chat(file, [['user', 'The Lisbon offsite hotel is the Pestana Palace.']]);
    await kernel!.start();
    expect(await paths(memory, 'Lisbon offsite hotel')).toEqual(['sessions:sessions/s1.jsonl']);
    chat(file, [['user', 'Order a new bicycle chain.']]);
    const changedAt = Date.now();
    let found = false;
    while (!found && Date.now() - changedAt < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      found = (await paths(memory, 'bicycle chain')).length > 0;
    }
    expect(found).toBe(true);
  }, 20_000);

  it('refuses sessions without the experimental flag, unknown sources, and backends that cannot index transcripts', async () => {
    const resolve = (memorySearch: Record<string, unknown>) =>
      resolveMemorySettings({ agents: { defaults: { memorySearch } } } as never, {
        agentId: 'main',
        workspaceDir: '/w',
        stateDir: '/s',
      });
    expect(resolve({}).sources).toEqual(['memory']);
    expect(resolve(SESSION_MEMORY).sessionsDir).toBe(join('/s', 'agents', 'main', 'sessions'));
    expect(() => resolve({ sources: ['memory', 'sessions'] })).toThrow(/experimental\.sessionMemory: true/);
    expect(() => resolve({ sources: ['notes'] })).toThrow(/unknown source "notes"/);
    expect(() => resolve({ ...SESSION_MEMORY, sync: { sessions: { deltaBytes: 1000 } } })).toThrow(
      /sync\.sessions.*not supported/,
    );

    const { memory } = await start(SESSION_MEMORY, 'memory-minisearch');
    await expect(memory.search('anything', { agentId: 'main' })).rejects.toThrow(
      /memory-sqlite backend only, not minisearch/,
    );
  });
});
