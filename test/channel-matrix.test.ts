/**
 * The Matrix channel against a loopback fake homeserver (test/fakes/matrix.ts), driven by
 * the real matrix-js-sdk: the shared channel contract, then what is particular to Matrix —
 * logins (token, password with the device cached), DMs and rooms, mention gating and room
 * allowlists, invites per autoJoin, threads, HTML bodies, media both ways, typing, read
 * receipts and the ack reaction, rate limits, encrypted rooms reported, and the stored
 * `since`: a restart, a replayed batch and a homeserver that goes away lose and double
 * nothing.
 */
import JSON5 from 'json5';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../sdk/index.js';
import { channelContractSuite } from '../sdk/channels/contract.js';
import {
  agentStackDirs,
  createTestKernel,
  lastUserText,
  scriptedModel,
  type ScriptedAnswer,
  type TestKernel,
} from '../sdk/testing.js';
import { roomAccess } from '../plugins/channel-matrix/access.js';
import { accountConfig, ignoredSettings, resolveMatrixSettings } from '../plugins/channel-matrix/config.js';
import { markdownToMatrixHtml, textContent } from '../plugins/channel-matrix/format.js';
import { newRoom, parseMessage, stripReplyFallback } from '../plugins/channel-matrix/inbound.js';
import { FakeHomeserver, type MatrixEvent } from './fakes/matrix.js';
import { claw, recordInboundDecisions, tempDir, type InboundDecision } from './helpers.js';

const MATRIX = fileURLToPath(new URL('../plugins/channel-matrix/', import.meta.url));
const BOT = '@claw:claw.test';
const BOT_TOKEN = 'syt_bot_token_6f1d0c2a';
const BOT_PASSWORD = 'bot-password-93ab';

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Reads `read()` until `ok` holds for what it returns. */
async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() - start > 10_000) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const botMessages = (fake: FakeHomeserver, roomId?: string) =>
  fake.sentBy(BOT).filter((event) => event.type === 'm.room.message' && (!roomId || event.room_id === roomId));

/**
 * The bot has read everything up to `position` (default: now): its next long poll starts at or
 * after it. Take the position right after the event that matters — later typing and receipts
 * move it on without waking the bot.
 */
async function caughtUp(fake: FakeHomeserver, position = fake.position): Promise<void> {
  await until(
    () =>
      fake.heldSyncs(BOT) > 0 &&
      fake.syncRequests(BOT).some((request) => Number(request.since?.slice(1) ?? -1) >= position),
    'the bot to sync past the latest event',
  );
}

// ── The shared channel contract ────────────────────────────────────────────────────

const contractFake = new FakeHomeserver();
const contractRooms = new Map<string, string>(); // suite chat id → room id
const contractChats = new Map<string, string>(); // room id → suite chat id
const seenIds = new Set<string>();
let sentOffset = 0;
const contractUser = (id: string) => `@${id}:claw.test`;
const contractRoom = (chatId: string, kind: 'direct' | 'group'): string => {
  const known = contractRooms.get(chatId);
  if (known) return known;
  const roomId =
    kind === 'direct'
      ? contractFake.createRoom({ creator: contractUser(chatId), members: [BOT], direct: true })
      : contractFake.createRoom({ creator: '@admin:claw.test', members: [BOT], name: `Room ${chatId}` });
  contractRooms.set(chatId, roomId);
  contractChats.set(roomId, chatId);
  return roomId;
};

channelContractSuite({
  channel: 'matrix',
  plugin: MATRIX,
  config: () => ({
    homeserver: contractFake.url,
    accessToken: BOT_TOKEN,
    network: { dangerouslyAllowPrivateNetwork: true },
  }),
  textLimit: 4000,
  groups: true,
  ids: { user: contractUser, group: (id) => contractRoom(id, 'group') },
  platform: {
    start: async () => {
      await contractFake.start();
      contractFake.addUser({ userId: BOT, accessToken: BOT_TOKEN, displayName: 'Claw' });
    },
    stop: () => contractFake.stop(),
    deliver: async (message) => {
      // A homeserver never hands out one event twice; redelivery is the restart test's (below).
      if (message.messageId && seenIds.has(message.messageId)) return;
      if (message.messageId) seenIds.add(message.messageId);
      const sender = contractUser(message.senderId);
      contractFake.addUser({ userId: sender, ...(message.senderName ? { displayName: message.senderName } : {}) });
      const roomId = contractRoom(message.chatId, message.kind);
      if (contractFake.membership(roomId, sender) !== 'join') contractFake.join(roomId, sender);
      await caughtUp(contractFake);
      contractFake.sendAs(sender, roomId, {
        msgtype: 'm.text',
        body: message.mention ? `Claw: ${message.text}` : message.text,
        ...(message.mention ? { 'm.mentions': { user_ids: [BOT] } } : {}),
      });
      await caughtUp(contractFake);
    },
    sent: () =>
      botMessages(contractFake)
        .slice(sentOffset)
        .map((event) => ({
          chatId: contractChats.get(event.room_id) ?? event.room_id,
          text: String(event.content.body),
        })),
    reset: () => {
      sentOffset = botMessages(contractFake).length;
    },
  },
});

