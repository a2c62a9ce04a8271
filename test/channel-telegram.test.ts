/**
 * The Telegram channel against a fake Bot API server (test/fakes/telegram-api.ts): the
 * shared channel contract, then what is particular to Telegram — formatting, mentions,
 * topics, media, rate limits, parse errors, webhooks through a real gateway, and grammY
 * staying unloaded until an account starts.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { definePlugin, type ModelRequest } from '../sdk/index.js';
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
import { useService } from '../sdk/services.js';
import { markdownToTelegramHtml } from '../plugins/channel-telegram/format.js';
import { addressesBot, parseMessage, type TgMessage } from '../plugins/channel-telegram/inbound.js';
import { FakeTelegramApi, parseTelegramHtml } from './fakes/telegram-api.js';
import { startGateway } from './gateway-helpers.js';
import { freePort, REPO, tempDir, waitFor } from './helpers.js';

const TELEGRAM = fileURLToPath(new URL('../plugins/channel-telegram/', import.meta.url));
const AGENT_LOOP = agentStackDirs();

// ── The shared channel contract ────────────────────────────────────────────────────

const contractApi = new FakeTelegramApi({ username: 'contract_bot' });

/** The contract's platform message as the update Telegram would send. */
function contractUpdate(message: PlatformMessage): Record<string, unknown> {
  const mention = `@${contractApi.bot.username}`;
  const group = message.kind === 'group';
  return {
    message: contractApi.message({
      chatId: message.chatId,
      chatType: group ? 'supergroup' : 'private',
      title: group ? `Group ${message.chatId}` : undefined,
      isForum: message.threadId !== undefined,
      from: { id: message.senderId, first_name: message.senderName ?? message.senderId },
      text: message.mention ? `${mention} ${message.text}` : message.text,
      ...(message.mention ? { entities: [{ type: 'mention', offset: 0, length: mention.length }] } : {}),
      ...(message.messageId ? { messageId: message.messageId } : {}),
      ...(message.threadId ? { threadId: message.threadId } : {}),
    }),
  };
}

channelContractSuite({
  channel: 'telegram',
  plugin: TELEGRAM,
  config: () => ({ botToken: contractApi.token, apiRoot: contractApi.apiRoot }),
  textLimit: 4096,
  groups: true,
  threads: true,
  platform: {
    start: () => contractApi.start(),
    stop: () => contractApi.stop(),
    deliver: async (message) => void (await contractApi.pushUpdate(contractUpdate(message))),
    sent: () =>
      contractApi.sent().map((call) => ({
        chatId: String(call.params.chat_id),
        // What the user reads: the text after Telegram parsed the HTML.
        text: String(call.result.text ?? call.result.caption ?? ''),
        ...(call.params.message_thread_id !== undefined ? { threadId: String(call.params.message_thread_id) } : {}),
        ...(call.params.reply_parameters ? { replyTo: String(call.params.reply_parameters.message_id) } : {}),
      })),
    reset: () => contractApi.reset(),
  },
});

// ── Telegram specifics ─────────────────────────────────────────────────────────────

const api = new FakeTelegramApi();
type User = { id: number; first_name: string; last_name?: string; username?: string };
const ADA: User = { id: 1001, first_name: 'Ada', last_name: 'Lovelace', username: 'ada' };
const BOB: User = { id: 1002, first_name: 'Bob' };
const GROUP = -1001234567890;
const MENTION = `@${api.bot.username}`;

let kernel: TestKernel | undefined;
const requests: ModelRequest[] = [];
let respond: (request: ModelRequest) => ScriptedAnswer;
/** Every finished delivery (message_sent fires once a reply's pieces and retries are all done). */
const delivered: Array<{ content: string; success: boolean }> = [];
const deliveries = definePlugin({
  id: 'telegram-test-deliveries',
  register(api) {
    api.on('message_sent', (event) => void delivered.push({ content: event.content, success: event.success }));
  },
});

async function boot(
  channel: Record<string, unknown>,
  options: { env?: Record<string, string>; withToken?: boolean } = {},
): Promise<TestKernel> {
  await kernel?.dispose();
  kernel = await createTestKernel({
    plugins: [
      ...AGENT_LOOP,
      TELEGRAM,
      scriptedModel((request) => (requests.push(request), respond(request))),
      deliveries,
    ],
    config: {
      agents: { defaults: { model: 'scripted/echo' } },
      messages: { queue: { debounceMs: 0 } },
      channels: {
        telegram: { ...(options.withToken === false ? {} : { botToken: api.token }), apiRoot: api.apiRoot, ...channel },
      },
    },
    env: options.env,
  });
  await kernel.start();
  return kernel;
}

