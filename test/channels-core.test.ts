/** The channel core (plugins/channels, sdk/channels): access control and pairing, routing, the outbound path's retries, the CLI. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelAccess, MAX_PENDING_PAIRINGS, PAIRING_TTL_MS } from '../plugins/channels/access.js';
import { HookBus } from '../sdk/index.js';
import type { ChannelPlugin, InboundMessage } from '../sdk/index.js';
import { ChannelSendError, channelSettings, retryDelay, sleepAtLeast } from '../sdk/channels/index.js';
import { channelConfigProblems } from '../plugins/channels/manager.js';
import { refusedMedia, sendOutbound } from '../plugins/channels/outbound.js';
import { definePlugin, splitForChannel } from '../sdk/index.js';
import { agentStackDirs, createTestKernel, scriptedModel, type TestKernel } from '../sdk/testing.js';
import { claw, startCliGateway, tempDir, writePlugin } from './helpers.js';

const settingsFor = (channel: Record<string, unknown>) =>
  channelSettings({ channels: { chat: channel } } as never, 'chat');
const sender = (id: string, extra: Partial<InboundMessage['sender']> = {}) => ({ id, ...extra });

describe('access control', () => {
  it('pairing: a code per unknown sender, valid one hour, at most three waiting; approval lets them in', () => {
    let now = 1_000_000;
    const access = new ChannelAccess(tempDir(), () => now);
    const settings = settingsFor({});
    expect(settings.dmPolicy).toBe('pairing');
    const first = access.checkDm(settings, sender('u1'));
    expect(first).toMatchObject({
      allow: false,
      pairing: { created: true, code: expect.stringMatching(/^[A-HJ-NP-Z2-9]{8}$/) },
    });
    const again = access.checkDm(settings, sender('u1'));
    expect(again).toMatchObject({ pairing: { created: false, code: (first as any).pairing.code } });
    access.checkDm(settings, sender('u2'));
    access.checkDm(settings, sender('u3'));
    const fourth = access.checkDm(settings, sender('u4'));
    expect(fourth).toMatchObject({
      allow: false,
      reason: expect.stringContaining(`${MAX_PENDING_PAIRINGS} pairing requests are already waiting`),
    });
    expect(access.pending('chat')).toHaveLength(3);
    expect(access.approve('chat', (first as any).pairing.code.toLowerCase())).toMatchObject({ senderId: 'u1' });
    expect(access.checkDm(settings, sender('u1'))).toEqual({ allow: true });
    expect(access.approvedSenders('chat')).toEqual(['u1']);
    now += PAIRING_TTL_MS + 1;
    expect(access.pending('chat')).toEqual([]);
    expect(access.approve('chat', 'ABCDEFGH')).toBeUndefined();
  });

  it('allowlist, open and disabled DMs; allowFrom matches ids, @usernames and channel-scoped ids', () => {
    const access = new ChannelAccess(tempDir());
    expect(
      access.checkDm(settingsFor({ dmPolicy: 'allowlist', allowFrom: ['@Ada'] }), sender('7', { username: 'ada' })),
    ).toEqual({ allow: true });
    expect(access.checkDm(settingsFor({ dmPolicy: 'allowlist', allowFrom: ['chat:7'] }), sender('7'))).toEqual({
      allow: true,
    });
    expect(access.checkDm(settingsFor({ dmPolicy: 'allowlist', allowFrom: ['8'] }), sender('7'))).toMatchObject({
      allow: false,
    });
    expect(access.pending('chat')).toEqual([]);
    expect(access.checkDm(settingsFor({ dmPolicy: 'open', allowFrom: ['*'] }), sender('anyone'))).toEqual({
      allow: true,
    });
    expect(access.checkDm(settingsFor({ dmPolicy: 'disabled', allowFrom: ['7'] }), sender('7'))).toMatchObject({
      allow: false,
    });
    expect(channelConfigProblems(settingsFor({ dmPolicy: 'open' }))).toEqual([
      expect.stringContaining('allowFrom does not include "*"'),
    ]);
  });

  it('groups: allowlisted by group or sender, mention required by default', () => {
    const access = new ChannelAccess(tempDir());
    expect(access.checkGroup(settingsFor({}), '-100', sender('u'))).toMatchObject({ allow: false });
    expect(access.checkGroup(settingsFor({ groupAllowFrom: ['-100'] }), '-100', sender('u'))).toEqual({
      allow: true,
      requireMention: true,
    });
    expect(access.checkGroup(settingsFor({ groupAllowFrom: ['u'] }), '-200', sender('u'))).toEqual({
      allow: true,
      requireMention: true,
    });
    expect(
      access.checkGroup(settingsFor({ groups: { '-300': { requireMention: false } } }), '-300', sender('x')),
    ).toEqual({ allow: true, requireMention: false });
    expect(
      access.checkGroup(
        settingsFor({ groupPolicy: 'open', groups: { '*': { requireMention: false } } }),
        '-9',
        sender('x'),
      ),
    ).toEqual({ allow: true, requireMention: false });
    expect(access.checkGroup(settingsFor({ groupPolicy: 'disabled' }), '-9', sender('x'))).toMatchObject({
      allow: false,
    });
  });

  it('account settings override the channel root', () => {
    const settings = channelSettings(
      {
        channels: { chat: { dmPolicy: 'allowlist', allowFrom: ['a'], accounts: { work: { allowFrom: ['b'] } } } },
      } as never,
      'chat',
      'work',
    );
    expect(settings).toMatchObject({ dmPolicy: 'allowlist', allowFrom: ['b'], accountId: 'work' });
  });

  it("reads OpenClaw's nested dm.policy / dm.allowFrom / dm.enabled; the flat keys win", () => {
    const of = (chat: Record<string, unknown>) => channelSettings({ channels: { chat } } as never, 'chat');
    expect(of({ dm: { policy: 'allowlist', allowFrom: ['@a:x'] } })).toMatchObject({
      dmPolicy: 'allowlist',
      allowFrom: ['@a:x'],
    });
    expect(of({ dm: { enabled: false, policy: 'open', allowFrom: ['*'] } }).dmPolicy).toBe('disabled');
    expect(of({ dmPolicy: 'pairing', allowFrom: ['b'], dm: { policy: 'open', allowFrom: ['*'] } })).toMatchObject({
      dmPolicy: 'pairing',
      allowFrom: ['b'],
    });
    // A channel default of "open to all" never survives the user's nested policy.
    expect(
      channelSettings({ channels: { chat: { dm: { policy: 'allowlist' } } } } as never, 'chat', 'default', {
        dmPolicy: 'open',
        allowFrom: ['*'],
      }),
    ).toMatchObject({ dmPolicy: 'allowlist', allowFrom: [] });
  });
});

describe('the outbound path', () => {
  it('waits out a retry_after in wall-clock time even when the tick that starts the wait was busy', async () => {
    // A timer counts from the loop's cached time; 80 ms of work before it starts would make a
    // bare setTimeout(200) fire about 80 ms early by the clock.
    const waited = await new Promise<number>((resolve) => {
      setImmediate(() => {
        const spin = performance.now();
        while (performance.now() - spin < 80);
        const started = performance.now();
        void sleepAtLeast(200).then(() => resolve(performance.now() - started));
      });
    });
    expect(waited).toBeGreaterThanOrEqual(200);
  });

  const flaky = (failures: Array<Error | undefined>) => {
    const sent: string[] = [];
    const channel: ChannelPlugin = {
      id: 'chat',
      textLimit: 50,
      async send(message) {
        const failure = failures.shift();
        if (failure) throw failure;
        sent.push(message.text ?? '');
        return { messageId: String(sent.length) };
      },
    };
    return { channel, sent };
  };
  const deps = (channel: ChannelPlugin, delays: number[]) => ({
    hooks: new HookBus(),
    findChannel: async () => channel,
    retrySettings: () => ({ attempts: 3, minDelayMs: 400, maxDelayMs: 30_000, jitter: 0.1 }),
    textLimit: () => channel.textLimit,
    isChannel: () => true,
    sleep: async (ms: number) => void delays.push(ms),
  });

  it('waits retry_after on a rate limit, backs off on transient errors, and stops after 3 attempts', async () => {
    const delays: number[] = [];
    const { channel, sent } = flaky([
      new ChannelSendError('429', { retryAfterMs: 1200 }),
      new ChannelSendError('reset', { retryable: true }),
    ]);
    const result = await sendOutbound(deps(channel, delays), { channel: 'chat', to: 'u', text: 'hello' });
    expect(result).toMatchObject({ delivered: true, attempts: 3, messageIds: ['1'] });
    expect(sent).toEqual(['hello']);
    expect(delays[0]).toBe(1200);
    expect(delays[1]).toBeGreaterThanOrEqual(720);
    expect(delays[1]).toBeLessThanOrEqual(880);
    const failing = flaky([0, 1, 2].map(() => new ChannelSendError('down', { retryable: true })));
    const failed = await sendOutbound(deps(failing.channel, []), { channel: 'chat', to: 'u', text: 'x' });
    expect(failed).toMatchObject({ delivered: false, attempts: 3, error: 'down' });
  });

  it('does not retry a permanent failure', async () => {
    const { channel } = flaky([new ChannelSendError('bad request', { retryable: false })]);
    expect(await sendOutbound(deps(channel, []), { channel: 'chat', to: 'u', text: 'x' })).toMatchObject({
      delivered: false,
      attempts: 1,
    });
  });

  it('cuts text to the channel limit, paragraphs first, in order', async () => {
    const { channel, sent } = flaky([]);
    const text = ['first paragraph is here.', 'second paragraph is here.', 'third one.'].join('\n\n');
    const result = await sendOutbound(deps(channel, []), { channel: 'chat', to: 'u', text });
    expect(result.pieces).toBe(2);
    expect(sent).toEqual(['first paragraph is here.', 'second paragraph is here.\n\nthird one.']);
    for (const piece of sent) expect(piece.length).toBeLessThanOrEqual(50);
  });

  it('keeps a code fence whole when it fits, and closes/reopens one that does not', () => {
    const code = '```js\nconst a = 1;\nconst b = 2;\n```';
    const pieces = splitForChannel(`${'intro words here. '.repeat(3)}\n\n${code}\n\nafter`, 80);
    expect(pieces.some((piece) => piece.includes(code))).toBe(true);
    const big = '```py\n' + Array.from({ length: 30 }, (_, i) => `x${i} = ${i}`).join('\n') + '\n```';
    for (const piece of splitForChannel(big, 100)) {
      expect(piece.length).toBeLessThanOrEqual(100);
      expect((piece.match(/```/g) ?? []).length % 2).toBe(0);
    }
  });

  it('sends local media only from the workspace or media folder, whatever the model names', async () => {
    const root = tempDir();
    const workspace = join(root, 'workspace');
    const { mkdirSync, symlinkSync } = await import('node:fs');
    mkdirSync(workspace);
    writeFileSync(join(workspace, 'chart.png'), 'png');
    writeFileSync(join(root, 'secret.txt'), 'secret');
    symlinkSync(join(root, 'secret.txt'), join(workspace, 'innocent.png'));
    expect(
      refusedMedia(
        [join(workspace, 'chart.png'), 'https://example.com/a.png', 'data:image/png;base64,AAAA'],
        [workspace],
      ),
    ).toBeUndefined();
    expect(refusedMedia([join(root, 'secret.txt')], [workspace])).toMatch(/outside the workspace/);
    expect(refusedMedia([join(workspace, 'innocent.png')], [workspace])).toMatch(/outside the workspace/);
    expect(refusedMedia(['/etc/passwd'], [workspace])).toMatch(/outside the workspace/);
    expect(refusedMedia(['chart.png'], [workspace])).toMatch(/relative path/);
    expect(refusedMedia(['ftp://x/y'], [workspace])).toMatch(/scheme/);
    const { channel, sent } = flaky([]);
    const wide = { ...channel, textLimit: 200 };
    const result = await sendOutbound(
      { ...deps(wide, []), mediaRoots: [workspace] },
      { channel: 'chat', to: 'u', text: 'look', media: ['/etc/passwd', join(workspace, 'chart.png')] },
    );
    expect(result).toMatchObject({
      delivered: true,
      pieces: 2,
      mediaRefused: [expect.stringMatching(/"\/etc\/passwd" is outside the workspace/)],
    });
    // The text still goes, with a note that names the file but not where it is; the allowed attachment follows.
    expect(sent).toEqual(['look\n\n[attachment "passwd" not sent: it is outside the workspace]', '']);
  });

  it('computes backoff with jitter within bounds and honours the cap', () => {
    const settings = { attempts: 5, minDelayMs: 400, maxDelayMs: 1000, jitter: 0.1 };
    expect(retryDelay(1, settings, undefined, () => 0.5)).toBe(400);
    expect(retryDelay(2, settings, undefined, () => 1)).toBe(880);
    expect(retryDelay(4, settings, undefined, () => 0)).toBe(900);
    // retry_after beyond the backoff cap is still honoured (up to five minutes).
    expect(retryDelay(1, settings, new ChannelSendError('x', { retryAfterMs: 5000 }))).toBe(5000);
    expect(retryDelay(1, settings, new ChannelSendError('x', { retryAfterMs: 3_600_000 }))).toBe(300_000);
  });
});

describe('routing', () => {
  let kernel: TestKernel | undefined;
  afterEach(async () => {
    await kernel?.dispose();
    kernel = undefined;
  });

  async function boot(config: Record<string, unknown>) {
    const inbox: Array<(message: InboundMessage) => Promise<unknown>> = [];
    const channel = definePlugin({
      id: 'route-chat',
      register(api) {
        api.registerChannel({
          id: 'chat',
          textLimit: 1000,
          async start(ctx) {
            inbox.push((message) => ctx.receive(message));
          },
          async send() {
            return {};
          },
        });
      },
    });
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), channel, scriptedModel(() => 'ok')],
      config: {
        agents: {
          defaults: { model: 'scripted/x' },
          list: [{ id: 'main', default: true }, { id: 'work' }, { id: 'family' }],
        },
        messages: { queue: { debounceMs: 0 } },
        ...config,
      },
    });
    await kernel.start();
    return (message: Partial<InboundMessage> & { peer: InboundMessage['peer'] }) =>
      inbox[0]!({
        accountId: 'default',
        sender: { id: message.peer.id },
        text: 'hi',
        messageId: `${Math.random()}`,
        mentioned: true,
        ...message,
      }) as Promise<any>;
  }

  it('derives session keys per dmScope', async () => {
    for (const [dmScope, expected] of [
      ['main', 'agent:main:main'],
      ['per-peer', 'agent:main:dm:42'],
      ['per-channel-peer', 'agent:main:chat:dm:42'],
      ['per-account-channel-peer', 'agent:main:chat:default:dm:42'],
    ] as const) {
      const receive = await boot({ session: { dmScope }, channels: { chat: { dmPolicy: 'open', allowFrom: ['*'] } } });
      expect((await receive({ peer: { kind: 'direct', id: '42' } })).sessionKey, dmScope).toBe(expected);
      await kernel!.dispose();
      kernel = undefined;
    }
  });

  it('picks the agent by binding: peer, then account, then channel, then default', async () => {
    const receive = await boot({
      channels: { chat: { dmPolicy: 'open', allowFrom: ['*'], groupPolicy: 'open' } },
      session: { dmScope: 'per-peer' },
      bindings: [
        { agentId: 'family', match: { channel: 'chat', peer: { kind: 'group', id: 'g-home' } } },
        { agentId: 'work', match: { channel: 'chat' } },
      ],
    });
    expect((await receive({ peer: { kind: 'group', id: 'g-home' } })).sessionKey).toBe(
      'agent:family:chat:group:g-home',
    );
    expect((await receive({ peer: { kind: 'direct', id: '5' } })).sessionKey).toBe('agent:work:dm:5');
  });
});

describe('claw pairing and claw message send', () => {
  it('lists and approves pairing codes from the files, sends through a channel with or without a gateway, and refuses a misspelled one', async () => {
    const stateDir = tempDir();
    const access = new ChannelAccess(stateDir);
    const code = access.requestPairing('chat', 'default', { id: 'u9', name: 'Nine' })!.code;
    const outbox = join(stateDir, 'outbox.txt');
    const pluginDir = writePlugin(join(tempDir(), 'file-chat'), {
      manifest: {
        id: 'file-chat',
        channels: ['filechat'],
        configSchema: { type: 'object', additionalProperties: false, properties: {} },
      },
      code: `import { appendFileSync } from 'node:fs';
export default { id: 'file-chat', register(api) { api.registerChannel({ id: 'filechat', textLimit: 10, async send(m) { appendFileSync(${JSON.stringify(outbox)}, m.to + ':' + m.text + '\\n'); return {}; } }); } };`,
    });
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({ plugins: { load: { paths: [pluginDir] } }, channels: { filechat: {} } }),
    );
    const env = { OPENCLAW_STATE_DIR: stateDir };
    const list = await claw(['pairing', 'list'], env);
    expect(list.stdout).toMatch(new RegExp(`chat\\s+${code}\\s+from Nine \\(u9\\)`));
    const approve = await claw(['pairing', 'approve', 'chat', code], env);
    expect(approve).toMatchObject({
      code: 0,
      stdout: 'Approved Nine (u9) on chat. Their next message reaches the assistant.\n',
    });
    expect(JSON.parse(readFileSync(join(stateDir, 'credentials', 'chat-allowFrom.json'), 'utf8')).allowFrom).toEqual([
      'u9',
    ]);
    expect((await claw(['pairing', 'approve', 'chat', code], env)).code).toBe(2);
    const sent = await claw(['message', 'send', '--channel', 'filechat', '--to', 'bob', 'hello there world'], env);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toBe('Sent to filechat:bob in 3 messages.\n');
    expect(readFileSync(outbox, 'utf8')).toBe('bob:hello\nbob:there\nbob:world\n');
    const channels = JSON.parse((await claw(['channels', 'list', '--json'], env)).stdout);
    expect(channels.channels.find((channel: { id: string }) => channel.id === 'filechat')).toMatchObject({
      configured: true,
      pluginId: 'file-chat',
    });

    // A misspelled channel is an error naming the real ones, not "Sent" — here and through a gateway.
    const typo = await claw(['message', 'send', '--channel', 'filechta', '--to', 'bob', 'lost?'], env);
    expect(typo.code).toBe(2);
    expect(typo.stdout).toBe('');
    expect(typo.stderr).toMatch(/unknown channel "filechta": the channels are .*filechat/);
    await startCliGateway(env);
    const remote = await claw(['message', 'send', '--channel', 'filechta', '--to', 'bob', 'lost?'], env);
    expect(remote.code).toBe(1);
    expect(remote.stdout).toBe('');
    expect(remote.stderr).toMatch(/unknown channel "filechta"/);
    expect(await claw(['message', 'send', '--channel', 'filechat', '--to', 'bob', 'via gw'], env)).toMatchObject({
      code: 0,
      stdout: 'Sent to filechat:bob.\n',
    });
    expect(readFileSync(outbox, 'utf8')).toBe('bob:hello\nbob:there\nbob:world\nbob:via gw\n');
  }, 90_000);
});

describe('the channel choke point without plugins/channels', () => {
  it('says what is missing on send and receive; status and pairing are empty', async () => {
    const kernel = await createTestKernel();
    try {
      const channels = kernel.plugins.kernelServices.channels;
      await expect(channels.send({ channel: 'telegram', to: '1', text: 'hi' })).rejects.toThrow(
        /service "channels".*plugins\/channels/,
      );
      await expect(
        channels.receive('telegram', {
          accountId: 'default',
          peer: { kind: 'direct', id: '1' },
          sender: { id: '1' },
          text: 'hi',
          messageId: 'm1',
        }),
      ).rejects.toThrow(/plugins\/channels/);
      expect(await channels.status()).toEqual([]);
      expect(await channels.pairing.list()).toEqual([]);
    } finally {
      await kernel.dispose();
    }
  });
});

describe('a channel registered without a usable textLimit', () => {
  it('fails its sends with an error naming the channel, instead of cutting text forever', async () => {
    expect(() => splitForChannel('x'.repeat(50), Number.NaN)).toThrow(/text limit must be a positive number, got NaN/);
    const sent: string[] = [];
    const broken = definePlugin({
      id: 'no-limit-chat',
      register(api) {
        // A JavaScript plugin, unchecked by the compiler: no textLimit.
        api.registerChannel({
          id: 'nolimit',
          async send(message: { text: string }) {
            sent.push(message.text);
            return {};
          },
        } as never);
      },
    });
    const kernel = await createTestKernel({
      plugins: [...agentStackDirs(), broken],
      config: { channels: { nolimit: {} } },
    });
    try {
      await kernel.start();
      await expect(
        kernel.plugins.kernelServices.channels.send({ channel: 'nolimit', to: 'bob', text: 'y'.repeat(5000) }),
      ).rejects.toThrow(/channel "nolimit" has no valid textLimit \(got undefined\)/);
      expect(sent).toEqual([]);
    } finally {
      await kernel.dispose();
    }
  });
});
