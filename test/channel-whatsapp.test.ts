/**
 * The WhatsApp channel against a fake of Baileys' socket (test/fakes/whatsapp-socket.ts):
 * the shared channel contract, then what is particular to WhatsApp — QR linking with the
 * creds written owner-only, pairing, groups and mentions, 4,000-character pieces that keep
 * code fences whole, media both ways, read receipts and typing, reconnects with backoff
 * that neither lose nor repeat a message, the logged-out state and its recovery, self-chat.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { ChannelLoginState, ChannelPlugin, ModelRequest, SystemEventsService } from '../sdk/index.js';
import { useService } from '../sdk/services.js';
import { channelContractSuite, type PlatformMessage } from '../sdk/channels/contract.js';
import { createLogger, definePlugin } from '../sdk/index.js';
import {
  agentStackDirs,
  bundledPluginDir,
  createTestKernel,
  lastUserText,
  scriptedModel,
  type TestKernel,
} from '../sdk/testing.js';
import QRCode from 'qrcode';
import { AuthStore } from '../plugins/channel-whatsapp/auth-store.js';
import { createWhatsAppPlugin, type WhatsAppPluginOptions } from '../plugins/channel-whatsapp/index.js';
import { baileysSocketFactory } from '../plugins/channel-whatsapp/socket.js';
import { runtimeDepsService } from '../host/runtime-deps.js';
import { idForJid, jidFor, parseWaMessage } from '../plugins/channel-whatsapp/inbound.js';
import { markdownToWhatsApp } from '../plugins/channel-whatsapp/outbound.js';
import { qrToSvgDataUrl } from '../plugins/channel-whatsapp/qr.js';
import { DisconnectReason } from '../plugins/channel-whatsapp/types.js';
import { qrToTerminal, runQrLogin } from '../plugins/channels/login-cli.js';
import { FakeWhatsApp } from './fakes/whatsapp-socket.js';
import { client, startGateway } from './gateway-helpers.js';
import { recordInboundDecisions, tempDir, waitFor, type InboundDecision } from './helpers.js';

// ── The shared channel contract ────────────────────────────────────────────────────

const contractFake = new FakeWhatsApp();
const contractAuth = tempDir('claw-wa-contract-');
writeFileSync(join(contractAuth, 'creds.json'), contractFake.linkedCreds(), { mode: 0o600 });

/** The contract's platform message as Baileys would hand it over. */
function contractMessage(message: PlatformMessage) {
  if (message.kind === 'group') {
    return contractFake.group(`${message.chatId}@g.us`, `${message.senderId}@s.whatsapp.net`, message.text, {
      mention: message.mention === true,
      ...(message.messageId ? { id: message.messageId } : {}),
      ...(message.senderName ? { pushName: message.senderName } : {}),
    });
  }
  return contractFake.dm(`${message.senderId}@s.whatsapp.net`, message.text, {
    ...(message.messageId ? { id: message.messageId } : {}),
    ...(message.senderName ? { pushName: message.senderName } : {}),
  });
}

channelContractSuite({
  channel: 'whatsapp',
  plugin: createWhatsAppPlugin({ socketFactory: contractFake.factory }),
  config: () => ({ authDir: contractAuth }),
  textLimit: 4000,
  groups: true,
  platform: {
    deliver: async (message) => contractFake.deliver(contractMessage(message)),
    sent: () =>
      contractFake.sent
        .filter((item) => 'text' in item.content)
        .map((item) => ({ chatId: item.jid.replace(/@.*$/, ''), text: (item.content as { text: string }).text })),
    reset: () => contractFake.reset(),
  },
});

// ── WhatsApp specifics ─────────────────────────────────────────────────────────────

const FAST_RECONNECT: WhatsAppPluginOptions['reconnect'] = { minDelayMs: 60, maxDelayMs: 500, jitter: 0.2 };
const ALICE = '+4915112345678';
const ALICE_JID = '4915112345678@s.whatsapp.net';

const until = (check: () => boolean, what: string, timeoutMs = 5000) => waitFor(check, { what, timeoutMs });

interface Setup {
  kernel: TestKernel;
  fake: FakeWhatsApp;
  requests: ModelRequest[];
  channel: ChannelPlugin;
  status(): Promise<Record<string, unknown>>;
  /** What the inbound pipeline decided for each message, in order (see recordInboundDecisions). */
  decisions: InboundDecision[];
  /** Waits for the pipeline's decision on message `id` (the latest one, for a redelivered id) and returns it. */
  decided(id: string, nth?: number): Promise<InboundDecision['status']>;
}

let kernels: TestKernel[] = [];
afterEach(async () => {
  for (const kernel of kernels.splice(0)) await kernel.dispose();
});

/** A memory channel standing in for "another configured channel" (logged-out reports go there). */
function otherChannel(outbox: Array<{ to: string; text: string }>) {
  return definePlugin({
    id: 'other-chat',
    register(api) {
      api.registerChannel({
        id: 'other-chat',
        textLimit: 1000,
        start: () => {},
        send: async (message) => (
          outbox.push({ to: message.to, text: message.text ?? '' }),
          { messageId: `o${outbox.length}` }
        ),
        status: () => [{ accountId: 'default', connected: true }],
      });
    },
  });
}

