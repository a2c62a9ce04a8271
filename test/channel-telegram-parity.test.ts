/**
 * Telegram at OpenClaw's level, against the loopback fake Bot API: the command menu
 * (setMyCommands), draft streaming (one message edited as the reply grows, 429s honoured,
 * past 4,096 characters a second message), acknowledgement reactions, replyToMode,
 * negative chat ids on the CLI, code fences cut across messages, and polling that fails
 * and recovers without losing or repeating a message.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { definePlugin, type ModelRequest, type ModelStreamEvent } from '../sdk/index.js';
import type { ChatCommandInfo } from '../sdk/agent/index.js';
import { agentStackDirs, bundledPluginDir, createTestKernel, lastUserText, type TestKernel } from '../sdk/testing.js';
import { joinNegativeValues } from '../sdk/cli.js';
import { buildMenu, CommandMenu, menuName } from '../plugins/channel-telegram/menu.js';
import { FakeTelegramApi, type TelegramCall } from './fakes/telegram-api.js';
import { claw, recordInboundDecisions, recordReplyRuns, sleep, tempDir, type InboundDecision } from './helpers.js';

const TELEGRAM = fileURLToPath(new URL('../plugins/channel-telegram/', import.meta.url));
const api = new FakeTelegramApi();
const ADA = { id: 1001, first_name: 'Ada' };
const GROUP = -1001234567890;
const MENTION = `@${api.bot.username}`;

/** What the model says for a request: the text in pieces, one every `delayMs`. */
let plan: (request: ModelRequest) => { chunks: string[]; delayMs: number };
const requests: ModelRequest[] = [];

const streamingModel = definePlugin({
  id: 'streaming-model',
  register(pluginApi) {
    pluginApi.registerProvider({
      id: 'stream',
      requiresKey: false,
      async *stream(request): AsyncGenerator<ModelStreamEvent> {
        requests.push(request);
        const { chunks, delayMs } = plan(request);
        for (const chunk of chunks) {
          if (delayMs) await sleep(delayMs);
          yield { type: 'text_delta', delta: chunk };
        }
        yield { type: 'done', stopReason: 'stop', usage: { input: 1, output: 1 } };
      },
    });
  },
});

const deployCommand = definePlugin({
  id: 'deploy-command',
  register(pluginApi) {
    pluginApi.registerCommand({
      name: 'Deploy-Now',
      description: 'ship the current branch to production',
      handler: () => ({ text: 'deployed' }),
    });
  },
});

let kernel: TestKernel | undefined;

async function boot(
  channel: Record<string, unknown>,
  options: { messages?: Record<string, unknown>; plugins?: string[]; beforeStart?: (kernel: TestKernel) => void } = {},
): Promise<TestKernel> {
  await kernel?.dispose();
  kernel = await createTestKernel({
    plugins: [...agentStackDirs(), ...(options.plugins ?? []), TELEGRAM, streamingModel, deployCommand],
    config: {
      agents: { defaults: { model: 'stream/echo' } },
      messages: { queue: { debounceMs: 0 }, ...options.messages },
      channels: {
        telegram: { botToken: api.token, apiRoot: api.apiRoot, dmPolicy: 'allowlist', allowFrom: ['1001'], ...channel },
      },
    },
  });
  options.beforeStart?.(kernel);
  decisions = await recordInboundDecisions(kernel);
  await kernel.start();
  runs = await recordReplyRuns(kernel, 'telegram');
  return kernel;
}

/** What the pipeline decided for each message, and the reply runs Telegram has finished tidying up (see test/helpers). */
let decisions: InboundDecision[] = [];
let runs: { started: number; finished: string[] } = { started: 0, finished: [] };
const decisionOn = async (update: { message: { message_id: number } }) => {
  const id = String(update.message.message_id);
  await until(() => decisions.some((decision) => decision.messageId === id), `the decision on message ${id}`);
  return decisions.find((decision) => decision.messageId === id)!.status;
};