const dm = (text: string, from = ADA, extra: Partial<Parameters<FakeTelegramApi['message']>[0]> = {}) => ({
  message: api.message({ chatId: from.id, from, text, ...extra }),
});
const inGroup = (text: string, from = ADA, extra: Partial<Parameters<FakeTelegramApi['message']>[0]> = {}) => ({
  message: api.message({ chatId: GROUP, chatType: 'supergroup', title: 'Engine room', from, text, ...extra }),
});
const mentioning = (text: string) => ({
  text: `${MENTION} ${text}`,
  entities: [{ type: 'mention', offset: 0, length: MENTION.length }],
});
const sendsTo = (chat: number) => api.sent().filter((call) => call.params.chat_id === chat);
const replyTo = (chat: number, what = 'a reply') =>
  api.waitFor(
    (call) => call.status === 200 && call.method === 'sendMessage' && call.params.chat_id === chat,
    5000,
    what,
  );

const until = (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000) =>
  waitFor(check, { what, timeoutMs });

/**
 * What the pipeline decided about a message the test pushed ("dispatched", "history", "blocked",
 * …): the plugin logs it at debug level once receive() has answered. A test that expects nothing
 * to happen waits for this decision first, so "nothing was sent" is not just "nothing yet".
 */
async function outcomeOf(update: { message: Record<string, unknown> }): Promise<string> {
  const prefix = `telegram: message ${String(update.message.message_id)} in `;
  const line = await waitFor(() => kernel!.logs.find((record) => record.message.startsWith(prefix)), {
    what: `the pipeline's decision on "${prefix}…"`,
  });
  return line.message.slice(line.message.lastIndexOf(': ') + 2);
}

async function telegramStatus() {
  const status = await kernel!.plugins.kernelServices.channels.status();
  return status.find((channel) => channel.id === 'telegram')!.accounts;
}

