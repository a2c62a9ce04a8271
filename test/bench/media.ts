/**
 * media: the latency the media step (plugins/media-understanding) adds to a turn, per kind,
 * as the agent calls it (the service's prepare()). Audio goes to an instant fake
 * OpenAI-compatible transcription server on 127.0.0.1 whose own handling time is subtracted,
 * so the figure is the step's: reading the file, the multipart upload over loopback, the
 * answer. PDF text (10 pages, unpdf), an image resize (4000×3000 JPEG to 2048 px, sharp) and
 * video frames (1 s test pattern, ffmpeg + ffprobe). The first call of each kind also loads
 * its library; p50 over the warm runs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MEDIA_UNDERSTANDING_SERVICE, type MediaUnderstandingService } from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import { bundledPluginDir, createTestKernel } from '../../sdk/testing.js';
import { FakeTranscriber, makePdf, makeVideo, makeVoiceNote } from '../media-fixtures.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

export async function mediaBench(line: Line, quick: boolean): Promise<void> {
  const transcriber = await new FakeTranscriber().start();
  const kernel = await createTestKernel({
    plugins: [bundledPluginDir('media-understanding')],
    config: {
      models: { providers: { openai: { baseUrl: transcriber.baseUrl, apiKey: 'bench' } } },
      tools: { media: { models: [{ provider: 'openai', model: 'whisper-1', capabilities: ['audio'] }] } },
    },
  });
  try {
    await kernel.start();
    const service = (await useService<MediaUnderstandingService>(kernel, MEDIA_UNDERSTANDING_SERVICE))!;
    const dir = join(kernel.stateDir, 'media', 'bench');
    mkdirSync(dir, { recursive: true });
    const save = (name: string, data: Buffer) => {
      writeFileSync(join(dir, name), data);
      return join(dir, name);
    };
    const sharp = (await import('sharp')).default;
    const photo = await sharp({
      create: {
        width: 4000,
        height: 3000,
        channels: 3,
        background: '#808080',
        noise: { type: 'gaussian', mean: 128, sigma: 40 },
      },
    })
      .jpeg({ quality: 85 })
      .toBuffer();
    const voice = makeVoiceNote('The quick brown fox jumps over the lazy dog, twice, before breakfast.');
    const kinds: Array<{ label: string; file: string; mimeType: string; provider?: boolean }> = [
      {
        label: `audio, ${(voice.length / 1024).toFixed(0)} KB voice note (instant fake provider)`,
        file: save('voice.ogg', voice),
        mimeType: 'audio/ogg',
        provider: true,
      },
      {
        label: 'pdf, 10 pages of text',
        file: save(
          'report.pdf',
          makePdf(
            Array.from({ length: 10 }, (_, i) => `Page ${i + 1}: revenue, costs and a forecast for the quarter.`),
          ),
        ),
        mimeType: 'application/pdf',
      },
      {
        label: `image, 4000x3000 JPEG (${(photo.length / 1024 / 1024).toFixed(1)} MB) resized`,
        file: save('photo.jpg', photo),
        mimeType: 'image/jpeg',
      },
      { label: 'video, 1 s 320x240 → 4 frames (ffmpeg)', file: save('clip.mp4', makeVideo(1)), mimeType: 'video/mp4' },
    ];
    const runs = quick ? 5 : 15;
    for (const kind of kinds) {
      const once = async () => {
        const calls = transcriber.calls.length;
        const started = performance.now();
        const out = await service.prepare({
          agentId: 'main',
          sessionKey: 'agent:main:bench',
          text: 'bench',
          attachments: [{ url: kind.file, mimeType: kind.mimeType }],
        });
        const ms = performance.now() - started;
        if (/could not|refused|not shown/.test(out.text)) throw new Error(`media bench: ${out.text}`);
        const provider = kind.provider
          ? transcriber.calls.slice(calls).reduce((sum, call) => sum + call.serverMs, 0)
          : 0;
        return ms - provider;
      };
      const cold = await once();
      const warm: number[] = [];
      for (let i = 0; i < runs; i++) warm.push(await once());
      line(`media ${kind.label}`, `${percentile(warm, 0.5).toFixed(1)} ms`, '(info)', true);
      line(
        `  first call (loads its library) / p95`,
        `${cold.toFixed(0)} / ${percentile(warm, 0.95).toFixed(1)} ms`,
        '(info)',
        true,
      );
    }
  } finally {
    await kernel.dispose();
    await transcriber.stop();
  }
}