const dm = (text: string, from = ADA) => ({ message: api.message({ chatId: from.id, from, text }) });
const inGroup = (text: string, mention: boolean) => ({
  message: api.message({
    chatId: GROUP,
    chatType: 'supergroup',
    title: 'Ops',
    from: ADA,
    text: mention ? `${MENTION} ${text}` : text,
    ...(mention ? { entities: [{ type: 'mention', offset: 0, length: MENTION.length }] } : {}),
  }),
});
const callsIn = (chat: number, ...methods: string[]) =>
  api.calls.filter((call) => methods.includes(call.method) && Number(call.params.chat_id) === chat);

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs)
      throw new Error(
        `timed out waiting for ${what}; calls: ${api.calls.map((call) => `${call.method}(${call.status}${call.error ? ` ${call.error.description}` : ''}${call.params.parse_mode ? ' html' : ''} ${String(call.params.text ?? '').length})`).join(', ')}`,
      );
    await sleep(10);
  }
}

/** Words streamed over about `seconds`. */
function slowly(text: string, seconds: number): { chunks: string[]; delayMs: number } {
  const chunks = text.match(/\S+\s*/g) ?? [text];
  return { chunks, delayMs: Math.round((seconds * 1000) / chunks.length) };
}

describe('telegram at OpenClaw’s level', () => {
  beforeAll(() => api.start());
  afterAll(async () => {
    await kernel?.dispose();
    kernel = undefined;
    await api.stop();
  });
  beforeEach(async () => {
    await kernel?.dispose();
    kernel = undefined;
    api.reset();
    requests.length = 0;
    plan = (request) => ({ chunks: [`echo: ${lastUserText(request)}`], delayMs: 0 });
  });

  it('registers the command menu at start: built-in, plugin and skill commands plus customCommands, in Telegram’s rules', async () => {
    await boot(
      {
        customCommands: [
          { command: '/Backup', description: 'Git backup' },
          { command: 'status', description: 'clashes with the built-in' },
          { command: 'bad name!', description: 'x' },
        ],
      },
      {
        plugins: [bundledPluginDir('skills')],
        beforeStart: (started) => {
          const dir = join(started.paths.workspaceDir, 'skills', 'release-notes');
          mkdirSync(dir, { recursive: true });
          writeFileSync(
            join(dir, 'SKILL.md'),
            '---\nname: release-notes\ndescription: Write release notes from the git log\n---\nRead the log.\n',
          );
        },
      },
    );
    await until(() => api.callsTo('setMyCommands').some((call) => call.status === 200), 'setMyCommands');
    const names = api.commands.map((entry) => entry.command);
    expect(names[0]).toBe('backup');
    expect(names).toEqual(
      expect.arrayContaining(['new', 'reset', 'status', 'help', 'model', 'stop', 'deploy_now', 'release_notes']),
    );
    // Aliases are one command; a clashing or malformed custom entry is left out.
    expect(names).not.toContain('t');
    expect(names.filter((name) => name === 'status')).toHaveLength(1);
    expect(names).not.toContain('bad_name!');
    expect(api.commands.find((entry) => entry.command === 'deploy_now')!.description).toBe(
      'ship the current branch to production',
    );
    expect(api.commands.find((entry) => entry.command === 'release_notes')!.description).toBe(
      'Write release notes from the git log',
    );
    for (const entry of api.commands) {
      expect(entry.command).toMatch(/^[a-z0-9_]{1,32}$/);
      expect(entry.description.length).toBeGreaterThan(0);
      expect(entry.description.length).toBeLessThanOrEqual(256);
    }
    // A command from the menu works when tapped.
    await api.pushUpdate(dm('/deploy_now'));
    await until(
      () => callsIn(ADA.id, 'sendMessage').some((call) => call.result?.text === 'deployed'),
      'the plugin command answer',
    );
  });

  it('turns the menu off with commands.native: false (only customCommands, or none at all)', async () => {
    await boot({ commands: { native: false }, customCommands: [{ command: 'backup', description: 'Git backup' }] });
    await until(() => api.callsTo('setMyCommands').length > 0, 'setMyCommands');
    expect(api.commands).toEqual([{ command: 'backup', description: 'Git backup' }]);
    api.reset();
    await boot({ commands: { native: false } });
    await until(() => api.callsTo('deleteMyCommands').length > 0, 'deleteMyCommands');
    expect(api.callsTo('setMyCommands')).toEqual([]);
  });

  it('shapes names and trims the menu to Telegram’s limits', () => {
    expect(menuName('/Release-Notes')).toBe('release_notes');
    expect(menuName('x'.repeat(33))).toBeUndefined();
    expect(menuName('héllo')).toBeUndefined();
    const many = Array.from({ length: 120 }, (_, index) => ({
      name: `cmd_${index}`,
      description: 'd'.repeat(300),
      source: 'skill' as const,
    }));
    const menu = buildMenu(many, { native: true, nativeSkills: true, custom: [{ command: 'mine', description: '' }] });
    expect(menu.commands).toHaveLength(100);
    expect(menu.commands[0]).toEqual({ command: 'mine', description: '/mine' });
    expect(menu.commands[1]!.description).toHaveLength(256);
    expect(menu.skipped.join(' ')).toContain("21 command(s) beyond Telegram's limit of 100");
    expect(buildMenu(many, { native: true, nativeSkills: false, custom: [] }).commands).toEqual([]);
  });

  it('resends the menu only when the command set changed, and retries after a failure', async () => {
    let set: ChatCommandInfo[] = [{ name: 'status', description: 'status', source: 'builtin' }];
    const applied: string[][] = [];
    let fail = false;
    const menu = new CommandMenu({
      settings: { native: true, nativeSkills: true, custom: [] },
      source: async () => set,
      apply: async (commands) => {
        if (fail) throw new Error('429: Too Many Requests');
        applied.push(commands.map((entry) => entry.command));
      },
      logger: { info: () => {}, warn: () => {} },
      where: 'Telegram',
    });
    await menu.refresh();
    await menu.refresh();
    expect(applied).toEqual([['status']]);
    set = [...set, { name: 'release-notes', description: 'a new skill', source: 'skill' }];
    fail = true;
    await menu.refresh();
    fail = false;
    await menu.refresh();
    expect(applied).toEqual([['status'], ['status', 'release_notes']]);
  });

  it('streams a reply into one message, edited at most about once a second, then finishes it in place', async () => {
    await boot({});
    const answer =
      'Here is **the plan**: first we check the logs, then we restart the worker, then we watch the queue drain for a while.';
    plan = () => slowly(answer, 3);
    await api.pushUpdate(dm('what now?'));
    await until(
      () => callsIn(ADA.id, 'editMessageText').some((call) => call.params.parse_mode === 'HTML'),
      'the final edit',
    );
    const sends = callsIn(ADA.id, 'sendMessage');
    expect(sends).toHaveLength(1);
    const id = sends[0]!.result.message_id;
    const edits = callsIn(ADA.id, 'editMessageText');
    expect(edits.length).toBeGreaterThanOrEqual(2);
    expect(edits.every((call) => call.params.message_id === id)).toBe(true);
    // The preview grew: each shown text is a prefix of the next.
    const shown = [sends[0]!.params.text as string, ...edits.slice(0, -1).map((call) => call.params.text as string)];
    for (let index = 1; index < shown.length; index++)
      expect(shown[index]!.startsWith(shown[index - 1]!.trimEnd())).toBe(true);
    const times = [sends[0]!, ...edits].map((call) => call.at);
    for (let index = 1; index < times.length - 1; index++)
      expect(times[index]! - times[index - 1]!).toBeGreaterThanOrEqual(950);
    expect(edits.at(-1)!.params.text).toBe(
      'Here is <b>the plan</b>: first we check the logs, then we restart the worker, then we watch the queue drain for a while.',
    );
    expect(api.textOf(ADA.id, id)).toBe(answer.replace(/\*\*/g, ''));
    // Stale previews are deleted when the run is over; this one became the reply.
    await until(() => runs.finished.length === 1, 'the run to finish');
    expect(api.callsTo('deleteMessage')).toEqual([]);
  });

  it('waits out a 429 on an edit for its retry_after, and still finishes the reply', async () => {
    await boot({});
    api.script('editMessageText', {
      error_code: 429,
      description: 'Too Many Requests: retry after 2',
      parameters: { retry_after: 2 },
    });
    const answer = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen';
    plan = () => slowly(answer, 4);
    await api.pushUpdate(dm('count'));
    await until(
      () =>
        api.textOf(ADA.id, callsIn(ADA.id, 'sendMessage')[0]?.result?.message_id ?? -1) === answer &&
        callsIn(ADA.id, 'editMessageText').some((call) => call.params.parse_mode === 'HTML' && call.status === 200),
      'the finished reply',
      15_000,
    );
    const edits = callsIn(ADA.id, 'editMessageText');
    const limited = edits.findIndex((call) => call.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    const next = edits[limited + 1]!;
    console.log(
      `telegram draft edit 429 retry_after=2 s: next edit after ${(next.at - edits[limited]!.at).toFixed(0)} ms`,
    );
    expect(next.at - edits[limited]!.at).toBeGreaterThanOrEqual(1990);
    expect(callsIn(ADA.id, 'sendMessage')).toHaveLength(1);
  });

  it('a 429 on the first preview also holds back the reply sent as a new message', async () => {
    await boot({});
    api.script('sendMessage', {
      error_code: 429,
      description: 'Too Many Requests: retry after 2',
      parameters: { retry_after: 2 },
    });
    // Long enough for a preview to be tried (after 1 s), done well before the 2 s are over.
    plan = () => slowly('alpha beta gamma delta epsilon zeta eta theta', 1.4);
    await api.pushUpdate(dm('letters'));
    await until(() => callsIn(ADA.id, 'sendMessage').some((call) => call.status === 200), 'the reply');
    const [limited, sent] = callsIn(ADA.id, 'sendMessage');
    expect(limited!.status).toBe(429);
    expect(sent!.params.text).toBe('alpha beta gamma delta epsilon zeta eta theta');
    expect(sent!.at - limited!.at).toBeGreaterThanOrEqual(2000);
    // The reply is out: no preview goes up after it (to be deleted again at the end of the run).
    // Once the run is over the draft is closed and can put nothing up any more.
    await until(() => runs.finished.length === 1, 'the run to finish');
    expect(callsIn(ADA.id, 'sendMessage', 'deleteMessage')).toHaveLength(2);
  });

  it('continues a preview past 4,096 characters in a second message, and finishes both', async () => {
    await boot({});
    const paragraph = (n: number) => `Paragraph ${n}. ${'Plenty of words to read here. '.repeat(20).trim()}`;
    const answer = Array.from({ length: 9 }, (_, index) => paragraph(index + 1)).join('\n\n');
    expect(answer.length).toBeGreaterThan(4096);
    // Slow enough for the preview to catch up: the first page fills, then a second one starts.
    const cut = answer.indexOf('Paragraph 6.');
    plan = () => ({ chunks: [answer.slice(0, cut), answer.slice(cut), ' '], delayMs: 2500 });
    await api.pushUpdate(dm('long one'));
    await until(
      () =>
        callsIn(ADA.id, 'sendMessage').length === 2 &&
        api.textOf(ADA.id, callsIn(ADA.id, 'sendMessage')[1]!.result.message_id)?.includes('Paragraph 9.') === true &&
        callsIn(ADA.id, 'editMessageText').filter((call) => call.params.parse_mode === 'HTML').length === 2,
      'both pages finished',
      15_000,
    );
    const [first, second] = callsIn(ADA.id, 'sendMessage').map((call) => api.textOf(ADA.id, call.result.message_id)!);
    expect(first!.length).toBeLessThanOrEqual(4096);
    expect(`${first}\n\n${second}`).toBe(answer);
    expect(api.callsTo('deleteMessage')).toEqual([]);
  });

  it('sends a plain message without previews when streaming is "off" (OpenClaw’s older streamMode too)', async () => {
    for (const channel of [{ streaming: 'off' }, { streamMode: 'off' }, { streaming: { mode: 'off' } }]) {
      api.reset();
      await boot(channel);
      plan = () => slowly('a slow answer that takes two seconds to write', 2);
      await api.pushUpdate(dm('hi'));
      await until(() => callsIn(ADA.id, 'sendMessage').some((call) => call.status === 200), 'the reply');
      expect(callsIn(ADA.id, 'sendMessage')).toHaveLength(1);
      expect(callsIn(ADA.id, 'sendMessage')[0]!.result.text).toBe('a slow answer that takes two seconds to write');
      expect(api.callsTo('editMessageText')).toEqual([]);
    }
    // A mode or option claw does not have is refused by name, not ignored.
    const lastError = async () =>
      (await kernel!.plugins.kernelServices.channels.status()).find((channel) => channel.id === 'telegram')!
        .accounts[0]!.lastError;
    await boot({ streaming: 'progress' });
    expect(await lastError()).toMatch(
      /channels\.telegram\.streaming must be "partial".*"block".*"off" \(got "progress"\)/,
    );
    await boot({ streaming: { mode: 'partial', preview: { toolProgress: false } } });
    expect(await lastError()).toBe(
      'channels.telegram.streaming.preview is not supported (channels.telegram.streaming takes mode)',
    );
  });

  it('in "block" mode, moves the preview forward in draftChunk steps', async () => {
    await boot({ streaming: 'block', draftChunk: { minChars: 40, maxChars: 60 } });
    const answer =
      'First sentence is here and long enough. Second sentence follows it closely. Third one ends the reply.';
    plan = () => slowly(answer, 3);
    await api.pushUpdate(dm('go'));
    await until(
      () => callsIn(ADA.id, 'editMessageText').some((call) => call.params.parse_mode === 'HTML'),
      'the final edit',
    );
    const previews = [
      callsIn(ADA.id, 'sendMessage')[0]!,
      ...callsIn(ADA.id, 'editMessageText').filter((call) => call.params.parse_mode !== 'HTML'),
    ].map((call) => call.params.text as string);
    // Each preview is a whole number of chunks: at least minChars, cut where the chunker prefers (never inside a word).
    for (const text of previews) {
      expect(answer.startsWith(text), text).toBe(true);
      // minChars, less the space it was cut at.
      expect(text.length).toBeGreaterThanOrEqual(39);
      expect([' ', undefined]).toContain(answer[text.length]);
    }
    expect(api.textOf(ADA.id, callsIn(ADA.id, 'sendMessage')[0]!.result.message_id)).toBe(answer);
  });

  it('acknowledges handled messages with a reaction per messages.ackReactionScope, and removes it after the reply when asked', async () => {
    // Default scope "group-mentions": a mention in a group gets 👀, a DM does not.
    await boot({ groupPolicy: 'open' });
    const asked = inGroup('status?', true);
    await api.pushUpdate(asked);
    await until(() => callsIn(GROUP, 'sendMessage').length > 0, 'the group reply');
    expect(api.reactions.get(`${GROUP}:${asked.message.message_id}`)).toEqual(['👀']);
    const direct = dm('hello');
    await api.pushUpdate(direct);
    await until(() => callsIn(ADA.id, 'sendMessage').length > 0, 'the DM reply');
    expect(api.callsTo('setMessageReaction').filter((call) => call.params.chat_id === ADA.id)).toEqual([]);

    // Scope "all" with the channel's own emoji, taken back once the reply is out.
    api.reset();
    await boot({ ackReaction: '👍' }, { messages: { ackReactionScope: 'all', removeAckAfterReply: true } });
    const second = dm('again');
    await api.pushUpdate(second);
    await until(() => api.callsTo('setMessageReaction').length === 2, 'the reaction and its removal');
    const [set, cleared] = api.callsTo('setMessageReaction') as [TelegramCall, TelegramCall];
    expect(set.params).toMatchObject({
      chat_id: ADA.id,
      message_id: second.message.message_id,
      reaction: [{ type: 'emoji', emoji: '👍' }],
    });
    const reply = callsIn(ADA.id, 'sendMessage')[0]!;
    expect(set.at).toBeLessThan(reply.at);
    expect(cleared.params.reaction).toEqual([]);
    expect(cleared.at).toBeGreaterThan(reply.at);

    // ackReaction "" (or reactionLevel "off") turns it off.
    for (const channel of [{ ackReaction: '' }, { reactionLevel: 'off' }]) {
      api.reset();
      await boot(channel, { messages: { ackReactionScope: 'all' } });
      await api.pushUpdate(dm('quiet'));
      await until(() => callsIn(ADA.id, 'sendMessage').length > 0, 'the reply');
      expect(api.callsTo('setMessageReaction')).toEqual([]);
    }
  });

  it('quotes the message it answers per replyToMode: off by default, the first piece, or every piece', async () => {
    const long = `${Array.from({ length: 3 }, (_, index) => `Part ${index + 1}. ${'Words words words. '.repeat(200).trim()}`).join('\n\n')} The end.`;
    for (const [mode, expected] of [
      [undefined, [false, false]],
      ['first', [true, false]],
      ['all', [true, true]],
    ] as const) {
      api.reset();
      await boot(mode ? { replyToMode: mode } : {});
      plan = () => ({ chunks: [long], delayMs: 0 });
      const asked = dm('long please');
      await api.pushUpdate(asked);
      await until(
        () => callsIn(ADA.id, 'sendMessage').some((call) => String(call.result?.text ?? '').endsWith('The end.')),
        'the last piece',
      );
      const quoted = callsIn(ADA.id, 'sendMessage').map(
        (call) => call.params.reply_parameters?.message_id === asked.message.message_id,
      );
      expect(quoted.slice(0, 2), String(mode)).toEqual(expected);
    }
    // The live preview carries the quote from its first message, so finishing it keeps it.
    api.reset();
    await boot({ replyToMode: 'first' });
    plan = () => slowly('a streamed answer that quotes the question it answers', 2.5);
    const asked = dm('quote me');
    await api.pushUpdate(asked);
    await until(
      () => callsIn(ADA.id, 'editMessageText').some((call) => call.params.parse_mode === 'HTML'),
      'the finished preview',
    );
    expect(callsIn(ADA.id, 'sendMessage').map((call) => [call.params.text, call.params.reply_parameters])).toHaveLength(
      1,
    );
    expect(callsIn(ADA.id, 'sendMessage')[0]!.params.reply_parameters).toMatchObject({
      message_id: asked.message.message_id,
    });
  });

  it('answers a group only when mentioned, and cuts a long code fence into pieces that each render', async () => {
    await boot({ groupPolicy: 'open' });
    const unasked = inGroup('nobody asked the bot', false);
    await api.pushUpdate(unasked);
    expect(await decisionOn(unasked)).toBe('history');
    expect(callsIn(GROUP, 'sendMessage')).toEqual([]);
    const code = Array.from({ length: 400 }, (_, index) => `const line${index} = ${index} * 2; // <${index}>`).join(
      '\n',
    );
    plan = () => ({ chunks: [`Here:\n\n\`\`\`ts\n${code}\n\`\`\`\nDone.`], delayMs: 0 });
    await api.pushUpdate(inGroup('dump the code', true));
    await until(
      () => callsIn(GROUP, 'sendMessage').some((call) => String(call.result?.text).includes('Done.')),
      'the last piece',
    );
    const pieces = callsIn(GROUP, 'sendMessage');
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    for (const piece of pieces) {
      expect(piece.status, piece.error?.description).toBe(200);
      expect(piece.params.parse_mode).toBe('HTML');
      // Every piece opens and closes its own code block.
      const html = String(piece.params.text);
      expect((html.match(/<pre>/g) ?? []).length).toBe((html.match(/<\/pre>/g) ?? []).length);
    }
    const shown = pieces.map((piece) => String(piece.result.text)).join('\n');
    expect(shown.match(/const line\d+ /g)).toEqual(Array.from({ length: 400 }, (_, index) => `const line${index} `));
  });

  it('recovers from a failing poll without losing or repeating a message', async () => {
    await boot({});
    await until(() => api.callsTo('getUpdates').length > 0, 'the first poll');
    // The next polls fail: a dropped connection, then a 502 from a proxy.
    api.script('getUpdates', { drop: true });
    api.script('getUpdates', { raw: { status: 502, body: '<html>Bad Gateway</html>' } });
    const sent = ['m1', 'm2', 'm3'].map((text) => dm(text));
    // Ends the long poll in progress, so the scripted failures come next.
    const handed = sent.map((update) => api.pushUpdate(update));
    await until(
      () =>
        ['m1', 'm2', 'm3'].every((text) =>
          callsIn(ADA.id, 'sendMessage').some((call) => call.result?.text === `echo: ${text}`),
        ),
      'all three answers',
      20_000,
    );
    // A repeat would come from a poll that asked again for updates the bot already had. Once a
    // poll confirms all three (its offset is past them) and every run is over, none can come.
    const lastId = Math.max(...(await Promise.all(handed)));
    await until(
      () => api.callsTo('getUpdates').some((call) => Number(call.params.offset) > lastId),
      'a poll past the three updates',
    );
    await until(() => runs.finished.length >= 3, 'the three runs to finish');
    for (const update of sent) await decisionOn(update);
    const answers = callsIn(ADA.id, 'sendMessage').map((call) => call.result?.text);
    expect(answers.sort()).toEqual(['echo: m1', 'echo: m2', 'echo: m3']);
    expect(requests.map((request) => lastUserText(request)).sort()).toEqual(['m1', 'm2', 'm3']);
  });
});

describe('negative chat ids on the command line', () => {
  afterAll(() => api.stop());
  it('takes "-100200" as the value of --to, not as a flag', () => {
    const spec = { to: { type: 'string' as const, short: 't' }, json: { type: 'boolean' as const } };
    expect(joinNegativeValues(['send', '--to', '-100200', 'hi'], spec)).toEqual(['send', '--to=-100200', 'hi']);
    expect(joinNegativeValues(['-t', '-1001234567890:topic:42', 'x'], spec)).toEqual([
      '--to=-1001234567890:topic:42',
      'x',
    ]);
    // A boolean flag takes no value; words after "--" are left alone.
    expect(joinNegativeValues(['--json', '-5'], spec)).toEqual(['--json', '-5']);
    expect(joinNegativeValues(['--', '--to', '-5'], spec)).toEqual(['--', '--to', '-5']);
  });

  it('claw message send --to -100200 reaches the group', async () => {
    await api.start();
    api.reset();
    const stateDir = tempDir();
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({ channels: { telegram: { botToken: api.token, apiRoot: api.apiRoot } } }),
    );
    const result = await claw(['message', 'send', '--channel', 'telegram', '--to', '-100200', 'hello group'], {
      OPENCLAW_STATE_DIR: stateDir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(api.callsTo('sendMessage')).toHaveLength(1);
    expect(api.callsTo('sendMessage')[0]!.params).toMatchObject({ chat_id: -100200, text: 'hello group' });
  });
});