describe('telegram channel', () => {
  beforeAll(() => api.start());
  afterAll(async () => {
    await kernel?.dispose();
    kernel = undefined;
    await api.stop();
  });
  beforeEach(async () => {
    // The previous test's kernel may still be sending; it must not write into this test's record.
    await kernel?.dispose();
    kernel = undefined;
    api.reset();
    requests.length = 0;
    delivered.length = 0;
    respond = (request) => `echo: ${lastUserText(request)}`;
  });

  it('answers a DM with the Markdown rendered as Telegram HTML, showing typing first', async () => {
    await boot({ dmPolicy: 'allowlist', allowFrom: ['1001'] });
    respond = () =>
      'Here is **bold**, _italic_, `a < b` and [a link](https://example.com/x?a=1&b=2).\n\n```js\nif (a < b) {}\n```';
    await api.pushUpdate(dm('hi **there**'));
    const sent = await replyTo(ADA.id);
    expect(sent.params).toMatchObject({ chat_id: 1001, parse_mode: 'HTML' });
    expect(sent.params.text).toBe(
      'Here is <b>bold</b>, <i>italic</i>, <code>a &lt; b</code> and <a href="https://example.com/x?a=1&amp;b=2">a link</a>.\n\n<pre><code class="language-js">if (a &lt; b) {}</code></pre>',
    );
    expect(sent.result.text).toBe('Here is bold, italic, a < b and a link.\n\nif (a < b) {}');
    // The user's own text reaches the model untouched.
    expect(lastUserText(requests[0]!)).toBe('hi **there**');
    const typing = api.callsTo('sendChatAction');
    expect(typing[0]?.params).toMatchObject({ chat_id: 1001, action: 'typing' });
    expect(typing[0]!.at).toBeLessThan(sent.at);
  });

  it('in a group, keeps unaddressed messages as context and answers an @mention in reply to it', async () => {
    await boot({ dmPolicy: 'allowlist', allowFrom: ['1001'], groupPolicy: 'open', replyToMode: 'first' });
    const context = inGroup('the deploy is at 5pm', BOB);
    await api.pushUpdate(context);
    expect(await outcomeOf(context)).toBe('history');
    expect(sendsTo(GROUP)).toEqual([]);
    expect(requests).toHaveLength(0);

    const asked = inGroup('', ADA, mentioning('when is the deploy?'));
    await api.pushUpdate(asked);
    const reply = await replyTo(GROUP, 'the group reply');
    expect(reply.params.reply_parameters).toEqual({
      message_id: asked.message.message_id,
      allow_sending_without_reply: true,
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.systemPrompt).toContain('the deploy is at 5pm');
    expect(requests[0]!.systemPrompt).toContain('Engine room');

    // A reply to one of the bot's messages addresses it too; a command for another bot does not.
    const botMessage = {
      message_id: reply.result.message_id,
      chat: { id: GROUP, type: 'supergroup' },
      from: api.bot,
      text: reply.result.text,
    };
    await api.pushUpdate(inGroup('and tomorrow?', BOB, { replyTo: botMessage }));
    await until(() => sendsTo(GROUP).length === 2, 'the answer to a reply');
    const foreign = inGroup('/status@other_bot', BOB, { entities: [{ type: 'bot_command', offset: 0, length: 17 }] });
    await api.pushUpdate(foreign);
    expect(await outcomeOf(foreign)).toBe('history');
    expect(sendsTo(GROUP)).toHaveLength(2);
    expect(requests).toHaveLength(2);
  });

  it('gives each forum topic its own session and answers inside the topic', async () => {
    await boot({
      dmPolicy: 'allowlist',
      allowFrom: ['1001'],
      groupPolicy: 'open',
      groups: { '*': { requireMention: false } },
    });
    const forum = -1009988776655;
    // Inside a topic every message "replies" to the topic's opening service message.
    const opening = (id: number) => ({
      message_id: id,
      chat: { id: forum, type: 'supergroup', is_forum: true },
      from: ADA,
      forum_topic_created: { name: `topic ${id}`, icon_color: 0 },
    });
    const inTopic = (topic: number, text: string) => ({
      message: api.message({
        chatId: forum,
        chatType: 'supergroup',
        isForum: true,
        title: 'Forum',
        from: ADA,
        text,
        threadId: topic,
        replyTo: opening(topic),
      }),
    });
    await api.pushUpdate(inTopic(42, 'in topic 42'));
    const first = await replyTo(forum, 'the topic reply');
    expect(first.params.message_thread_id).toBe(42);
    await api.pushUpdate(inTopic(43, 'in topic 43'));
    await until(() => sendsTo(forum).length === 2, 'the second topic reply');
    expect(sendsTo(forum)[1]!.params.message_thread_id).toBe(43);

    const loop = (await useService(kernel!, 'agent')) as unknown as {
      runtime: { store(agent: string): { list(): Promise<Array<{ key: string }>> } };
    };
    const keys = (await loop.runtime.store('main').list()).map((item) => item.key);
    expect(keys).toEqual(
      expect.arrayContaining([
        'agent:main:telegram:group:-1009988776655:topic:42',
        'agent:main:telegram:group:-1009988776655:topic:43',
      ]),
    );
  });

  it('cuts a long Markdown reply into pieces Telegram accepts (≤ 4096 after parsing), in order', async () => {
    await boot({ dmPolicy: 'allowlist', allowFrom: ['1001'] });
    const paragraph = (n: number) =>
      `**Paragraph ${n}.** ${'Some _emphasis_ & <angle> text with a `code span`. '.repeat(22).trim()}`;
    const long = Array.from({ length: 12 }, (_, i) => paragraph(i + 1)).join('\n\n');
    expect(long.length).toBeGreaterThan(3 * 4096);
    respond = () => long;
    await api.pushUpdate(dm('write a lot'));
    await until(
      () => sendsTo(ADA.id).some((call) => String(call.result.text).includes('Paragraph 12.')),
      'the last piece',
    );
    const pieces = api.callsTo('sendMessage');
    expect(pieces.length).toBeGreaterThanOrEqual(4);
    for (const piece of pieces) {
      expect(piece.status, piece.error?.description).toBe(200);
      expect(piece.params.parse_mode).toBe('HTML');
      expect(String(piece.result.text).length).toBeLessThanOrEqual(4096);
    }
    const shown = pieces.map((piece) => String(piece.result.text)).join('\n\n');
    expect(shown.match(/Paragraph \d+/g)).toEqual(Array.from({ length: 12 }, (_, i) => `Paragraph ${i + 1}`));
    expect(shown).toContain('Some emphasis & <angle> text with a code span.');
  });

  it('pairs an unknown sender: a code, approval, then answers', async () => {
    await boot({ dmPolicy: 'pairing' });
    await api.pushUpdate(dm('hello?', BOB));
    const notice = await replyTo(BOB.id, 'the pairing notice');
    const code = /pairing code is ([A-Z0-9]{8})/.exec(String(notice.result.text))?.[1];
    expect(code, String(notice.result.text)).toBeDefined();
    expect(String(notice.result.text)).toContain(`claw pairing approve telegram ${code}`);
    expect(requests).toHaveLength(0);
    const channels = kernel!.plugins.kernelServices.channels;
    expect(await channels.pairing.approve('telegram', code!)).toMatchObject({
      channel: 'telegram',
      senderId: '1002',
      senderName: 'Bob',
    });
    await api.pushUpdate(dm('now?', BOB));
    await until(() => sendsTo(BOB.id).length === 2, 'the answer after approval');
    expect(sendsTo(BOB.id)[1]!.result.text).toBe('echo: now?');
  });

  it('waits out a 429 for retry_after, then sends', async () => {
    await boot({ dmPolicy: 'allowlist', allowFrom: ['1001'] });
    api.script('sendMessage', {
      error_code: 429,
      description: 'Too Many Requests: retry after 1',
      parameters: { retry_after: 1 },
    });
    await api.pushUpdate(dm('ping'));
    await replyTo(ADA.id);
    const [limited, retried] = api.callsTo('sendMessage');
    expect(limited!.status).toBe(429);
    expect(retried!.status).toBe(200);
    const waited = retried!.at - limited!.at;
    console.log(`telegram 429 retry_after=1 s: resent after ${waited.toFixed(0)} ms`);
    expect(waited).toBeGreaterThanOrEqual(990);
    expect(waited).toBeLessThan(1600);
  });

  it('resends a message Telegram cannot parse exactly once, as plain text', async () => {
    await boot({ dmPolicy: 'allowlist', allowFrom: ['1001'] });
    api.script(
      'sendMessage',
      {
        error_code: 400,
        description: 'Bad Request: can\'t parse entities: Can\'t find end tag corresponding to start tag "b"',
      },
      { times: 10, when: (params) => params.parse_mode === 'HTML' },
    );
    respond = () => '**bold** and *more*';
    await api.pushUpdate(dm('format this'));
    // The whole delivery is over (the plain-text resend included), so no further call can belong to it.
    await until(() => delivered.some((item) => item.content === '**bold** and *more*'), 'the delivery to finish');
    const calls = api.callsTo('sendMessage');
    expect(calls.map((call) => [call.status, call.params.parse_mode])).toEqual([
      [400, 'HTML'],
      [200, undefined],
    ]);
    expect(calls[1]!.params.text).toBe('**bold** and *more*');
  });

  it('does not retry other 4xx; retries 5xx, proxy errors and dropped connections', async () => {
    await boot({
      dmPolicy: 'allowlist',
      allowFrom: ['1001'],
      retry: { attempts: 4, minDelayMs: 10, maxDelayMs: 50, jitter: 0 },
    });
    const channels = kernel!.plugins.kernelServices.channels;
    api.script('sendMessage', { error_code: 403, description: 'Forbidden: bot was blocked by the user' });
    const blocked = await channels.send({ channel: 'telegram', to: '1001', text: 'hello' });
    expect(blocked).toMatchObject({ delivered: false, attempts: 1 });
    expect(blocked.error).toContain('403 Forbidden: bot was blocked by the user');

    api.script('sendMessage', { error_code: 500, description: 'Internal Server Error' });
    api.script('sendMessage', { raw: { status: 502, body: '<html>Bad Gateway</html>' } });
    api.script('sendMessage', { drop: true });
    const sent = await channels.send({ channel: 'telegram', to: '1001', text: 'again' });
    expect(sent).toMatchObject({ delivered: true, attempts: 4 });
    expect(api.callsTo('sendMessage').map((call) => call.status)).toEqual([403, 500, 502, 0, 200]);
  });

  it('downloads photos for the model, saves other files, and sends media back', async () => {
    await boot({ dmPolicy: 'allowlist', allowFrom: ['1001'] });
    const small = api.addFile(Buffer.from('small-jpeg'), { path: 'photos/small.jpg' });
    const large = api.addFile(Buffer.from('large-jpeg-bytes'), { path: 'photos/large.jpg' });
    const size = (file: typeof small) => ({
      file_id: file.fileId,
      file_unique_id: file.uniqueId,
      width: 90,
      height: 90,
      file_size: file.data.length,
    });
    await api.pushUpdate({
      message: api.message({
        chatId: ADA.id,
        from: ADA,
        caption: 'what is this?',
        extra: { photo: [size(small), size(large)] },
      }),
    });
    await replyTo(ADA.id);
    const user = requests[0]!.messages.findLast((message) => message.role === 'user')!;
    expect(lastUserText(requests[0]!)).toContain('what is this?');
    expect(user.content).toEqual(
      expect.arrayContaining([
        { type: 'image', data: Buffer.from('large-jpeg-bytes').toString('base64'), mimeType: 'image/jpeg' },
      ]),
    );

    const pdf = api.addFile(Buffer.from('%PDF-1.4 fake'), { path: 'documents/report.pdf' });
    await api.pushUpdate({
      message: api.message({
        chatId: ADA.id,
        from: ADA,
        caption: 'summarize',
        extra: {
          document: {
            file_id: pdf.fileId,
            file_unique_id: pdf.uniqueId,
            file_name: 'report.pdf',
            mime_type: 'application/pdf',
            file_size: 13,
          },
        },
      }),
    });
    await until(
      () => sendsTo(ADA.id).some((call) => String(call.result.text).includes('summarize')),
      'the answer about the document',
    );
    const saved = /saved at (\S+)\]/.exec(lastUserText(requests[1]!))?.[1];
    expect(saved, lastUserText(requests[1]!)).toBeDefined();
    expect(readFileSync(saved!, 'utf8')).toBe('%PDF-1.4 fake');

    // Local attachments must come from the workspace (the kernel refuses anything else).
    mkdirSync(kernel!.paths.workspaceDir, { recursive: true });
    const image = join(kernel!.paths.workspaceDir, 'chart.png');
    writeFileSync(image, Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const outside = join(tempDir(), 'outside.png');
    writeFileSync(outside, 'x');
    const channels = kernel!.plugins.kernelServices.channels;
    api.reset();
    // A refused attachment does not cost the text: it goes with a note naming the file only.
    const refused = await channels.send({
      channel: 'telegram',
      to: '1001',
      text: 'here is the chart',
      media: [outside],
    });
    expect(refused).toMatchObject({
      delivered: true,
      pieces: 1,
      mediaRefused: [expect.stringMatching(/outside the workspace/)],
    });
    expect(api.sent()).toHaveLength(1);
    expect(api.sent()[0]).toMatchObject({
      method: 'sendMessage',
      result: { text: 'here is the chart\n\n[attachment "outside.png" not sent: it is outside the workspace]' },
    });
    expect(JSON.stringify(api.calls)).not.toContain(dirname(outside));

    // Short text rides on the first attachment as its caption: one message, not two.
    api.reset();
    const result = await channels.send({
      channel: 'telegram',
      to: '1001',
      text: 'see **attached**',
      media: [image, 'https://example.com/doc.pdf'],
      replyTo: '7',
    });
    expect(result).toMatchObject({ delivered: true, pieces: 2 });
    const [photo, document] = api.sent();
    expect(photo).toMatchObject({
      method: 'sendPhoto',
      params: {
        caption: 'see <b>attached</b>',
        parse_mode: 'HTML',
        reply_parameters: { message_id: 7, allow_sending_without_reply: true },
      },
      result: { caption: 'see attached' },
    });
    expect(photo!.files.photo).toMatchObject({ filename: 'chart.png' });
    expect(photo!.files.photo!.data).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    expect(document).toMatchObject({ method: 'sendDocument', params: { document: 'https://example.com/doc.pdf' } });
    expect(document!.params.caption).toBeUndefined();

    // Text longer than a caption: the media, then the text.
    api.reset();
    const long = `${'A long explanation. '.repeat(60)}end`;
    expect(await channels.send({ channel: 'telegram', to: '1001', text: long, media: [image] })).toMatchObject({
      delivered: true,
      pieces: 2,
    });
    expect(api.sent().map((call) => call.method)).toEqual(['sendPhoto', 'sendMessage']);
    expect(api.sent()[0]!.params.caption).toBeUndefined();
    expect(api.sent()[1]!.result.text).toBe(long);

    api.reset();
    const missing = await channels.send({
      channel: 'telegram',
      to: '1001',
      text: '',
      media: [join(kernel!.paths.workspaceDir, 'missing.png')],
    });
    expect(missing).toMatchObject({
      delivered: true,
      pieces: 1,
      mediaRefused: [expect.stringContaining('does not exist')],
    });
    expect(api.sent()[0]!.result.text).toBe('[attachment "missing.png" not sent: it does not exist]');
  });

  it('keeps one chat in order while other chats go ahead', async () => {
    await boot({ dmPolicy: 'allowlist', allowFrom: ['1001', '1002'] });
    const seen: string[] = [];
    respond = (request) => (seen.push(lastUserText(request)), `echo: ${lastUserText(request)}`);
    // A1's photo takes 400 ms to download; A2 must wait for it, B1 must not.
    const slow = api.addFile(Buffer.from('slow'), { path: 'photos/slow.jpg', delayMs: 400 });
    const photo = [{ file_id: slow.fileId, file_unique_id: slow.uniqueId, width: 1, height: 1, file_size: 4 }];
    await Promise.all([
      api.pushUpdate({ message: api.message({ chatId: ADA.id, from: ADA, caption: 'A1', extra: { photo } }) }),
      api.pushUpdate(dm('A2')),
      api.pushUpdate(dm('B1', BOB)),
    ]);
    await until(() => seen.some((text) => text.includes('A2')), 'A2 to reach the model');
    const order = seen.map((text) => (text.includes('A1') ? 'A1' : text.includes('A2') ? 'A2' : text));
    expect(order.indexOf('B1')).toBe(0);
    expect(order.indexOf('A1')).toBeLessThan(order.indexOf('A2'));
    await until(() => sendsTo(ADA.id).some((call) => String(call.result.text).includes('A2')), 'the answer to A2');
  });

  it('runs several bot accounts, each on its own token', async () => {
    const second = new FakeTelegramApi({ botId: 7_000_002, username: 'second_bot' });
    await second.start();
    try {
      await boot(
        {
          dmPolicy: 'allowlist',
          allowFrom: ['1001'],
          accounts: { main: { botToken: api.token }, work: { botToken: second.token, apiRoot: second.apiRoot } },
        },
        { withToken: false },
      );
      await second.pushUpdate({ message: second.message({ chatId: ADA.id, from: ADA, text: 'to the work bot' }) });
      const sent = await second.waitFor((call) => call.method === 'sendMessage' && call.status === 200);
      expect(sent.result.text).toBe('echo: to the work bot');
      expect(api.callsTo('sendMessage').filter((call) => String(call.params.text).includes('work bot'))).toEqual([]);
      const accounts = await telegramStatus();
      expect(accounts.map((account) => [account.accountId, account.username])).toEqual(
        expect.arrayContaining([
          ['main', 'claw_test_bot'],
          ['work', 'second_bot'],
        ]),
      );
    } finally {
      await kernel?.dispose();
      kernel = undefined;
      await second.stop();
    }
  });

  it('sends from a process that does not poll (the CLI path)', async () => {
    kernel = await createTestKernel({
      plugins: [bundledPluginDir('channels'), TELEGRAM],
      config: { channels: { telegram: { botToken: api.token, apiRoot: api.apiRoot } } },
    });
    const sent = await kernel.plugins.kernelServices.channels.send({
      channel: 'telegram',
      to: '1001',
      text: 'from the _cli_',
    });
    expect(sent).toMatchObject({ delivered: true, pieces: 1 });
    expect(api.calls.map((call) => call.method)).toEqual(['sendMessage']);
    expect(api.sent()[0]!.result.text).toBe('from the cli');
  });

  it('reports status, and stops polling cleanly', async () => {
    await boot({ dmPolicy: 'allowlist', allowFrom: ['1001'] });
    await until(async () => (await telegramStatus())[0]?.connected === true, 'a connected account');
    expect((await telegramStatus())[0]).toMatchObject({
      accountId: 'default',
      running: true,
      connected: true,
      mode: 'polling',
      username: 'claw_test_bot',
      botId: api.bot.id,
    });
    await api.pushUpdate(dm('one'));
    await replyTo(ADA.id);
    const started = performance.now();
    await kernel!.dispose();
    kernel = undefined;
    expect(performance.now() - started).toBeLessThan(2000);
    const polls = api.callsTo('getUpdates').length;
    // The last poll confirmed what was handled, so a restart does not see it again.
    const confirm = api.callsTo('getUpdates').at(-1)!;
    expect(Number(confirm.params.offset)).toBeGreaterThan(0);
    // dispose() returned after the account's poll loop did (stop() awaits it); once the fake has seen the
    // long poll hung up as well, no request of this bot is in flight and none came after the loop ended.
    await until(() => !api.polling, 'the bot to hang up its long poll');
    expect(api.callsTo('getUpdates')).toHaveLength(polls);
  });

  it('takes the token from TELEGRAM_BOT_TOKEN, and names both places when there is none', async () => {
    await boot(
      { dmPolicy: 'allowlist', allowFrom: ['1001'] },
      { withToken: false, env: { TELEGRAM_BOT_TOKEN: api.token } },
    );
    await api.pushUpdate(dm('env token'));
    await replyTo(ADA.id);

    await boot({ dmPolicy: 'allowlist', allowFrom: ['1001'] }, { withToken: false });
    const [account] = await telegramStatus();
    expect(account).toMatchObject({ running: false, connected: false });
    expect(account!.lastError).toContain('channels.telegram.botToken');
    expect(account!.lastError).toContain('TELEGRAM_BOT_TOKEN');

    await boot({ dmPolicy: 'allowlist', allowFrom: ['1001'], botToken: '123:not-the-token' });
    const [rejected] = await telegramStatus();
    expect(rejected).toMatchObject({ running: false });
    expect(rejected!.lastError).toMatch(/rejected the bot token \(401 Unauthorized\)/);
  });

  it('takes webhooks through the gateway, checking the secret header', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/telegram/webhook/default`;
    const gateway = await startGateway({
      gateway: { port },
      plugins: [
        ...AGENT_LOOP,
        TELEGRAM,
        scriptedModel((request) => (requests.push(request), `echo: ${lastUserText(request)}`)),
      ],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 } },
        channels: {
          telegram: {
            botToken: api.token,
            apiRoot: api.apiRoot,
            dmPolicy: 'allowlist',
            allowFrom: ['1001'],
            webhook: { url, secret: 'hook_secret-42' },
          },
        },
      },
    });
    try {
      expect(api.webhook).toEqual({ url, secret: 'hook_secret-42', allowedUpdates: ['message'] });
      expect(api.callsTo('getUpdates')).toEqual([]);

      const forged = { update_id: 900, ...dm('forged') };
      expect(await api.deliverWebhook(forged, { secret: 'wrong-secret' })).toBe(401);
      expect(await api.deliverWebhook(forged, { secret: null })).toBe(401);
      expect(await api.deliverWebhook(forged, { url: `http://127.0.0.1:${port}/telegram/webhook/nobody` })).toBe(404);

      await api.pushUpdate(dm('via webhook'));
      expect(api.webhookDeliveries.at(-1)!.status).toBe(200);
      const reply = await replyTo(ADA.id);
      expect(reply.result.text).toBe('echo: via webhook');
      // The genuine update was answered after the forged ones were refused: only it reached the model.
      expect(requests.map(lastUserText)).toEqual(['via webhook']);

      const status = await gateway.kernel.plugins.kernelServices.channels.status();
      expect(status.find((channel) => channel.id === 'telegram')!.accounts[0]).toMatchObject({
        running: true,
        connected: true,
        mode: 'webhook',
        webhookPath: '/telegram/webhook/default',
        username: 'claw_test_bot',
      });
    } finally {
      await gateway.kernel.dispose();
    }
  });
});

