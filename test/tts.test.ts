/**
 * Text-to-speech end to end: replies spoken by the real local voice (espeak-ng) or an
 * OpenAI-/ElevenLabs-compatible fake on 127.0.0.1, converted by the real ffmpeg, and handed to
 * the real Telegram plugin, whose Bot API fake receives the voice note (checked with ffprobe).
 * Then /tts per session, inbound and tagged modes, what WhatsApp and other channels get, and
 * a failing provider that leaves the text reply and nothing on disk.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { definePlugin, type ModelRequest } from '../sdk/index.js';
import {
  agentStackDirs,
  createTestKernel,
  lastUserText,
  scriptedModel,
  type ScriptedAnswer,
  type TestKernel,
} from '../sdk/testing.js';
import { useService } from '../sdk/services.js';
import { applicationCommands } from '../plugins/channel-discord/commands.js';
import { parseInteraction } from '../plugins/channel-discord/inbound.js';
import { createWhatsAppPlugin } from '../plugins/channel-whatsapp/index.js';
import { parseDirectives } from '../plugins/tts/directives.js';
import { FakeDiscord } from './fakes/discord.js';
import { FakeSpeechServer, spokenMp3 } from './fakes/speech-server.js';
import { FakeTelegramApi, type TelegramCall } from './fakes/telegram-api.js';
import { FakeWhatsApp } from './fakes/whatsapp-socket.js';
import { tempDir, waitFor } from './helpers.js';

const TELEGRAM = fileURLToPath(new URL('../plugins/channel-telegram/', import.meta.url));
const DISCORD = fileURLToPath(new URL('../plugins/channel-discord/', import.meta.url));
const TTS = fileURLToPath(new URL('../plugins/tts/', import.meta.url));
const ESPEAK = { command: 'espeak-ng', args: ['-w', '{{OutputPath}}', '{{Text}}'], outputFormat: 'wav' };
const ADA = { id: 1001, first_name: 'Ada' };
const BOB = { id: 1002, first_name: 'Bob' };

const api = new FakeTelegramApi();
const speech = new FakeSpeechServer();
let kernel: TestKernel | undefined;
let respond: (request: ModelRequest) => ScriptedAnswer = (request) => `You said: ${lastUserText(request)}`;
const sent: Array<{ content: string; success: boolean }> = [];
const recorder = definePlugin({
  id: 'tts-test-recorder',
  register(plugin) {
    plugin.on('message_sent', (event) => void sent.push({ content: event.content, success: event.success }));
  },
});

async function boot(config: Record<string, unknown>, extra: { plugins?: unknown[] } = {}): Promise<TestKernel> {
  await kernel?.dispose();
  kernel = await createTestKernel({
    plugins: [
      ...agentStackDirs(),
      TELEGRAM,
      TTS,
      scriptedModel((request) => respond(request)),
      recorder,
      ...((extra.plugins ?? []) as never[]),
    ],
    config: {
      agents: { defaults: { model: 'scripted/echo' } },
      messages: { queue: { debounceMs: 0 } },
      channels: {
        telegram: { botToken: api.token, apiRoot: api.apiRoot, dmPolicy: 'allowlist', allowFrom: ['1001', '1002'] },
      },
      ...config,
    },
  });
  await kernel.start();
  return kernel;
}

const say = (text: string, from = ADA, extra: Record<string, unknown> = {}) =>
  api.pushUpdate({ message: api.message({ chatId: from.id, from, text, ...extra }) });
const answered = (chat: number, method: string, what: string) =>
  api.waitFor(
    (call) => call.status === 200 && call.method === method && String(call.params.chat_id) === String(chat),
    15_000,
    what,
  );
/** Every message that went to `chat` so far, once `count` of them have been answered. */
const settled = async (count: number) => {
  await waitFor(() => sent.length >= count || undefined, { what: `${count} finished deliveries`, timeoutMs: 15_000 });
};
/** The bot's text messages still up in `chat` (live preview pages come and go), as they read now. */
const textsUp = (chat: number) =>
  api
    .sent()
    .filter((call) => call.method === 'sendMessage' && String(call.params.chat_id) === String(chat))
    .map((call) => api.textOf(chat, Number(call.result.message_id)))
    .filter((text): text is string => text !== undefined);
