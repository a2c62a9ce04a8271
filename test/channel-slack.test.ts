/**
 * The Slack channel against a loopback fake of Slack's Web API and Socket Mode
 * (test/fakes/slack.ts), driven by the real @slack/bolt: the shared channel contract, then
 * what is particular to Slack — mention gating and channel allowlists, threads per
 * replyToMode, 4,000 character pieces with code fences, mrkdwn, files both ways, the ack
 * reaction, rate limits, envelopes acknowledged only once journaled, and restarts.
 */
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../sdk/index.js';
import { useService } from '../sdk/services.js';
import { channelContractSuite } from '../sdk/channels/contract.js';
import {
  agentStackDirs,
  createTestKernel,
  lastUserText,
  scriptedModel,
  type ScriptedAnswer,
  type TestKernel,
} from '../sdk/testing.js';
import { channelAccess } from '../plugins/channel-slack/access.js';
import { ignoredSettings, resolveAccountSettings } from '../plugins/channel-slack/config.js';
import { markdownToMrkdwn } from '../plugins/channel-slack/format.js';
import { parseEvent } from '../plugins/channel-slack/inbound.js';
import { checkSlackToken } from '../plugins/channel-slack/token-check.js';
import { FakeSlack } from './fakes/slack.js';
import { startGateway } from './gateway-helpers.js';
import { freePort, recordInboundDecisions, type InboundDecision } from './helpers.js';

const SLACK = fileURLToPath(new URL('../plugins/channel-slack/', import.meta.url));

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// ── The shared channel contract ────────────────────────────────────────────────────

const contractFake = new FakeSlack();

channelContractSuite({
  channel: 'slack',
  plugin: SLACK,
  config: () => ({ botToken: contractFake.botToken, appToken: contractFake.appToken }),
  get env() {
    return { SLACK_API_URL: contractFake.apiUrl };
  },
  textLimit: 4000,
  groups: true,
  platform: {
    start: () => contractFake.start(),
    stop: () => contractFake.stop(),
    deliver: (message) =>
      contractFake.deliver(
        contractFake.message({
          user: message.senderId,
          ...(message.kind === 'group' ? { channel: message.chatId } : {}),
          text: message.mention ? `<@${contractFake.botUser}> ${message.text}` : message.text,
          ...(message.messageId ? { ts: `1700000000.${message.messageId}` } : {}),
        }),
      ),
    sent: () =>
      contractFake.sent().map((post) => ({
        chatId: post.channel.startsWith('D') ? post.channel.slice(1) : post.channel,
        text: post.text,
        ...(post.threadTs ? { threadId: post.threadTs } : {}),
      })),
    reset: () => contractFake.reset(),
  },
});

// ── Slack specifics ───────────────────────────────────────────────────────────────