describe('grammY loading', () => {
  beforeAll(() => api.start());
  afterAll(() => api.stop());

  it('is not loaded when the plugin registers, only when an account starts', async () => {
    const script = `
      const { createJiti } = require('jiti');
      const jiti = createJiti(${JSON.stringify(join(REPO, 'test', 'lazy-grammy.cjs'))});
      const grammyLoaded = () => Object.keys(require.cache).some((file) => /[\\\\/]node_modules[\\\\/]grammy[\\\\/]/.test(file));
      (async () => {
        const { createTestKernel } = await jiti.import(${JSON.stringify(join(REPO, 'sdk', 'testing.ts'))});
        const kernel = await createTestKernel({
          plugins: [${JSON.stringify(bundledPluginDir('channels'))}, ${JSON.stringify(TELEGRAM)}],
          config: { channels: { telegram: { botToken: ${JSON.stringify(api.token)}, apiRoot: ${JSON.stringify(api.apiRoot)}, dmPolicy: 'allowlist', allowFrom: ['1'] } } },
        });
        const channel = await kernel.capabilities.get('channel', 'telegram');
        const afterRegister = grammyLoaded();
        await kernel.start();
        const afterStart = grammyLoaded();
        await kernel.dispose();
        process.stdout.write(JSON.stringify({ registered: channel.id, afterRegister, afterStart }));
      })().catch((error) => { console.error(error); process.exit(1); });
    `;
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) =>
        code === 0 ? resolve(stdout) : reject(new Error(`child exited ${code}: ${stderr}`)),
      );
    });
    expect(JSON.parse(output)).toEqual({ registered: 'telegram', afterRegister: false, afterStart: true });
  });
});