async function boot(options: {
  fake?: FakeWhatsApp;
  /** Instead of the fake's (e.g. real Baileys pointed somewhere). */
  socketFactory?: WhatsAppPluginOptions['socketFactory'];
  whatsapp?: Record<string, unknown>;
  linked?: boolean;
  stateDir?: string;
  answer?: (request: ModelRequest) => string | Promise<string>;
  extraPlugins?: Array<ReturnType<typeof definePlugin> | string>;
  extraChannels?: Record<string, unknown>;
}): Promise<Setup> {
  const fake = options.fake ?? new FakeWhatsApp();
  const requests: ModelRequest[] = [];
  const stateDir = options.stateDir ?? tempDir('claw-wa-');
  if (options.linked !== false) {
    const auth = join(stateDir, 'credentials', 'whatsapp', 'default');
    mkdirSync(auth, { recursive: true, mode: 0o700 });
    if (!existsSync(join(auth, 'creds.json')))
      writeFileSync(join(auth, 'creds.json'), fake.linkedCreds(), { mode: 0o600 });
  }
  const kernel = await createTestKernel({
    stateDir,
    plugins: [
      ...agentStackDirs(),
      createWhatsAppPlugin({
        socketFactory: options.socketFactory ?? fake.factory,
        reconnect: FAST_RECONNECT,
        sendWaitMs: 3000,
      }),
      scriptedModel(
        async (request) => (
          requests.push(request),
          options.answer ? options.answer(request) : `echo: ${lastUserText(request)}`
        ),
      ),
      ...(options.extraPlugins ?? []),
    ],
    config: {
      agents: { defaults: { model: 'scripted/echo' } },
      messages: { queue: { debounceMs: 0 } },
      channels: {
        whatsapp: { dmPolicy: 'allowlist', allowFrom: [ALICE], ...options.whatsapp },
        ...options.extraChannels,
      },
    },
  });
  kernels.push(kernel);
  const decisions = await recordInboundDecisions(kernel);
  const decided = async (id: string, nth = 1) => {
    const mine = () => decisions.filter((decision) => decision.messageId === id);
    await until(() => mine().length >= nth, `decision ${nth} on message ${id}`);
    return mine()[nth - 1]!.status;
  };
  await kernel.start();
  const channel = (await kernel.capabilities.find('channel', 'whatsapp')) as ChannelPlugin;
  const status = async () =>
    ((await kernel.plugins.kernelServices.channels.status()).find((info) => info.id === 'whatsapp')?.accounts[0] ??
      {}) as Record<string, unknown>;
  if (options.linked !== false) await until(() => fake.current?.user !== undefined, 'the socket to open');
  return { kernel, fake, requests, channel, status, decisions, decided };
}

describe('WhatsApp: ids and formatting', () => {
  it('maps JIDs to the ids users write, and back', () => {
    expect(idForJid('4915112345678:12@s.whatsapp.net')).toBe('+4915112345678');
    expect(idForJid('120363012345@g.us')).toBe('120363012345@g.us');
    expect(idForJid('5551234@lid')).toBe('5551234@lid');
    expect(jidFor('+49 151 1234-5678')).toBe('4915112345678@s.whatsapp.net');
    expect(jidFor('120363012345@g.us')).toBe('120363012345@g.us');
    expect(() => jidFor('not a number!')).toThrow(/not a WhatsApp recipient/);
  });

  it('ignores status broadcasts, newsletters and what the owner sends to others', () => {
    const fake = new FakeWhatsApp();
    const self = { pn: fake.jid };
    expect(parseWaMessage(fake.dm('status@broadcast', 'story'), self)).toBeUndefined();
    expect(parseWaMessage(fake.dm('123@newsletter', 'news'), self)).toBeUndefined();
    expect(parseWaMessage(fake.dm(ALICE, 'sent from my phone', { fromMe: true }), self)).toBeUndefined();
    expect(parseWaMessage(fake.dm(fake.jid, 'note to self', { fromMe: true }), self)?.inbound).toMatchObject({
      fromSelf: true,
      sender: { id: '+15550000001' },
    });
  });

  it('turns Markdown into WhatsApp markup, leaving code alone', () => {
    expect(markdownToWhatsApp('# Title\n**bold** and ~~gone~~ and `**code**`\n```\n**x**\n```')).toBe(
      '*Title*\n*bold* and ~gone~ and `**code**`\n```\n**x**\n```',
    );
  });

  it('draws the QR on a terminal module for module, light on dark, with a two-module quiet zone', async () => {
    const text = '2@' + 'x'.repeat(230);
    const code = QRCode.create(text, { errorCorrectionLevel: 'L' });
    const size = code.modules.size;
    // Read the half blocks back: a block's upper and lower halves are two module rows, drawn light.
    const light = (await qrToTerminal(text)).split('\n').flatMap((line) => {
      const cells = [...line];
      return [cells.map((cell) => cell === '█' || cell === '▀'), cells.map((cell) => cell === '█' || cell === '▄')];
    });
    const dark = (x: number, y: number) => x >= 0 && y >= 0 && x < size && y < size && code.modules.get(y, x) === 1;
    for (let y = -2; y < size + 2; y++) {
      for (let x = -2; x < size + 2; x++) expect(light[y + 2]![x + 2], `module ${x},${y}`).toBe(!dark(x, y));
    }
  });

  it('sizes the web UI image by the code, 6 px a module', async () => {
    const text = '2@' + 'x'.repeat(230);
    const size = QRCode.create(text, { errorCorrectionLevel: 'L' }).modules.size;
    const url = await qrToSvgDataUrl(text);
    expect(url.startsWith('data:image/svg+xml;base64,')).toBe(true);
    const svg = Buffer.from(url.slice(url.indexOf(',') + 1), 'base64').toString('utf8');
    expect(svg).toContain(`width="${(size + 4) * 6}"`);
    expect(svg).toContain(`viewBox="0 0 ${size + 4} ${size + 4}"`);
  });
});

