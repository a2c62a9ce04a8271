/**
 * IRC channel overhead against a real IRC server (ngircd on 127.0.0.1) with a model that
 * answers in zero time: irc-framework, the channel plugin, the kernel's pipeline and
 * outbound path, and the agent loop. Latency is measured on the user's side: from writing
 * the PRIVMSG to reading the bot's reply, both through the server.
 *
 *   p50AddedMs          one DM at a time, spaced so the bot's flood bucket is full each time
 *   dmsPerSecond        many users at once: bounded by the bot's own flood control (a burst
 *                       of 4 lines, then one line per 700 ms), as an IRC server expects
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentStackDirs, createTestKernel, lastUserText, scriptedModel } from '../../sdk/testing.js';
import { FLOOD_INTERVAL_MS } from '../../plugins/channel-irc/flood.js';
import { IrcServer, IrcUser } from '../irc-server.js';

const IRC_DIR = fileURLToPath(new URL('../../plugins/channel-irc/', import.meta.url));
const BOT = 'benchbot';

export async function ircBench(
  options: { sequential?: number; users?: number; perUser?: number } = {},
): Promise<{ p50AddedMs: number; p95AddedMs: number; dmsPerSecond: number; messages: number }> {
  const sequential = options.sequential ?? 20;
  const users = options.users ?? 10;
  const perUser = options.perUser ?? 3;
  const server = new IrcServer();
  await server.start();
  const stateDir = mkdtempSync(join(tmpdir(), 'claw-bench-irc-'));
  const kernel = await createTestKernel({
    stateDir,
    plugins: [...agentStackDirs(), IRC_DIR, scriptedModel((request) => `re: ${lastUserText(request)}`)],
    config: {
      agents: { defaults: { model: 'scripted/bench' } },
      messages: { queue: { debounceMs: 0 } },
      session: { dmScope: 'per-channel-peer' },
      channels: {
        irc: { host: '127.0.0.1', port: server.port, tls: false, nick: BOT, dmPolicy: 'open', allowFrom: ['*'] },
      },
    },
  });
  const people: IrcUser[] = [];
  /** One DM; resolves with the ms from writing it to reading the answer. */
  const roundTrip = async (user: IrcUser, text: string): Promise<number> => {
    const started = performance.now();
    user.raw(`PRIVMSG ${BOT} :${text}`);
    for (;;) {
      if (user.received(BOT).some((line) => line.text === `re: ${text}`)) return performance.now() - started;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  try {
    await kernel.start();
    for (let i = 0; i < users; i++) people.push(await new IrcUser(`u${i}`, server.port).connect());
    await roundTrip(people[0]!, 'warm-up');
    const latencies: number[] = [];
    for (let i = 0; i < sequential; i++) {
      await new Promise((resolve) => setTimeout(resolve, FLOOD_INTERVAL_MS + 50));
      latencies.push(await roundTrip(people[i % users]!, `seq-${i}`));
    }
    latencies.sort((a, b) => a - b);
    await new Promise((resolve) => setTimeout(resolve, FLOOD_INTERVAL_MS * 5));
    const started = performance.now();
    await Promise.all(
      people.map(async (user, index) => {
        for (let n = 0; n < perUser; n++) await roundTrip(user, `u${index}-m${n}`);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    return {
      p50AddedMs: latencies[Math.floor(latencies.length / 2)]!,
      p95AddedMs: latencies[Math.floor(latencies.length * 0.95)]!,
      dmsPerSecond: (users * perUser) / seconds,
      messages: users * perUser,
    };
  } finally {
    for (const user of people) user.close();
    await kernel.dispose();
    await server.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