// ── Units: formatting and reading messages ─────────────────────────────────────────

describe('Markdown → Telegram HTML', () => {
  it.each([
    ['plain & <tags>', 'plain &amp; &lt;tags&gt;'],
    [
      '**bold** __bold__ *it* _it_ ~~gone~~ ||secret||',
      '<b>bold</b> <b>bold</b> <i>it</i> <i>it</i> <s>gone</s> <tg-spoiler>secret</tg-spoiler>',
    ],
    ['***both***', '<b><i>both</i></b>'],
    ['**bold with _nested_ italic**', '<b>bold with <i>nested</i> italic</b>'],
    ['snake_case_name and 2*3*4 and a * b', 'snake_case_name and 2<i>3</i>4 and a * b'],
    ['unclosed **bold and _it', 'unclosed **bold and _it'],
    ['`code with **stars** & <b>`', '<code>code with **stars** &amp; &lt;b&gt;</code>'],
    ['`` a ` b ``', '<code>a ` b</code>'],
    [
      '[`api` **docs**](https://example.com/a_(b)) and [bad](javascript:alert(1))',
      '<a href="https://example.com/a_(b)">api <b>docs</b></a> and [bad](javascript:alert(1))',
    ],
    [
      '[docs](https://example.com/a_(b)) and [bad](javascript:alert(1))',
      '<a href="https://example.com/a_(b)">docs</a> and [bad](javascript:alert(1))',
    ],
    ['see <https://example.com>', 'see <a href="https://example.com">https://example.com</a>'],
    ['# Title\n## Sub #', '<b>Title</b>\n<b>Sub</b>'],
    ['- one\n* two\n  + nested', '• one\n• two\n  • nested'],
    ['> quoted **text**\n> more', '<blockquote>quoted <b>text</b>\nmore</blockquote>'],
    ['```\nraw <b>\n```', '<pre><code>raw &lt;b&gt;</code></pre>'],
    ['```py\nunclosed', '<pre><code class="language-py">unclosed</code></pre>'],
    ['| a | b |\n|---|---|\n| 1 | 2 |', '<pre>| a | b |\n|---|---|\n| 1 | 2 |</pre>'],
    ['escaped \\*not italic\\*', 'escaped *not italic*'],
  ])('%j', (markdown, html) => {
    expect(markdownToTelegramHtml(markdown)).toBe(html);
    expect(parseTelegramHtml(html)).not.toHaveProperty('error');
  });

  it('always yields HTML Telegram parses, never longer (as shown) than the Markdown', () => {
    // Seeded pseudo-random Markdown soup: every marker, nested and unbalanced.
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const atoms = [
      '**',
      '__',
      '*',
      '_',
      '~~',
      '||',
      '`',
      '```',
      '[',
      ']',
      '(',
      ')',
      'https://x.io',
      '<',
      '>',
      '&',
      '\\',
      '#',
      '# ',
      '- ',
      '> ',
      '|',
      '\n',
      '\n\n',
      ' ',
      'word',
      'ünï',
      '😀',
      '"',
      '&amp;',
      '](https://x.io)',
      '[`c`',
      '```js\n',
      '<https://x.io>',
    ];
    for (let i = 0; i < 3000; i++) {
      const markdown = Array.from(
        { length: 1 + Math.floor(random() * 40) },
        () => atoms[Math.floor(random() * atoms.length)],
      ).join('');
      const parsed = parseTelegramHtml(markdownToTelegramHtml(markdown));
      if ('error' in parsed)
        throw new Error(
          `${JSON.stringify(markdown)} → ${JSON.stringify(markdownToTelegramHtml(markdown))}: ${parsed.error}`,
        );
      expect(parsed.plain.length, JSON.stringify(markdown)).toBeLessThanOrEqual(markdown.length);
    }
  });
});

