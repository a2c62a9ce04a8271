/**
 * `claw memory search` with a gateway running asks the gateway's memory.search (its index is
 * loaded and synced already) instead of loading an index in the CLI process; `--local`
 * searches in the process. Told apart by a file the gateway has not indexed: with watching
 * and search-time sync off, only a local search (which syncs first) finds it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claw, startCliGateway, tempDir } from './helpers.js';

describe('claw memory search through a running gateway', () => {
  it('answers from the gateway’s index, prints as a local search does, and --local searches in the process', async () => {
    const stateDir = tempDir('claw-memory-gw-');
    const workspace = join(stateDir, 'workspace');
    mkdirSync(join(workspace, 'memory'), { recursive: true });
    writeFileSync(join(workspace, 'MEMORY.md'), '# Memory\n\nThe Lisbon offsite hotel is Memmo Alfama.\n');
    const memorySearch = { sync: { watch: false, onSearch: false } };
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ agents: { defaults: { memorySearch } } }));
    const env = { OPENCLAW_STATE_DIR: stateDir };
    await startCliGateway(env);

    const viaGateway = await claw(['memory', 'search', 'Lisbon offsite hotel', '--json'], env);
    expect(viaGateway.code, viaGateway.stderr).toBe(0);
    const found = JSON.parse(viaGateway.stdout);
    expect(found).toMatchObject({ backend: 'sqlite', mode: 'keyword' });
    expect(found.results[0]).toMatchObject({ path: 'MEMORY.md', snippet: expect.stringContaining('Memmo Alfama') });
    const text = await claw(['memory', 'search', 'Lisbon offsite hotel'], env);
    expect(text.stdout).toMatch(
      /^1 result \(sqlite, keyword\)\nnote: keyword search only[^\n]*\n\nMEMORY\.md:1-3 {2}score /,
    );

    // Written after the gateway's sync, which neither watches nor syncs on search here.
    writeFileSync(join(workspace, 'memory', '2026-11-02.md'), '# 2026-11-02\n\nThe garage door code is 4711.\n');
    const stale = JSON.parse((await claw(['memory', 'search', 'garage door code', '--json'], env)).stdout);
    expect(stale.results).toEqual([]);
    const local = JSON.parse((await claw(['memory', 'search', 'garage door code', '--local', '--json'], env)).stdout);
    expect(local.results[0]).toMatchObject({ path: 'memory/2026-11-02.md' });
  });
});