describe('WhatsApp: QR login', () => {
  it('shows the QR, follows rotation, links on scan, saves creds 0600, then answers', async () => {
    const { kernel, fake, channel, status } = await boot({ linked: false });
    expect(await status()).toMatchObject({ running: true, connected: false, state: 'not-linked' });
    expect(String((await status()).lastError)).toContain('claw channels login --channel whatsapp');
    expect(fake.sockets).toHaveLength(0);

    const first = await channel.loginStart!({});
    expect(first.connected).toBe(false);
    expect(first.qr).toBe(fake.qrs[0]);
    expect(first.qrDataUrl).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(first.message).toContain('Linked devices');

    fake.rotateQr();
    const second = await channel.loginWait!({ currentQr: first.qr, timeoutMs: 2000 });
    expect(second.qr).toBe(fake.qrs[1]);

    fake.scan();
    const done = await channel.loginWait!({ currentQr: second.qr, timeoutMs: 3000 });
    expect(done).toMatchObject({ connected: true });
    expect(done.message).toContain('+15550000001');

    const dir = join(kernel.stateDir, 'credentials', 'whatsapp', 'default');
    const creds = join(dir, 'creds.json');
    await until(() => existsSync(creds), 'creds.json');
    expect(statSync(creds).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(creds, 'utf8')).me.id).toContain('15550000001');
    expect(await status()).toMatchObject({ connected: true, state: 'open', number: '+15550000001' });

    fake.deliver(fake.dm(ALICE, 'hi after linking'));
    await until(() => fake.sentTexts(ALICE_JID).length > 0, 'a reply');
    expect(fake.sentTexts(ALICE_JID)).toEqual(['echo: hi after linking']);
  });

  it('a QR that expires unscanned ends the login without a reconnect loop', async () => {
    const { fake, channel, status } = await boot({ linked: false });
    const first = await channel.loginStart!({});
    fake.expireQr();
    await expect(channel.loginWait!({ currentQr: first.qr, timeoutMs: 2000 })).rejects.toThrow(/expired/);
    const sockets = fake.sockets.length;
    // "not-linked" is a resting state: an account that meant to reconnect would say "reconnecting".
    await waitFor(async () => (await status()).state === 'not-linked', { what: 'the account to rest as not-linked' });
    expect(fake.sockets).toHaveLength(sockets);
  });

  it('a login with WhatsApp out of reach names the server and the error, not an expired QR code', async () => {
    // Real Baileys, dialling a port nothing listens on: as with no network, the socket never opens.
    const probe = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => probe.once('listening', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const { channel, status } = await boot({
      linked: false,
      socketFactory: baileysSocketFactory(runtimeDepsService({ stateDir: tempDir('claw-wa-deps-') }), {
        waWebSocketUrl: `ws://127.0.0.1:${port}/ws/chat`,
        install: false,
      }),
    });
    const login = channel.loginStart!({ timeoutMs: 10_000 });
    await expect(login).rejects.toThrow(
      new RegExp(
        `cannot reach the WhatsApp server 127\\.0\\.0\\.1:${port} \\(.*ECONNREFUSED.*\\); check the network connection`,
      ),
    );
    await expect(login).rejects.not.toThrow(/QR/);
    await waitFor(async () => (await status()).state === 'not-linked', { what: 'the account to rest as not-linked' });
  });

  it('a login on a linked account keeps it (unless forced): a dropped connection is not an unlink', async () => {
    const { kernel, fake, channel } = await boot({});
    fake.refuseWith = DisconnectReason.unavailableService;
    fake.drop(DisconnectReason.connectionLost);
    const kept = await channel.loginStart!({});
    expect(kept).toMatchObject({ connected: true });
    expect(kept.message).toContain('already linked');
    expect(existsSync(join(kernel.stateDir, 'credentials', 'whatsapp', 'default', 'creds.json'))).toBe(true);
    fake.refuseWith = undefined;
    const forced = await channel.loginStart!({ force: true });
    expect(forced.qr).toBe(fake.qrs[fake.qrs.length - 1]);
    expect(existsSync(join(kernel.stateDir, 'credentials', 'whatsapp', 'default', 'creds.json'))).toBe(false);
  });

  it('logout unlinks and removes the creds folder', async () => {
    const { kernel, channel, status } = await boot({});
    const dir = join(kernel.stateDir, 'credentials', 'whatsapp', 'default');
    expect(existsSync(join(dir, 'creds.json'))).toBe(true);
    expect(await channel.logout!()).toEqual({ accountId: 'default', cleared: true });
    expect(existsSync(dir)).toBe(false);
    expect(await status()).toMatchObject({ connected: false, state: 'not-linked' });
  });
});