describe('reading Telegram messages', () => {
  const bot = { id: 42, username: 'claw_bot' };
  const group = { id: -100, type: 'supergroup', title: 'Team' };
  const base = (extra: Partial<TgMessage>): TgMessage => ({
    message_id: 5,
    date: 1_700_000_000,
    chat: group,
    from: { id: 7, first_name: 'Ann', username: 'ann' },
    text: 'hello',
    ...extra,
  });

  it('knows when the bot is addressed', () => {
    const mention = (text: string, offset: number) =>
      base({ text, entities: [{ type: 'mention', offset, length: 9 }] });
    expect(addressesBot(mention('hi @claw_bot', 3), bot)).toBe(true);
    expect(addressesBot(mention('hi @CLAW_BOT', 3), bot)).toBe(true);
    expect(addressesBot(mention('hi @claw_bo2', 3), bot)).toBe(false);
    expect(
      addressesBot(
        base({ text: 'hey you', entities: [{ type: 'text_mention', offset: 4, length: 3, user: { id: 42 } }] }),
        bot,
      ),
    ).toBe(true);
    expect(addressesBot(base({ reply_to_message: base({ message_id: 4, from: { id: 42, is_bot: true } }) }), bot)).toBe(
      true,
    );
    expect(addressesBot(base({ reply_to_message: base({ message_id: 4, from: { id: 8 } }) }), bot)).toBe(false);
    expect(addressesBot(base({ text: '/help', entities: [{ type: 'bot_command', offset: 0, length: 5 }] }), bot)).toBe(
      true,
    );
    expect(
      addressesBot(base({ text: '/help@claw_bot', entities: [{ type: 'bot_command', offset: 0, length: 14 }] }), bot),
    ).toBe(true);
    expect(
      addressesBot(base({ text: '/help@other_bot', entities: [{ type: 'bot_command', offset: 0, length: 15 }] }), bot),
    ).toBe(false);
    expect(addressesBot(base({ text: 'mail me at x@claw_bot.org' }), bot)).toBe(false);
    // The bot opened the topic: the automatic "reply" to that opening is not a reply to the bot.
    const topicOpening = base({ message_id: 9, from: { id: 42, is_bot: true }, forum_topic_created: { name: 't' } });
    expect(
      addressesBot(
        base({
          chat: { ...group, is_forum: true },
          message_thread_id: 9,
          is_topic_message: true,
          reply_to_message: topicOpening,
        }),
        bot,
      ),
    ).toBe(false);
  });

  it('normalises peers, senders, topics, replies and commands', () => {
    const direct = parseMessage(
      {
        message_id: 1,
        date: 1_700_000_000,
        chat: { id: 7, type: 'private' },
        from: { id: 7, first_name: 'Ann', last_name: 'Lee', username: 'ann' },
        text: 'hi',
      },
      bot,
      { mediaMaxBytes: 1e6 },
    );
    expect(direct?.inbound).toEqual({
      peer: { kind: 'direct', id: '7' },
      sender: { id: '7', name: 'Ann Lee', username: 'ann' },
      text: 'hi',
      messageId: '1',
      mentioned: true,
      timestamp: 1_700_000_000_000,
    });

    const command = parseMessage(
      base({ text: '/status@claw_bot now', entities: [{ type: 'bot_command', offset: 0, length: 16 }] }),
      bot,
      { mediaMaxBytes: 1e6 },
    );
    expect(command?.inbound).toMatchObject({
      peer: { kind: 'group', id: '-100' },
      text: '/status now',
      mentioned: true,
      peerName: 'Team',
    });

    const topic = parseMessage(
      base({
        chat: { ...group, is_forum: true },
        message_thread_id: 12,
        is_topic_message: true,
        reply_to_message: base({ message_id: 3, text: 'earlier', from: { id: 8 } }),
      }),
      bot,
      { mediaMaxBytes: 1e6 },
    );
    expect(topic?.inbound).toMatchObject({
      threadId: '12',
      replyTo: { messageId: '3', text: 'earlier', senderId: '8' },
    });

    // A reply thread in an ordinary supergroup is not a topic.
    expect(parseMessage(base({ message_thread_id: 3 }), bot, { mediaMaxBytes: 1e6 })?.inbound.threadId).toBeUndefined();
    // Anonymous admins speak as the group.
    expect(
      parseMessage(base({ sender_chat: { id: -100, type: 'supergroup', title: 'Team' } }), bot, { mediaMaxBytes: 1e6 })
        ?.inbound.sender,
    ).toEqual({ id: '-100', name: 'Team' });
    // Service messages and channel posts are not conversation.
    expect(parseMessage(base({ text: undefined }), bot, { mediaMaxBytes: 1e6 })).toBeUndefined();
    expect(parseMessage(base({ chat: { id: -5, type: 'channel' } }), bot, { mediaMaxBytes: 1e6 })).toBeUndefined();

    const photo = parseMessage(
      base({
        text: undefined,
        caption: 'pic',
        photo: [
          { file_id: 's', file_unique_id: 'us', file_size: 10 },
          { file_id: 'm', file_unique_id: 'um', file_size: 500 },
          { file_id: 'l', file_unique_id: 'ul', file_size: 5000 },
        ],
      }),
      bot,
      { mediaMaxBytes: 1000 },
    );
    expect(photo?.inbound.text).toBe('pic');
    expect(photo?.attachments).toEqual([
      { kind: 'photo', fileId: 'm', uniqueId: 'um', size: 500, mimeType: 'image/jpeg' },
    ]);
  });
});