const ttsFiles = () => {
  const dir = join(kernel!.paths.stateDir, 'media', 'tts');
  return existsSync(dir) ? readdirSync(dir) : [];
};

/** ffprobe's view of the bytes the fake received. */
function probe(call: TelegramCall): {
  format: string;
  codec: string;
  channels: number;
  rate: number;
  duration: number;
} {
  const file = join(tempDir('tts-probe-'), 'voice.ogg');
  writeFileSync(file, call.files.voice!.data);
  const out = JSON.parse(
    execFileSync(
      'ffprobe',
      [
        '-v',
        'error',
        '-show_entries',
        'format=format_name,duration:stream=codec_name,channels,sample_rate',
        '-of',
        'json',
        file,
      ],
      {
        encoding: 'utf8',
      },
    ),
  ) as {
    format: { format_name: string; duration: string };
    streams: Array<{ codec_name: string; channels: number; sample_rate: string }>;
  };
  return {
    format: out.format.format_name,
    codec: out.streams[0]!.codec_name,
    channels: out.streams[0]!.channels,
    rate: Number(out.streams[0]!.sample_rate),
    duration: Number(out.format.duration),
  };
}

/** The first stream's codec, as ffprobe reads the bytes. */
function codecOf(data: Buffer, name: string): string {
  const file = join(tempDir('tts-probe-'), name);
  writeFileSync(file, data);
  return execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', file], {
    encoding: 'utf8',
  }).trim();
}