describe('WhatsApp: conversations', () => {
  it('pairing: an unknown number gets a code; once approved, a DM round trip with read receipt and typing', async () => {
    const { kernel, fake, requests, decisions, decided } = await boot({
      whatsapp: { dmPolicy: 'pairing', allowFrom: [] },
    });
    const first = fake.dm(ALICE, 'hello?', { pushName: 'Alice' });
    fake.deliver(first);
    await until(() => fake.sentTexts(ALICE_JID).length > 0, 'the pairing notice');
    const code = /pairing code is ([A-Z0-9]{8})/.exec(fake.sentTexts(ALICE_JID)[0]!)?.[1];
    expect(code).toBeDefined();
    expect(requests).toHaveLength(0);
    expect(fake.reads.map((key) => key.id)).not.toContain(first.key.id);

    expect(await kernel.plugins.kernelServices.channels.pairing.approve('whatsapp', code!)).toMatchObject({
      senderId: ALICE,
      senderName: 'Alice',
    });
    const second = fake.dm(ALICE, 'what is 2+2?');
    fake.deliver(second);
    await until(() => fake.sentTexts(ALICE_JID).length > 1, 'the reply');
    expect(fake.sentTexts(ALICE_JID)[1]).toBe('echo: what is 2+2?');
    await until(() => fake.reads.some((key) => key.id === second.key.id), 'the read receipt');
    expect(fake.presence).toContainEqual(expect.objectContaining({ type: 'composing', jid: ALICE_JID }));
    // The echo of our own reply is not taken for a new message. Echoes come back before the send
    // returns; a later message in the same chat is decided after anything queued before it.
    const ourIds = fake.sent.map((item) => item.id);
    const later = fake.dm(ALICE, 'one more');
    fake.deliver(later);
    expect(await decided(later.key.id!)).toBe('dispatched');
    await until(() => fake.sentTexts(ALICE_JID).includes('echo: one more'), 'the answer to one more');
    expect(decisions.filter((decision) => ourIds.includes(decision.messageId!))).toEqual([]);
    expect(requests.map(lastUserText)).toEqual(['what is 2+2?', 'one more']);
  });

  it('sendReadReceipts: false sends no blue ticks', async () => {
    const { fake } = await boot({ whatsapp: { sendReadReceipts: false } });
    fake.deliver(fake.dm(ALICE, 'quietly'));
    await until(() => fake.sentTexts(ALICE_JID).length > 0, 'the reply');
    expect(fake.reads).toEqual([]);
  });

  it('groups: answered only when mentioned, with the earlier messages as context; unlisted groups ignored', async () => {
    const GROUP = '120363000000001@g.us';
    const OPEN_GROUP = '120363000000002@g.us';
    const { fake, requests, decided } = await boot({
      whatsapp: {
        groupPolicy: 'allowlist',
        groups: { [GROUP]: { requireMention: true }, [OPEN_GROUP]: { requireMention: false } },
      },
    });
    const lunch = fake.group(GROUP, '+4911111', 'lunch moved to 1pm', { pushName: 'Bob' });
    fake.deliver(lunch);
    expect(await decided(lunch.key.id!)).toBe('history');
    expect(fake.sentTexts(GROUP)).toEqual([]);
    expect(requests).toHaveLength(0);

    const mention = fake.group(GROUP, '+4922222', 'when is lunch?', { mention: true, pushName: 'Carol' });
    fake.deliver(mention);
    await until(() => fake.sentTexts(GROUP).length > 0, 'a group reply');
    expect(requests[0]!.systemPrompt).toContain('lunch moved to 1pm');
    await until(() => fake.reads.some((key) => key.id === mention.key.id), 'the read receipt');

    fake.deliver(fake.group(OPEN_GROUP, '+4933333', 'no mention needed here'));
    await until(() => fake.sentTexts(OPEN_GROUP).length > 0, 'a reply without mention');

    const unlisted = fake.group('120363000000099@g.us', '+4944444', 'hello bot', { mention: true });
    fake.deliver(unlisted);
    expect(await decided(unlisted.key.id!)).toBe('blocked');
    expect(fake.sentTexts('120363000000099@g.us')).toEqual([]);
    expect(requests).toHaveLength(2);
  });

  it('a long reply with a code fence goes out in pieces of at most 4,000 characters, fences whole', async () => {
    const code = Array.from(
      { length: 60 },
      (_, i) => `const value${i} = compute(${i}); // step ${i} of the long computation`,
    ).join('\n');
    const prose = (n: number) => `Part ${n}. ${'Plenty of words to fill the paragraph. '.repeat(40)}`;
    const long = [prose(1), prose(2), prose(3), '```ts\n' + code + '\n```', prose(4), prose(5)].join('\n\n');
    expect(long.length).toBeGreaterThan(9000);
    const { fake } = await boot({ answer: () => long });
    fake.deliver(fake.dm(ALICE, 'explain at length'));
    await until(() => fake.sentTexts(ALICE_JID).some((text) => text.includes('Part 5')), 'the last piece');
    const pieces = fake.sentTexts(ALICE_JID);
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(4000);
      expect((piece.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(pieces.join('\n').match(/Part \d/g)).toEqual(['Part 1', 'Part 2', 'Part 3', 'Part 4', 'Part 5']);
    expect(pieces.join('\n')).toContain('const value59 = compute(59);');
  });

  it('media in: images reach the model, documents are saved owner-only, oversize files are described, not fetched', async () => {
    const { kernel, fake, requests } = await boot({ whatsapp: { mediaMaxMb: 1 } });
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const image = fake.dm(ALICE, {
      imageMessage: { caption: 'what is this?', mimetype: 'image/png', fileLength: png.length },
    });
    fake.media.set(image.key.id!, png);
    fake.deliver(image);
    await until(() => requests.length > 0, 'the image turn');
    expect(lastUserText(requests[0]!)).toContain('what is this?');
    expect(JSON.stringify(requests[0]!.messages)).toContain(png.toString('base64'));

    const pdf = fake.dm(ALICE, {
      documentWithCaptionMessage: {
        message: {
          documentMessage: {
            fileName: 'report.pdf',
            mimetype: 'application/pdf',
            fileLength: 9,
            caption: 'the report',
          },
        },
      },
    });
    fake.media.set(pdf.key.id!, Buffer.from('%PDF-1.4\n'));
    fake.deliver(pdf);
    await until(() => requests.length > 1, 'the document turn');
    const saved = /saved at (\S+)\]/.exec(lastUserText(requests[1]!))?.[1];
    expect(saved).toBeDefined();
    expect(saved!.startsWith(join(kernel.stateDir, 'media', 'whatsapp'))).toBe(true);
    expect(readFileSync(saved!, 'utf8')).toBe('%PDF-1.4\n');
    expect(statSync(saved!).mode & 0o777).toBe(0o600);

    fake.deliver(fake.dm(ALICE, { videoMessage: { mimetype: 'video/mp4', fileLength: 5 * 1024 * 1024 } }));
    await until(() => requests.length > 2, 'the oversize turn');
    expect(lastUserText(requests[2]!)).toContain('not downloaded: larger than mediaMaxMb (1 MB)');
  });

  it('media out: an image with its caption as one message, audio as a voice note, oversize refused', async () => {
    const { kernel, fake } = await boot({ whatsapp: { mediaMaxMb: 1 } });
    const media = join(kernel.stateDir, 'media');
    mkdirSync(media, { recursive: true });
    writeFileSync(join(media, 'chart.png'), Buffer.from('89504e47', 'hex'));
    writeFileSync(join(media, 'note.ogg'), Buffer.from('OggS'));
    writeFileSync(join(media, 'huge.pdf'), Buffer.alloc(2 * 1024 * 1024));
    const channels = kernel.plugins.kernelServices.channels;

    const sent = await channels.send({ channel: 'whatsapp', to: ALICE, text: '', media: [join(media, 'chart.png')] });
    expect(sent.delivered).toBe(true);
    const channel = (await kernel.capabilities.find('channel', 'whatsapp')) as ChannelPlugin;
    // A caller's channel.send takes the outbound path: text and image as two messages (WhatsApp's markup).
    await channel.send({ to: ALICE, text: 'Here is the **chart**', media: [{ url: join(media, 'chart.png') }] });
    const pair = fake.sent
      .slice(-2)
      .map((item) => item.content as { image?: Buffer; mimetype?: string; text?: string });
    const image = pair.find((content) => content.image)!;
    const text = pair.find((content) => content.text !== undefined);
    expect(image.image!.toString('hex')).toBe('89504e47');
    expect(image).toMatchObject({ mimetype: 'image/png' });
    expect(text).toMatchObject({ text: 'Here is the *chart*' });

    await channel.send({ to: ALICE, media: [{ url: join(media, 'note.ogg') }] });
    expect(fake.sent[fake.sent.length - 1]!.content).toMatchObject({ ptt: true, mimetype: 'audio/ogg; codecs=opus' });

    // A send that fails half-way is retried without repeating what already went out.
    fake.failOnce = (content) => 'image' in content;
    const before = fake.sent.length;
    const long = `A long explanation. ${'x'.repeat(1100)}`;
    // (A caller's own transport gets text and media as one piece; here it is a channel view, whose send takes the
    // outbound path again and retries the image there.)
    expect(
      await channels.send({
        channel: 'whatsapp',
        to: ALICE,
        text: long,
        media: [join(media, 'chart.png')],
        transport: (piece) => channel.send(piece),
      }),
    ).toMatchObject({ delivered: true });
    expect(fake.sent.slice(before).map((item) => Object.keys(item.content)[0])).toEqual(['text', 'image']);

    const refused = await channels.send({
      channel: 'whatsapp',
      to: ALICE,
      text: 'big file',
      media: [join(media, 'huge.pdf')],
    });
    expect(refused.delivered).toBe(false);
    expect(refused.error).toContain('larger than mediaMaxMb');
  });

  it('self-chat: the owner writing to their own number is answered there; selfChatMode: false ignores it', async () => {
    const { fake, requests, decisions, decided } = await boot({});
    fake.deliver(fake.dm(fake.jid, 'remind me to call mom', { fromMe: true }));
    await until(() => fake.sentTexts(fake.jid).length > 0, 'a reply in self-chat');
    expect(fake.sentTexts(fake.jid)[0]).toBe('echo: remind me to call mom');
    // In self-chat the echo of the reply lands in the very chat it answers; a later note there is
    // decided after anything queued before it, so by then the echo was either dropped or decided.
    const replyIds = fake.sent.map((item) => item.id);
    const note = fake.dm(fake.jid, 'and buy milk', { fromMe: true });
    fake.deliver(note);
    expect(await decided(note.key.id!)).toBe('dispatched');
    await until(() => fake.sentTexts(fake.jid).includes('echo: and buy milk'), 'the answer to the second note');
    expect(decisions.filter((decision) => replyIds.includes(decision.messageId!))).toEqual([]);
    expect(requests.map(lastUserText)).toEqual(['remind me to call mom', 'and buy milk']);
    expect(fake.reads).toEqual([]);

    const quiet = await boot({ whatsapp: { selfChatMode: false } });
    const ignored = quiet.fake.dm(quiet.fake.jid, 'note to self', { fromMe: true });
    quiet.fake.deliver(ignored);
    // Ignored self-chat never reaches the pipeline. A whole turn for another chat, started after it,
    // outlasts anything the note could have set off.
    quiet.fake.deliver(quiet.fake.dm(ALICE, 'ping'));
    await until(() => quiet.fake.sentTexts(ALICE_JID).includes('echo: ping'), 'the answer to ping');
    expect(quiet.decisions.filter((decision) => decision.messageId === ignored.key.id)).toEqual([]);
    expect(quiet.requests.map(lastUserText)).toEqual(['ping']);
  });

  it('rejects bad config with the key to fix', async () => {
    const { status } = await boot({ whatsapp: { mediaMaxMb: -1 }, linked: false });
    expect(String((await status()).lastError)).toContain('channels.whatsapp.mediaMaxMb must be a positive number');
  });
});

describe('WhatsApp: accounts', () => {
  it('two numbers: each account has its own creds folder, socket and replies', async () => {
    const home = new FakeWhatsApp({ number: '15550000001' });
    const work = new FakeWhatsApp({ number: '15550000002' });
    const stateDir = tempDir('claw-wa-accounts-');
    for (const [id, fake] of [
      ['home', home],
      ['work', work],
    ] as const) {
      mkdirSync(join(stateDir, 'credentials', 'whatsapp', id), { recursive: true, mode: 0o700 });
      writeFileSync(join(stateDir, 'credentials', 'whatsapp', id, 'creds.json'), fake.linkedCreds(), { mode: 0o600 });
    }
    const kernel = await createTestKernel({
      stateDir,
      plugins: [
        ...agentStackDirs(),
        createWhatsAppPlugin({
          socketFactory: (options) => (options.accountId === 'work' ? work : home).factory(options),
        }),
        scriptedModel((request) => `echo: ${lastUserText(request)}`),
      ],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 } },
        session: { dmScope: 'per-account-channel-peer' },
        channels: {
          whatsapp: {
            dmPolicy: 'allowlist',
            allowFrom: [ALICE],
            accounts: { home: {}, work: { sendReadReceipts: false } },
          },
        },
      },
    });
    kernels.push(kernel);
    await kernel.start();
    await until(() => home.current?.user !== undefined && work.current?.user !== undefined, 'both sockets');
    home.deliver(home.dm(ALICE, 'to home'));
    work.deliver(work.dm(ALICE, 'to work'));
    await until(() => home.sentTexts(ALICE_JID).length > 0 && work.sentTexts(ALICE_JID).length > 0, 'both replies');
    expect(home.sentTexts(ALICE_JID)).toEqual(['echo: to home']);
    expect(work.sentTexts(ALICE_JID)).toEqual(['echo: to work']);
    await until(() => home.reads.length > 0, 'the home read receipt');
    expect(work.reads).toEqual([]);
    const channels = kernel.plugins.kernelServices.channels;
    expect(await channels.send({ channel: 'whatsapp', accountId: 'work', to: ALICE, text: 'from work' })).toMatchObject(
      { delivered: true },
    );
    expect(work.sentTexts(ALICE_JID)).toContain('from work');
    const accounts = (await channels.status()).find((info) => info.id === 'whatsapp')!.accounts;
    expect(accounts.map((account) => [account.accountId, account.number])).toEqual([
      ['home', '+15550000001'],
      ['work', '+15550000002'],
    ]);
    const channel = (await kernel.capabilities.find('channel', 'whatsapp')) as ChannelPlugin;
    await expect(channel.loginStart!({ accountId: '../escape' })).rejects.toThrow(/may only use letters, digits/);
  });
});

