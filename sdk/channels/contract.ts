/**
 * The channel contract, as a vitest suite any channel plugin runs against a fake of its
 * platform:
 *
 *   channelContractSuite({ channel: 'telegram', plugin: dir, config: () => ({ botToken: … }), platform, textLimit: 4096 });
 *
 * It boots a kernel with the plugin, the bundled agent stack (sdk/testing AGENT_STACK) and
 * an in-process model that echoes, starts the channel, and checks what users of a chat app rely on: replies to
 * allowed senders, pairing for unknown ones, allowlists, dedupe of redelivered messages,
 * long replies cut to the platform's limit in order, mention gating with group history,
 * topics getting their own session, the outbound path's hooks, and status. Only imported
 * by tests (it imports vitest).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../types/models.js';
import type { PluginDefinition } from '../types/plugin.js';
import { definePlugin } from '../index.js';
import { agentStackDirs, createTestKernel, lastUserText, scriptedModel, waitFor, type TestKernel } from '../testing.js';

export interface PlatformMessage {
  kind: 'direct' | 'group';
  chatId: string;
  senderId: string;
  senderName?: string;
  text: string;
  /** The bot is addressed (a mention, or a reply to the bot) — group messages only. */
  mention?: boolean;
  threadId?: string;
  messageId?: string;
}

export interface PlatformSent {
  chatId: string;
  text: string;
  threadId?: string;
  replyTo?: string;
}

/** The test's side of the platform: what users send, and what the bot sent. */
export interface FakePlatform {
  start?(): Promise<void>;
  stop?(): Promise<void>;
  /** Make the platform deliver a message to the bot; resolves once the channel has taken it. */
  deliver(message: PlatformMessage): Promise<void>;
  /** Everything the bot sent, oldest first. */
  sent(): PlatformSent[];
  reset(): void;
}

export interface ChannelContractTarget {
  channel: string;
  plugin: string | PluginDefinition;
  /** `channels.<id>` without the access settings (tokens, URLs); the suite adds policies. */
  config(): Record<string, unknown>;
  platform: FakePlatform;
  textLimit: number;
  groups?: boolean;
  threads?: boolean;
  env?: Record<string, string | undefined>;
  /**
   * The platform's spelling of the suite's user and group ids, where its ids have a shape
   * ("@owner-1:example.org", "!abc:example.org"): allowlists and send targets use it, while
   * the fake keeps naming chats by the suite's ids. Default: the ids as they are.
   */
  ids?: { user(id: string): string; group(id: string): string };
}

const OWNER = 'owner-1';

/** The model: echoes, and writes a long multi-paragraph answer when asked for LONG. */
function answer(request: ModelRequest, limit: number): string {
  const text = lastUserText(request);
  if (text.includes('LONG')) {
    const paragraph = (n: number) =>
      `Paragraph ${n}: ${'lorem ipsum dolor sit amet '.repeat(Math.max(2, Math.floor(limit / 60)))}`.trim();
    return Array.from({ length: 6 }, (_, i) => paragraph(i + 1)).join('\n\n');
  }
  return `echo: ${text}`;
}

// Generous: a positive signal ends the wait at once; the first test of a suite also pays for loading the agent stack cold.
const until = (check: () => boolean, what: string) => waitFor(check, what, 20_000);

