/**
 * Telegram channel overhead: DMs in, replies out, through the fake Bot API server with a
 * model that answers in zero time — so the figures are grammY, the channel plugin, the
 * kernel's pipeline and outbound path, and the agent loop.
 *
 * Latency is measured on the fake server's clock: from the getUpdates answer that hands
 * the bot an update to the arrival of the reply's sendMessage.
 *
 *   medianAddedMs       one message in flight at a time (nothing queues behind others)
 *   messagesPerSecond   50 users, each sending their next DM as soon as the previous one
 *                       is answered (500 DMs in all)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentStackDirs, createTestKernel, lastUserText, scriptedModel } from '../../sdk/testing.js';
import { FakeTelegramApi, type TelegramCall } from '../fakes/telegram-api.js';

const AGENT_LOOP_DIR = agentStackDirs();
const TELEGRAM_DIR = fileURLToPath(new URL('../../plugins/channel-telegram/', import.meta.url));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface TelegramBenchOptions {
  users?: number;
  perUser?: number;
  /** Sequential round trips for the latency figure. */
  sequential?: number;
}

export async function telegramBench(
  options: TelegramBenchOptions = {},
): Promise<{ messagesPerSecond: number; medianAddedMs: number; messages: number }> {
  const users = options.users ?? 50;
  const perUser = options.perUser ?? 10;
  const sequential = options.sequential ?? 200;
  const api = new FakeTelegramApi();
  await api.start();
  const stateDir = mkdtempSync(join(tmpdir(), 'claw-bench-telegram-'));
  const kernel = await createTestKernel({
    stateDir,
    plugins: [...AGENT_LOOP_DIR, TELEGRAM_DIR, scriptedModel((request) => `re: ${lastUserText(request)}`)],
    config: {
      agents: { defaults: { model: 'scripted/bench' } },
      messages: { queue: { debounceMs: 0 } },
      // One session per user, as a real multi-user bot would have.
      session: { dmScope: 'per-channel-peer' },
      channels: { telegram: { botToken: api.token, apiRoot: api.apiRoot, dmPolicy: 'open', allowFrom: ['*'] } },
    },
  });

  // Replies are matched to messages by text: "u3-m7" is answered "re: u3-m7".
  const waiting = new Map<string, (call: TelegramCall) => void>();
  const unsubscribe = api.onCall((call) => {
    if (call.method !== 'sendMessage' || call.status !== 200) return;
    const match = /re: (u\d+-m\d+)/.exec(String(call.params.text));
    const resolve = match && waiting.get(match[1]!);
    if (resolve) {
      waiting.delete(match![1]!);
      resolve(call);
    }
  });
  /** One DM from user `u`; resolves with the ms from hand-over to the reply. */
  const roundTrip = async (user: number, n: number): Promise<number> => {
    const text = `u${user}-m${n}`;
    const replied = new Promise<TelegramCall>((resolve) => waiting.set(text, resolve));
    const updateId = await api.pushUpdate({
      message: api.message({ chatId: 10_000 + user, from: { id: 10_000 + user, first_name: `User ${user}` }, text }),
    });
    const reply = await replied;
    return reply.at - api.handedAt.get(updateId)!;
  };

  try {
    await kernel.start();
    // Warm-up: code paths loaded, every user's session created.
    await Promise.all(Array.from({ length: users }, (_, user) => roundTrip(user, 0)));

    const latencies: number[] = [];
    for (let i = 0; i < sequential; i++) latencies.push(await roundTrip(i % users, 1000 + i));

    const started = performance.now();
    await Promise.all(
      Array.from({ length: users }, async (_, user) => {
        for (let n = 1; n <= perUser; n++) await roundTrip(user, n);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const messages = users * perUser;
    return { messagesPerSecond: messages / seconds, medianAddedMs: median(latencies), messages };
  } finally {
    unsubscribe();
    await kernel.dispose();
    await api.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