describe('WhatsApp: connection', () => {
  it('reconnects with growing, capped backoff on transient closes; nothing lost, nothing twice', async () => {
    let hold: (() => void) | undefined;
    const { fake, requests, status, decided } = await boot({
      answer: async (request) => {
        const text = lastUserText(request);
        if (text === 'slow one') await new Promise<void>((resolve) => (hold = resolve));
        return `echo: ${text}`;
      },
    });

    // A message that arrives while disconnected is delivered on reconnect and answered once.
    fake.drop(DisconnectReason.connectionLost);
    fake.deliver(fake.dm(ALICE, 'sent while offline'));
    await until(() => fake.sentTexts(ALICE_JID).includes('echo: sent while offline'), 'the offline message answered');
    expect(fake.sockets.length).toBe(2);

    // WhatsApp redelivers a message whose ack was lost in a drop: the pipeline answers it once.
    const once = fake.dm(ALICE, 'only once please');
    fake.deliver(once);
    await until(() => fake.sentTexts(ALICE_JID).includes('echo: only once please'), 'the first answer');
    fake.drop(DisconnectReason.connectionClosed, [once.key.id!]);
    await until(() => fake.sockets.length === 3 && fake.current?.user !== undefined, 'the third connection');
    // The redelivery reaches the pipeline again and is recognised, not answered.
    expect(await decided(once.key.id!, 2)).toBe('duplicate');
    expect(fake.sentTexts(ALICE_JID).filter((text) => text === 'echo: only once please')).toHaveLength(1);
    expect(requests.filter((request) => lastUserText(request) === 'only once please')).toHaveLength(1);

    // A reply finished while the socket is down waits for the next connection.
    fake.deliver(fake.dm(ALICE, 'slow one'));
    await until(() => hold !== undefined, 'the slow turn');
    fake.drop(DisconnectReason.unavailableService);
    hold!();
    await until(() => fake.sentTexts(ALICE_JID).includes('echo: slow one'), 'the held reply');
    const carried = fake.sent.find((item) => 'text' in item.content && item.content.text === 'echo: slow one')!;
    expect(carried.connection).toBe(4);

    // Backoff: each retry waits longer (with jitter), never more than the cap.
    fake.refuseWith = DisconnectReason.unavailableService;
    const before = fake.connectTimes.length;
    fake.drop(DisconnectReason.connectionLost);
    await until(() => fake.connectTimes.length >= before + 5, 'five reconnect attempts', 8000);
    fake.refuseWith = undefined;
    const gaps = fake.connectTimes
      .slice(before)
      .map((at, i, all) => (i === 0 ? 0 : at - all[i - 1]!))
      .slice(1);
    // Attempt n waits 60 ms × 2^(n-1) ± 20 %, at most 500 ms: 120, 240, 480, 500 (lower bounds below).
    [96, 192, 384, 400].forEach((least, i) => expect(gaps[i]).toBeGreaterThanOrEqual(least - 5));
    // The cap holds (with room for a busy machine's timer lateness).
    for (const gap of gaps) expect(gap).toBeLessThanOrEqual(500 + 200);
    expect(await status()).toMatchObject({ state: expect.stringMatching(/reconnecting|open|connecting/) });
    await until(() => fake.current?.user !== undefined, 'the connection back');
    expect(await status()).toMatchObject({ connected: true, state: 'open' });
    expect(Number((await status()).reconnects)).toBeGreaterThanOrEqual(4);
  });

  it('WhatsApp asking for a restart (515) reconnects at once', async () => {
    const { fake } = await boot({});
    const at = Date.now();
    fake.drop(DisconnectReason.restartRequired);
    await until(() => fake.sockets.length === 2 && fake.current?.user !== undefined, 'the new connection');
    expect(Date.now() - at).toBeLessThan(60);
  });

  it('logged out (401): shown in status, reported once on another channel, no reconnect loop; login recovers', async () => {
    const outbox: Array<{ to: string; text: string }> = [];
    const setup = await boot({
      extraPlugins: [otherChannel(outbox), bundledPluginDir('heartbeat')],
      extraChannels: { 'other-chat': { dmPolicy: 'allowlist', allowFrom: ['owner-9'] } },
    });
    const { kernel, fake, status } = setup;
    fake.linked = undefined;
    fake.drop(DisconnectReason.loggedOut);
    await until(() => outbox.length > 0, 'the report on the other channel');
    expect(outbox[0]).toMatchObject({ to: 'owner-9' });
    expect(outbox[0]!.text).toContain('logged out');
    expect(outbox[0]!.text).toContain('claw channels login --channel whatsapp');
    const account = await status();
    expect(account).toMatchObject({ connected: false, state: 'logged-out', detail: 'logged out' });
    expect(String(account.lastError)).toContain('claw channels login --channel whatsapp');
    // "logged-out" is a resting state (a reconnect would show as "reconnecting"); the checks below that
    // the socket count and the single report still hold come after a send round trip through the account.
    const sockets = fake.sockets.length;
    // And the agent hears it at its next turn in the main session (a system event).
    const events = await useService<SystemEventsService>(kernel, 'system-events');
    expect(events!.pending('agent:main:main').map((event) => event.text)).toEqual([outbox[0]!.text]);
    const dir = join(kernel.stateDir, 'credentials', 'whatsapp', 'default');
    expect(existsSync(join(dir, 'creds.json'))).toBe(false);

    // Sending now fails at once with the reason, instead of waiting.
    const failed = await kernel.plugins.kernelServices.channels.send({
      channel: 'whatsapp',
      to: ALICE,
      text: 'anyone?',
    });
    expect(failed.delivered).toBe(false);
    expect(failed.error).toContain('logged out');
    expect(fake.sockets).toHaveLength(sockets);
    expect(outbox).toHaveLength(1);

    expect(existsSync(join(dir, 'logged-out.json'))).toBe(true);

    // A restart stays logged out without connecting.
    await kernel.dispose();
    kernels = kernels.filter((item) => item !== kernel);
    const socketsBefore = fake.sockets.length;
    const restarted = await boot({ fake, stateDir: kernel.stateDir, linked: false });
    // Started and resting as logged-out (an account on its way to connect would say "connecting").
    await waitFor(async () => (await restarted.status()).state === 'logged-out', {
      what: 'the restarted account to rest as logged-out',
    });
    expect(fake.sockets).toHaveLength(socketsBefore);
    expect(await restarted.status()).toMatchObject({ state: 'logged-out', connected: false });

    // Recovery: log in again.
    const state = await restarted.channel.loginStart!({});
    expect(state.qr).toBeDefined();
    fake.scan();
    expect(await restarted.channel.loginWait!({ currentQr: state.qr, timeoutMs: 3000 })).toMatchObject({
      connected: true,
    });
    expect(await restarted.status()).toMatchObject({ state: 'open', connected: true });
    expect(existsSync(join(dir, 'logged-out.json'))).toBe(false);
    fake.deliver(fake.dm(ALICE, 'back?'));
    await until(() => fake.sentTexts(ALICE_JID).includes('echo: back?'), 'an answer after recovery');
  });
});

