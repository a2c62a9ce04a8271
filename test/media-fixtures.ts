/**
 * Real media made on the spot for the media-understanding tests and the bench: a spoken
 * voice note (espeak-ng → ffmpeg → OGG/Opus), a PDF written by hand (a valid xref table, one
 * Helvetica text line per page), a test-pattern video (ffmpeg's lavfi testsrc), and a fake
 * OpenAI-compatible transcription server on 127.0.0.1 that ffprobes what it receives.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A PDF with one line of text on each page. */
export function makePdf(pages: readonly string[], options: { padding?: number } = {}): Buffer {
  const objects: string[] = [];
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pages.map((_, i) => `${4 + i * 2} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  pages.forEach((text, i) => {
    const escaped = text.replace(/[\\()]/g, (c) => `\\${c}`);
    // A comment line pads the stream when a test needs a large file.
    const stream = `BT /F1 14 Tf 72 720 Td (${escaped}) Tj ET${options.padding ? `\n%${'x'.repeat(options.padding)}` : ''}`;
    objects[4 + i * 2] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`;
    objects[5 + i * 2] = `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`;
  });
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let n = 1; n < objects.length; n++) {
    offsets[n] = Buffer.byteLength(out, 'latin1');
    out += `${n} 0 obj\n${objects[n]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  out += offsets
    .slice(1)
    .map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`)
    .join('');
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** `text` spoken by espeak-ng, encoded as Telegram sends voice notes: OGG/Opus, mono, 48 kHz. */
export function makeVoiceNote(text: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'claw-voice-'));
  try {
    execFileSync('espeak-ng', ['-w', join(dir, 'speech.wav'), text], { stdio: 'ignore' });
    execFileSync(
      'ffmpeg',
      [
        '-v',
        'error',
        '-y',
        '-i',
        join(dir, 'speech.wav'),
        '-ac',
        '1',
        '-ar',
        '48000',
        '-c:a',
        'libopus',
        '-b:a',
        '24k',
        join(dir, 'voice.ogg'),
      ],
      { stdio: 'ignore' },
    );
    return readFileSync(join(dir, 'voice.ogg'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A `seconds`-long test-pattern MP4 (H.264 when available). */
export function makeVideo(seconds = 1): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'claw-video-'));
  try {
    const out = join(dir, 'clip.mp4');
    execFileSync(
      'ffmpeg',
      [
        '-v',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        `testsrc=duration=${seconds}:size=320x240:rate=25`,
        '-pix_fmt',
        'yuv420p',
        out,
      ],
      { stdio: 'ignore' },
    );
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What ffprobe says a file's first stream is ({codec_name, codec_type, duration}), or undefined. */
export function probe(data: Buffer): { codec: string; type: string; seconds: number } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'claw-probe-'));
  try {
    const file = join(dir, 'upload');
    writeFileSync(file, data);
    const out = execFileSync(
      'ffprobe',
      ['-v', 'error', '-show_entries', 'stream=codec_name,codec_type:format=duration', '-of', 'json', file],
      { encoding: 'utf8' },
    );
    const parsed = JSON.parse(out) as {
      streams?: Array<{ codec_name: string; codec_type: string }>;
      format?: { duration?: string };
    };
    const stream = parsed.streams?.[0];
    return stream
      ? { codec: stream.codec_name, type: stream.codec_type, seconds: Number(parsed.format?.duration ?? 0) }
      : undefined;
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface TranscriptionCall {
  model: string;
  language?: string;
  fileName: string;
  bytes: number;
  authorization?: string;
  probed?: { codec: string; type: string; seconds: number };
  /** The server's own time, from the request's first byte to its answer (the bench subtracts it). */
  serverMs: number;
}

/**
 * An OpenAI-compatible `/audio/transcriptions` on 127.0.0.1. With `checkAudio`, it ffprobes
 * each upload and answers 400 unless it is real audio; it answers `transcript` otherwise.
 */
export class FakeTranscriber {
  readonly calls: TranscriptionCall[] = [];
  transcript = 'hello from the fake transcriber';
  private server?: Server;
  constructor(private readonly options: { checkAudio?: boolean } = {}) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/v1`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const started = performance.now();
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        void (async () => {
          const reply = (status: number, body: unknown) => {
            const call = this.calls.at(-1);
            if (call) call.serverMs = performance.now() - started;
            res.writeHead(status, { 'content-type': 'application/json' });
            res.end(JSON.stringify(body));
          };
          if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions')
            return reply(404, { error: { message: 'not found' } });
          const form = await new Request('http://fake/', {
            method: 'POST',
            headers: { 'content-type': String(req.headers['content-type']) },
            body: Buffer.concat(chunks),
          }).formData();
          const file = form.get('file') as File | null;
          if (!file) return reply(400, { error: { message: 'no file' } });
          const data = Buffer.from(await file.arrayBuffer());
          const call: TranscriptionCall = {
            model: String(form.get('model')),
            ...(form.get('language') ? { language: String(form.get('language')) } : {}),
            fileName: file.name,
            bytes: data.length,
            ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
            serverMs: 0,
          };
          if (this.options.checkAudio) {
            const probed = probe(data);
            call.probed = probed;
            this.calls.push(call);
            if (probed?.type !== 'audio' || !(probed.seconds > 0.3))
              return reply(400, { error: { message: 'the upload is not audio' } });
          } else this.calls.push(call);
          reply(200, { text: this.transcript });
        })();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
