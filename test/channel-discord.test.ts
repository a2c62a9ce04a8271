/**
 * The Discord channel against a loopback fake of Discord's REST API and gateway
 * (test/fakes/discord.ts), driven by the real discord.js: the shared channel contract,
 * then what is particular to Discord — guild allowlists and mentions, threads, 2,000
 * character chunks with code fences, attachments, rate limits, gateway resume, slash
 * commands, typing and the acknowledgement reaction.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../sdk/index.js';
import { channelContractSuite, type PlatformMessage } from '../sdk/channels/contract.js';
import {
  agentStackDirs,
  bundledPluginDir,
  createTestKernel,
  lastUserText,
  scriptedModel,
  type ScriptedAnswer,
  type TestKernel,
} from '../sdk/testing.js';
import JSON5 from 'json5';
import { guildAccess } from '../plugins/channel-discord/access.js';
import { DISCORD_JS } from '../plugins/channel-discord/account.js';
import { apiBaseFrom, resolveAccountSettings } from '../plugins/channel-discord/config.js';
import { parseMessage } from '../plugins/channel-discord/inbound.js';
import { DiscordSender, parseTarget, type RestLike } from '../plugins/channel-discord/send.js';
import { FakeDiscord, type FakeChannel } from './fakes/discord.js';
import { claw, recordInboundDecisions, REPO, startCliGateway, tempDir, type InboundDecision } from './helpers.js';

const DISCORD = fileURLToPath(new URL('../plugins/channel-discord/', import.meta.url));

async function until(check: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// ── The shared channel contract ────────────────────────────────────────────────────

const contractFake = new FakeDiscord();
const contractChannels = new Map<string, FakeChannel>();

function contractChannel(message: PlatformMessage): FakeChannel {
  if (message.kind === 'direct') return contractFake.dmChannelFor(message.senderId);
  let channel = contractChannels.get(message.chatId);
  if (!channel) {
    channel = contractFake.textChannel(`room ${message.chatId}`, message.chatId);
    contractChannels.set(message.chatId, channel);
  }
  return channel;
}

channelContractSuite({
  channel: 'discord',
  plugin: DISCORD,
  config: () => ({ token: contractFake.token }),
  // Read at each boot, once the fake listens.
  get env() {
    return { DISCORD_API_URL: contractFake.apiUrl };
  },
  textLimit: 2000,
  groups: true,
  platform: {
    start: () => contractFake.start(),
    stop: () => contractFake.stop(),
    deliver: async (message) => {
      const channel = contractChannel(message);
      contractFake.dispatch(
        'MESSAGE_CREATE',
        contractFake.userMessage({
          authorId: message.senderId,
          authorName: message.senderName,
          channel,
          content: message.text,
          ...(message.messageId ? { id: message.messageId } : {}),
          mention: message.mention === true,
        }),
      );
    },
    sent: () =>
      contractFake.sent().map((sent) => ({
        chatId: sent.recipientId ?? sent.channelId,
        text: sent.content,
        ...(sent.replyTo ? { replyTo: sent.replyTo } : {}),
      })),
    reset: () => contractFake.reset(),
  },
});

// ── Discord specifics ─────────────────────────────────────────────────────────────

describe('discord channel', () => {
  const fake = new FakeDiscord({ heartbeatIntervalMs: 1000 });
  const OWNER = '200000000000000001';
  const STRANGER = '200000000000000002';
  let kernel: TestKernel | undefined;
  const requests: ModelRequest[] = [];
  let answer: (request: ModelRequest) => ScriptedAnswer = (request) => `echo: ${lastUserText(request)}`;
  let general: FakeChannel;
  let secret: FakeChannel;
  let thread: FakeChannel;
  let dm: FakeChannel;

  beforeAll(async () => {
    await fake.start();
    general = fake.textChannel('general');
    secret = fake.textChannel('secret');
    thread = fake.thread(general, 'planning');
    dm = fake.dmChannelFor(OWNER);
  });
  afterEach(async () => {
    await kernel?.dispose();
    kernel = undefined;
    fake.reset();
    requests.length = 0;
    answer = (request) => `echo: ${lastUserText(request)}`;
  });
  afterAll(() => fake.stop());

  const boot = async (discord: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => {
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), DISCORD, scriptedModel((request) => (requests.push(request), answer(request)))],
      config: {
        agents: { defaults: { model: 'scripted/echo' }, ...((extra.agents as object) ?? {}) },
        messages: { queue: { debounceMs: 0 }, ...((extra.messages as object) ?? {}) },
        channels: { discord: { token: fake.token, dmPolicy: 'allowlist', allowFrom: [OWNER], ...discord } },
      },
      env: { DISCORD_API_URL: fake.apiUrl },
    });
    decisions = await recordInboundDecisions(kernel);
    await kernel.start();
    return kernel;
  };
  /** What the channel pipeline decided for every message the account handed it (see recordInboundDecisions). */
  let decisions: InboundDecision[] = [];
  /** Waits for the pipeline's `nth` decision on message `id` and returns it. */
  const decided = async (id: string, nth = 1) => {
    const mine = () => decisions.filter((decision) => decision.messageId === id);
    await until(() => mine().length >= nth, `decision ${nth} on message ${id}`);
    return mine()[nth - 1]!.status;
  };
  const say = (
    channel: FakeChannel,
    content: string,
    options: { author?: string; mention?: boolean; id?: string; attachments?: unknown[] } = {},
  ) => {
    const message = fake.userMessage({
      authorId: options.author ?? OWNER,
      channel,
      content,
      mention: options.mention,
      ...(options.id ? { id: options.id } : {}),
      ...(options.attachments ? { attachments: options.attachments } : {}),
    });
    fake.dispatch('MESSAGE_CREATE', message);
    return message.id as string;
  };
  const sentIn = (channel: FakeChannel) => fake.sent().filter((sent) => sent.channelId === channel.id);

  it('logs in through /gateway/bot with the token, identifies with the message intents, and keeps the token out of status', async () => {
    const k = await boot();
    const identify = fake.gatewayOps.filter((op) => op.op === 2).at(-1)!;
    expect(identify.d.token).toBe(fake.token);
    // Guilds | GuildMessages | DirectMessages | MessageContent
    expect(identify.d.intents & ((1 << 0) | (1 << 9) | (1 << 12) | (1 << 15))).toBe(
      (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15),
    );
    const status = await k.plugins.kernelServices.channels.status();
    const discord = status.find((channel) => channel.id === 'discord')!;
    expect(discord.accounts[0]).toMatchObject({ running: true, connected: true, username: 'clawbot' });
    expect(JSON.stringify(status)).not.toContain(fake.token);
    expect(k.plugins.kernelServices.redact.text(`header Bot ${fake.token}`)).not.toContain(fake.token);
  });

  it('rejects a token Discord does not know, without printing it', async () => {
    const wrong = `${fake.token.split('.')[0]}.AAAA.wrongwrongwrongwrongwrongwrong`;
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), DISCORD, scriptedModel(() => 'x')],
      config: { agents: { defaults: { model: 'scripted/echo' } }, channels: { discord: { token: wrong } } },
      env: { DISCORD_API_URL: fake.apiUrl },
    });
    await kernel.start();
    const account = (await kernel.plugins.kernelServices.channels.status()).find((channel) => channel.id === 'discord')!
      .accounts[0]!;
    expect(account.running).toBe(false);
    expect(account.lastError).toMatch(/rejected the bot token/);
    expect(JSON.stringify(account)).not.toContain(wrong);
  });

  it('answers in a guild channel only when mentioned, and keeps the unaddressed message as context', async () => {
    await boot({ groupPolicy: 'open', replyToMode: 'first' });
    const context = say(general, 'the release is on Thursday', { author: STRANGER });
    expect(await decided(context)).toBe('history');
    expect(sentIn(general)).toEqual([]);
    const asked = say(general, 'when is the release?', { author: STRANGER, mention: true });
    await until(() => sentIn(general).length > 0, 'a guild reply');
    expect(sentIn(general)[0]!.content).toBe('echo: when is the release?');
    // replyToMode "first": a native reply to the message that asked.
    expect(sentIn(general)[0]!.replyTo).toBe(asked);
    expect(requests[0]!.systemPrompt).toContain('the release is on Thursday');
  });

  it('follows guilds.<id>.channels as an allowlist, with requireMention per channel', async () => {
    await boot({
      groupPolicy: 'allowlist',
      guilds: { [fake.guildId]: { requireMention: true, channels: { general: { requireMention: false } } } },
    });
    const unlisted = say(secret, 'hello in secret', { mention: true });
    say(general, 'hello in general, no mention');
    await until(() => sentIn(general).length > 0, 'a reply in the listed channel');
    expect(await decided(unlisted)).toBe('blocked');
    expect(sentIn(secret)).toEqual([]);
    expect(requests.map(lastUserText)).toEqual(['hello in general, no mention']);
    // replyToMode "off" (the default): a plain message.
    expect(sentIn(general)[0]!.replyTo).toBeUndefined();
  });

  it('answers in a thread, inside the thread, in its own session', async () => {
    const k = await boot({ groupPolicy: 'open', guilds: { [fake.guildId]: { requireMention: false } } });
    say(thread, 'in the thread');
    await until(() => sentIn(thread).length > 0, 'a reply in the thread');
    expect(sentIn(general)).toEqual([]);
    const agent = (await k.capabilities.find('service', 'agent'))?.api as {
      runtime: { store(agent: string): { list(): Promise<Array<{ key: string }>> } };
    };
    const keys = (await agent.runtime.store('main').list()).map((item) => item.key);
    expect(keys.some((key) => key.includes(`discord:channel:${general.id}`) && key.endsWith(`:${thread.id}`))).toBe(
      true,
    );
  });

  it('cuts a long reply into 2,000-character pieces without splitting a code fence', async () => {
    const code = Array.from({ length: 40 }, (_, i) => `const value${i} = compute(${i}); // step ${i}`).join('\n');
    const reply = `${'Intro paragraph. '.repeat(70)}\n\n\`\`\`ts\n${code}\n\`\`\`\n\n${'Outro text. '.repeat(60)}`;
    answer = () => reply;
    await boot();
    say(dm, 'show me code');
    await until(() => sentIn(dm).some((sent) => sent.content.includes('Outro')), 'the last piece');
    const pieces = sentIn(dm).map((sent) => sent.content);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(2000);
      expect((piece.match(/```/g) ?? []).length % 2).toBe(0);
    }
    const withCode = pieces.filter((piece) => piece.includes('```ts'));
    expect(withCode).toHaveLength(1);
    expect(withCode[0]).toContain(code);
  });

  it('downloads attachments to the media folder and uploads outbound media as files', async () => {
    const k = await boot();
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    say(dm, 'look at these', {
      attachments: [
        fake.attachment('shot.png', png, 'image/png'),
        fake.attachment('notes.txt', Buffer.from('remember the milk'), 'text/plain'),
      ],
    });
    await until(() => requests.length > 0, 'the model request');
    const user = requests[0]!.messages.findLast((message) => message.role === 'user')!;
    expect(user.content).toEqual(
      expect.arrayContaining([{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }]),
    );
    const saved = /saved at (\S+notes\.txt)\]/.exec(lastUserText(requests[0]!))?.[1];
    expect(saved).toBeDefined();
    expect(readFileSync(saved!, 'utf8')).toBe('remember the milk');
    expect(statSync(saved!).mode & 0o777).toBe(0o600);

    mkdirSync(k.paths.workspaceDir, { recursive: true });
    const chart = join(k.paths.workspaceDir, 'chart.png');
    writeFileSync(chart, png);
    const result = await k.plugins.kernelServices.channels.send({
      channel: 'discord',
      to: OWNER,
      text: 'see attached',
      media: [chart],
    });
    expect(result).toMatchObject({ delivered: true });
    const upload = fake.sent().find((sent) => sent.files.length > 0)!;
    expect(upload.files[0]).toMatchObject({ name: 'chart.png' });
    expect(upload.files[0]!.data.equals(png)).toBe(true);
    expect(upload.channelId).toBe(dm.id);
  });

  it('waits out a 429 (retry_after) and sends once; a global limit holds every route', async () => {
    const k = await boot();
    const channels = k.plugins.kernelServices.channels;
    fake.rateLimit(/^POST \/channels\/\d+\/messages$/, 0.6);
    const started = performance.now();
    expect(
      await channels.send({ channel: 'discord', to: `channel:${general.id}`, text: 'after the limit' }),
    ).toMatchObject({ delivered: true, attempts: 1 });
    const posts = fake
      .log()
      .filter((call) => call.method === 'POST' && call.path === `/channels/${general.id}/messages`);
    expect(posts.map((call) => call.status)).toEqual([429, 200]);
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(550);
    expect(performance.now() - started).toBeGreaterThanOrEqual(550);
    expect(sentIn(general).map((sent) => sent.content)).toEqual(['after the limit']);

    fake.reset();
    fake.rateLimit(/^POST \/channels\/\d+\/messages$/, 1.5, { global: true });
    const first = channels.send({ channel: 'discord', to: `channel:${general.id}`, text: 'one' });
    await until(() => fake.log().some((call) => call.status === 429), 'the global 429');
    // Whether or not the client has read the 429 yet, the other route waits too (the fake, like
    // Discord, keeps answering 429 until the global limit runs out).
    const second = channels.send({ channel: 'discord', to: `channel:${secret.id}`, text: 'two' });
    await Promise.all([first, second]);
    const limitedAt = fake.log().find((call) => call.status === 429)!.at;
    const after = fake.log().filter((call) => call.status === 200 && /^\/channels\/\d+\/messages$/.test(call.path));
    expect(after).toHaveLength(2);
    for (const call of after) expect(call.at - limitedAt).toBeGreaterThanOrEqual(1400);
  });

  it('resumes after a dropped socket: what was missed is delivered once, nothing twice', async () => {
    const k = await boot();
    const identifies = fake.gatewayOps.filter((op) => op.op === 2).length;
    const firstId = say(dm, 'before the drop');
    await until(() => sentIn(dm).length === 1, 'the first reply');
    fake.dropSocket();
    // Sent while the bot is disconnected: Discord keeps it for the session and replays it.
    say(dm, 'during the drop');
    await until(() => fake.gatewayOps.some((op) => op.op === 6) && fake.connected, 'a RESUME');
    await until(() => sentIn(dm).length === 2, 'the missed message answered');
    // Discord may deliver a message again after a resume; it is answered once.
    say(dm, 'before the drop', { id: firstId });
    expect(await decided(firstId, 2)).toBe('duplicate');
    expect(sentIn(dm).map((sent) => sent.content)).toEqual(['echo: before the drop', 'echo: during the drop']);
    // Resumed, not identified again (a new session would have lost the missed message).
    expect(fake.gatewayOps.filter((op) => op.op === 2)).toHaveLength(identifies);
    const resume = fake.gatewayOps.find((op) => op.op === 6)!;
    expect(resume.d.token).toBe(fake.token);
    const account = (await k.plugins.kernelServices.channels.status()).find((channel) => channel.id === 'discord')!
      .accounts[0]!;
    expect(account).toMatchObject({ connected: true, resumes: 1 });
  });

  it('registers the slash commands and answers one through the interaction', async () => {
    await boot();
    await until(() => fake.commands.length > 0, 'the command registration');
    const names = fake.commands.map((command) => command.name);
    expect(names).toEqual(expect.arrayContaining(['status', 'new', 'model', 'help']));
    expect(fake.commands.find((command) => command.name === 'model').options[0]).toMatchObject({
      name: 'args',
      type: 3,
    });
    const id = fake.interaction({ name: 'status', userId: OWNER, channel: dm });
    await until(() => fake.sent().some((sent) => sent.via === 'interaction-original'), 'the slash command answer');
    const callback = fake.log().find((call) => call.path.startsWith(`/interactions/${id}/`))!;
    expect(callback.body).toMatchObject({ type: 5, data: { flags: 64 } });
    const answerSent = fake.sent().find((sent) => sent.via === 'interaction-original')!;
    expect(answerSent.replyTo).toBe(id);
    expect(answerSent.content).toMatch(/model|session/i);
    expect(requests).toHaveLength(0);
    // Delivered again (after a resume): acknowledged and answered once.
    fake.redeliver(id);
    // Gateway events are handled in order and a redelivered interaction is dropped as it arrives,
    // so once a message dispatched after it is decided, the redelivery has been dealt with.
    // (In another channel: a reply in this DM would still go out as the interaction's follow-up.)
    await decided(say(general, 'after the redelivery', { author: STRANGER }));
    expect(decisions.filter((decision) => decision.messageId === id)).toHaveLength(1);
    expect(fake.log().filter((call) => call.path.startsWith(`/interactions/${id}/`))).toHaveLength(1);
    expect(fake.sent().filter((sent) => sent.replyTo === id)).toHaveLength(1);

    const refused = fake.interaction({ name: 'status', userId: STRANGER, channel: fake.dmChannelFor(STRANGER) });
    await until(() => fake.sent().some((sent) => sent.replyTo === refused), 'the refusal');
    expect(fake.sent().find((sent) => sent.replyTo === refused)!.content).toMatch(/not authorized/);
  });

  it('shows typing while working and puts the acknowledgement reaction on the message', async () => {
    await boot({}, { messages: { ackReaction: '✅', ackReactionScope: 'all' } });
    const id = say(dm, 'hello');
    await until(() => sentIn(dm).length > 0, 'the reply');
    const paths = () => fake.log().map((call) => `${call.method} ${call.path}`);
    // The reaction goes out once the pipeline took the message; with an instant model it may trail the reply.
    await until(
      () => paths().includes(`PUT /channels/${dm.id}/messages/${id}/reactions/${encodeURIComponent('✅')}/@me`),
      'the ✅ reaction',
    );
    expect(paths()).toContain(`POST /channels/${dm.id}/typing`);
  });

  it('takes the reaction from the channel first, then messages.ackReaction, then the agent identity emoji', async () => {
    const reacted = () =>
      fake
        .log()
        .filter((call) => call.path.includes('/reactions/'))
        .map((call) => decodeURIComponent(call.path.split('/reactions/')[1]!.split('/')[0]!));
    await boot({ ackReaction: '🔥' }, { messages: { ackReaction: '✅', ackReactionScope: 'all' } });
    say(dm, 'one');
    await until(() => reacted().length > 0, 'a reaction');
    expect(reacted()).toEqual(['🔥']);
    await kernel!.dispose();
    fake.reset();
    await boot(
      {},
      { messages: { ackReactionScope: 'direct' }, agents: { list: [{ id: 'main', identity: { emoji: '🦀' } }] } },
    );
    say(dm, 'two');
    await until(() => reacted().length > 0, 'a reaction');
    expect(reacted()).toEqual(['🦀']);
  });

  it('puts no reaction on a DM under the default scope (group mentions only)', async () => {
    await boot();
    say(dm, 'hello');
    await until(() => sentIn(dm).length > 0, 'the reply');
    expect(fake.log().some((call) => call.path.includes('/reactions/'))).toBe(false);
  });
});