// ── Pure parts ──────────────────────────────────────────────────────────────────────

describe('matrix config, format and parsing', () => {
  it('names what is wrong in the config, and refuses encryption it cannot do', () => {
    const env = {};
    expect(() => resolveMatrixSettings('default', {}, env)).toThrow(/channels\.matrix\.homeserver/);
    expect(() =>
      resolveMatrixSettings('default', { homeserver: 'http://matrix.example.org', accessToken: 'x' }, env),
    ).toThrow(/https URL/);
    expect(() => resolveMatrixSettings('default', { homeserver: 'https://m.example.org' }, env)).toThrow(
      /needs a login/,
    );
    expect(() => resolveMatrixSettings('work', { homeserver: 'https://m.example.org', password: 'p' }, env)).toThrow(
      /channels\.matrix\.accounts\.work\.password needs channels\.matrix\.accounts\.work\.userId/,
    );
    expect(() =>
      resolveMatrixSettings('default', { homeserver: 'https://m.example.org', userId: 'bot', password: 'p' }, env),
    ).toThrow(/full Matrix user id/);
    expect(() =>
      resolveMatrixSettings(
        'default',
        { homeserver: 'https://m.example.org', accessToken: 't', encryption: true },
        env,
      ),
    ).toThrow(/end-to-end encryption is not supported/);
    expect(() =>
      resolveMatrixSettings('default', { homeserver: 'https://m.example.org', accessToken: 't', autoJoin: 'yes' }, env),
    ).toThrow(/autoJoin must be one of "always", "allowlist", "off"/);
    const fromEnv = resolveMatrixSettings(
      'default',
      {},
      {
        MATRIX_HOMESERVER: 'matrix.example.org',
        MATRIX_ACCESS_TOKEN: 'tok',
      },
    );
    expect(fromEnv).toMatchObject({ homeserver: 'https://matrix.example.org', accessToken: 'tok', autoJoin: 'off' });
    expect(ignoredSettings('default', { streaming: { mode: 'partial' }, joinIntro: true })).toEqual([
      'channels.matrix.streaming is an OpenClaw Matrix setting claw does not implement; ignored',
      'channels.matrix.joinIntro is an OpenClaw Matrix setting claw does not implement; ignored',
    ]);
  });

  it('an account with a login of its own never inherits the top-level token', () => {
    const section = {
      homeserver: 'https://m.example.org',
      accessToken: 'top',
      groupPolicy: 'open',
      accounts: { pw: { userId: '@b:m.example.org', password: 'p' }, plain: { groupPolicy: 'disabled' } },
    };
    expect(accountConfig(section, 'pw')).toEqual({
      homeserver: 'https://m.example.org',
      groupPolicy: 'open',
      userId: '@b:m.example.org',
      password: 'p',
    });
    expect(accountConfig(section, 'plain')).toMatchObject({ accessToken: 'top', groupPolicy: 'disabled' });
  });

  it('renders Markdown as safe Matrix HTML and keeps plain text plain', () => {
    expect(textContent('just words')).toEqual({ msgtype: 'm.text', body: 'just words' });
    const html = markdownToMatrixHtml(
      '# Title\n\nSome **bold**, _it_ and `a<b`.\n\n- one\n- [two](https://x.example/?a=1&b=2)\n\n```js\nif (a < b) {}\n```\n<script>x</script> [bad](javascript:alert(1))',
    );
    expect(html).toBe(
      '<h1>Title</h1><p>Some <strong>bold</strong>, <em>it</em> and <code>a&lt;b</code>.</p><ul><li>one</li><li><a href="https://x.example/?a=1&amp;b=2">two</a></li></ul><pre><code class="language-js">if (a &lt; b) {}</code></pre><p>&lt;script&gt;x&lt;/script&gt; [bad](javascript:alert(1))</p>',
    );
  });

  it('reads mentions, replies, threads and DMs from events', () => {
    const room = newRoom('!r:claw.test');
    room.name = 'Team';
    room.members.set(BOT, 'Claw');
    room.members.set('@ann:claw.test', 'Ann');
    room.members.set('@bo:claw.test', undefined);
    const bot = { userId: BOT, sentEventIds: new Set(['$botsaid']) };
    const settings = { dmSessionScope: 'per-user', threadReplies: 'inbound', dmThreadReplies: 'inbound' } as const;
    const event = (content: Record<string, unknown>) => ({
      type: 'm.room.message',
      event_id: '$e1',
      sender: '@ann:claw.test',
      origin_server_ts: 1,
      content: { msgtype: 'm.text', ...content },
    });
    expect(parseMessage(event({ body: 'hello all' }), room, bot, settings)?.inbound).toMatchObject({
      peer: { kind: 'group', id: '!r:claw.test' },
      sender: { id: '@ann:claw.test', name: 'Ann' },
      mentioned: false,
      peerName: 'Team',
    });
    expect(parseMessage(event({ body: 'hey claw, help' }), room, bot, settings)?.inbound.mentioned).toBe(true);
    // Intentional mentions win over the body: naming the bot without m.mentions listing it is no mention.
    expect(parseMessage(event({ body: 'claw', 'm.mentions': {} }), room, bot, settings)?.inbound.mentioned).toBe(false);
    const reply = parseMessage(
      event({
        body: '> <@claw:claw.test> earlier\n\nthanks',
        'm.relates_to': { 'm.in_reply_to': { event_id: '$botsaid' } },
      }),
      room,
      bot,
      settings,
    )!.inbound;
    expect(reply).toMatchObject({ text: 'thanks', mentioned: true, replyTo: { messageId: '$botsaid' } });
    expect(
      parseMessage(
        event({ body: 'in thread', 'm.relates_to': { rel_type: 'm.thread', event_id: '$root' } }),
        room,
        bot,
        settings,
      )?.inbound.threadId,
    ).toBe('$root');
    expect(
      parseMessage(event({ body: 'x' }), room, bot, { ...settings, threadReplies: 'always' })?.inbound.threadId,
    ).toBe('$e1');
    expect(parseMessage(event({ msgtype: 'm.notice', body: 'bot talk' }), room, bot, settings)).toBeUndefined();
    expect(
      parseMessage(
        event({ body: '* fixed', 'm.relates_to': { rel_type: 'm.replace', event_id: '$e0' } }),
        room,
        bot,
        settings,
      ),
    ).toBeUndefined();
    const dm = newRoom('!dm:claw.test');
    dm.members.set(BOT, 'Claw');
    dm.members.set('@ann:claw.test', 'Ann');
    expect(parseMessage(event({ body: 'hi' }), dm, bot, settings)?.inbound.peer).toEqual({
      kind: 'direct',
      id: '@ann:claw.test',
    });
    expect(
      parseMessage(event({ body: 'hi' }), dm, bot, { ...settings, dmSessionScope: 'per-room' })?.inbound.peer,
    ).toEqual({ kind: 'direct', id: '!dm:claw.test' });
    expect(stripReplyFallback('> <@a:b> x\n> y\n\nreal')).toBe('real');
  });

  it('applies room rules: groups by id or alias, users, autoReply, the per-account restriction', () => {
    const message = (sender = '@ann:claw.test') =>
      ({
        accountId: 'default',
        peer: { kind: 'group', id: '!r:claw.test' },
        sender: { id: sender },
        text: '',
        messageId: '$1',
      }) as const;
    expect(roomAccess(message(), {})).toMatchObject({ allow: false });
    expect(roomAccess(message(), { groups: { '#team:claw.test': {} } }, { alias: '#team:claw.test' })).toEqual({
      allow: true,
      requireMention: true,
    });
    expect(roomAccess(message(), { groups: { '!r:claw.test': { autoReply: true } } })).toEqual({
      allow: true,
      requireMention: false,
    });
    expect(roomAccess(message(), { groups: { '!r:claw.test': { users: ['@bo:claw.test'] } } })).toMatchObject({
      allow: false,
    });
    expect(roomAccess(message(), { groups: { '!r:claw.test': { account: 'work' } } })).toMatchObject({ allow: false });
    expect(roomAccess(message(), { groupAllowFrom: ['@ann:claw.test'] })).toMatchObject({ allow: true });
    expect(
      roomAccess(message(), { groupPolicy: 'open', groups: { '!r:claw.test': { enabled: false } } }),
    ).toMatchObject({
      allow: false,
    });
  });
});

