/**
 * Slack channel overhead: DMs in over Socket Mode, replies out over the Web API, through the
 * loopback fake Slack with a model that answers in zero time — so the figures are Bolt (the
 * Socket Mode client and the WebClient), the channel plugin, the kernel's pipeline and
 * outbound path, and the agent loop.
 *
 * Latency is measured on the fake's clock: from sending the `events_api` envelope to the
 * arrival of the reply's chat.postMessage.
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
import { FakeSlack } from '../fakes/slack.js';

const SLACK_DIR = fileURLToPath(new URL('../../plugins/channel-slack/', import.meta.url));

export async function slackBench(
  options: { users?: number; perUser?: number; sequential?: number } = {},
): Promise<RoundTripFigures> {
  const users = options.users ?? 50;
  const perUser = options.perUser ?? 10;
  const sequential = options.sequential ?? 200;
  const fake = new FakeSlack();
  await fake.start();
  const stateDir = mkdtempSync(join(tmpdir(), 'claw-bench-slack-'));
  const kernel = await createTestKernel({
    stateDir,
    plugins: [...agentStackDirs(), SLACK_DIR, scriptedModel((request) => `re: ${lastUserText(request)}`)],
    config: {
      agents: { defaults: { model: 'scripted/bench' } },
      messages: { queue: { debounceMs: 0 } },
      session: { dmScope: 'per-channel-peer' },
      channels: { slack: { botToken: fake.botToken, appToken: fake.appToken, dmPolicy: 'open', allowFrom: ['*'] } },
    },
    env: { SLACK_API_URL: fake.apiUrl },
  });

  const waiting = new Map<string, (at: number) => void>();
  const unsubscribe = fake.onPost((post, at) => {
    const key = /re: (u\d+-m\d+)/.exec(post.text)?.[1];
    const resolve = key ? waiting.get(key) : undefined;
    if (resolve) {
      waiting.delete(key!);
      resolve(at);
    }
  });
  const userIds = Array.from({ length: users }, (_, user) => `UBENCH${String(user).padStart(4, '0')}`);
  /** One DM from user `user`; resolves with the ms from the envelope to the reply. */
  const roundTrip = async (user: number, n: number): Promise<number> => {
    const text = `u${user}-m${n}`;
    const replied = new Promise<number>((resolve) => waiting.set(text, resolve));
    const sentAt = performance.now();
    void fake.deliver(fake.message({ user: userIds[user]!, text }));
    return (await replied) - sentAt;
  };

  try {
    await kernel.start();
    while (fake.connectedSockets() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    return await measureRoundTrips({ users, perUser, sequential }, roundTrip);
  } finally {
    unsubscribe();
    await kernel.dispose();
    await fake.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