export function channelContractSuite(target: ChannelContractTarget): void {
  describe(`channel contract: ${target.channel}`, () => {
    let kernel: TestKernel;
    const requests: ModelRequest[] = [];
    const sendingSeen: string[] = [];
    let messageCounter = 0;
    const id = () => `m${Date.now().toString(36)}${++messageCounter}`;
    const deliver = (message: Omit<PlatformMessage, 'messageId'> & { messageId?: string }) =>
      target.platform.deliver({ messageId: id(), ...message });
    const sentTo = (chatId: string) => target.platform.sent().filter((item) => item.chatId === chatId);
    const user = (id: string) => target.ids?.user(id) ?? id;
    const group = (id: string) => target.ids?.group(id) ?? id;

    const boot = async (access: Record<string, unknown>) => {
      await kernel?.dispose();
      const hooks = definePlugin({
        id: 'channel-contract-hooks',
        register(api) {
          api.on('message_sending', (event) => {
            sendingSeen.push(event.content);
            return event.content.includes('CANCEL-ME') ? { cancel: true } : undefined;
          });
        },
      });
      kernel = await createTestKernel({
        plugins: [
          ...agentStackDirs(),
          target.plugin,
          scriptedModel((request) => (requests.push(request), answer(request, target.textLimit))),
          hooks,
        ],
        config: {
          agents: { defaults: { model: 'scripted/echo' } },
          messages: { queue: { debounceMs: 0 } },
          channels: { [target.channel]: { ...target.config(), ...access } },
        },
        env: target.env,
      });
      await kernel.start();
    };

    beforeAll(async () => {
      await target.platform.start?.();
    });
    afterAll(async () => {
      await kernel?.dispose();
      await target.platform.stop?.();
    });
    beforeEach(() => {
      target.platform.reset();
      requests.length = 0;
      sendingSeen.length = 0;
    });

    it('starts the account and reports it running', async () => {
      await boot({ dmPolicy: 'allowlist', allowFrom: [user(OWNER)] });
      const status = await kernel.plugins.kernelServices.channels.status();
      const mine = status.find((channel) => channel.id === target.channel);
      expect(mine?.accounts.some((account) => account.running)).toBe(true);
    });

    it('answers an allowed sender in a direct message', async () => {
      await boot({ dmPolicy: 'allowlist', allowFrom: [user(OWNER)] });
      await deliver({ kind: 'direct', chatId: OWNER, senderId: OWNER, text: 'hello there' });
      await until(() => sentTo(OWNER).length > 0, 'a reply');
      expect(sentTo(OWNER)[0]!.text).toBe('echo: hello there');
      expect(lastUserText(requests[0]!)).toBe('hello there');
    });

    it('drops unknown senders under allowlist, without running the agent', async () => {
      await boot({ dmPolicy: 'allowlist', allowFrom: [user(OWNER)] });
      await deliver({ kind: 'direct', chatId: 'stranger', senderId: 'stranger', text: 'hi' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(sentTo('stranger')).toEqual([]);
      expect(requests).toHaveLength(0);
    });

    it('gives an unknown sender a pairing code; once approved, they are answered', async () => {
      await boot({ dmPolicy: 'pairing' });
      await deliver({ kind: 'direct', chatId: 'newbie', senderId: 'newbie', senderName: 'New Bie', text: 'hi bot' });
      await until(() => sentTo('newbie').length > 0, 'the pairing notice');
      const notice = sentTo('newbie')[0]!.text;
      const code = /pairing code is ([A-Z0-9]{8})/.exec(notice)?.[1];
      expect(code, notice).toBeDefined();
      expect(notice).toContain(`claw pairing approve ${target.channel} ${code}`);
      expect(requests).toHaveLength(0);
      const channels = kernel.plugins.kernelServices.channels;
      expect((await channels.pairing.list(target.channel)).map((request) => request.code)).toContain(code);
      expect(await channels.pairing.approve(target.channel, code!)).toMatchObject({ senderId: user('newbie') });
      await deliver({ kind: 'direct', chatId: 'newbie', senderId: 'newbie', text: 'now?' });
      await until(() => sentTo('newbie').length > 1, 'a reply after approval');
      expect(sentTo('newbie')[1]!.text).toBe('echo: now?');
    });

    it('answers a redelivered message once', async () => {
      await boot({ dmPolicy: 'allowlist', allowFrom: [user(OWNER)] });
      await deliver({ kind: 'direct', chatId: OWNER, senderId: OWNER, text: 'once', messageId: 'same-id' });
      await deliver({ kind: 'direct', chatId: OWNER, senderId: OWNER, text: 'once', messageId: 'same-id' });
      await until(() => sentTo(OWNER).length > 0, 'a reply');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(sentTo(OWNER)).toHaveLength(1);
      expect(requests).toHaveLength(1);
    });

    it(`cuts a long reply into pieces of at most ${target.textLimit} characters, in order`, async () => {
      await boot({ dmPolicy: 'allowlist', allowFrom: [user(OWNER)] });
      await deliver({ kind: 'direct', chatId: OWNER, senderId: OWNER, text: 'LONG please' });
      await until(() => sentTo(OWNER).some((item) => item.text.includes('Paragraph 6')), 'the last piece');
      const pieces = sentTo(OWNER).map((item) => item.text);
      expect(pieces.length).toBeGreaterThan(1);
      for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(target.textLimit);
      const order = pieces.join('\n\n').match(/Paragraph \d/g);
      expect(order).toEqual(['Paragraph 1', 'Paragraph 2', 'Paragraph 3', 'Paragraph 4', 'Paragraph 5', 'Paragraph 6']);
    });

    it('sends through the one outbound path: message_sending sees it and can cancel it', async () => {
      await boot({ dmPolicy: 'allowlist', allowFrom: [user(OWNER)] });
      const channels = kernel.plugins.kernelServices.channels;
      const sent = await channels.send({ channel: target.channel, to: user(OWNER), text: 'proactive hello' });
      expect(sent).toMatchObject({ delivered: true });
      await until(() => sentTo(OWNER).length > 0, 'the proactive message');
      expect(sentTo(OWNER)[0]!.text).toBe('proactive hello');
      expect(sendingSeen).toContain('proactive hello');
      const cancelled = await channels.send({ channel: target.channel, to: user(OWNER), text: 'CANCEL-ME' });
      expect(cancelled).toMatchObject({ delivered: false, cancelled: true });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(sentTo(OWNER).map((item) => item.text)).not.toContain('CANCEL-ME');
    });

    if (target.groups) {
      it('in a group, waits for a mention, then answers with the earlier messages as context', async () => {
        await boot({ dmPolicy: 'allowlist', allowFrom: [user(OWNER)], groupPolicy: 'open' });
        await deliver({
          kind: 'group',
          chatId: 'group-7',
          senderId: 'alice',
          senderName: 'Alice',
          text: 'the meeting moved to Friday',
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(sentTo('group-7')).toEqual([]);
        expect(requests).toHaveLength(0);
        await deliver({
          kind: 'group',
          chatId: 'group-7',
          senderId: 'bob',
          senderName: 'Bob',
          text: 'bot, when is the meeting?',
          mention: true,
        });
        await until(() => sentTo('group-7').length > 0, 'a group reply');
        expect(requests[0]!.systemPrompt).toContain('the meeting moved to Friday');
      });

      it('ignores groups that are not allowed', async () => {
        await boot({
          dmPolicy: 'allowlist',
          allowFrom: [user(OWNER)],
          groupPolicy: 'allowlist',
          groupAllowFrom: [group('group-ok')],
        });
        await deliver({ kind: 'group', chatId: 'group-other', senderId: 'alice', text: 'hey bot', mention: true });
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(requests).toHaveLength(0);
        await deliver({ kind: 'group', chatId: 'group-ok', senderId: 'alice', text: 'hey bot', mention: true });
        await until(() => sentTo('group-ok').length > 0, 'a reply in the allowed group');
      });
    }

    if (target.threads) {
      it('gives a topic its own session and answers in the topic', async () => {
        await boot({
          dmPolicy: 'allowlist',
          allowFrom: [user(OWNER)],
          groupPolicy: 'open',
          groups: { '*': { requireMention: false } },
        });
        await deliver({ kind: 'group', chatId: 'forum-1', senderId: OWNER, text: 'in topic', threadId: '42' });
        await until(() => sentTo('forum-1').length > 0, 'a reply in the topic');
        expect(sentTo('forum-1')[0]!.threadId).toBe('42');
        const loop = (await kernel.capabilities.find('service', 'agent'))?.api as {
          runtime: { store(agent: string): { list(): Promise<Array<{ key: string }>> } };
        };
        const keys = (await loop.runtime.store('main').list()).map((item) => item.key);
        expect(keys).toContain(`agent:main:${target.channel}:group:${group('forum-1')}:topic:42`);
      });
    }
  });
}