describe('slack channel', () => {
  const fake = new FakeSlack();
  const OWNER = 'UOWNER01';
  let kernel: TestKernel | undefined;
  const requests: ModelRequest[] = [];
  let answer: (request: ModelRequest) => ScriptedAnswer = (request) => `echo: ${lastUserText(request)}`;

  beforeAll(() => fake.start());
  afterEach(async () => {
    await kernel?.dispose();
    kernel = undefined;
    fake.reset();
    requests.length = 0;
    answer = (request) => `echo: ${lastUserText(request)}`;
  });
  afterAll(() => fake.stop());

  /** Pipeline entries held back until the test releases them (boot with `hold`). */
  const held: Array<() => void> = [];
  let decisions: InboundDecision[] = [];
  const boot = async (
    slack: Record<string, unknown> = {},
    extra: { stateDir?: string; messages?: object; hold?: boolean } = {},
  ) => {
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), SLACK, scriptedModel((request) => (requests.push(request), answer(request)))],
      ...(extra.stateDir ? { stateDir: extra.stateDir } : {}),
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 }, ...(extra.messages ?? {}) },
        channels: {
          slack: {
            botToken: fake.botToken,
            appToken: fake.appToken,
            dmPolicy: 'allowlist',
            allowFrom: [OWNER],
            ...slack,
          },
        },
      },
      env: { SLACK_API_URL: fake.apiUrl },
    });
    if (extra.hold) {
      const channels = (await useService<{ receive(...args: unknown[]): Promise<unknown> }>(kernel, 'channels'))!;
      const receive = channels.receive.bind(channels);
      channels.receive = async (...args: unknown[]) => {
        await new Promise<void>((release) => held.push(release));
        return receive(...args);
      };
    }
    decisions = await recordInboundDecisions(kernel);
    await kernel.start();
    await until(() => fake.connectedSockets() > 0, 'the Socket Mode connection');
    return kernel;
  };
  const status = async () =>
    (await kernel!.plugins.kernelServices.channels.status()).find((channel) => channel.id === 'slack')!.accounts[0]!;

  it('connects over Socket Mode, reports the bot and team, and keeps the tokens out of status', async () => {
    await boot();
    await until(() => fake.calls.includes('apps.connections.open'), 'apps.connections.open');
    const account = await status();
    expect(account).toMatchObject({
      running: true,
      connected: true,
      username: 'clawbot',
      team: 'Acme',
      mode: 'socket',
    });
    const text = JSON.stringify(account);
    expect(text).not.toContain(fake.botToken);
    expect(text).not.toContain(fake.appToken);
  });

  it('answers a DM in its DM conversation, in mrkdwn, and adds the ack reaction', async () => {
    answer = () => 'this is **bold** and [a link](https://example.com/a?b=1&c=2) with `x < y`';
    await boot({}, { messages: { ackReactionScope: 'all' } });
    const event = fake.message({ user: OWNER, text: 'hello &lt;there&gt;' });
    await fake.deliver(event);
    await until(() => fake.sent().length > 0, 'a reply');
    expect(lastUserText(requests[0]!)).toBe('hello <there>');
    expect(fake.sent()[0]).toMatchObject({
      channel: `D${OWNER}`,
      text: 'this is *bold* and <https://example.com/a?b=1&amp;c=2|a link> with `x &lt; y`',
    });
    await until(() => fake.reactions.length > 0, 'the ack reaction');
    expect(fake.reactions[0]).toEqual({ channel: `D${OWNER}`, timestamp: event.ts, name: 'eyes' });
  });

  it('acknowledges an envelope only once the pipeline has taken the message', async () => {
    const k = await boot({}, { hold: true });
    const event = fake.message({ user: OWNER, text: 'hold on' });
    let acked = false;
    const delivered = fake.deliver(event).then(() => (acked = true));
    await until(() => held.length > 0, 'the message reaching the pipeline');
    // The pipeline has not answered yet: Slack must not have heard an ack.
    expect(acked).toBe(false);
    expect(fake.unacked()).toBe(1);
    held.shift()!();
    await delivered;
    expect(decisions).toContainEqual(expect.objectContaining({ messageId: event.ts, status: 'dispatched' }));
    await until(() => fake.sent().length > 0, 'the reply');
    expect(k).toBeDefined();
  });

  it('in a channel, answers only when mentioned, and only in the channels listed', async () => {
    await boot({ groupPolicy: 'allowlist', channels: { C0GENERAL: { requireMention: true } } });
    await fake.deliver(fake.message({ user: OWNER, channel: 'C0GENERAL', text: 'just chatting' }));
    await fake.deliver(fake.message({ user: OWNER, channel: 'C0SECRET', text: `<@${fake.botUser}> hi` }));
    await fake.deliver(fake.message({ user: OWNER, channel: 'C0GENERAL', text: `<@${fake.botUser}> what now?` }));
    await until(() => fake.sent().length > 0, 'a channel reply');
    expect(fake.sent().map((post) => post.channel)).toEqual(['C0GENERAL']);
    expect(requests).toHaveLength(1);
    expect(lastUserText(requests[0]!)).toBe('what now?');
  });

  it('replies in the thread: replyToMode "all" threads a top-level message; a thread reply stays in its thread', async () => {
    await boot({ groupPolicy: 'open', replyToMode: 'all', channels: { '*': { requireMention: false } } });
    const top = fake.message({ user: OWNER, channel: 'C0GENERAL', text: 'top level' });
    await fake.deliver(top);
    await until(() => fake.sent().length > 0, 'a threaded reply');
    expect(fake.sent()[0]!.threadTs).toBe(top.ts);
    const inThread = fake.message({
      user: OWNER,
      channel: 'C0GENERAL',
      text: 'in thread',
      threadTs: '1700000000.000001',
    });
    await fake.deliver(inThread);
    await until(() => fake.sent().length > 1, 'the thread reply');
    expect(fake.sent()[1]!.threadTs).toBe('1700000000.000001');
  });

  it('replyToMode "off" answers a top-level channel message in the channel', async () => {
    await boot({ groupPolicy: 'open', channels: { '*': { requireMention: false } } });
    await fake.deliver(fake.message({ user: OWNER, channel: 'C0GENERAL', text: 'top level' }));
    await until(() => fake.sent().length > 0, 'a reply');
    expect(fake.sent()[0]!.threadTs).toBeUndefined();
  });

  it('cuts a long reply at 4,000 characters with code fences balanced in every piece', async () => {
    const code = Array.from({ length: 150 }, (_, i) => `const line${i} = ${i}; // some code here`).join('\n');
    answer = () => `Here:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nDone.`;
    await boot();
    await fake.deliver(fake.message({ user: OWNER, text: 'code please' }));
    await until(() => fake.sent().some((post) => post.text.includes('Done.')), 'the last piece');
    const pieces = fake.sent().map((post) => post.text);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(4000);
      expect((piece.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(pieces.join('\n')).toContain('const line149 = 149;');
  });

  it('honours a 429 Retry-After: the reply goes out once, after the wait', async () => {
    await boot();
    fake.rateLimitPosts(1, 1);
    await fake.deliver(fake.message({ user: OWNER, text: 'slow down' }));
    await until(() => fake.sent().length > 0, 'the reply after the rate limit');
    const waited = Date.now() - fake.rateLimitedAt[0]!;
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(fake.sent()).toHaveLength(1);
    expect(fake.calls.filter((call) => call === 'chat.postMessage')).toHaveLength(2);
  });

  it('downloads an inbound file with the bot token and uploads an outbound one through the external upload flow', async () => {
    const k = await boot();
    mkdirSync(k.paths.workspaceDir, { recursive: true });
    const outFile = join(k.paths.workspaceDir, 'report.txt');
    writeFileSync(outFile, 'the report');
    const url = fake.addFile('F0IN', Buffer.from('inbound notes'), 'text/plain');
    await fake.deliver(
      fake.message({
        user: OWNER,
        text: 'see attached',
        files: [{ id: 'F0IN', name: 'notes.txt', mimetype: 'text/plain', size: 13, url_private: url }],
      }),
    );
    await until(() => fake.sent().length > 0, 'a reply');
    expect(lastUserText(requests[0]!)).toMatch(/see attached\n\[file "notes.txt" saved to .*F0IN-notes\.txt\]/);
    const sent = await kernel!.plugins.kernelServices.channels.send({
      channel: 'slack',
      to: `user:${OWNER}`,
      text: 'here it is',
      media: [outFile],
    });
    expect(sent, sent.error).toMatchObject({ delivered: true });
    expect(fake.uploaded()).toHaveLength(1);
    expect(fake.uploaded()[0]).toMatchObject({ channel: `D${OWNER}`, fileName: 'report.txt' });
    expect(fake.uploaded()[0]!.data.toString()).toBe('the report');
  });

  it('reconnects when Slack asks it to, and keeps answering', async () => {
    await boot();
    const before = fake.connections;
    fake.requestReconnect();
    await until(() => fake.connections > before && fake.connectedSockets() > 0, 'a new connection');
    await fake.deliver(fake.message({ user: OWNER, text: 'still there?' }));
    await until(() => fake.sent().length > 0, 'a reply after the reconnect');
  });

  it('does not answer a redelivered event (same event_id and ts) twice, across a restart', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'claw-slack-restart-'));
    await boot({}, { stateDir });
    const event = fake.message({ user: OWNER, text: 'only once' });
    await fake.deliver(event, { eventId: 'Ev-SAME' });
    await until(() => fake.sent().length > 0, 'the reply');
    await kernel!.dispose();
    kernel = undefined;
    await boot({}, { stateDir });
    await fake.deliver(event, { eventId: 'Ev-SAME' });
    // The second delivery was acknowledged (deliver resolved) and the pipeline took it as a duplicate.
    await fake.deliver(fake.message({ user: OWNER, text: 'marker' }));
    await until(() => fake.sent().some((post) => post.text === 'echo: marker'), 'the marker reply');
    expect(fake.sent().filter((post) => post.text === 'echo: only once')).toHaveLength(1);
    expect(requests.filter((request) => lastUserText(request) === 'only once')).toHaveLength(1);
  });

  it('leaves an envelope unacknowledged when the pipeline did not take it; Slack redelivers it and it is answered once', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'claw-slack-crash-'));
    await boot({}, { stateDir });
    // The gateway is going away: the channel stops first, so the event arrives with nobody to take it.
    await kernel!.dispose();
    kernel = undefined;
    const delivered = fake.deliver(fake.message({ user: OWNER, text: 'do not lose me' }));
    expect(fake.unacked()).toBe(1);
    await boot({}, { stateDir });
    await delivered;
    await until(() => fake.sent().length > 0, 'the redelivered message answered');
    expect(fake.sent().filter((post) => post.text === 'echo: do not lose me')).toHaveLength(1);
    expect(requests).toHaveLength(1);
  });

  it('does not answer an app_mention and its message event twice, nor their redeliveries after a restart', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'claw-slack-mention-'));
    await boot({ groupPolicy: 'open', channels: { '*': { requireMention: true } } }, { stateDir });
    const message = fake.message({ user: OWNER, channel: 'C0GENERAL', text: `<@${fake.botUser}> once please` });
    const mention = { ...message, type: 'app_mention' };
    delete (mention as Record<string, unknown>).channel_type;
    await fake.deliver(message, { eventId: 'Ev-MSG' });
    await fake.deliver(mention, { eventId: 'Ev-MENTION' });
    await until(() => fake.sent().length > 0, 'the reply');
    await kernel!.dispose();
    kernel = undefined;
    await boot({ groupPolicy: 'open', channels: { '*': { requireMention: true } } }, { stateDir });
    // Slack retries both events: new envelopes, the same event ids.
    await fake.deliver(mention, { eventId: 'Ev-MENTION' });
    await fake.deliver(message, { eventId: 'Ev-MSG' });
    await fake.deliver(fake.message({ user: OWNER, channel: 'C0GENERAL', text: `<@${fake.botUser}> marker` }));
    await until(() => fake.sent().some((post) => post.text === 'echo: marker'), 'the marker reply');
    expect(fake.sent().filter((post) => post.text === 'echo: once please')).toHaveLength(1);
    expect(requests.filter((request) => lastUserText(request) === 'once please')).toHaveLength(1);
    expect(decisions.filter((decision) => decision.messageId === message.ts).map((d) => d.status)).toEqual([
      'duplicate',
      'duplicate',
    ]);
  });

  it('slash command over Socket Mode: acknowledged once the pipeline has it, answered ephemerally through response_url in its own session', async () => {
    await boot({ slashCommand: { enabled: true } }, { hold: true });
    const outcomes: Array<{ status: string; sessionKey?: string }> = [];
    const channels = (await useService<{ receive(...args: unknown[]): Promise<never> }>(kernel!, 'channels'))!;
    const receive = channels.receive.bind(channels);
    channels.receive = async (...args: unknown[]) => {
      const outcome = await receive(...args);
      outcomes.push(outcome);
      return outcome;
    };
    const fields = fake.slashFields({ user: OWNER, text: 'what is up?' });
    let acked = false;
    const ack = fake.slashCommand(fields).then((payload) => ((acked = true), payload));
    await until(() => held.length > 0, 'the command reaching the pipeline');
    expect(acked).toBe(false);
    expect(fake.unacked()).toBe(1);
    held.shift()!();
    expect(await ack).toBeUndefined();
    expect(outcomes).toEqual([
      expect.objectContaining({ status: 'dispatched', sessionKey: `agent:main:slack:slash:${OWNER}` }),
    ]);
    await until(() => fake.responses.length > 0, 'the answer on the response_url');
    expect(fake.responses).toEqual([
      { triggerId: fields.trigger_id, responseType: 'ephemeral', text: 'echo: what is up?' },
    ]);
    // Nothing went to the conversation itself, and the reply URL is not in status.
    expect(fake.sent()).toEqual([]);
    expect(JSON.stringify(await status())).not.toContain('/commands/');
    const logs = JSON.stringify(kernel!.logs);
    expect(logs).not.toContain('/commands/');
    expect(logs).not.toContain(fake.botToken);
  });

  it('slash command: in_channel answers when ephemeral is off, and "/openclaw status" runs the chat command', async () => {
    await boot({
      slashCommand: { enabled: true, ephemeral: false, name: '/ask', sessionPrefix: 'slack:cmd' },
      groupPolicy: 'open',
      channels: { '*': { requireMention: true } },
    });
    const fields = fake.slashFields({ user: OWNER, text: 'status', command: '/ask', channel: 'C0GENERAL' });
    expect(await fake.slashCommand(fields)).toBeUndefined();
    await until(() => fake.responses.length > 0, 'the status answer');
    expect(fake.responses[0]).toMatchObject({ triggerId: fields.trigger_id, responseType: 'in_channel' });
    expect(fake.responses[0]!.text).toContain(`Session: agent:main:slack:cmd:${OWNER}`);
    // A chat command never reaches the model.
    expect(requests).toHaveLength(0);
    await fake.slashCommand(fake.slashFields({ user: OWNER, text: 'hello', command: '/ask', channel: 'C0GENERAL' }));
    await until(() => fake.responses.length > 1, 'the second answer');
    expect(fake.responses[1]).toMatchObject({ responseType: 'in_channel', text: 'echo: hello' });
  });

  it('slash command: an answer its response_url no longer takes goes to the user privately (ephemeral) or to the channel', async () => {
    await boot({ slashCommand: { enabled: true }, groupPolicy: 'open', channels: { '*': { requireMention: true } } });
    fake.responseUrlGone = true;
    await fake.slashCommand(fake.slashFields({ user: OWNER, text: 'private', channel: 'C0GENERAL' }));
    await until(() => fake.sent().length > 0, 'the fallback answer');
    expect(fake.sent()[0]).toMatchObject({ channel: `D${OWNER}`, text: 'echo: private' });
    expect(fake.responses).toEqual([]);
  });

  it('native commands (commands.native): /agentstatus runs /status on the conversation it was typed in', async () => {
    await boot({ commands: { native: true } });
    const fields = fake.slashFields({ user: OWNER, text: '', command: '/agentstatus' });
    expect(await fake.slashCommand(fields)).toBeUndefined();
    await until(() => fake.responses.length > 0, 'the status answer');
    expect(fake.responses[0]).toMatchObject({ triggerId: fields.trigger_id, responseType: 'ephemeral' });
    expect(fake.responses[0]!.text).toContain('Session: agent:main:');
    // The conversation's own session, not the /openclaw command's.
    expect(fake.responses[0]!.text).not.toContain('slack:slash');
    expect(requests).toHaveLength(0);
    const unknown = await fake.slashCommand(fake.slashFields({ user: OWNER, text: 'x', command: '/weather' }));
    expect(unknown).toMatchObject({ text: expect.stringContaining("I don't know /weather") });
    await kernel!.dispose();
    kernel = undefined;
    // "auto" (the default) keeps them off on Slack.
    await boot({ commands: { native: 'auto' } });
    const off = await fake.slashCommand(fake.slashFields({ user: OWNER, text: '', command: '/agentstatus' }));
    expect(off).toMatchObject({ text: expect.stringContaining('turned off') });
    expect(resolveAccountSettings('default', { botToken: 'xoxb-1', appToken: 'xapp-1' }, {}, true).nativeCommands).toBe(
      true,
    );
    expect(() =>
      resolveAccountSettings('default', { botToken: 'xoxb-1', appToken: 'xapp-1', commands: { native: 'yes' } }, {}),
    ).toThrow(/commands\.native must be true, false or "auto"/);
  });

  it('slash command: strangers get a pairing code or a refusal, unknown commands and a disabled command say so', async () => {
    await boot({
      slashCommand: { enabled: true },
      dmPolicy: 'pairing',
      allowFrom: [OWNER],
      groupPolicy: 'allowlist',
      channels: { C0GENERAL: { users: [OWNER] } },
    });
    const pairing = await fake.slashCommand(fake.slashFields({ user: 'USTRANGE', text: 'let me in' }));
    expect(pairing).toMatchObject({ response_type: 'ephemeral', text: expect.stringMatching(/pairing code is \w+/) });
    const refused = await fake.slashCommand(
      fake.slashFields({ user: 'USTRANGE', text: 'hello', channel: 'C0GENERAL' }),
    );
    expect(refused).toEqual({ response_type: 'ephemeral', text: 'You are not allowed to use /openclaw here.' });
    const unlisted = await fake.slashCommand(fake.slashFields({ user: OWNER, text: 'hello', channel: 'C0SECRET' }));
    expect(unlisted).toMatchObject({ text: 'You are not allowed to use /openclaw here.' });
    const unknown = await fake.slashCommand(fake.slashFields({ user: OWNER, text: 'x', command: '/weather' }));
    expect(unknown).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringContaining("I don't know /weather"),
    });
    expect(requests).toHaveLength(0);
    expect(fake.responses).toEqual([]);
    await kernel!.dispose();
    kernel = undefined;
    await boot();
    const off = await fake.slashCommand(fake.slashFields({ user: OWNER, text: 'hello' }));
    expect(off).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining('turned off') });
    expect(requests).toHaveLength(0);
  });

  it('in a thread, sets the "is thinking" status and clears it once the reply is out', async () => {
    await boot({ groupPolicy: 'open', channels: { '*': { requireMention: false } } });
    const thread = '1700000000.000777';
    await fake.deliver(fake.message({ user: OWNER, channel: 'C0GENERAL', text: 'think', threadTs: thread }));
    await until(() => fake.statuses.length > 1, 'the status cleared');
    expect(fake.statuses).toEqual([
      { channel: 'C0GENERAL', threadTs: thread, status: 'is thinking…' },
      { channel: 'C0GENERAL', threadTs: thread, status: '' },
    ]);
    // Cleared only once the reply went out.
    expect(fake.calls.lastIndexOf('assistant.threads.setStatus')).toBeGreaterThan(
      fake.calls.indexOf('chat.postMessage'),
    );
  });

  it('a status Slack refuses (missing scope) is tried once, remembered, and never holds up a reply', async () => {
    await boot({ groupPolicy: 'open', channels: { '*': { requireMention: false } } });
    fake.failing.set('assistant.threads.setStatus', 'missing_scope');
    await fake.deliver(fake.message({ user: OWNER, channel: 'C0GENERAL', text: 'one', threadTs: '1700000000.000001' }));
    await until(() => fake.sent().length > 0, 'the first reply');
    await fake.deliver(fake.message({ user: OWNER, channel: 'C0OTHER', text: 'two', threadTs: '1700000000.000002' }));
    await until(() => fake.sent().length > 1, 'the second reply');
    expect(fake.calls.filter((call) => call === 'assistant.threads.setStatus')).toHaveLength(1);
    // Said once, not at every message.
    const notes = kernel!.logs.filter((record) => JSON.stringify(record).includes('is thinking'));
    expect(notes).toHaveLength(1);
    expect(JSON.stringify(notes[0])).toContain('missing_scope');
  });

  it('outside threads, the typing reaction goes on while the run works and comes off after the reply', async () => {
    await boot({ typingReaction: 'hourglass_flowing_sand' });
    const event = fake.message({ user: OWNER, text: 'slow thought' });
    await fake.deliver(event);
    await until(() => fake.reactionLog.length > 1, 'the typing reaction removed');
    expect(fake.reactionLog).toEqual(['+hourglass_flowing_sand', '-hourglass_flowing_sand']);
    expect(fake.reactions[0]).toEqual({ channel: `D${OWNER}`, timestamp: event.ts, name: 'hourglass_flowing_sand' });
    expect(fake.calls.indexOf('reactions.remove')).toBeGreaterThan(fake.calls.indexOf('chat.postMessage'));
  });

  it('HTTP mode: takes signed events on the gateway route; forged or stale requests get 401 and reach nothing', async () => {
    const port = await freePort();
    const secret = 'signing-secret-8f2c';
    const gateway = await startGateway({
      gateway: { port },
      env: { SLACK_API_URL: fake.apiUrl },
      plugins: [...agentStackDirs(), SLACK, scriptedModel((request) => (requests.push(request), answer(request)))],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 } },
        channels: {
          slack: {
            mode: 'http',
            botToken: fake.botToken,
            signingSecret: secret,
            dmPolicy: 'allowlist',
            allowFrom: [OWNER],
            slashCommand: { enabled: true, ephemeral: false },
          },
        },
      },
    });
    const post = (body: string, headers: Record<string, string>, path = '/slack/events') =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    const signed = (body: string, secretUsed = secret, at = Math.floor(Date.now() / 1000)) => ({
      'x-slack-request-timestamp': String(at),
      'x-slack-signature': `v0=${createHmac('sha256', secretUsed).update(`v0:${at}:${body}`).digest('hex')}`,
    });
    const eventBody = (text: string) =>
      JSON.stringify({
        type: 'event_callback',
        team_id: 'T0001',
        event_id: `Ev-${text.replace(/\W/g, '')}`,
        event: fake.message({ user: OWNER, text }),
      });
    try {
      const challenge = JSON.stringify({ type: 'url_verification', challenge: 'abc123' });
      const verified = await post(challenge, signed(challenge));
      expect(verified.status).toBe(200);
      expect(await verified.json()).toEqual({ challenge: 'abc123' });

      const forged = eventBody('forged');
      expect((await post(forged, signed(forged, 'not-the-secret'))).status).toBe(401);
      expect((await post(forged, {})).status).toBe(401);
      const stale = eventBody('stale');
      expect((await post(stale, signed(stale, secret, Math.floor(Date.now() / 1000) - 6 * 60))).status).toBe(401);
      expect((await post(stale, signed(stale), '/slack/other')).status).toBe(404);

      const genuine = eventBody('via http');
      expect((await post(genuine, signed(genuine))).status).toBe(200);
      await until(() => fake.sent().length > 0, 'the reply');
      expect(fake.sent()[0]).toMatchObject({ channel: `D${OWNER}`, text: 'echo: via http' });
      // A retry of the same event (Slack resends when it saw no 200 in time) is not answered again.
      expect((await post(genuine, signed(genuine))).status).toBe(200);
      expect(requests.map(lastUserText)).toEqual(['via http']);
      const status = await gateway.kernel.plugins.kernelServices.channels.status();
      const account = status.find((channel) => channel.id === 'slack')!.accounts[0]!;
      expect(account).toMatchObject({ running: true, connected: true, mode: 'http' });
      expect(JSON.stringify(account)).not.toContain(secret);

      // Slash commands arrive form-encoded on the same path, signed the same way.
      const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
      const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };
      const forgedCommand = form(fake.slashFields({ user: OWNER, text: 'forged command' }));
      const refused = await post(forgedCommand, { ...formHeaders, ...signed(forgedCommand, 'not-the-secret') });
      expect(refused.status).toBe(401);
      const fields = fake.slashFields({ user: OWNER, text: 'slash via http' });
      const command = form(fields);
      const answered = await post(command, { ...formHeaders, ...signed(command) });
      expect(answered.status).toBe(200);
      expect(await answered.text()).toBe('');
      await until(() => fake.responses.length > 0, 'the slash answer');
      expect(fake.responses).toEqual([
        { triggerId: fields.trigger_id, responseType: 'in_channel', text: 'echo: slash via http' },
      ]);
      expect(requests.map(lastUserText)).toEqual(['via http', 'slash via http']);
      const stranger = form(fake.slashFields({ user: 'USTRANGE', text: 'hi' }));
      const strangerAnswer = await post(stranger, { ...formHeaders, ...signed(stranger) });
      expect(await strangerAnswer.json()).toEqual({
        response_type: 'ephemeral',
        text: 'You are not allowed to use /openclaw here.',
      });
    } finally {
      await gateway.kernel.dispose();
    }
  }, 60_000);

  it('refuses tokens Slack rejects, with the reason', async () => {
    await expect(checkSlackToken(fake.botToken, { SLACK_API_URL: fake.apiUrl })).resolves.toEqual({
      name: 'clawbot in Acme',
    });
    await expect(checkSlackToken(fake.appToken, { SLACK_API_URL: fake.apiUrl })).resolves.toBeDefined();
    await expect(checkSlackToken('xoxb-wrong', { SLACK_API_URL: fake.apiUrl })).rejects.toThrow(/invalid_auth/);
    await expect(checkSlackToken('xapp-wrong', { SLACK_API_URL: fake.apiUrl })).rejects.toThrow(/app-level token/);
    await expect(checkSlackToken('hunter2', { SLACK_API_URL: fake.apiUrl })).rejects.toThrow(/xoxb-/);
  });
});