describe('discord pieces', () => {
  it('parses messages: DMs by user, threads under their parent, mentions stripped, bots ignored', () => {
    const bot = '1';
    const base = {
      id: '10',
      channel_id: '20',
      author: { id: '30', username: 'ann', global_name: 'Ann' },
      content: 'hi',
      type: 0,
    };
    expect(parseMessage(base, bot, { id: '20', type: 1 })?.inbound).toMatchObject({
      peer: { kind: 'direct', id: '30' },
      sender: { id: '30', name: 'Ann' },
      mentioned: true,
    });
    const inThread = parseMessage({ ...base, guild_id: '5', content: '<@1> plan?', mentions: [{ id: '1' }] }, bot, {
      id: '20',
      type: 11,
      parentId: '21',
    });
    expect(inThread?.inbound).toMatchObject({
      peer: { kind: 'channel', id: '21' },
      threadId: '20',
      text: 'plan?',
      mentioned: true,
      guildId: '5',
    });
    expect(
      parseMessage(
        { ...base, guild_id: '5', referenced_message: { id: '9', author: { id: '1' }, content: 'earlier' } },
        bot,
        { id: '20', type: 0 },
      )?.inbound.mentioned,
    ).toBe(true);
    expect(parseMessage({ ...base, guild_id: '5' }, bot, { id: '20', type: 0 })?.inbound.mentioned).toBe(false);
    expect(parseMessage({ ...base, author: { id: '31', bot: true } }, bot, undefined)).toBeUndefined();
    expect(parseMessage({ ...base, author: { id: '1' } }, bot, undefined)).toBeUndefined();
    expect(parseMessage({ ...base, type: 7 }, bot, undefined)).toBeUndefined();
  });

  it('decides guild access as OpenClaw documents it', () => {
    const message = (channel: string, extra: object = {}) => ({
      accountId: 'default',
      peer: { kind: 'channel' as const, id: channel },
      sender: { id: 'u1' },
      text: 'x',
      messageId: 'm',
      guildId: 'g1',
      ...extra,
    });
    expect(guildAccess(message('c1'), {})).toBeUndefined();
    const config = {
      guilds: {
        g1: {
          requireMention: true,
          users: ['u1'],
          channels: { 'help-desk': { requireMention: false }, c2: { enabled: false } },
        },
      },
    };
    expect(guildAccess(message('c1', { peerName: 'Help Desk' }), config)).toEqual({
      allow: true,
      requireMention: false,
    });
    expect(guildAccess(message('c2'), config)).toMatchObject({ allow: false });
    expect(guildAccess(message('c3'), config)).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/not listed/),
    });
    expect(guildAccess(message('c1', { peerName: 'help-desk', sender: { id: 'u2' } }), config)).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/users or roles/),
    });
    expect(
      guildAccess(message('c1', { sender: { id: 'u2' }, memberRoleIds: ['r1'] }), {
        guilds: { g1: { roles: ['r1'] } },
      }),
    ).toEqual({ allow: true, requireMention: true });
    expect(guildAccess(message('c1', { guildId: 'g2' }), config)).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/not in channels.discord.guilds/),
    });
    expect(
      guildAccess(message('c1', { threadId: 't1' }), {
        guilds: { g1: { channels: { c1: { requireMention: false } } } },
      }),
    ).toEqual({ allow: true, requireMention: false });
  });

  it('declares discord.js as a runtime dependency, as the plugin loads it', () => {
    const manifest = JSON5.parse(readFileSync(join(DISCORD, 'openclaw.plugin.json'), 'utf8'));
    expect(manifest.runtimeDependencies).toEqual([DISCORD_JS]);
    expect(manifest.channels).toEqual(['discord']);
  });

  it('shapes a piece: files uploaded, web links in the text, embeds suppressed, no @everyone', () => {
    const sender = new DiscordSender({} as RestLike, { mediaMaxBytes: 10, replyToMode: 'off', suppressEmbeds: true });
    const piece = sender.payload({
      to: '1',
      text: 'see',
      media: [
        { url: 'https://example.com/a.png' },
        { url: `data:text/plain;base64,${Buffer.from('hi').toString('base64')}` },
      ],
    });
    expect(piece.body).toEqual({
      content: 'see\nhttps://example.com/a.png',
      allowed_mentions: { parse: ['users'] },
      flags: 4,
    });
    expect(piece.files).toEqual([{ name: 'file.plain', data: Buffer.from('hi'), contentType: 'text/plain' }]);
    expect(() =>
      sender.payload({ to: '1', media: [{ url: `data:text/plain;base64,${Buffer.alloc(20).toString('base64')}` }] }),
    ).toThrow(/mediaMaxMb/);
    expect(() => sender.payload({ to: '1', media: [{ url: '/nonexistent/file.png' }] })).toThrow(/no such file/);
  });

  it('reads targets, API bases and settings, and says what is wrong', () => {
    expect(parseTarget('user:42')).toEqual({ kind: 'user', id: '42' });
    expect(parseTarget('<@!42>')).toEqual({ kind: 'user', id: '42' });
    expect(parseTarget('<#7>')).toEqual({ kind: 'channel', id: '7' });
    expect(parseTarget('7')).toEqual({ kind: 'either', id: '7' });
    expect(apiBaseFrom({})).toEqual({ apiBase: 'https://discord.com/api', apiVersion: '10' });
    expect(apiBaseFrom({ DISCORD_API_URL: 'http://127.0.0.1:9/api/v10' })).toEqual({
      apiBase: 'http://127.0.0.1:9/api',
      apiVersion: '10',
    });
    expect(() => apiBaseFrom({ DISCORD_API_URL: 'http://discord.example.com/api/v10' })).toThrow(/https/);
    expect(() => resolveAccountSettings('default', {}, {})).toThrow(/channels\.discord\.token/);
    expect(() => resolveAccountSettings('default', { token: 'Bot abc' }, {})).toThrow(
      /does not look like a Discord bot token/,
    );
    expect(() => resolveAccountSettings('default', { token: 'a.b.c', replyToMode: 'all' }, {})).toThrow(/replyToMode/);
    expect(resolveAccountSettings('default', {}, { DISCORD_BOT_TOKEN: 'a.b.c' })).toMatchObject({
      token: 'a.b.c',
      ephemeral: true,
      nativeCommands: true,
      replyToMode: 'off',
    });
    expect(() => resolveAccountSettings('ops', {}, { DISCORD_BOT_TOKEN: 'a.b.c' })).toThrow(
      /account "ops" has no bot token/,
    );
  });
});

