/**
 * The media step (plugins/media-understanding, issue 36) end to end: a real spoken voice note
 * through the real Telegram plugin and its Bot API fake, transcribed by a fake
 * OpenAI-compatible server that ffprobes what it gets; a real PDF through the Discord fake;
 * oversized files refused with nothing half-stored; video frames with ffmpeg; a CLI
 * transcriber; images resized with sharp; and the pdf tool through the kernel's choke point.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_UNDERSTANDING_SERVICE, type MediaUnderstandingService, type ModelRequest } from '../sdk/index.js';
import { useService } from '../sdk/services.js';
import {
  agentStackDirs,
  bundledPluginDir,
  createTestKernel,
  lastUserText,
  scriptedModel,
  type ScriptedAnswer,
  type TestKernel,
} from '../sdk/testing.js';
import { FakeDiscord } from './fakes/discord.js';
import { FakeTelegramApi } from './fakes/telegram-api.js';
import { tempDir, waitFor } from './helpers.js';
import { FakeTranscriber, makePdf, makeVideo, makeVoiceNote } from './media-fixtures.js';

const MEDIA = bundledPluginDir('media-understanding');
const TELEGRAM = bundledPluginDir('channel-telegram');
const DISCORD = bundledPluginDir('channel-discord');
const SPOKEN = 'Please water the tomatoes at six.';
const TRANSCRIPT = 'please water the tomatoes at six';

let kernel: TestKernel | undefined;
const requests: ModelRequest[] = [];
let answer: (request: ModelRequest) => ScriptedAnswer = (request) => `echo: ${lastUserText(request)}`;
const model = () => scriptedModel((request) => (requests.push(request), answer(request)));
const until = (check: () => boolean, what: string, timeoutMs = 15_000) => waitFor(check, { what, timeoutMs });

afterEach(async () => {
  await kernel?.dispose();
  kernel = undefined;
  requests.length = 0;
  answer = (request) => `echo: ${lastUserText(request)}`;
});

/** Every file under `dir` (recursively). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name));
}

describe('media step through the Telegram channel', () => {
  const api = new FakeTelegramApi();
  const transcriber = new FakeTranscriber({ checkAudio: true });
  const ADA = { id: 1001, first_name: 'Ada' };
  let voice: Buffer;

  beforeAll(async () => {
    voice = makeVoiceNote(SPOKEN);
    await api.start();
    await transcriber.start();
  });
  afterAll(async () => {
    await kernel?.dispose();
    kernel = undefined;
    await api.stop();
    await transcriber.stop();
  });
  afterEach(() => {
    api.reset();
    transcriber.calls.length = 0;
  });

  const boot = async (media: Record<string, unknown> = {}, telegram: Record<string, unknown> = {}) => {
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), TELEGRAM, MEDIA, model()],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 } },
        models: { providers: { openai: { baseUrl: transcriber.baseUrl, apiKey: 'sk-test-transcribe' } } },
        tools: {
          media: { models: [{ provider: 'openai', model: 'whisper-1', capabilities: ['audio'] }], ...media },
        },
        channels: {
          telegram: {
            botToken: api.token,
            apiRoot: api.apiRoot,
            dmPolicy: 'allowlist',
            allowFrom: ['1001'],
            ...telegram,
          },
        },
      },
    });
    await kernel.start();
    return kernel;
  };
  const sendVoice = (data: Buffer, fileSize: number | null = data.length) => {
    const file = api.addFile(data, { path: 'voice/file_7.oga' });
    return api.pushUpdate({
      message: api.message({
        chatId: ADA.id,
        from: ADA,
        caption: 'for the garden',
        extra: {
          voice: {
            file_id: file.fileId,
            file_unique_id: file.uniqueId,
            duration: 2,
            mime_type: 'audio/ogg',
            ...(fileSize !== null ? { file_size: fileSize } : {}),
          },
        },
      }),
    });
  };
  const replyTo = (what: string) =>
    api.waitFor(
      (call) => call.status === 200 && call.method === 'sendMessage' && call.params.chat_id === ADA.id,
      15_000,
      what,
    );

  it('transcribes a spoken voice note, answers it, and keeps the transcript in the session', async () => {
    expect(voice.subarray(0, 4).toString('latin1')).toBe('OggS');
    const k = await boot({ audio: { language: 'en' } });
    answer = (request) =>
      lastUserText(request).includes(TRANSCRIPT) ? 'I will water them at six.' : 'I heard nothing';
    transcriber.transcript = TRANSCRIPT;
    await sendVoice(voice);
    const sent = await replyTo('the answer to the voice note');
    expect(sent.params.text).toBe('I will water them at six.');

    // The fake got a real Opus recording (ffprobe), with the model, language and key from config.
    expect(transcriber.calls).toHaveLength(1);
    expect(transcriber.calls[0]).toMatchObject({
      model: 'whisper-1',
      language: 'en',
      authorization: 'Bearer sk-test-transcribe',
      probed: { codec: 'opus', type: 'audio' },
    });
    expect(transcriber.calls[0]!.bytes).toBe(voice.length);

    const seen = lastUserText(requests[0]!);
    expect(seen).toContain('for the garden');
    expect(seen).toMatch(/\[Audio "[^"]+"\]\nTranscript: please water the tomatoes at six/);

    const transcripts = filesUnder(k.stateDir).filter((file) => file.endsWith('.jsonl'));
    const stored = transcripts.map((file) => readFileSync(file, 'utf8')).join('\n');
    expect(stored).toContain(`Transcript: ${TRANSCRIPT}`);
    const saved = filesUnder(join(k.stateDir, 'media', 'telegram'));
    expect(saved).toHaveLength(1);
    expect(statSync(saved[0]!).mode & 0o777).toBe(0o600);
  }, 60_000);

  it('refuses a voice note over tools.media.audio.maxBytes before any provider call', async () => {
    await boot({ audio: { maxBytes: 2048 } });
    await sendVoice(voice);
    await replyTo('the answer');
    const seen = lastUserText(requests[0]!);
    expect(seen).toMatch(
      /\[Audio "[^"]+" refused: \d+ KB is over the 2 KB limit for audio \(tools\.media\.audio\.maxBytes\)\]/,
    );
    expect(transcriber.calls).toHaveLength(0);
  }, 60_000);

  it('refuses a file over the channel limit while downloading, leaving no partial file', async () => {
    // No file_size in the update: the download itself must stop at the limit.
    const k = await boot({}, { mediaMaxMb: 0.01 });
    const big = Buffer.concat([voice, Buffer.alloc(20_000, 1)]);
    await sendVoice(big, null);
    await replyTo('the answer');
    expect(lastUserText(requests[0]!)).toMatch(
      /\[voice not downloaded: larger than 0\.01 MB \(channels\.telegram\.mediaMaxMb\)\]/,
    );
    expect(filesUnder(join(k.stateDir, 'media'))).toEqual([]);
    expect(transcriber.calls).toHaveLength(0);
  }, 60_000);

  it('treats audio under 1 KB as empty and says so without calling the provider', async () => {
    await boot();
    await sendVoice(voice.subarray(0, 600));
    await replyTo('the answer');
    expect(lastUserText(requests[0]!)).toContain('Transcript: (empty: the recording is under 1024 bytes');
    expect(transcriber.calls).toHaveLength(0);
  }, 60_000);
});

describe('media step through the Discord channel', () => {
  const fake = new FakeDiscord({ heartbeatIntervalMs: 1000 });
  const OWNER = '200000000000000001';
  beforeAll(() => fake.start());
  afterAll(async () => {
    await kernel?.dispose();
    kernel = undefined;
    await fake.stop();
  });

  it('reads a PDF sent in a DM: its text reaches the model, fenced as external content', async () => {
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), DISCORD, MEDIA, model()],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 } },
        channels: { discord: { token: fake.token, dmPolicy: 'allowlist', allowFrom: [OWNER] } },
      },
      env: { DISCORD_API_URL: fake.apiUrl },
    });
    await kernel.start();
    const pdf = makePdf(['Quarterly revenue grew 12 percent.', 'Costs fell (slightly) in March.']);
    const dm = fake.dmChannelFor(OWNER);
    fake.dispatch(
      'MESSAGE_CREATE',
      fake.userMessage({
        authorId: OWNER,
        channel: dm,
        content: 'what does the report say?',
        attachments: [fake.attachment('report.pdf', pdf, 'application/pdf')],
      }),
    );
    await until(() => requests.length > 0, 'the model request');
    const seen = lastUserText(requests[0]!);
    expect(seen).toContain('what does the report say?');
    expect(seen).toContain('[Document "report.pdf" (PDF, 2 pages)]');
    expect(seen).toContain('Quarterly revenue grew 12 percent.');
    expect(seen).toContain('Costs fell (slightly) in March.');
    expect(seen).toMatch(
      /<<<EXTERNAL_UNTRUSTED_CONTENT id="\w+">>>[\s\S]*<<<END_EXTERNAL_UNTRUSTED_CONTENT id="\w+">>>/,
    );
    await until(() => fake.sent().some((sent) => sent.content.startsWith('echo:')), 'the reply');
  }, 60_000);
});

describe('media step, called as the agent calls it', () => {
  const boot = async (media: Record<string, unknown> = {}) => {
    kernel = await createTestKernel({ plugins: [MEDIA], config: { tools: { media } } });
    await kernel.start();
    const service = (await useService<MediaUnderstandingService>(kernel, MEDIA_UNDERSTANDING_SERVICE))!;
    const dir = join(kernel.stateDir, 'media', 'test');
    mkdirSync(dir, { recursive: true });
    const save = (name: string, data: Buffer) => {
      writeFileSync(join(dir, name), data, { mode: 0o600 });
      return join(dir, name);
    };
    const prepare = (
      attachments: Array<{ url: string; mimeType?: string; fileName?: string }>,
      text = 'see attached',
    ) => service.prepare({ agentId: 'main', sessionKey: 'agent:main:test', text, attachments });
    return { service, save, prepare };
  };

  it('samples frames from a video with ffmpeg and passes them as images', async () => {
    const { save, prepare } = await boot();
    const path = save('clip.mp4', makeVideo(1));
    const out = await prepare([{ url: path, mimeType: 'video/mp4', fileName: 'clip.mp4' }]);
    expect(out.text).toMatch(
      /\[Video "clip\.mp4"\] 1\.0 s long; 4 frames attached as images \(at 0\.1 s, 0\.4 s, 0\.6 s, 0\.9 s\)/,
    );
    expect(out.images).toHaveLength(4);
    const sharp = (await import('sharp')).default;
    for (const image of out.images) {
      expect(image.mimeType).toBe('image/jpeg');
      const meta = await sharp(Buffer.from(image.data, 'base64')).metadata();
      expect([meta.width, meta.height]).toEqual([320, 240]);
    }
  }, 60_000);

  it('transcribes with a CLI entry run without a shell, templates filled in', async () => {
    const dir = tempDir();
    const script = join(dir, 'fake-whisper.mjs');
    // Stands in for whisper.cpp: reads the file, writes "<OutputBase>.txt" as `-otxt -of` does.
    writeFileSync(
      script,
      [
        "import { readFileSync, writeFileSync } from 'node:fs';",
        'const [, , file, out, language, weird] = process.argv;',
        "const head = readFileSync(file).subarray(0, 4).toString('latin1');",
        "writeFileSync(out + '.txt', `cli heard ${head} in ${language}; literal ${weird}\\n`);",
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    const { save, prepare } = await boot({
      models: [
        {
          type: 'cli',
          command: process.execPath,
          args: [script, '{{AttachmentPath}}', '{{OutputBase}}', '{{Language}}', '$(touch /tmp/pwned) ; |'],
          capabilities: ['audio'],
        },
      ],
      audio: { language: 'de' },
    });
    const path = save('memo.ogg', makeVoiceNote('one two three'));
    const out = await prepare([{ url: path, mimeType: 'audio/ogg', fileName: 'memo.ogg' }], 'memo');
    expect(out.text).toBe(
      'memo\n\n[Audio "memo.ogg"]\nTranscript: cli heard OggS in de; literal $(touch /tmp/pwned) ; |',
    );
  }, 60_000);

  it('falls through a failing entry to the next, and notes a CLI that times out', async () => {
    const dir = tempDir();
    const slow = join(dir, 'slow.mjs');
    writeFileSync(slow, 'setTimeout(() => {}, 10_000);');
    const { save, prepare } = await boot({
      models: [
        {
          type: 'cli',
          command: process.execPath,
          args: [slow, '{{AttachmentPath}}'],
          capabilities: ['audio'],
          timeoutSeconds: 0.5,
        },
        { type: 'cli', command: '/nonexistent/whisper', args: ['{{AttachmentPath}}'], capabilities: ['audio'] },
      ],
    });
    const path = save('memo.ogg', Buffer.alloc(4096, 7));
    const started = Date.now();
    const out = await prepare([{ url: path, mimeType: 'audio/ogg', fileName: 'memo.ogg' }]);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(out.text).toContain('[Audio "memo.ogg" could not be transcribed (cli:');
    expect(out.text).toContain('did not finish within 0.5 s');
    expect(out.text).toContain('/nonexistent/whisper was not found');
  }, 30_000);

  it('resizes a large image with sharp, refuses non-image bytes, and keeps going after a bad file', async () => {
    const sharp = (await import('sharp')).default;
    const { save, prepare } = await boot({ image: { attachments: { mode: 'all' } } });
    const big = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#3366cc' } })
      .jpeg()
      .toBuffer();
    const out = await prepare([
      { url: save('photo.jpg', big), mimeType: 'image/jpeg', fileName: 'photo.jpg' },
      { url: save('fake.png', Buffer.from('this is not a png at all')), mimeType: 'image/png', fileName: 'fake.png' },
      { url: save('broken.pdf', Buffer.from('%PDF-1.4 garbage')), mimeType: 'application/pdf', fileName: 'broken.pdf' },
      { url: save('notes.txt', Buffer.from('remember the milk')), mimeType: 'text/plain', fileName: 'notes.txt' },
      { url: '/etc/passwd', mimeType: 'text/plain', fileName: 'passwd' },
    ]);
    expect(out.images).toHaveLength(1);
    const meta = await sharp(Buffer.from(out.images[0]!.data, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([2048, 1536]);
    expect(out.text).toContain('[Image "photo.jpg" attached (resized to 2048×1536 for the model)]');
    expect(out.text).toContain('[Image "fake.png" not shown: its bytes are not an image (though sent as image/png)]');
    expect(out.text).toMatch(/\[Document "broken\.pdf" could not be processed: the PDF could not be parsed/);
    expect(out.text).toContain('remember the milk');
    expect(out.text).toContain('[Document "passwd" could not be processed: its file is outside the media folder');
    expect(out.text).not.toContain('root:');
  }, 30_000);

  it('cuts a long document at maxChars with a clear marker, and honours enabled: false', async () => {
    const { save, prepare } = await boot({ document: { maxChars: 200 }, video: { enabled: false } });
    const out = await prepare([
      { url: save('long.txt', Buffer.from('word '.repeat(1000))), mimeType: 'text/plain', fileName: 'long.txt' },
      { url: save('clip.mp4', Buffer.alloc(2000)), mimeType: 'video/mp4', fileName: 'clip.mp4' },
    ]);
    expect(out.text).toContain('[… truncated: 4800 more characters not shown (limit 200)]');
    expect(out.text).toContain('[Video "clip.mp4" not processed: tools.media.video.enabled is false]');
  });

  it('warns about the OpenClaw tools.media keys it does not implement', async () => {
    const k = await createTestKernel({
      plugins: [MEDIA],
      config: { tools: { media: { audio: { echoFormat: '{transcript}', preferredModel: 'openai/whisper-1' } } } },
    });
    kernel = k;
    await k.start();
    expect(k.issues()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: 'tools.media.audio.echoFormat',
          level: 'warning',
          message: expect.stringMatching(/claw does not implement; ignored/),
        }),
        expect.objectContaining({ path: 'tools.media.audio.preferredModel', level: 'warning' }),
      ]),
    );
    // A key OpenClaw does not have either is an error naming it.
    await expect(
      createTestKernel({ plugins: [MEDIA], config: { tools: { media: { audio: { maxbytes: 5 } } } } }),
    ).rejects.toThrow(/tools\.media\.audio\.maxbytes/);
  });
});

describe('the pdf tool', () => {
  let server: Server;
  let url: string;
  const pdf = makePdf(['Invoice 42: total 99 EUR.', 'Page two.', 'Page three.']);
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(pdf);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/invoice.pdf`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const boot = async (tools: Record<string, unknown> = {}) => {
    kernel = await createTestKernel({ plugins: [MEDIA], config: { tools } });
    await kernel.start();
    mkdirSync(kernel.paths.workspaceDir, { recursive: true });
    return kernel;
  };
  const text = (result: { content: Array<{ type: string; text?: string }> }) =>
    result.content.map((part) => part.text ?? '').join('');

  it('reads a workspace PDF (a page range too) and refuses a path outside the workspace', async () => {
    const k = await boot();
    writeFileSync(join(k.paths.workspaceDir, 'invoice.pdf'), pdf);
    const all = await k.runTool('pdf', { pdf: 'invoice.pdf' });
    expect(all.isError).toBeFalsy();
    expect(text(all)).toContain('3 page(s); all pages');
    expect(text(all)).toContain('Invoice 42: total 99 EUR.');
    const some = await k.runTool('pdf', { pdf: 'invoice.pdf', pages: '2-3' });
    expect(text(some)).toContain('pages 2, 3');
    expect(text(some)).not.toContain('Invoice 42');

    const outside = join(tempDir(), 'secret.pdf');
    writeFileSync(outside, pdf);
    const refused = await k.runTool('pdf', { pdf: outside });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/outside the workspace/);
    const dotdot = await k.runTool('pdf', { pdf: '../../etc/passwd' });
    expect(dotdot.isError).toBe(true);
    // It is a tool like any other at the choke point: group:media in tools.deny takes it away.
    await k.dispose();
    const denied = await boot({ deny: ['group:media'] });
    writeFileSync(join(denied.paths.workspaceDir, 'invoice.pdf'), pdf);
    const blocked = await denied.runTool('pdf', { pdf: 'invoice.pdf' });
    expect(blocked.isError).toBe(true);
    expect(text(blocked)).not.toContain('Invoice 42');
  });

  it('refuses a URL to 127.0.0.1 under the SSRF policy unless the config allows it', async () => {
    const k = await boot();
    const refused = await k.runTool('pdf', { pdf: url });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/blocked by the SSRF policy/);
    await k.dispose();
    const allowed = await boot({ web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } } });
    const read = await allowed.runTool('pdf', { pdf: url });
    expect(read.isError, text(read)).toBeFalsy();
    expect(text(read)).toContain('Invoice 42: total 99 EUR.');
  });

  it('refuses a PDF over tools.media.document.maxBytes, from disk and from a URL', async () => {
    const k = await boot({
      media: { document: { maxBytes: 1000 } },
      web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } },
    });
    const large = makePdf(['big'], { padding: 5000 });
    writeFileSync(join(k.paths.workspaceDir, 'large.pdf'), large);
    const local = await k.runTool('pdf', { pdf: 'large.pdf' });
    expect(local.isError).toBe(true);
    expect(text(local)).toMatch(/is 5 KB, over the 1000 bytes limit \(tools\.media\.document\.maxBytes\)/);
    const remote = await k.runTool('pdf', { pdf: url });
    expect(remote.isError).toBe(true);
    expect(text(remote)).toContain('over the 1000 bytes limit (tools.media.document.maxBytes)');
  });
});