// ── Matrix specifics, end to end ───────────────────────────────────────────────────

describe('matrix channel', () => {
  const fake = new FakeHomeserver();
  const OWNER = '@owner:claw.test';
  let kernel: TestKernel | undefined;
  const requests: ModelRequest[] = [];
  let answer: (request: ModelRequest) => ScriptedAnswer = (request) => `echo: ${lastUserText(request)}`;
  let decisions: InboundDecision[] = [];
  let dm = '';

  beforeAll(async () => {
    await fake.start();
    fake.addUser({ userId: BOT, accessToken: BOT_TOKEN, password: BOT_PASSWORD, displayName: 'Claw' });
    fake.addUser({ userId: OWNER, displayName: 'Owner' });
    dm = fake.createRoom({ creator: OWNER, members: [BOT], direct: true });
  });
  afterEach(async () => {
    await kernel?.dispose();
    kernel = undefined;
    requests.length = 0;
    answer = (request) => `echo: ${lastUserText(request)}`;
  });
  afterAll(() => fake.stop());

  const boot = async (
    matrix: Record<string, unknown> = {},
    extra: { stateDir?: string; messages?: object; synced?: boolean } = {},
  ) => {
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), MATRIX, scriptedModel((request) => (requests.push(request), answer(request)))],
      ...(extra.stateDir ? { stateDir: extra.stateDir } : {}),
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 }, ...(extra.messages ?? {}) },
        channels: {
          matrix: {
            homeserver: fake.url,
            accessToken: BOT_TOKEN,
            network: { dangerouslyAllowPrivateNetwork: true },
            dm: { policy: 'allowlist', allowFrom: [OWNER] },
            ...matrix,
          },
        },
      },
    });
    decisions = await recordInboundDecisions(kernel);
    await kernel.start();
    if (extra.synced !== false) await caughtUp(fake);
    return kernel;
  };
  const status = async () =>
    (await kernel!.plugins.kernelServices.channels.status()).find((channel) => channel.id === 'matrix')!.accounts[0]!;
  const decided = (eventId: string) =>
    until(() => decisions.some((decision) => decision.messageId === eventId), `the pipeline's decision on ${eventId}`);
  const say = (roomId: string, body: string, extra: Record<string, unknown> = {}, sender = OWNER) =>
    fake.sendAs(sender, roomId, { msgtype: 'm.text', body, ...extra });

  it('answers a DM in its room with HTML, a read receipt, typing and the ack reaction; status shows no secret', async () => {
    answer = () => 'Here is **bold** and `x < y`.';
    await boot({}, { messages: { ackReactionScope: 'all', ackReaction: '👀' } });
    const eventId = say(dm, 'hello there');
    const reply = await fake.waitForSent(BOT, (event) => event.room_id === dm && event.content.msgtype === 'm.text');
    expect(lastUserText(requests[0]!)).toBe('hello there');
    expect(reply.content).toMatchObject({
      msgtype: 'm.text',
      body: 'Here is **bold** and `x < y`.',
      format: 'org.matrix.custom.html',
      formatted_body: '<p>Here is <strong>bold</strong> and <code>x &lt; y</code>.</p>',
    });
    const reaction = await fake.waitForSent(BOT, (event) => event.type === 'm.reaction');
    expect(reaction.content['m.relates_to']).toEqual({ rel_type: 'm.annotation', event_id: eventId, key: '👀' });
    await until(
      () => fake.receipts.some((receipt) => receipt.eventId === eventId && receipt.userId === BOT),
      'the read receipt',
    );
    await until(() => fake.typing.some((entry) => entry.userId === BOT && entry.typing), 'typing');
    const account = await status();
    expect(account).toMatchObject({ connected: true, running: true, userId: BOT, homeserver: fake.url });
    expect(JSON.stringify(account)).not.toContain(BOT_TOKEN);
  });

  it('pairs an unknown person: the code comes in their DM, and once approved they are answered', async () => {
    const stranger = '@newbie:claw.test';
    fake.addUser({ userId: stranger, displayName: 'New Bie' });
    const room = fake.createRoom({ creator: stranger, members: [BOT], direct: true });
    const k = await boot({ dm: { policy: 'pairing' } });
    say(room, 'hi bot', {}, stranger);
    const notice = await fake.waitForSent(BOT, (event) => event.room_id === room && event.type === 'm.room.message');
    const code = /pairing code is ([A-Z0-9]{8})/.exec(String(notice.content.body))?.[1];
    expect(code, String(notice.content.body)).toBeDefined();
    expect(requests).toHaveLength(0);
    expect(await k.plugins.kernelServices.channels.pairing.approve('matrix', code!)).toMatchObject({
      senderId: stranger,
    });
    say(room, 'now?', {}, stranger);
    await fake.waitForSent(BOT, (event) => event.room_id === room && event.content.body === 'echo: now?');
  });

  it('in a room: no mention → context only; a mention is answered with the context; an unlisted room is ignored', async () => {
    const team = fake.createRoom({ creator: OWNER, members: [BOT], name: 'Team', alias: '#team:claw.test' });
    const other = fake.createRoom({ creator: OWNER, members: [BOT], name: 'Other' });
    await boot({ groups: { '#team:claw.test': { requireMention: true } } });
    const quiet = say(team, 'the deploy is on Thursday');
    await decided(quiet);
    const elsewhere = say(other, 'Claw: hello?', { 'm.mentions': { user_ids: [BOT] } });
    await decided(elsewhere);
    expect(decisions.find((decision) => decision.messageId === elsewhere)?.status).toBe('blocked');
    say(team, 'Claw: when is the deploy?', { 'm.mentions': { user_ids: [BOT] } });
    await fake.waitForSent(BOT, (event) => event.room_id === team && event.type === 'm.room.message');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.systemPrompt).toContain('the deploy is on Thursday');
    expect(botMessages(fake, other)).toHaveLength(0);
  });

  it('answers a thread message in its thread, in a session of its own', async () => {
    const room = fake.createRoom({ creator: OWNER, members: [BOT], name: 'Threads' });
    const k = await boot({ groups: { [room]: { requireMention: false } } });
    const root = say(room, 'a topic');
    await fake.waitForSent(BOT, (event) => event.room_id === room && event.content.body === 'echo: a topic');
    say(room, 'inside', {
      'm.relates_to': {
        rel_type: 'm.thread',
        event_id: root,
        is_falling_back: true,
        'm.in_reply_to': { event_id: root },
      },
    });
    const reply = await fake.waitForSent(
      BOT,
      (event) => event.room_id === room && event.content.body === 'echo: inside',
    );
    expect(reply.content['m.relates_to']).toMatchObject({ rel_type: 'm.thread', event_id: root });
    const loop = (await k.capabilities.find('service', 'agent'))?.api as {
      runtime: { store(agent: string): { list(): Promise<Array<{ key: string }>> } };
    };
    const keys = (await loop.runtime.store('main').list()).map((item) => item.key);
    expect(keys).toContain(`agent:main:matrix:group:${room}:topic:${root}`);
  });

  it('invites: autoJoin "off" leaves them waiting in status; "always" joins and answers in the new DM', async () => {
    const friend = '@friend:claw.test';
    fake.addUser({ userId: friend, displayName: 'Friend' });
    const room = fake.createRoom({ creator: friend });
    fake.invite(room, friend, BOT, { direct: true });
    await boot({ dm: { policy: 'allowlist', allowFrom: [OWNER, friend] } });
    const waiting = await status();
    expect(waiting.pendingInvites).toEqual([
      { roomId: room, inviter: friend, reason: 'autoJoin is "off" (channels.matrix.autoJoin)' },
    ]);
    expect(fake.membership(room, BOT)).toBe('invite');
    await kernel!.dispose();
    kernel = undefined;
    await boot({ dm: { policy: 'allowlist', allowFrom: [OWNER, friend] }, autoJoin: 'always' });
    await until(() => fake.membership(room, BOT) === 'join', 'the bot to join');
    await caughtUp(fake);
    say(room, 'glad you came', {}, friend);
    await fake.waitForSent(BOT, (event) => event.room_id === room && event.content.body === 'echo: glad you came');
    expect((await status()).pendingInvites).toBeUndefined();
  });

  it('autoJoin "allowlist" joins a room its alias names and declines the rest', async () => {
    const listed = fake.createRoom({ creator: OWNER, name: 'Listed', alias: '#listed:claw.test' });
    const unlisted = fake.createRoom({ creator: OWNER, name: 'Unlisted' });
    fake.invite(listed, OWNER, BOT);
    fake.invite(unlisted, OWNER, BOT);
    await boot({ autoJoin: 'allowlist', autoJoinAllowlist: ['#listed:claw.test'] });
    await until(() => fake.membership(listed, BOT) === 'join', 'the listed room joined');
    expect(fake.membership(unlisted, BOT)).toBe('invite');
    expect((await status()).pendingInvites).toEqual([
      expect.objectContaining({ roomId: unlisted, reason: 'the room is not in channels.matrix.autoJoinAllowlist' }),
    ]);
  });

  it('resumes from the stored since after a restart: messages sent while down answered once, nothing repeated', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'claw-matrix-restart-'));
    await boot({}, { stateDir });
    say(dm, 'before the restart');
    await fake.waitForSent(BOT, (event) => event.content.body === 'echo: before the restart');
    await kernel!.dispose();
    kernel = undefined;
    const file = join(stateDir, 'matrix', 'default', 'sync.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.since).toMatch(/^s\d+$/);
    say(dm, 'while you were away 1');
    say(dm, 'while you were away 2');
    await boot({}, { stateDir });
    await fake.waitForSent(BOT, (event) => event.content.body === 'echo: while you were away 2');
    const bodies = botMessages(fake, dm).map((event) => event.content.body);
    expect(bodies.filter((body) => body === 'echo: before the restart')).toHaveLength(1);
    expect(bodies.filter((body) => body === 'echo: while you were away 1')).toHaveLength(1);
    expect(requests.map(lastUserText)).toEqual([
      'before the restart',
      'while you were away 1',
      'while you were away 2',
    ]);
  });

  it('reads back a gap when more arrived while it was down than one sync carries: every message answered once, in order', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'claw-matrix-gap-'));
    const room = fake.createRoom({ creator: OWNER, members: [BOT], name: 'Busy' });
    await boot({ groups: { [room]: { requireMention: false } } }, { stateDir });
    await kernel!.dispose();
    kernel = undefined;
    const count = 130;
    for (let i = 1; i <= count; i++) say(room, `burst ${i}`);
    const lastBurst = fake.position;
    await boot({ groups: { [room]: { requireMention: false } } }, { stateDir });
    await until(() => botMessages(fake, room).length >= count, 'every burst message answered', 30_000);
    await caughtUp(fake, lastBurst);
    const bodies = botMessages(fake, room).map((event) => String(event.content.body));
    expect(bodies).toHaveLength(count);
    expect(new Set(bodies).size).toBe(count);
    expect(requests.map(lastUserText).slice(0, 3)).toEqual(['burst 1', 'burst 2', 'burst 3']);
    expect(fake.requests.some((request) => request.path.endsWith('/messages') && request.query.to !== undefined)).toBe(
      true,
    );
  });

  it('a batch replayed after a crash (since not yet stored) is not answered twice', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'claw-matrix-replay-'));
    await boot({}, { stateDir });
    const file = join(stateDir, 'matrix', 'default', 'sync.json');
    const beforeBatch = readFileSync(file, 'utf8');
    say(dm, 'journaled, then the crash');
    await fake.waitForSent(BOT, (event) => event.content.body === 'echo: journaled, then the crash');
    await kernel!.dispose();
    kernel = undefined;
    // As if the process died after journaling but before storing the new since.
    writeFileSync(file, beforeBatch);
    await boot({}, { stateDir });
    say(dm, 'marker');
    await fake.waitForSent(BOT, (event) => event.content.body === 'echo: marker');
    expect(
      botMessages(fake, dm).filter((event) => event.content.body === 'echo: journaled, then the crash'),
    ).toHaveLength(1);
    expect(decisions.map((decision) => decision.status)).toEqual(['duplicate', 'dispatched']);
  });

  it('keeps going when the homeserver goes away and comes back: status says so, nothing is lost or doubled', async () => {
    await boot();
    await fake.stop();
    const down = await eventually(
      status,
      (account) => account.connected === false && !!account.lastError,
      'the lost connection in status',
    );
    expect(String(down.lastError)).not.toContain(BOT_TOKEN);
    const eventId = say(dm, 'sent while the server was down');
    await fake.start();
    await fake.waitForSent(BOT, (event) => event.content.body === 'echo: sent while the server was down', 20_000);
    await decided(eventId);
    await eventually(
      status,
      (account) => account.connected === true && account.lastError === undefined,
      'status to clear',
    );
    expect(
      botMessages(fake, dm).filter((event) => event.content.body === 'echo: sent while the server was down'),
    ).toHaveLength(1);
  });

  it('logs in with a password once, caches the device owner-only, and reuses it on the next start', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'claw-matrix-login-'));
    const logins = fake.logins.length;
    await boot({ accessToken: undefined, userId: BOT, password: BOT_PASSWORD, deviceName: 'claw test' }, { stateDir });
    expect(fake.logins.length).toBe(logins + 1);
    expect(fake.logins.at(-1)).toMatchObject({ userId: BOT, deviceDisplayName: 'claw test' });
    const cached = join(stateDir, 'credentials', 'matrix', 'default.json');
    expect(statSync(cached).mode & 0o777).toBe(0o600);
    await kernel!.dispose();
    kernel = undefined;
    await boot({ accessToken: undefined, userId: BOT, password: BOT_PASSWORD }, { stateDir });
    expect(fake.logins.length).toBe(logins + 1);
    say(dm, 'after the cached login');
    await fake.waitForSent(BOT, (event) => event.content.body === 'echo: after the cached login');
    const account = await status();
    expect(JSON.stringify(account)).not.toContain(BOT_PASSWORD);
    expect(account.deviceId).toBe(fake.logins.at(-1)!.deviceId);
  });

  it('refuses a wrong password or a rejected token with the key to fix, never the secret', async () => {
    const wrong = 'not-the-password-77';
    await boot({ accessToken: undefined, userId: BOT, password: wrong }, { synced: false });
    const refused = await status();
    expect(refused.running).toBe(false);
    expect(refused.lastError).toMatch(
      /refused the password for @claw:claw\.test \(M_FORBIDDEN.*\): check channels\.matrix\.password/,
    );
    expect(JSON.stringify(refused)).not.toContain(wrong);
    await kernel!.dispose();
    kernel = undefined;
    await boot({ accessToken: 'syt_revoked_token' }, { synced: false });
    const rejected = await status();
    expect(rejected.running).toBe(false);
    expect(rejected.lastError).toMatch(
      /rejected the access token \(M_UNKNOWN_TOKEN.*\): check channels\.matrix\.accessToken/,
    );
    expect(JSON.stringify(rejected)).not.toContain('syt_revoked_token');
  });

  it('refuses a homeserver on this machine unless network.dangerouslyAllowPrivateNetwork says so', async () => {
    await boot({ network: {} }, { synced: false });
    const refused = await status();
    expect(refused.running).toBe(false);
    expect(refused.lastError).toContain('needs channels.matrix.network.dangerouslyAllowPrivateNetwork: true');
  });

  it('reports an encrypted room and reads nothing from it', async () => {
    const secret = fake.createRoom({ creator: OWNER, members: [BOT], name: 'Secret', encrypted: true });
    const k = await boot({ groupPolicy: 'open' });
    fake.sendAs(
      OWNER,
      secret,
      { algorithm: 'm.megolm.v1.aes-sha2', ciphertext: 'AAAA', session_id: 's', device_id: 'D' },
      'm.room.encrypted',
    );
    await caughtUp(fake);
    const account = await status();
    expect(account.encryptedRooms).toEqual([secret]);
    expect(String(account.detail)).toContain('1 encrypted (not read: E2EE is off)');
    expect(k.logs.some((log) => log.message.includes(`room ${secret} ("Secret") is end-to-end encrypted`))).toBe(true);
    expect(requests).toHaveLength(0);
  });

  it('media: an image reaches the model, an oversized file is refused without a partial file, and a file goes out via the content repository', async () => {
    const k = await boot({ mediaMaxMb: 1 });
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da6364f8cf00000301010018dd8db00000000049454e44ae426082',
      'hex',
    );
    const mxc = fake.upload(OWNER, png, 'image/png', 'dot.png');
    say(dm, 'dot.png', { msgtype: 'm.image', url: mxc, info: { mimetype: 'image/png', size: png.length } });
    await until(() => requests.length > 0, 'the image turn');
    const request = requests[0]!;
    expect(JSON.stringify(request.messages)).toContain(png.toString('base64'));
    const big = fake.upload(OWNER, Buffer.alloc(2 * 1024 * 1024, 1), 'application/octet-stream', 'big.bin');
    const bigEvent = say(dm, 'big.bin', {
      msgtype: 'm.file',
      url: big,
      info: { mimetype: 'application/octet-stream' },
    });
    await decided(bigEvent);
    await until(() => requests.length > 1, 'the second turn');
    expect(lastUserText(requests[1]!)).toContain('[file "big.bin" not downloaded: larger than mediaMaxMb (1 MB)]');
    const mediaDir = join(k.stateDir, 'media', 'matrix', 'default');
    expect(readdirSync(mediaDir).filter((name) => name.includes('big'))).toEqual([]);
    for (const name of readdirSync(mediaDir)) expect(statSync(join(mediaDir, name)).mode & 0o777).toBe(0o600);
    mkdirSync(k.paths.workspaceDir, { recursive: true });
    const report = join(k.paths.workspaceDir, 'report.txt');
    writeFileSync(report, 'the report');
    const sent = await k.plugins.kernelServices.channels.send({
      channel: 'matrix',
      to: OWNER,
      text: 'attached',
      media: [report],
    });
    expect(sent, sent.error).toMatchObject({ delivered: true });
    const file = await fake.waitForSent(BOT, (event) => event.content.msgtype === 'm.file');
    expect(file.room_id).toBe(dm);
    const stored = fake.uploads.get(String(file.content.url));
    expect(stored?.data.toString()).toBe('the report');
    expect(existsSync(report)).toBe(true);
  });

  it('honours M_LIMIT_EXCEEDED: the reply goes out once, after the wait', async () => {
    await boot();
    fake.failNext(
      { method: 'PUT', path: /\/send\/m\.room\.message\// },
      { status: 429, errcode: 'M_LIMIT_EXCEEDED', retryAfterMs: 400 },
    );
    const started = Date.now();
    say(dm, 'slow down');
    await fake.waitForSent(BOT, (event) => event.content.body === 'echo: slow down');
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(botMessages(fake, dm).filter((event) => event.content.body === 'echo: slow down')).toHaveLength(1);
  });

  it('claw channels add --channel matrix checks the login with the homeserver first, and never prints it', async () => {
    const dir = tempDir('claw-matrix-add-');
    const file = join(dir, 'openclaw.json');
    const env = { OPENCLAW_STATE_DIR: dir };
    const config = () => JSON5.parse(readFileSync(file, 'utf8')).channels?.matrix;
    // The fake listens on 127.0.0.1: without the network opt-in the homeserver is refused.
    const local = await claw(
      ['channels', 'add', '--channel', 'matrix', '--homeserver', fake.url, '--access-token', BOT_TOKEN],
      env,
    );
    expect(local.code).toBe(1);
    expect(local.stderr).toContain('network.dangerouslyAllowPrivateNetwork: true');
    writeFileSync(
      file,
      JSON.stringify({ channels: { matrix: { network: { dangerouslyAllowPrivateNetwork: true } } } }),
    );
    const wrong = await claw(
      ['channels', 'add', 'matrix', '--homeserver', fake.url, '--access-token', 'syt_wrong_one'],
      env,
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/rejected the access token \(M_UNKNOWN_TOKEN/);
    expect(wrong.stdout + wrong.stderr).not.toContain('syt_wrong_one');
    expect(config().accessToken).toBeUndefined();
    const added = await claw(['channels', 'add', 'matrix', '--homeserver', fake.url, '--access-token', BOT_TOKEN], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(BOT);
    expect(added.stdout + added.stderr).not.toContain(BOT_TOKEN);
    expect(config()).toMatchObject({ homeserver: fake.url, accessToken: BOT_TOKEN });
    const logins = fake.logins.length;
    const byPassword = await claw(
      [
        'channels',
        'add',
        'matrix',
        '--account',
        'pw',
        '--homeserver',
        fake.url,
        '--user-id',
        BOT,
        '--password',
        BOT_PASSWORD,
      ],
      env,
    );
    expect(byPassword.code, byPassword.stderr).toBe(0);
    expect(byPassword.stdout + byPassword.stderr).not.toContain(BOT_PASSWORD);
    // The check logged in and out again: no device is left behind by setup.
    expect(fake.logins.length).toBe(logins + 1);
    expect(fake.requests.some((request) => request.path.endsWith('/logout'))).toBe(true);
    expect(config().accounts.pw).toMatchObject({ userId: BOT, password: BOT_PASSWORD });
  }, 60_000);

  it('answers a person in the DM room they wrote from, when they have two', async () => {
    const twoRooms = '@tworooms:claw.test';
    fake.addUser({ userId: twoRooms });
    const first = fake.createRoom({ creator: twoRooms, members: [BOT], direct: true });
    const second = fake.createRoom({ creator: twoRooms, members: [BOT], direct: true });
    await boot({ dm: { policy: 'allowlist', allowFrom: [twoRooms] } });
    say(second, 'from the second room', {}, twoRooms);
    const reply = await fake.waitForSent(BOT, (event) => event.content.body === 'echo: from the second room');
    expect(reply.room_id).toBe(second);
    say(first, 'now from the first', {}, twoRooms);
    const again = await fake.waitForSent(BOT, (event) => event.content.body === 'echo: now from the first');
    expect(again.room_id).toBe(first);
  });

  it('sends to a person with no DM room yet by creating one and recording it in m.direct', async () => {
    const k = await boot();
    const newcomer = '@newcomer:claw.test';
    fake.addUser({ userId: newcomer });
    const sent = await k.plugins.kernelServices.channels.send({ channel: 'matrix', to: newcomer, text: 'welcome' });
    expect(sent, sent.error).toMatchObject({ delivered: true });
    const event = await fake.waitForSent(BOT, (item: MatrixEvent) => item.content.body === 'welcome');
    expect(fake.membership(event.room_id, newcomer)).toBe('invite');
    expect(fake.accountData(BOT, 'm.direct')).toMatchObject({ [newcomer]: [event.room_id] });
  });
});