describe('discord.js loading', () => {
  const fake = new FakeDiscord();
  beforeAll(() => fake.start());
  afterAll(() => fake.stop());

  it('is not loaded when the plugin registers, only when an account starts', async () => {
    const script = `
      const { createJiti } = require('jiti');
      const jiti = createJiti(${JSON.stringify(join(REPO, 'test', 'lazy-discord.cjs'))});
      const loaded = () => Object.keys(require.cache).some((file) => /[\\\\/]node_modules[\\\\/]discord\\.js[\\\\/]/.test(file));
      (async () => {
        const { createTestKernel } = await jiti.import(${JSON.stringify(join(REPO, 'sdk', 'testing.ts'))});
        const kernel = await createTestKernel({
          plugins: [${JSON.stringify(bundledPluginDir('channels'))}, ${JSON.stringify(DISCORD)}],
          config: { channels: { discord: { token: ${JSON.stringify(fake.token)}, dmPolicy: 'allowlist', allowFrom: ['1'] } } },
          env: { DISCORD_API_URL: ${JSON.stringify(fake.apiUrl)} },
        });
        const channel = await kernel.capabilities.get('channel', 'discord');
        const afterRegister = loaded();
        await kernel.start();
        const afterStart = loaded();
        await kernel.dispose();
        process.stdout.write(JSON.stringify({ registered: channel.id, afterRegister, afterStart }));
      })().catch((error) => { console.error(error); process.exit(1); });
    `;
    // Asynchronously: the fake Discord answers from this process.
    const child = spawn(process.execPath, ['-e', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ registered: 'discord', afterRegister: false, afterStart: true });
  }, 60_000);
});