describe('text-to-speech replies', () => {
  beforeAll(async () => {
    await api.start();
    await speech.start();
  });
  afterAll(async () => {
    await kernel?.dispose();
    await api.stop();
    await speech.stop();
  });
  beforeEach(async () => {
    await kernel?.dispose();
    kernel = undefined;
    api.reset();
    speech.calls.length = 0;
    sent.length = 0;
    respond = (request) => `You said: ${lastUserText(request)}`;
  });

  it('auto "always" with the local CLI voice: Telegram gets an Ogg/Opus voice note with the text as caption', async () => {
    await boot({ tts: { auto: 'always', provider: 'tts-local-cli', providers: { 'tts-local-cli': ESPEAK } } });
    await say('tell me about the weather');
    const voice = await answered(ADA.id, 'sendVoice', 'the voice note');
    expect(voice.params.caption).toContain('You said: tell me about the weather');
    const audio = probe(voice);
    expect(audio).toMatchObject({ format: 'ogg', codec: 'opus', channels: 1, rate: 48000 });
    expect(audio.duration).toBeGreaterThan(0.5);
    // The caption carried the text: no text message stays (a live preview page, if the reply
    // took long enough to get one, is taken down once the voice note is out).
    await settled(1);
    await waitFor(() => textsUp(ADA.id).length === 0 || undefined, { what: 'no text message left up' });
    await waitFor(() => ttsFiles().length === 0 || undefined, { what: 'the sent voice file removed' });
  });

  it('the OpenAI-compatible provider (messages.tts, models.providers.openai) → converted → sendVoice', async () => {
    speech.answer = { audio: spokenMp3('the answer is forty two'), contentType: 'audio/mpeg' };
    await boot({
      models: { providers: { openai: { baseUrl: `${speech.baseUrl}/v1`, apiKey: 'sk-test-openai' } } },
      messages: {
        queue: { debounceMs: 0 },
        tts: { auto: 'always', provider: 'openai', providers: { openai: { speakerVoice: 'alloy' } } },
      },
    });
    await say('what is the answer?');
    const voice = await answered(ADA.id, 'sendVoice', 'the voice note');
    expect(speech.calls).toHaveLength(1);
    expect(speech.calls[0]).toMatchObject({
      path: '/v1/audio/speech',
      headers: { authorization: 'Bearer sk-test-openai' },
      body: {
        model: 'gpt-4o-mini-tts',
        voice: 'alloy',
        response_format: 'opus',
        input: 'You said: what is the answer?',
      },
    });
    expect(probe(voice)).toMatchObject({ format: 'ogg', codec: 'opus', rate: 48000 });
    expect(probe(voice).duration).toBeGreaterThan(0.5);
  });

  it('the ElevenLabs-compatible provider: voice id in the path, key in xi-api-key, Opus asked for', async () => {
    speech.answer = { audio: spokenMp3('eleven voices'), contentType: 'audio/mpeg' };
    await boot({
      tts: {
        auto: 'always',
        provider: 'elevenlabs',
        providers: { elevenlabs: { baseUrl: speech.baseUrl, apiKey: 'xi-test', speakerVoiceId: 'voice123' } },
      },
    });
    await say('read it to me');
    const voice = await answered(ADA.id, 'sendVoice', 'the voice note');
    expect(speech.calls[0]).toMatchObject({
      path: '/v1/text-to-speech/voice123',
      query: { output_format: 'opus_48000_64' },
      headers: { 'xi-api-key': 'xi-test' },
      body: { text: 'You said: read it to me', model_id: 'eleven_multilingual_v2' },
    });
    expect(probe(voice).codec).toBe('opus');
  });

  it('channels.<id>.tts deep-merges over tts: Telegram speaks while the default is off', async () => {
    await boot({
      tts: { auto: 'off', provider: 'tts-local-cli', providers: { 'tts-local-cli': ESPEAK } },
      channels: {
        telegram: {
          botToken: api.token,
          apiRoot: api.apiRoot,
          dmPolicy: 'allowlist',
          allowFrom: ['1001'],
          tts: { auto: 'always' },
        },
      },
    });
    await say('per channel, please');
    expect(probe(await answered(ADA.id, 'sendVoice', 'the voice note')).codec).toBe('opus');
  });

  it('/tts on|off|always|status is kept per session', async () => {
    // Each DM its own session (the default puts every DM in the main session).
    await boot({
      session: { dmScope: 'per-channel-peer' },
      tts: { provider: 'tts-local-cli', providers: { 'tts-local-cli': ESPEAK } },
    });
    await say('/tts status');
    expect((await answered(ADA.id, 'sendMessage', 'the status')).params.text).toMatch(
      /TTS off \(config\).*tts-local-cli/,
    );
    await say('/tts on');
    await api.waitFor((call) => String(call.params.text).includes('TTS for this chat: always'), 5000, '/tts on');
    await say('first question for voice');
    await answered(ADA.id, 'sendVoice', "Ada's voice reply");
    // Bob's chat is its own session: still text.
    await say('bob asks something', BOB);
    await api.waitFor((call) => String(call.params.text).includes('You said: bob asks'), 10_000, "Bob's text reply");
    expect(
      api.sent().filter((call) => call.method === 'sendVoice' && String(call.params.chat_id) === String(BOB.id)),
    ).toHaveLength(0);
    await say('/tts off');
    await api.waitFor((call) => String(call.params.text).includes('TTS for this chat: off'), 5000, '/tts off');
    api.reset();
    await say('second question, text please');
    await api.waitFor(
      (call) => String(call.params.text).includes('You said: second question'),
      10_000,
      'the text reply',
    );
    expect(api.sent().filter((call) => call.method === 'sendVoice')).toHaveLength(0);
    await say('/tts always');
    await say('/tts status');
    await api.waitFor((call) => /TTS always \(this chat\)/.test(String(call.params.text)), 5000, 'the status');
    // A one-off voice note, whatever the mode.
    await say('/tts audio Hello there, this is a one-off note.');
    const oneOff = await api.waitFor(
      (call) => call.method === 'sendVoice' && call.params.caption === '🔊',
      10_000,
      'the /tts audio voice note',
    );
    expect(probe(oneOff).duration).toBeGreaterThan(0.5);
    await say('/tts sometimes');
    await api.waitFor((call) => String(call.params.text).includes('not "sometimes"'), 5000, 'the refusal');
  });

  it('inbound mode answers a voice note with voice and a text message with text', async () => {
    await boot({ tts: { auto: 'inbound', provider: 'tts-local-cli', providers: { 'tts-local-cli': ESPEAK } } });
    const note = api.addFile(Buffer.from('OggS fake voice'), { path: 'voice/file_1.oga' });
    await api.pushUpdate({
      message: api.message({
        chatId: ADA.id,
        from: ADA,
        extra: {
          voice: {
            file_id: note.fileId,
            file_unique_id: note.uniqueId,
            duration: 2,
            mime_type: 'audio/ogg',
            file_size: 15,
          },
        },
      }),
    });
    await answered(ADA.id, 'sendVoice', 'the voice answer to a voice note');
    await settled(1);
    api.reset();
    await say('and now in writing');
    await api.waitFor(
      (call) => String(call.params.text).includes('You said: and now in writing'),
      10_000,
      'the text reply',
    );
    await settled(2);
    expect(api.sent().filter((call) => call.method === 'sendVoice')).toHaveLength(0);
  });

  it('tagged mode speaks only replies with a directive, and the directives never show', async () => {
    await boot({ tts: { auto: 'tagged', provider: 'tts-local-cli', providers: { 'tts-local-cli': ESPEAK } } });
    respond = (request) =>
      lastUserText(request).includes('sing')
        ? 'Here is your song. [[tts:speed=1.1]]\n[[tts:text]]La la la, a little song for you.[[/tts:text]]'
        : 'Plain words only, nothing spoken.';
    await say('sing for me');
    const voice = await answered(ADA.id, 'sendVoice', 'the tagged voice reply');
    expect(voice.params.caption).toBe('Here is your song.');
    await say('just talk');
    await api.waitFor((call) => String(call.params.text).includes('Plain words only'), 10_000, 'the untagged reply');
    await settled(2);
    expect(api.sent().filter((call) => call.method === 'sendVoice')).toHaveLength(1);
    expect(textsUp(ADA.id)).toEqual(['Plain words only, nothing spoken.']);
    expect(
      api
        .sent()
        .filter((call) => call.method === 'sendVoice')
        .map((call) => call.params.caption),
    ).toEqual(['Here is your song.']);

    expect(parseDirectives('a [[tts]] b')).toMatchObject({ tagged: true, visible: 'a b' });
    expect(parseDirectives('x [[tts:voice=nova model=tts-1 bogus]] y')).toMatchObject({
      overrides: { speakerVoice: 'nova', model: 'tts-1' },
      unknown: ['bogus'],
    });
  });

  it('a provider failing with HTTP 500: the text reply goes, a warning says why, nothing is left on disk', async () => {
    speech.answer = { status: 500, body: '{"error":"boom"}' };
    await boot({
      tts: {
        auto: 'always',
        provider: 'openai',
        providers: { openai: { baseUrl: `${speech.baseUrl}/v1`, apiKey: 'sk-x' } },
      },
    });
    await say('are you there?');
    await api.waitFor(
      (call) => String(call.params.text).includes('You said: are you there?'),
      15_000,
      'the text reply',
    );
    await settled(1);
    expect(api.sent().filter((call) => call.method === 'sendVoice')).toHaveLength(0);
    const warning = kernel!.logs.find((record) => record.level === 'warn' && record.message.startsWith('tts:'));
    expect(warning?.message).toMatch(/no voice reply, the text goes alone: openai: the speech API answered HTTP 500/);
    expect(ttsFiles()).toEqual([]);
    const tmp = join(kernel!.paths.stateDir, 'tmp', 'tts');
    expect(existsSync(tmp) ? readdirSync(tmp) : []).toEqual([]);
    expect(kernel!.logs.map((record) => record.message).join('\n')).not.toContain('sk-x');
  });

  it('WhatsApp (its socket fake) gets a PTT voice note with the text apart; Discord (its fake) an MP3 file', async () => {
    const wa = new FakeWhatsApp();
    const stateDir = tempDir('tts-wa-');
    const auth = join(stateDir, 'credentials', 'whatsapp', 'default');
    mkdirSync(auth, { recursive: true, mode: 0o700 });
    writeFileSync(join(auth, 'creds.json'), wa.linkedCreds(), { mode: 0o600 });
    await kernel?.dispose();
    kernel = await createTestKernel({
      stateDir,
      plugins: [
        ...agentStackDirs(),
        createWhatsAppPlugin({ socketFactory: wa.factory, sendWaitMs: 3000 }),
        TTS,
        scriptedModel((request) => respond(request)),
      ],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 } },
        channels: { whatsapp: { dmPolicy: 'allowlist', allowFrom: ['+4915112345678'] } },
        tts: { auto: 'always', provider: 'tts-local-cli', providers: { 'tts-local-cli': ESPEAK } },
      },
    });
    await kernel.start();
    await waitFor(() => wa.current?.user, { what: 'the WhatsApp socket to open' });
    wa.deliver(wa.dm('4915112345678@s.whatsapp.net', 'speak to me on whatsapp'));
    const note = await waitFor(() => wa.sent.find((item) => 'audio' in item.content), { what: 'the PTT note' });
    expect(note.content).toMatchObject({ ptt: true, mimetype: 'audio/ogg; codecs=opus' });
    expect(codecOf((note.content as { audio: Buffer }).audio, 'ptt.ogg')).toBe('opus');
    expect(wa.sentTexts('4915112345678@s.whatsapp.net')).toContain('You said: speak to me on whatsapp');
    await kernel.dispose();

    const discord = new FakeDiscord();
    await discord.start();
    try {
      const OWNER = '200000000000000001';
      const dm = discord.dmChannelFor(OWNER);
      kernel = await createTestKernel({
        plugins: [...agentStackDirs(), DISCORD, TTS, scriptedModel((request) => respond(request))],
        config: {
          agents: { defaults: { model: 'scripted/echo' } },
          messages: { queue: { debounceMs: 0 } },
          channels: { discord: { token: discord.token, dmPolicy: 'allowlist', allowFrom: [OWNER] } },
          tts: { auto: 'always', provider: 'tts-local-cli', providers: { 'tts-local-cli': ESPEAK } },
        },
        env: { DISCORD_API_URL: discord.apiUrl },
      });
      await kernel.start();
      await waitFor(() => discord.gatewayOps.some((op) => op.op === 2) || undefined, { what: 'the Discord login' });
      discord.dispatch(
        'MESSAGE_CREATE',
        discord.userMessage({ authorId: OWNER, channel: dm, content: 'speak on discord' }),
      );
      const upload = await waitFor(() => discord.sent().find((sent) => sent.files.length > 0), {
        what: 'the audio upload',
      });
      expect(upload.files[0]!.name).toMatch(/\.mp3$/);
      expect(codecOf(upload.files[0]!.data, 'reply.mp3')).toBe('mp3');
      expect(discord.sent().some((sent) => sent.content.includes('You said: speak on discord'))).toBe(true);
      // Discord's client has its own /tts: the command is offered as /voice and arrives as /tts.
      const native = applicationCommands([{ name: 'tts', pluginId: 'tts' }]) as Array<{ name: string }>;
      expect(native.map((command) => command.name)).toContain('voice');
      expect(native.map((command) => command.name)).not.toContain('tts');
      const invoked = { type: 2, id: '1', token: 't', channel_id: dm.id, user: { id: OWNER } };
      expect(parseInteraction({ ...invoked, data: { name: 'voice', options: [{ value: 'on' }] } })?.text).toBe(
        '/tts on',
      );
    } finally {
      await kernel?.dispose();
      kernel = undefined;
      await discord.stop();
    }
  });

  it("the tts tool speaks into the reply even with auto off; tts.* methods answer in OpenClaw's shape", async () => {
    respond = (request) =>
      request.messages.some((message) => message.role === 'toolResult')
        ? 'Here is the audio you asked for.'
        : { toolCalls: [{ name: 'tts', arguments: { text: 'A short spoken greeting for you.' } }] };
    await boot({ tts: { provider: 'tts-local-cli', providers: { 'tts-local-cli': ESPEAK } } });
    await say('say hello out loud');
    const voice = await answered(ADA.id, 'sendVoice', 'the voice note from the tool');
    expect(voice.params.caption).toBe('Here is the audio you asked for.');
    expect(probe(voice).codec).toBe('opus');

    const method = async (name: string, params: Record<string, unknown> = {}) =>
      (await kernel!.capabilities.get('gatewayMethod', name)).handler(params, {} as never) as Promise<
        Record<string, any>
      >;
    expect(await method('tts.status')).toMatchObject({
      enabled: false,
      auto: 'off',
      provider: 'tts-local-cli',
      providerStates: expect.arrayContaining([{ provider: 'tts-local-cli', configured: true, ready: true }]),
    });
    await method('tts.enable');
    expect(await method('tts.status')).toMatchObject({ enabled: true, auto: 'always' });
    const converted = await method('tts.convert', { text: 'convert me please', channel: 'telegram' });
    expect(converted).toMatchObject({ provider: 'tts-local-cli', outputFormat: 'opus', voiceCompatible: true });
    expect(existsSync(converted.audioPath)).toBe(true);
    await expect(method('tts.convert', { text: 'x'.repeat(5000) })).rejects.toThrow(/longer than tts.maxTextLength/);
    // Text is never taken for an option of the command ("--version" would print and make no audio).
    expect(await method('tts.convert', { text: '--version is what I said', channel: 'telegram' })).toMatchObject({
      provider: 'tts-local-cli',
    });
    await expect(method('tts.setProvider', { provider: 'microsoft' })).rejects.toThrow(/not installed/);

    // A surface that cannot upload a file (here the gateway's own transport) gets the text only.
    const handed: Array<{ text: string; media: string[] }> = [];
    const agent = await useService<{ dispatch(input: unknown): Promise<{ done: Promise<unknown> }> }>(kernel!, 'agent');
    respond = () => 'A reply for a surface without files.';
    const run = await agent!.dispatch({
      message: 'hello gateway',
      sessionKey: 'agent:main:main',
      deliver: {
        channel: 'gateway',
        to: 'ui',
        send: async (payload: { text: string; media: string[] }) => void handed.push(payload),
      },
    });
    await run.done;
    await waitFor(() => handed.length > 0 || undefined, { what: 'the gateway reply' });
    expect(handed).toEqual([expect.objectContaining({ text: 'A reply for a surface without files.', media: [] })]);
  });

  it('checks the settings: a bad value is refused by path, an OpenClaw key claw lacks is named when it loads', async () => {
    // The plugin is not loaded at start (an idle gateway pays nothing for it): it loads with the
    // first message, /tts or tts.* call. Asking for its service does the same here.
    const load = () => kernel!.capabilities.find('service', 'tts').catch(() => undefined);
    // The plugin fails (the rest of claw runs), naming the path.
    await boot({ tts: { auto: 'sometimes' } });
    expect(kernel!.issues().map((issue) => `${issue.path}: ${issue.message}`)).toEqual([
      expect.stringMatching(/^tts\.auto: must be one of/),
    ]);
    await boot({ messages: { queue: { debounceMs: 0 }, tts: { timeoutMs: -1 } } });
    await load();
    expect(kernel!.logs.map((record) => record.message)).toContain(
      'register() threw: invalid text-to-speech settings: messages.tts.timeoutMs must be >= 1',
    );
    await boot({
      channels: {
        telegram: { botToken: api.token, apiRoot: api.apiRoot, tts: { auto: 'loud' } },
      },
    });
    await load();
    expect(kernel!.logs.map((record) => record.message)).toContainEqual(
      expect.stringMatching(
        /^register\(\) threw: invalid text-to-speech settings: channels\.telegram\.tts\.auto must be/,
      ),
    );
    await boot({ tts: { auto: 'off', personas: { calm: {} }, providers: { microsoft: { enabled: true } } } });
    expect(kernel!.plugins.get('tts')?.status).not.toBe('active');
    await load();
    const warnings = kernel!.logs.filter((record) => record.level === 'warn').map((record) => record.message);
    expect(warnings).toEqual(
      expect.arrayContaining([
        'tts: tts.personas is an OpenClaw setting claw does not implement; ignored',
        'tts: tts.providers.microsoft names a speech provider claw does not have; ignored',
      ]),
    );
  });
});
