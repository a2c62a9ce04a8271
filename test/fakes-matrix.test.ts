/**
 * The Matrix homeserver fake (test/fakes/matrix.ts) against the real matrix-js-sdk for the
 * calls the channel makes through it, and against raw `fetch` for `/sync`, which the
 * channel drives itself: if these pass, the fake answers what the SDK really sends.
 */
import * as sdk from 'matrix-js-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeHomeserver, type MatrixEvent } from './fakes/matrix.js';

const BOT = '@bot:claw.test';
const ALICE = '@alice:claw.test';
const BOB = '@bob:claw.test';
const BOT_TOKEN = 'bot-token';

/** The SDK's debug chatter (every request) would drown the test output. */
const quiet: any = {
  trace: () => {},
  debug: () => {},
  info: () => {},
  log: () => {},
  warn: () => {},
  error: () => {},
  getChild: () => quiet,
};

let hs: FakeHomeserver;
let base: string;

function client(accessToken?: string, userId = BOT): sdk.MatrixClient {
  return sdk.createClient({ baseUrl: base, ...(accessToken ? { accessToken, userId } : {}), logger: quiet });
}

async function raw(
  path: string,
  options: { token?: string; method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${base}/_matrix/${path}`, {
    method: options.method ?? 'GET',
    headers: {
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // media downloads are not JSON
  }
  return { status: res.status, body, headers: res.headers };
}

function sync(token: string, query: Record<string, string> = {}) {
  return raw(`client/v3/sync?${new URLSearchParams(query)}`, { token });
}

async function expectMatrixError(promise: Promise<unknown>, status: number, errcode: string): Promise<sdk.MatrixError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(sdk.MatrixError);
  expect((err as sdk.MatrixError).httpStatus).toBe(status);
  expect((err as sdk.MatrixError).errcode).toBe(errcode);
  return err as sdk.MatrixError;
}

function sdkEvent(e: MatrixEvent): sdk.MatrixEvent {
  return new sdk.MatrixEvent({ ...e });
}

beforeAll(async () => {
  hs = new FakeHomeserver();
  base = await hs.start();
  hs.addUser({ userId: BOT, password: 'hunter2', accessToken: BOT_TOKEN, displayName: 'Claw' });
  hs.addUser({ userId: ALICE, accessToken: 'alice-token', displayName: 'Alice' });
  hs.addUser({ userId: BOB, password: 'bobpw' });
});

afterAll(async () => {
  await hs.stop();
});

describe('FakeHomeserver through matrix-js-sdk', () => {
  it('answers versions and password logins; each login is a new token and old ones stay valid', async () => {
    const versions = await raw('client/versions');
    expect(versions.status).toBe(200);
    expect(versions.body.versions).toContain('v1.11');
    expect(versions.body.unstable_features).toEqual({});
    expect((await raw('client/v3/login')).body.flows).toEqual([{ type: 'm.login.password' }]);

    const anon = client();
    const first = await anon.loginRequest({
      type: 'm.login.password',
      identifier: { type: 'm.id.user', user: 'bot' },
      password: 'hunter2',
      device_id: 'CLAWDEVICE',
      initial_device_display_name: 'claw gateway',
    });
    expect(first).toMatchObject({ user_id: BOT, device_id: 'CLAWDEVICE', home_server: 'claw.test' });
    expect(hs.logins.at(-1)).toEqual({ userId: BOT, deviceId: 'CLAWDEVICE', deviceDisplayName: 'claw gateway' });

    // The legacy top-level `user` field, through the SDK's deprecated helper.
    const second = await client().login('m.login.password', { user: BOT, password: 'hunter2' });
    expect(second.access_token).not.toBe(first.access_token);
    for (const token of [first.access_token, second.access_token, BOT_TOKEN]) {
      expect((await client(token).whoami()).user_id).toBe(BOT);
    }
    expect(await client(first.access_token).whoami()).toMatchObject({ user_id: BOT, device_id: 'CLAWDEVICE' });

    await expectMatrixError(
      anon.loginRequest({ type: 'm.login.password', identifier: { type: 'm.id.user', user: BOT }, password: 'no' }),
      403,
      'M_FORBIDDEN',
    );
    await expectMatrixError(
      anon.loginRequest({ type: 'm.login.password', identifier: { type: 'm.id.user', user: 'nobody' }, password: 'x' }),
      403,
      'M_FORBIDDEN',
    );

    // Logging out ends that token only.
    const loggedOut = client(second.access_token);
    await loggedOut.logout();
    await expectMatrixError(loggedOut.whoami(), 401, 'M_UNKNOWN_TOKEN');
    expect((await client(first.access_token).whoami()).user_id).toBe(BOT);
  });

  it('refuses missing and unknown tokens the way the spec says, and takes access_token in the query', async () => {
    const missing = await raw('client/v3/account/whoami');
    expect(missing.status).toBe(401);
    expect(missing.body.errcode).toBe('M_MISSING_TOKEN');
    const unknown = await raw('client/v3/account/whoami', { token: 'bogus' });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ errcode: 'M_UNKNOWN_TOKEN', soft_logout: false });
    const viaQuery = await raw(`client/v3/account/whoami?access_token=${BOT_TOKEN}`);
    expect(viaQuery.body.user_id).toBe(BOT);
    await expectMatrixError(client('bogus').whoami(), 401, 'M_UNKNOWN_TOKEN');

    const unrecognized = await raw('client/v3/no/such/thing', { token: BOT_TOKEN });
    expect(unrecognized.status).toBe(404);
    expect(unrecognized.body.errcode).toBe('M_UNRECOGNIZED');
    const notJson = await raw('client/v3/user/%40bot%3Aclaw.test/filter', {
      token: BOT_TOKEN,
      method: 'POST',
      body: '{nope',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    expect(notJson.body.errcode).toBe('M_NOT_JSON');
    const huge = await raw('client/v3/user/%40bot%3Aclaw.test/filter', {
      token: BOT_TOKEN,
      method: 'POST',
      body: JSON.stringify({ pad: 'x'.repeat(1024 * 1024 + 10) }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.errcode).toBe('M_TOO_LARGE');
    expect(hs.requests.some((r) => r.path === '/_matrix/client/v3/account/whoami' && r.userId === BOT)).toBe(true);
  });

  it('sends a message once per txnId, and only from a member', async () => {
    const roomId = hs.createRoom({ creator: ALICE, members: [BOT], name: 'General' });
    const bot = client(BOT_TOKEN);
    const first = await bot.sendMessage(roomId, { msgtype: sdk.MsgType.Text, body: 'hello' }, 'txn-1');
    const again = await bot.sendMessage(roomId, { msgtype: sdk.MsgType.Text, body: 'hello' }, 'txn-1');
    expect(again.event_id).toBe(first.event_id);
    const sent = hs.sentBy(BOT).filter((e) => e.type === 'm.room.message');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ event_id: first.event_id, room_id: roomId, content: { body: 'hello' } });
    expect(hs.events(roomId).at(-1)!.event_id).toBe(first.event_id);

    const outside = hs.createRoom({ creator: ALICE });
    await expectMatrixError(bot.sendMessage(outside, { msgtype: sdk.MsgType.Text, body: 'x' }), 403, 'M_FORBIDDEN');
    expect(hs.events(outside).some((e) => e.sender === BOT)).toBe(false);
  });

  it('joins by alias when invited, refuses uninvited joins, and serves state', async () => {
    const roomId = hs.createRoom({ creator: ALICE, name: 'Lobby', alias: '#lobby:claw.test', encrypted: true });
    const bot = client(BOT_TOKEN);
    await expectMatrixError(bot.joinRoom('#lobby:claw.test'), 403, 'M_FORBIDDEN');
    expect(hs.membership(roomId, BOT)).toBeUndefined();

    hs.invite(roomId, ALICE, BOT);
    expect(hs.membership(roomId, BOT)).toBe('invite');
    const room = await bot.joinRoom('#lobby:claw.test');
    expect(room.roomId).toBe(roomId);
    expect(hs.membership(roomId, BOT)).toBe('join');
    expect(hs.requests.some((r) => r.method === 'POST' && r.path === '/_matrix/client/v3/join/#lobby:claw.test')).toBe(
      true,
    );

    expect(await bot.getStateEvent(roomId, 'm.room.name', '')).toEqual({ name: 'Lobby' });
    expect(await bot.getStateEvent(roomId, 'm.room.encryption', '')).toEqual({ algorithm: 'm.megolm.v1.aes-sha2' });
    expect(await bot.getStateEvent(roomId, 'm.room.member', BOT)).toMatchObject({ membership: 'join' });
    await expectMatrixError(bot.getStateEvent(roomId, 'm.room.topic', ''), 404, 'M_NOT_FOUND');
    expect((await bot.getRoomIdForAlias('#lobby:claw.test')).room_id).toBe(roomId);
    await expectMatrixError(bot.getRoomIdForAlias('#nope:claw.test'), 404, 'M_NOT_FOUND');
    const members = await bot.getJoinedRoomMembers(roomId);
    expect(Object.keys(members.joined).sort()).toEqual([ALICE, BOT].sort());
    expect(members.joined[ALICE].display_name).toBe('Alice');

    // Bot (power 0) may not rename the room; Alice (its creator, 100) may.
    await expectMatrixError(bot.setRoomName(roomId, 'Mine'), 403, 'M_FORBIDDEN');
    await client('alice-token', ALICE).setRoomName(roomId, 'Lobby 2');
    expect(hs.stateEvent(roomId, 'm.room.name')!.content).toEqual({ name: 'Lobby 2' });

    await bot.leave(roomId);
    expect(hs.membership(roomId, BOT)).toBe('leave');
  });

  it('records typing notices and read receipts as the SDK sends them', async () => {
    const roomId = hs.createRoom({ creator: ALICE, members: [BOT] });
    const eventId = hs.sendAs(ALICE, roomId, { msgtype: sdk.MsgType.Text, body: 'hi bot' });
    const bot = client(BOT_TOKEN);
    await bot.sendTyping(roomId, true, 15_000);
    await bot.sendTyping(roomId, false, 0);
    expect(hs.typing.filter((t) => t.roomId === roomId)).toEqual([
      { roomId, userId: BOT, typing: true, timeout: 15_000 },
      { roomId, userId: BOT, typing: false },
    ]);

    const event = sdkEvent(hs.events(roomId).find((e) => e.event_id === eventId)!);
    await bot.sendReadReceipt(event);
    await bot.sendReceipt(event, sdk.ReceiptType.Read, { thread_id: 'main' });
    expect(hs.receipts.filter((r) => r.roomId === roomId)).toEqual([
      { roomId, userId: BOT, eventId, receiptType: 'm.read' },
      { roomId, userId: BOT, eventId, receiptType: 'm.read', threadId: 'main' },
    ]);

    const other = hs.createRoom({ creator: ALICE });
    await expectMatrixError(bot.sendTyping(other, true, 1000), 403, 'M_FORBIDDEN');
  });

  it('stores uploads, serves them back, and enforces the upload size', async () => {
    const bot = client(BOT_TOKEN);
    const data = Buffer.from('\x89PNG fake image bytes');
    const { content_uri } = await bot.uploadContent(data, { name: 'cat picture.png', type: 'image/png' });
    expect(content_uri).toMatch(/^mxc:\/\/claw\.test\/\w+$/);
    expect(hs.uploads.get(content_uri)).toEqual({
      contentType: 'image/png',
      data,
      fileName: 'cat picture.png',
      uploader: BOT,
    });

    const mediaPath = content_uri.slice('mxc://'.length);
    const authed = await fetch(`${base}/_matrix/client/v1/media/download/${mediaPath}`, {
      headers: { Authorization: `Bearer ${BOT_TOKEN}` },
    });
    expect(authed.status).toBe(200);
    expect(authed.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await authed.arrayBuffer())).toEqual(data);
    expect((await raw(`client/v1/media/download/${mediaPath}`)).body.errcode).toBe('M_MISSING_TOKEN');
    const legacy = await fetch(`${base}/_matrix/media/v3/download/${mediaPath}/other.png`);
    expect(Buffer.from(await legacy.arrayBuffer())).toEqual(data);
    const missing = await raw('client/v1/media/download/claw.test/nothing', { token: BOT_TOKEN });
    expect(missing.status).toBe(404);
    expect(missing.body.errcode).toBe('M_NOT_FOUND');

    // A test-side upload is downloadable the same way.
    const mxc = hs.upload(ALICE, Buffer.from('voice'), 'audio/ogg', 'voice.ogg');
    const fromAlice = await raw(`client/v1/media/download/${mxc.slice(6)}`, { token: BOT_TOKEN });
    expect(fromAlice.body).toBe('voice');

    const small = new FakeHomeserver({ maxUploadBytes: 1024 });
    const smallBase = await small.start();
    try {
      small.addUser({ userId: BOT, accessToken: BOT_TOKEN });
      const smallBot = sdk.createClient({ baseUrl: smallBase, accessToken: BOT_TOKEN, userId: BOT, logger: quiet });
      expect(
        (await fetch(`${smallBase}/_matrix/client/v1/media/config`, {
          headers: { Authorization: `Bearer ${BOT_TOKEN}` },
        }).then((r) => r.json())) as unknown,
      ).toEqual({ 'm.upload.size': 1024 });
      const err = await expectMatrixError(
        smallBot.uploadContent(Buffer.alloc(4096), { type: 'application/octet-stream' }),
        413,
        'M_TOO_LARGE',
      );
      expect(err.message).toMatch(/too large/);
      expect(small.uploads.size).toBe(0);
      await smallBot.uploadContent(Buffer.alloc(1024), { type: 'application/octet-stream' });
      expect(small.uploads.size).toBe(1);
    } finally {
      await small.stop();
    }
  });

  it('answers a scripted 429 with retry_after_ms and Retry-After, which the SDK reads', async () => {
    hs.failNext(
      { method: 'GET', path: /\/account\/whoami$/ },
      { status: 429, errcode: 'M_LIMIT_EXCEEDED', retryAfterMs: 1500 },
    );
    const err = await expectMatrixError(client(BOT_TOKEN).whoami(), 429, 'M_LIMIT_EXCEEDED');
    expect(err.isRateLimitError()).toBe(true);
    expect(err.data.retry_after_ms).toBe(1500);
    expect(err.httpHeaders?.get('Retry-After')).toBe('2');
    // matrix-js-sdk 37 prefers the header (whole seconds) over the body.
    expect(err.getRetryAfterMs()).toBe(2000);
    // Only once.
    expect((await client(BOT_TOKEN).whoami()).user_id).toBe(BOT);

    // The SDK's scheduler retries a rate-limited send after retry_after_ms: still one event.
    const roomId = hs.createRoom({ creator: ALICE, members: [BOT] });
    hs.failNext(
      { method: 'PUT', path: /\/send\/m\.room\.message\// },
      {
        status: 429,
        errcode: 'M_LIMIT_EXCEEDED',
        retryAfterMs: 50,
      },
    );
    const { event_id } = await client(BOT_TOKEN).sendMessage(roomId, { msgtype: sdk.MsgType.Text, body: 'patient' });
    const sends = hs.requests.filter(
      (r) => r.method === 'PUT' && r.path.startsWith(`/_matrix/client/v3/rooms/${roomId}/send/`),
    );
    expect(sends).toHaveLength(2);
    expect(
      hs
        .events(roomId)
        .filter((e) => e.type === 'm.room.message')
        .map((e) => e.event_id),
    ).toEqual([event_id]);
  });

  it('waitForSent resolves on the send, and rejects naming what it waited for', async () => {
    const roomId = hs.createRoom({ creator: ALICE, members: [BOT] });
    const waiting = hs.waitForSent(BOT, (e) => e.room_id === roomId && e.content.body === 'later');
    await client(BOT_TOKEN).sendMessage(roomId, { msgtype: sdk.MsgType.Text, body: 'later' });
    expect((await waiting).content).toMatchObject({ body: 'later' });
    // Already there: resolves at once.
    expect((await hs.waitForSent(BOT, (e) => e.content.body === 'later')).room_id).toBe(roomId);
    await expect(hs.waitForSent(BOT, (e) => e.content.body === 'never', 50)).rejects.toThrow(
      /no event from @bot:claw\.test matching .*never/,
    );
  });
});

describe('FakeHomeserver /sync', () => {
  const token = 'sync-bot-token';
  const syncBot = '@syncbot:claw.test';

  beforeAll(() => {
    hs.addUser({ userId: syncBot, accessToken: token, displayName: 'Sync Bot' });
  });

  it('gives an initial sync with state, a limited timeline, invites and m.direct', async () => {
    const dm = hs.createRoom({ creator: ALICE, members: [syncBot], direct: true, encrypted: true });
    for (let i = 0; i < 12; i++) hs.sendAs(ALICE, dm, { msgtype: sdk.MsgType.Text, body: `m${i}` });
    const invited = hs.createRoom({ creator: BOB, name: 'Bob and me' });
    hs.invite(invited, BOB, syncBot, { direct: true });

    const { status, body } = await sync(token);
    expect(status).toBe(200);
    expect(body.next_batch).toMatch(/^s\d+$/);
    const joined = body.rooms.join[dm];
    expect(joined.timeline.events).toHaveLength(10);
    expect(joined.timeline.limited).toBe(true);
    expect(joined.timeline.prev_batch).toEqual(expect.any(String));
    expect(joined.timeline.events.at(-1).content.body).toBe('m11');
    expect(joined.timeline.events[0].room_id).toBeUndefined();
    const stateTypes = joined.state.events.map((e: any) => e.type);
    expect(stateTypes).toEqual(
      expect.arrayContaining(['m.room.create', 'm.room.power_levels', 'm.room.member', 'm.room.encryption']),
    );
    const ownMember = joined.state.events.find((e: any) => e.type === 'm.room.member' && e.state_key === syncBot);
    expect(ownMember.content).toMatchObject({ membership: 'join', is_direct: true });

    const invite = body.rooms.invite[invited].invite_state.events;
    expect(invite.find((e: any) => e.type === 'm.room.member' && e.state_key === syncBot).content).toMatchObject({
      membership: 'invite',
      is_direct: true,
    });
    expect(invite.find((e: any) => e.type === 'm.room.name').content.name).toBe('Bob and me');
    expect(invite.some((e: any) => e.type === 'm.room.create')).toBe(true);
    expect(body.rooms.join[invited]).toBeUndefined();

    const direct = body.account_data.events.find((e: any) => e.type === 'm.direct');
    expect(direct.content).toEqual({ [ALICE]: [dm] });
  });

  it('honours a stored filter limit and an inline filter', async () => {
    const roomId = hs.createRoom({ creator: ALICE, members: [syncBot] });
    for (let i = 0; i < 5; i++) hs.sendAs(ALICE, roomId, { msgtype: sdk.MsgType.Text, body: `f${i}` });
    const filter = await client(token, syncBot).createFilter({ room: { timeline: { limit: 2 } } });
    expect(filter.filterId).toEqual(expect.any(String));
    const stored = await sync(token, { filter: filter.filterId! });
    expect(stored.body.rooms.join[roomId].timeline.events.map((e: any) => e.content.body)).toEqual(['f3', 'f4']);
    const inline = await sync(token, { filter: JSON.stringify({ room: { timeline: { limit: 1 } } }) });
    expect(inline.body.rooms.join[roomId].timeline.events.map((e: any) => e.content.body)).toEqual(['f4']);
    expect((await sync(token, { filter: 'no-such-filter' })).status).toBe(400);
    expect((await sync(token, { since: 'garbage' })).body.errcode).toBe('M_INVALID_PARAM');
  });

  it('returns only news after since, including rooms newly joined and rooms left', async () => {
    const kept = hs.createRoom({ creator: ALICE, members: [syncBot] });
    const left = hs.createRoom({ creator: ALICE, members: [syncBot] });
    const since = (await sync(token)).body.next_batch;

    hs.sendAs(ALICE, kept, { msgtype: sdk.MsgType.Text, body: 'news' });
    const fresh = hs.createRoom({ creator: BOB, members: [syncBot], name: 'Fresh' });
    hs.leave(left, syncBot);
    const { body } = await sync(token, { since, timeout: '0' });
    expect(body.next_batch).not.toBe(since);
    expect(body.rooms.join[kept].timeline.events.map((e: any) => e.content.body)).toEqual(['news']);
    expect(body.rooms.join[kept].state.events).toEqual([]);
    // A room joined since `since` comes whole: its state before the timeline plus the timeline.
    const freshEvents = [...body.rooms.join[fresh].state.events, ...body.rooms.join[fresh].timeline.events];
    expect(freshEvents.map((e: any) => e.type)).toEqual(
      expect.arrayContaining(['m.room.create', 'm.room.power_levels']),
    );
    expect(freshEvents.find((e: any) => e.type === 'm.room.name').content.name).toBe('Fresh');
    expect(body.rooms.leave[left].timeline.events.at(-1)).toMatchObject({
      type: 'm.room.member',
      state_key: syncBot,
      content: { membership: 'leave' },
    });
    expect(body.rooms.join[left]).toBeUndefined();
    expect(Object.keys(body.rooms.join)).not.toContain(hs.createRoom({ creator: BOB }));

    // Own sends carry their transaction id back to the sending token only.
    const bot = client(token, syncBot);
    await bot.sendMessage(kept, { msgtype: sdk.MsgType.Text, body: 'mine' }, 'my-txn');
    const echo = (await sync(token, { since: body.next_batch })).body.rooms.join[kept].timeline.events;
    expect(echo.map((e: any) => e.unsigned.transaction_id)).toEqual(['my-txn']);
    const aliceView = await sync('alice-token', { since: body.next_batch });
    expect(aliceView.body.rooms.join[kept].timeline.events[0].unsigned.transaction_id).toBeUndefined();
    expect(hs.syncRequests(syncBot)).toContainEqual({ since, timeout: 0 });
  });

  it('fills a gap in a limited incremental sync with the skipped state, and paginates back', async () => {
    const roomId = hs.createRoom({ creator: ALICE, members: [syncBot], name: 'Before' });
    const since = (await sync(token)).body.next_batch;
    hs.setState(ALICE, roomId, 'm.room.name', { name: 'After' });
    for (let i = 0; i < 12; i++) hs.sendAs(ALICE, roomId, { msgtype: sdk.MsgType.Text, body: `g${i}` });
    const joined = (await sync(token, { since })).body.rooms.join[roomId];
    expect(joined.timeline.limited).toBe(true);
    expect(joined.timeline.events).toHaveLength(10);
    expect(joined.state.events.map((e: any) => [e.type, e.content.name])).toEqual([['m.room.name', 'After']]);

    const page = await client(token, syncBot).createMessagesRequest(
      roomId,
      joined.timeline.prev_batch,
      3,
      sdk.Direction.Backward,
    );
    expect(page.chunk.map((e) => e.content.body)).toEqual(['g1', 'g0', undefined]);
    expect(page.chunk[2].type).toBe('m.room.name');
    expect(page.end).toEqual(expect.any(String));
  });

  it('holds a long poll until sendAs wakes it', async () => {
    const roomId = hs.createRoom({ creator: ALICE, members: [syncBot] });
    const since = (await sync(token)).body.next_batch;
    let answered = false;
    const poll = sync(token, { since, timeout: '10000' }).then((r) => {
      answered = true;
      return r;
    });
    await hs.waitForHeldSync(syncBot);
    expect(answered).toBe(false);
    const started = Date.now();
    const eventId = hs.sendAs(ALICE, roomId, { msgtype: sdk.MsgType.Text, body: 'wake up' });
    const { body } = await poll;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(body.rooms.join[roomId].timeline.events.map((e: any) => e.event_id)).toEqual([eventId]);
    expect(hs.heldSyncs(syncBot)).toBe(0);
  });

  it('wakes a long poll with typing in a joined room', async () => {
    const roomId = hs.createRoom({ creator: ALICE, members: [syncBot] });
    const since = (await sync(token)).body.next_batch;
    const poll = sync(token, { since, timeout: '10000' });
    await hs.waitForHeldSync(syncBot);
    hs.setTyping(roomId, ALICE, true);
    const { body } = await poll;
    expect(body.rooms.join[roomId].ephemeral.events).toEqual([{ type: 'm.typing', content: { user_ids: [ALICE] } }]);
  });

  it('answers an empty long poll after its timeout with the same position', async () => {
    const since = (await sync(token)).body.next_batch;
    // News in a room the user is not in must not wake it.
    const elsewhere = hs.createRoom({ creator: ALICE });
    const started = Date.now();
    const poll = sync(token, { since, timeout: '400' });
    await hs.waitForHeldSync(syncBot);
    hs.sendAs(ALICE, elsewhere, { msgtype: sdk.MsgType.Text, body: 'not for you' });
    const { status, body } = await poll;
    expect(status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(body.next_batch).toBe(since);
    expect(body.rooms.join).toEqual({});
    expect(body.rooms.invite).toEqual({});
    expect(body.rooms.leave).toEqual({});
    expect(hs.syncRequests(syncBot).at(-1)).toEqual({ since, timeout: 400 });
  });

  it('ends pending long polls on stop()', async () => {
    const other = new FakeHomeserver();
    const otherBase = await other.start();
    other.addUser({ userId: BOT, accessToken: BOT_TOKEN });
    const since = (
      (await fetch(`${otherBase}/_matrix/client/v3/sync`, {
        headers: { Authorization: `Bearer ${BOT_TOKEN}` },
      }).then((r) => r.json())) as any
    ).next_batch;
    const poll = fetch(`${otherBase}/_matrix/client/v3/sync?since=${since}&timeout=30000`, {
      headers: { Authorization: `Bearer ${BOT_TOKEN}` },
    }).then(
      (r) => r.status,
      () => 'closed',
    );
    await other.waitForHeldSync(BOT);
    const started = Date.now();
    await other.stop();
    expect([200, 'closed']).toContain(await poll);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