describe('slack pure parts', () => {
  it('names the OpenClaw settings it does not implement instead of dropping them silently', () => {
    expect(
      ignoredSettings('work', {
        userToken: 'xoxp-1',
        slashCommand: { enabled: true },
        replyToMode: 'batched',
        channels: { C1: { replyToMode: 'all' }, C2: { requireMention: false } },
      }),
    ).toEqual([
      'channels.slack.accounts.work.userToken is an OpenClaw Slack setting claw does not implement; ignored',
      'channels.slack.accounts.work.replyToMode "batched" is not implemented; replies thread their first piece in channels, none in DMs',
      'channels.slack.accounts.work.channels.C1.replyToMode is not implemented per channel; channels.slack.accounts.work.replyToMode applies',
    ]);
    expect(ignoredSettings('default', { botToken: 'xoxb-1', replyToMode: 'all' })).toEqual([]);
  });

  it('names the key to fix in config errors', () => {
    expect(() => resolveAccountSettings('default', {}, {})).toThrow(/channels\.slack\.botToken/);
    expect(() => resolveAccountSettings('default', { botToken: 'xoxb-1' }, {})).toThrow(/channels\.slack\.appToken/);
    expect(() => resolveAccountSettings('default', { botToken: 'xoxp-1', appToken: 'xapp-1' }, {})).toThrow(/xoxb-/);
    expect(() => resolveAccountSettings('default', { botToken: 'xoxb-1', mode: 'http' }, {})).toThrow(
      /channels\.slack\.signingSecret/,
    );
    expect(() =>
      resolveAccountSettings(
        'default',
        { botToken: 'xoxb-1', mode: 'http', signingSecret: 's', webhookPath: '/hooks/x' },
        {},
      ),
    ).toThrow(/webhookPath must be a path under \/slack\//);
    expect(() =>
      resolveAccountSettings('default', { botToken: 'xoxb-1', appToken: 'xapp-1', mode: 'events' }, {}),
    ).toThrow(/mode must be "socket" or "http"/);
    expect(() =>
      resolveAccountSettings(
        'default',
        { botToken: 'xoxb-1', appToken: 'xapp-1' },
        { SLACK_API_URL: 'http://evil.example/api/' },
      ),
    ).toThrow(/https/);
    expect(
      resolveAccountSettings('default', {}, { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' }),
    ).toMatchObject({
      botToken: 'xoxb-1',
      appToken: 'xapp-1',
      apiUrl: 'https://slack.com/api/',
      slashCommand: { enabled: false, name: 'openclaw', ephemeral: true, sessionPrefix: 'slack:slash' },
    });
    const socket = { botToken: 'xoxb-1', appToken: 'xapp-1' };
    expect(() => resolveAccountSettings('default', { ...socket, slashCommand: { name: 'two words' } }, {})).toThrow(
      /channels\.slack\.slashCommand\.name/,
    );
    expect(() => resolveAccountSettings('default', { ...socket, slashCommand: { ephemeral: 'no' } }, {})).toThrow(
      /slashCommand\.ephemeral must be true or false/,
    );
    expect(() => resolveAccountSettings('default', { ...socket, typingReaction: 1 }, {})).toThrow(/typingReaction/);
  });

  it('converts Markdown to mrkdwn, escaping &<> and leaving code alone', () => {
    expect(markdownToMrkdwn('# Title\n**b** *i* ~~s~~ a & b <c>')).toBe('*Title*\n*b* _i_ ~s~ a &amp; b &lt;c&gt;');
    expect(markdownToMrkdwn('```js\nif (a < b && **x**) {}\n```')).toBe('```\nif (a &lt; b &amp;&amp; **x**) {}\n```');
    expect(markdownToMrkdwn('- [docs](https://x.dev/?a=1&b=2)')).toBe('• <https://x.dev/?a=1&amp;b=2|docs>');
  });

  it('ignores the bot itself, other bots and edits; strips the mention; threads by thread_ts', () => {
    const base = { type: 'message', channel: 'C1', channel_type: 'channel', user: 'U1', ts: '1.2', text: '<@UBOT> hi' };
    expect(parseEvent({ ...base, user: 'UBOT' }, 'UBOT')).toBeUndefined();
    expect(parseEvent({ ...base, bot_id: 'B9' }, 'UBOT')).toBeUndefined();
    expect(parseEvent({ ...base, subtype: 'message_changed' }, 'UBOT')).toBeUndefined();
    expect(parseEvent({ ...base, thread_ts: '1.0' }, 'UBOT')!.inbound).toMatchObject({
      text: 'hi',
      mentioned: true,
      threadId: '1.0',
      peer: { kind: 'channel', id: 'C1' },
    });
  });

  it('decides channel access from channels.<id|name|*>', () => {
    const message = {
      accountId: 'default',
      peer: { kind: 'channel' as const, id: 'C1' },
      sender: { id: 'U1' },
      text: 'x',
      messageId: '1',
    };
    expect(channelAccess(message, {})).toBeUndefined();
    expect(channelAccess(message, { channels: { C2: {} } })).toMatchObject({ allow: false });
    expect(channelAccess(message, { channels: { C1: { requireMention: false } } })).toEqual({
      allow: true,
      requireMention: false,
    });
    expect(channelAccess(message, { channels: { C1: { users: ['U2'] } } })).toMatchObject({ allow: false });
  });
});