describe('claw message send to Discord (no gateway running)', () => {
  const fake = new FakeDiscord();
  beforeAll(() => fake.start());
  afterAll(() => fake.stop());

  it('sends through the REST API from the CLI process, to a channel and to a user', async () => {
    const room = fake.textChannel('announcements');
    const env = {
      OPENCLAW_STATE_DIR: tempDir('claw-discord-send-'),
      DISCORD_API_URL: fake.apiUrl,
      DISCORD_BOT_TOKEN: fake.token,
    };
    writeFileSync(
      join(env.OPENCLAW_STATE_DIR, 'openclaw.json'),
      JSON.stringify({ channels: { discord: { dmPolicy: 'allowlist', allowFrom: ['1'] } } }),
    );
    const toRoom = await claw(
      ['message', 'send', '--channel', 'discord', '--to', `channel:${room.id}`, 'deploy finished'],
      env,
    );
    expect(toRoom.code, toRoom.stderr).toBe(0);
    const toUser = await claw(
      ['message', 'send', '--channel', 'discord', '--to', '400000000000000001', 'hello you'],
      env,
    );
    expect(toUser.code, toUser.stderr).toBe(0);
    expect(fake.sent().map((sent) => [sent.recipientId ?? sent.channelId, sent.content])).toEqual([
      [room.id, 'deploy finished'],
      ['400000000000000001', 'hello you'],
    ]);
    // A bare id is tried as a channel first; "Unknown Channel" makes it a user's DM.
    expect(fake.log().map((call) => `${call.method} ${call.path} ${call.status}`)).toContain(
      'POST /users/@me/channels 200',
    );
  }, 60_000);
});

