/**
 * soak: 10,000 turns (2,000 with --quick) over 30 sessions through the agent service, the
 * model answering at once, with the process RSS sampled as it goes: the plateau after a
 * warm-up should stay flat, whatever the turn count. Then the turn overhead of a session
 * that holds 10,000 messages against a new one: a turn should not cost more as its session
 * grows (no compaction here; the instant model reports tiny usage).
 */
import { bootAgent } from './agent.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const mb = (bytes: number) => bytes / 1024 / 1024;

export async function soakBench(line: Line, quick: boolean): Promise<void> {
  const turns = quick ? 2000 : 10_000;
  const warmUp = Math.min(1000, turns / 5);
  const agent = await bootAgent('bench/text', true);
  try {
    const samples: Array<{ turn: number; rss: number }> = [{ turn: 0, rss: process.memoryUsage().rss }];
    const every = turns / 10;
    for (let i = 1; i <= turns; i++) {
      await agent.turn(`agent:main:soak-${i % 30}`);
      if (i % every === 0 || i === warmUp) samples.push({ turn: i, rss: process.memoryUsage().rss });
    }
    const after = samples.filter((sample) => sample.turn >= warmUp);
    const plateau = Math.max(...after.map((sample) => sample.rss));
    line(
      `soak: ${turns} turns over 30 sessions, RSS`,
      samples.map((sample) => mb(sample.rss).toFixed(0)).join(' → ') + ' MB',
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
