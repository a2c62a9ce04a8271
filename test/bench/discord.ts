/**
 * Discord channel overhead: DMs in over the gateway, replies out over REST, through the
 * loopback fake Discord with a model that answers in zero time — so the figures are
 * discord.js (gateway client and REST queue), the channel plugin, the kernel's pipeline and
 * outbound path, and the agent loop.
 *
 * Latency is measured on the fake's clock: from the MESSAGE_CREATE dispatch to the arrival
 * of the reply's POST /channels/{id}/messages.
 *
 *   p50AddedMs          one message in flight at a time
 *   messagesPerSecond   50 users, each sending their next DM as soon as the previous one is
 *                       answered (500 DMs in all). Every answer costs two REST calls (typing,
 *                       message), and discord.js holds a bot to Discord's global limit of 50
 *                       requests per second, so this is bounded near 25/s as with real Discord.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureRoundTrips, type RoundTripFigures } from './round-trips.js';
import { agentStackDirs, createTestKernel, lastUserText, scriptedModel } from '../../sdk/testing.js';
import { FakeDiscord, type DiscordSent } from '../fakes/discord.js';

const DISCORD_DIR = fileURLToPath(new URL('../../plugins/channel-discord/', import.meta.url));

export interface DiscordBenchOptions {
  users?: number;
  perUser?: number;
  sequential?: number;
}

export async function discordBench(options: DiscordBenchOptions = {}): Promise<RoundTripFigures> {
  const users = options.users ?? 50;
  const perUser = options.perUser ?? 10;
  const sequential = options.sequential ?? 200;
  const fake = new FakeDiscord();
  await fake.start();
  const stateDir = mkdtempSync(join(tmpdir(), 'claw-bench-discord-'));
  const kernel = await createTestKernel({
    stateDir,
    plugins: [...agentStackDirs(), DISCORD_DIR, scriptedModel((request) => `re: ${lastUserText(request)}`)],
    config: {
      agents: { defaults: { model: 'scripted/bench' } },
      messages: { queue: { debounceMs: 0 } },
      session: { dmScope: 'per-channel-peer' },
      channels: { discord: { token: fake.token, dmPolicy: 'open', allowFrom: ['*'], commands: { native: false } } },
    },
    env: { DISCORD_API_URL: fake.apiUrl },
  });

  const waiting = new Map<string, (sent: DiscordSent) => void>();
  const unsubscribe = fake.onSent((sent) => {
    const key = /re: (u\d+-m\d+)/.exec(sent.content)?.[1];
    const resolve = key ? waiting.get(key) : undefined;
    if (resolve) {
      waiting.delete(key!);
      resolve(sent);
    }
  });
  const userIds = Array.from({ length: users }, (_, user) => String(300_000_000_000_000_000n + BigInt(user)));
  /** One DM from user `user`; resolves with the ms from dispatch to the reply. */
  const roundTrip = async (user: number, n: number): Promise<number> => {
    const content = `u${user}-m${n}`;
    const replied = new Promise<DiscordSent>((resolve) => waiting.set(content, resolve));
    const message = fake.userMessage({ authorId: userIds[user]!, channel: fake.dmChannelFor(userIds[user]!), content });
    fake.dispatch('MESSAGE_CREATE', message);
    const reply = await replied;
    return reply.at - fake.dispatchedAt.get(message.id)!;
  };

  try {
    await kernel.start();
    return await measureRoundTrips({ users, perUser, sequential }, roundTrip);
  } finally {
    unsubscribe();
    await kernel.dispose();
    await fake.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
