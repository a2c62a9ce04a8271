/**
 * soak: 10,000 turns (2,000 with --quick) over 30 sessions through the agent service, the
 * model answering at once, with the process RSS sampled as it goes: the plateau after a
 * warm-up should stay flat, whatever the turn count. Then the turn overhead of a session
 * that holds 10,000 messages against a new one: a turn should not cost more as its session
 * grows (no compaction here; the instant model reports tiny usage).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootAgent } from './agent.js';
import { heapGrowth, heapSummary, type HeapSummary } from './heap.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const mb = (bytes: number) => bytes / 1024 / 1024;

export async function soakBench(line: Line, quick: boolean): Promise<void> {
  const turns = quick ? 2000 : 10_000;
  const warmUp = Math.min(1000, turns / 5);
  const agent = await bootAgent('bench/text', true);
  try {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const samples: Array<{ turn: number; rss: number; heapUsed: number }> = [
      { turn: 0, rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed },
    ];
    const every = turns / 10;
    // Heap snapshots at turns 0, 1,000 and 3,000 (CLAW_SOAK_HEAP=1): what the heap gained between them.
    const heapDir = process.env.CLAW_SOAK_HEAP === '1' ? mkdtempSync(join(tmpdir(), 'claw-soak-heap-')) : undefined;
    const heaps = new Map<number, HeapSummary>();
    const snapshot = (turn: number) => heapDir && heaps.set(turn, heapSummary(heapDir, `turn-${turn}`));
    snapshot(0);
    for (let i = 1; i <= turns; i++) {
      await agent.turn(`agent:main:soak-${i % 30}`);
      if (i % every === 0 || i === warmUp) {
        // With --expose-gc the live heap is sampled after a full collection (CLAW_SOAK_LIVE=1 below).
        gc?.();
        const memory = process.memoryUsage();
        samples.push({ turn: i, rss: memory.rss, heapUsed: memory.heapUsed });
      }
      if (i === 1000 || i === 3000) snapshot(i);
    }
    if (heapDir) {
      rmSync(heapDir, { recursive: true, force: true });
      const at = [...heaps.keys()];
      for (let k = 1; k < at.length; k++) {
        const before = heaps.get(at[k - 1]!)!;
        const after = heaps.get(at[k]!)!;
        line(
          `  heap, turn ${at[k - 1]} → ${at[k]}`,
          `${mb(before.total).toFixed(1)} → ${mb(after.total).toFixed(1)} MB`,
          '(info)',
          true,
        );
        for (const group of heapGrowth(before, after, 6))
          line(
            `    ${group.key}`,
            `${group.count >= 0 ? '+' : ''}${group.count} / ${(group.bytes / 1024).toFixed(0)} KB`,
            '(info)',
            true,
          );
      }
    }
    const after = samples.filter((sample) => sample.turn >= warmUp);
    const plateau = Math.max(...after.map((sample) => sample.rss));
    line(
      `soak: ${turns} turns over 30 sessions, RSS`,
      samples.map((sample) => mb(sample.rss).toFixed(0)).join(' → ') + ' MB',
      '(info)',
      true,
    );
    if (gc)
      line(
        '  live heap after a full GC',
        samples.map((sample) => mb(sample.heapUsed).toFixed(1)).join(' → ') + ' MB',
        '(info)',
        true,
      );
    const memory = process.memoryUsage();
    line(
      '  at the end: heap used / heap total / external (of which ArrayBuffers)',
      `${mb(memory.heapUsed).toFixed(0)} / ${mb(memory.heapTotal).toFixed(0)} / ${mb(memory.external).toFixed(0)} (${mb(memory.arrayBuffers).toFixed(0)}) MB`,
      '(info)',
      true,
    );
    line('  RSS plateau after warm-up (max)', `${mb(plateau).toFixed(0)} MB`, '≤ 150 MB', mb(plateau) <= 150);
    const growth = mb(after[after.length - 1]!.rss - after[0]!.rss);
    line(`  growth from turn ${warmUp} to ${turns}`, `${growth.toFixed(0)} MB`, '(info)', true);

    // One session grown to 10,000 messages (5,000 exchanges), then timed beside a fresh one.
    const long = 'agent:main:long';
    const exchanges = quick ? 1000 : 5000;
    for (let i = 0; i < exchanges; i++) await agent.turn(long);
    const time = async (sessionKey: (i: number) => string) => {
      const times: number[] = [];
      for (let i = 0; i < 50; i++) {
        const started = performance.now();
        await agent.turn(sessionKey(i));
        times.push(performance.now() - started);
      }
      return median(times);
    };
    const grown = await time(() => long);
    const fresh = await time((i) => `agent:main:fresh-${i}`);
    line(
      `soak: turn at ${exchanges * 2} messages vs a new session (p50)`,
      `${grown.toFixed(2)} vs ${fresh.toFixed(2)} ms`,
      '≤ 1.5×',
      grown <= fresh * 1.5,
    );
  } finally {
    await agent.close();
  }
}