describe('WhatsApp: login through the gateway and the CLI', () => {
  it('web.login.start / web.login.wait link the running account; the CLI draws the QR; channels.logout unlinks', async () => {
    const fake = new FakeWhatsApp();
    const gateway = await startGateway({
      plugins: [
        ...agentStackDirs(),
        createWhatsAppPlugin({ socketFactory: fake.factory, reconnect: FAST_RECONNECT }),
        scriptedModel((request) => `echo: ${lastUserText(request)}`),
      ],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 } },
        channels: { whatsapp: { dmPolicy: 'allowlist', allowFrom: [ALICE] } },
      },
    });
    kernels.push(gateway.kernel as TestKernel);
    const operator = await client(gateway.url);
    try {
      const before = (
        await operator.request<{ channels: Array<{ id: string; accounts: Array<Record<string, unknown>> }> }>(
          'channels.status',
        )
      ).channels.find((info) => info.id === 'whatsapp')!;
      expect(before.accounts[0]).toMatchObject({ state: 'not-linked', connected: false });

      const output: string[] = [];
      const out = { write: (chunk: string) => (output.push(chunk), true) } as unknown as NodeJS.WritableStream;
      const login = runQrLogin(
        {
          start: () =>
            operator.request<ChannelLoginState>('web.login.start', {
              channel: 'whatsapp',
              idempotencyKey: randomUUID(),
            }),
          wait: (currentQr) =>
            operator.request<ChannelLoginState>('web.login.wait', {
              channel: 'whatsapp',
              timeoutMs: 2000,
              ...(currentQr ? { currentQr } : {}),
            }),
        },
        out,
      );
      await until(() => output.join('').includes('Linked devices'), 'the QR on the terminal');
      expect(output.join('')).toContain(await qrToTerminal(fake.qrs[0]!));
      fake.scan();
      expect(await login).toMatchObject({ connected: true });

      fake.deliver(fake.dm(ALICE, 'linked from the CLI'));
      await until(() => fake.sentTexts(ALICE_JID).includes('echo: linked from the CLI'), 'a reply');
      const after = (
        await operator.request<{ channels: Array<{ id: string; accounts: Array<Record<string, unknown>> }> }>(
          'channels.status',
        )
      ).channels.find((info) => info.id === 'whatsapp')!;
      expect(after.accounts[0]).toMatchObject({ state: 'open', connected: true, detail: 'linked as +15550000001' });

      expect(
        await operator.request('channels.logout', { channel: 'whatsapp', idempotencyKey: randomUUID() }),
      ).toMatchObject({ channel: 'whatsapp', accountId: 'default', cleared: true });
      expect(existsSync(join(gateway.stateDir, 'credentials', 'whatsapp', 'default'))).toBe(false);
      await expect(
        operator.request('web.login.start', { channel: 'telegram-nope', idempotencyKey: randomUUID() }),
      ).rejects.toThrow(/has no QR login/);
    } finally {
      await operator.close();
    }
  });
});

