/**
 * The soak's findings as tests (issue 34): the transcript parse cache is bounded by bytes as
 * well as by file count, and a thousand turns over thirty sessions leave the live heap (after
 * a full collection) within a small allowance; a per-turn leak of a few KB fails it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { READ_CACHE_BYTES, readTranscriptFile, transcriptCacheStats } from '../plugins/sessions/transcript.js';
import { bootAgent } from './bench/agent.js';
import { tempDir } from './helpers.js';

/** A full garbage collection, without starting the test process with --expose-gc. */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('memory stays bounded over a long run', () => {
  it('a thousand turns over thirty sessions add less than 3 MB of live heap after warm-up', async () => {
    const agent = await bootAgent('bench/text', true);
    try {
      for (let i = 0; i < 300; i++) await agent.turn(`agent:main:soak-${i % 30}`);
      collect();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 1000; i++) await agent.turn(`agent:main:soak-${i % 30}`);
      collect();
      const grown = process.memoryUsage().heapUsed - before;
      // What legitimately grows: the cached transcripts themselves (≈ 1.3 KB a turn here).
      expect(grown).toBeLessThan(3 * 1024 * 1024);
    } finally {
      await agent.close();
    }
  }, 120_000);

  it('the transcript parse cache keeps at most READ_CACHE_BYTES of files, always the newest', () => {
    const dir = tempDir('claw-cache-');
    const line = `${JSON.stringify({ type: 'message', id: 'x', message: { role: 'user', content: 'y'.repeat(1000) } })}\n`;
    const perFile = Math.ceil(READ_CACHE_BYTES / 4);
    const files = Array.from({ length: 6 }, (_, i) => {
      const file = join(dir, `s${i}.jsonl`);
      writeFileSync(file, line.repeat(Math.ceil(perFile / line.length)));
      return file;
    });
    for (const file of files) {
      expect(readTranscriptFile(file).entries.length).toBeGreaterThan(0);
      expect(transcriptCacheStats().bytes).toBeLessThanOrEqual(READ_CACHE_BYTES);
    }
    expect(transcriptCacheStats().files).toBeLessThan(files.length);
    // The newest is still cached: reading it again parses nothing new and gives the same entries.
    const again = readTranscriptFile(files[files.length - 1]!);
    expect(again.entries.length).toBe(Math.ceil(perFile / line.length));
  });
});
