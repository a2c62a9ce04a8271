/**
 * WhatsApp channel overhead: DMs in, replies out, through the fake Baileys socket
 * (test/fakes/whatsapp-socket.ts) with a model that answers in zero time — so the figures
 * are the channel plugin (parsing, per-chat ordering, read receipts, typing, Markdown,
 * the send path), the kernel's pipeline and outbound path, and the agent loop.
 *
 * Latency is measured on the fake server's clock: from handing the socket a
 * messages.upsert to the arrival of the reply's sendMessage.
 *
 *   medianAddedMs / p99AddedMs   one message in flight at a time
 *   messagesPerSecond            50 users, each sending their next DM as soon as the
 *                                previous one is answered (500 DMs in all)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentStackDirs, createTestKernel, lastUserText, scriptedModel } from '../../sdk/testing.js';
import { createWhatsAppPlugin } from '../../plugins/channel-whatsapp/index.js';
import { FakeWhatsApp, type SentMessage } from '../fakes/whatsapp-socket.js';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface WhatsAppBenchOptions {
  users?: number;
  perUser?: number;
  sequential?: number;
}

export async function whatsappBench(
  options: WhatsAppBenchOptions = {},
): Promise<{ messagesPerSecond: number; medianAddedMs: number; p99AddedMs: number; messages: number }> {
  const users = options.users ?? 50;
  const perUser = options.perUser ?? 10;
  const sequential = options.sequential ?? 200;
  const fake = new FakeWhatsApp();
  const stateDir = mkdtempSync(join(tmpdir(), 'claw-bench-whatsapp-'));
  const auth = join(stateDir, 'credentials', 'whatsapp', 'default');
  mkdirSync(auth, { recursive: true, mode: 0o700 });
  writeFileSync(join(auth, 'creds.json'), fake.linkedCreds(), { mode: 0o600 });
  const kernel = await createTestKernel({
    stateDir,
    plugins: [
      ...agentStackDirs(),
      createWhatsAppPlugin({ socketFactory: fake.factory }),
      scriptedModel((request) => `re: ${lastUserText(request)}`),
    ],
    config: {
      agents: { defaults: { model: 'scripted/bench' } },
      messages: { queue: { debounceMs: 0 } },
      session: { dmScope: 'per-channel-peer' },
      channels: { whatsapp: { dmPolicy: 'open', allowFrom: ['*'] } },
    },
  });

  const waiting = new Map<string, (item: SentMessage) => void>();
  fake.onSent = (item) => {
    const text = 'text' in item.content ? item.content.text : '';
    const match = /re: (u\d+-m\d+)/.exec(text);
    const resolve = match && waiting.get(match[1]!);
    if (resolve) {
      waiting.delete(match![1]!);
      resolve(item);
    }
  };
  const roundTrip = async (user: number, n: number): Promise<number> => {
    const text = `u${user}-m${n}`;
    const replied = new Promise<SentMessage>((resolve) => waiting.set(text, resolve));
    const handedAt = performance.now();
    fake.deliver(fake.dm(`+49150${String(user).padStart(6, '0')}`, text, { pushName: `User ${user}` }));
    return (await replied).at - handedAt;
  };

  try {
    await kernel.start();
    while (!fake.current?.user) await new Promise((resolve) => setTimeout(resolve, 5));
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
    return {
      messagesPerSecond: messages / seconds,
      medianAddedMs: percentile(latencies, 50),
      p99AddedMs: percentile(latencies, 99),
      messages,
    };
  } finally {
    fake.onSent = undefined;
    await kernel.dispose();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