describe('WhatsApp: the Baileys adapter', () => {
  it('opens a real Baileys socket (to a local WebSocket, not WhatsApp) and keeps its creds owner-only', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as { port: number }).port;
    const hello = new Promise<Buffer>((resolve) =>
      server.once('connection', (ws) => ws.once('message', (data) => resolve(Buffer.from(data as Buffer)))),
    );
    const dir = join(tempDir('claw-wa-baileys-'), 'credentials', 'whatsapp', 'default');
    const auth = new AuthStore(dir);
    try {
      const socket = await baileysSocketFactory(runtimeDepsService({ stateDir: tempDir('claw-wa-deps-') }), {
        waWebSocketUrl: `ws://127.0.0.1:${port}/ws/chat`,
        install: false,
      })({ accountId: 'default', auth, logger: createLogger({ level: 'error' }) });
      const updates: Array<{ connection?: string }> = [];
      socket.ev.on('connection.update', (update) => updates.push(update));
      // Baileys starts the Noise handshake with WhatsApp's "WA" prologue.
      expect((await hello).subarray(0, 2).toString()).toBe('WA');
      await socket.saveCreds();
      const creds = JSON.parse(readFileSync(join(dir, 'creds.json'), 'utf8'));
      expect(creds.noiseKey.private).toMatchObject({ type: 'Buffer' });
      expect(statSync(join(dir, 'creds.json')).mode & 0o777).toBe(0o600);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(await auth.linked()).toBe(false);
      socket.end(undefined);
      await until(() => updates.some((update) => update.connection === 'close'), 'the close event');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
