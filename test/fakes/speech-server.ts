/**
 * A fake speech API on 127.0.0.1: OpenAI's `POST /v1/audio/speech` (JSON body, bearer key,
 * audio bytes back) and ElevenLabs' `POST /v1/text-to-speech/{voiceId}` (`xi-api-key`,
 * `output_format` query). The test supplies the audio (real audio it made) or a failure.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

export interface SpeechCall {
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

export class FakeSpeechServer {
  readonly calls: SpeechCall[] = [];
  /** What the next calls answer: audio (and its content type) or an HTTP failure. */
  answer: { audio: Buffer; contentType: string } | { status: number; body: string } = {
    status: 503,
    body: 'no audio scripted',
  };
  private server?: Server;

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://fake');
        const known = req.method === 'POST' && /^\/v1\/(audio\/speech|text-to-speech\/[^/]+)$/.test(url.pathname);
        if (!known) return void res.writeHead(404).end('not found');
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        } catch {
          return void res.writeHead(400).end('{"error":"body is not JSON"}');
        }
        this.calls.push({
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          headers: req.headers,
          body,
        });
        const answer = this.answer;
        if ('audio' in answer) res.writeHead(200, { 'content-type': answer.contentType }).end(answer.audio);
        else res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Real audio for the fake to answer with: `text` spoken by espeak-ng, encoded as MP3 by ffmpeg. */
export function spokenMp3(text: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'claw-speech-'));
  try {
    execFileSync('espeak-ng', ['-w', join(dir, 'a.wav'), text]);
    execFileSync('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      join(dir, 'a.wav'),
      '-c:a',
      'libmp3lame',
      join(dir, 'a.mp3'),
    ]);
    return readFileSync(join(dir, 'a.mp3'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
