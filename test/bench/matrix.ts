/**
 * Matrix channel overhead: DMs in over the /sync long poll, replies out with
 * `PUT …/send`, through the loopback fake homeserver with a model that answers in zero time —
 * so the figures are the channel's sync loop (and the stored `since` after every batch),
 * matrix-js-sdk's HTTP layer, the kernel's pipeline and outbound path, and the agent loop.
 *
 * Latency is measured on the fake's side: from the user's event being stored to the
 * arrival of the bot's reply event.
 *
 *   p50AddedMs          one message in flight at a time
 *   messagesPerSecond   50 users, each sending their next DM as soon as the previous one is
 *                       answered (500 DMs in all)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureRoundTrips, type RoundTripFigures } from './round-trips.js';
import { agentStackDirs, createTestKernel, lastUserText, scriptedModel } from '../../sdk/testing.js';
import { FakeHomeserver } from '../fakes/matrix.js';

const MATRIX_DIR = fileURLToPath(new URL('../../plugins/channel-matrix/', import.meta.url));
const BOT = '@bench-bot:claw.test';
const TOKEN = 'syt_bench_token';

export async function matrixBench(
  options: { users?: number; perUser?: number; sequential?: number } = {},
): Promise<RoundTripFigures> {
  const users = options.users ?? 50;
  const perUser = options.perUser ?? 10;
  const sequential = options.sequential ?? 200;
  const fake = new FakeHomeserver();
  await fake.start();
  fake.addUser({ userId: BOT, accessToken: TOKEN, displayName: 'Bench' });
  const userIds = Array.from({ length: users }, (_, user) => `@u${user}:claw.test`);
  const rooms = userIds.map((userId) => {
    fake.addUser({ userId });
    return fake.createRoom({ creator: userId, members: [BOT], direct: true });
  });
  const stateDir = mkdtempSync(join(tmpdir(), 'claw-bench-matrix-'));
  const kernel = await createTestKernel({
    stateDir,
    plugins: [...agentStackDirs(), MATRIX_DIR, scriptedModel((request) => `re: ${lastUserText(request)}`)],
    config: {
      agents: { defaults: { model: 'scripted/bench' } },
      messages: { queue: { debounceMs: 0 } },
      session: { dmScope: 'per-channel-peer' },
      channels: {
        matrix: {
          homeserver: fake.url,
          accessToken: TOKEN,
          network: { dangerouslyAllowPrivateNetwork: true },
          dm: { policy: 'open', allowFrom: ['*'] },
        },
      },
    },
  });

  /** One DM from user `user`; resolves with the ms from the stored event to the reply. */
  const roundTrip = async (user: number, n: number): Promise<number> => {
    const text = `u${user}-m${n}`;
    const replied = fake.waitForSent(BOT, (event) => event.content.body === `re: ${text}`, 60_000);
    const sentAt = performance.now();
    fake.sendAs(userIds[user]!, rooms[user]!, { msgtype: 'm.text', body: text });
    await replied;
    return performance.now() - sentAt;
  };

  try {
    await kernel.start();
    await fake.waitForHeldSync(BOT, 30_000);
    return await measureRoundTrips({ users, perUser, sequential }, roundTrip);
  } finally {
    await kernel.dispose();
    await fake.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