describe('claw channels add with a gateway running', () => {
  const fake = new FakeDiscord();
  beforeAll(() => fake.start());
  afterAll(() => fake.stop());

  it('goes through the gateway, which starts the bot at once; logout stops it', async () => {
    const env = { OPENCLAW_STATE_DIR: tempDir('claw-discord-gw-'), DISCORD_API_URL: fake.apiUrl };
    await startCliGateway(env);
    const added = await claw(['channels', 'add', '--channel', 'discord', '--token', fake.token], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/running gateway has applied it/);
    await until(
      () => fake.connected && fake.gatewayOps.some((op) => op.op === 2 && op.d.token === fake.token),
      'the bot identifying',
      20_000,
    );
    const status = await claw(['channels', 'status', '--json'], env);
    expect(status.stdout).not.toContain(fake.token);
    expect(
      JSON.parse(status.stdout).channels.find((channel: { id: string }) => channel.id === 'discord').accounts[0],
    ).toMatchObject({ running: true, connected: true });
    expect((await claw(['channels', 'logout', '--channel', 'discord'], env)).code).toBe(0);
    await until(() => !fake.connected, 'the bot disconnecting', 20_000);
  }, 60_000);
});

describe('claw channels add / login / logout / remove', () => {
  const fake = new FakeDiscord();
  beforeAll(() => fake.start());
  afterAll(() => fake.stop());

  it('checks the bot token with /users/@me, stores it in channels.discord (per account), never prints it, and takes it away again', async () => {
    const env = { OPENCLAW_STATE_DIR: tempDir('claw-discord-cli-'), DISCORD_API_URL: fake.apiUrl };
    const token = fake.token;
    const refused = await claw(['channels', 'add', '--channel', 'discord', '--token', 'aaaa.bbbb.cccccccccccc'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Discord refused the token');
    expect(existsSync(join(env.OPENCLAW_STATE_DIR, 'openclaw.json'))).toBe(false);
    const config = () => JSON.parse(readFileSync(join(env.OPENCLAW_STATE_DIR, 'openclaw.json'), 'utf8'));
    const added = await claw(['channels', 'add', '--channel', 'discord', '--token', token], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout + added.stderr).not.toContain(token);
    expect(config().channels.discord).toEqual({ token });
    expect(statSync(join(env.OPENCLAW_STATE_DIR, 'openclaw.json')).mode & 0o777).toBe(0o600);
    expect(
      (await claw(['channels', 'login', '--channel', 'discord', '--account', 'ops', '--token', token], env)).code,
    ).toBe(0);
    expect(config().channels.discord.accounts.ops).toEqual({ token });
    const listed = await claw(['channels', 'list', '--json'], env);
    expect(
      JSON.parse(listed.stdout).channels.find((channel: { id: string }) => channel.id === 'discord'),
    ).toMatchObject({ configured: true, pluginId: 'channel-discord' });
    expect((await claw(['channels', 'logout', '--channel', 'discord'], env)).code).toBe(0);
    expect(config().channels.discord.token).toBeUndefined();
    expect((await claw(['channels', 'remove', '--channel', 'discord', '--account', 'ops'], env)).code).toBe(0);
    expect(config().channels.discord.accounts.ops).toEqual({ token, enabled: false });
    expect((await claw(['channels', 'remove', '--channel', 'discord', '--delete'], env)).code).toBe(0);
    expect(config().channels.discord).toBeUndefined();
    const wrong = await claw(['channels', 'add', '--channel', 'discord'], env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--token/);
  }, 90_000);
});
