/**
 * Provider audio to what a channel takes: Ogg/Opus, mono, 48 kHz, 64 kbps for voice notes;
 * MP3 for an audio attachment. ffmpeg runs without a shell, reading stdin and writing stdout
 * under a deadline; the file is written atomically and owner-only into the media folder
 * (where the outbound path lets local attachments come from) and removed once sent.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { writeFileAtomicAsync } from '../../sdk/index.js';
import { runCommand } from './run.js';

export interface SpeechFile {
  path: string;
  mimeType: string;
  voice: boolean;
}

const VOICE_ARGS = ['-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '64k', '-application', 'voip', '-f', 'ogg'];
const MP3_ARGS = ['-c:a', 'libmp3lame', '-b:a', '128k', '-f', 'mp3'];

export async function convert(
  audio: Buffer,
  voiceNote: boolean,
  options: { ffmpeg: string; timeoutMs: number; signal?: AbortSignal },
): Promise<Buffer> {
  return runCommand(
    'ffmpeg',
    options.ffmpeg,
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      'pipe:0',
      '-vn',
      '-map_metadata',
      '-1',
      ...(voiceNote ? VOICE_ARGS : MP3_ARGS),
      'pipe:1',
    ],
    {
      input: audio,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    },
  );
}

/** Store converted audio as `<dir>/<uuid>.ogg|.mp3` (atomic, 0600). */
export async function store(dir: string, audio: Buffer, voiceNote: boolean): Promise<SpeechFile> {
  const path = join(dir, `${randomUUID()}.${voiceNote ? 'ogg' : 'mp3'}`);
  await writeFileAtomicAsync(path, audio);
  return { path, mimeType: voiceNote ? 'audio/ogg; codecs=opus' : 'audio/mpeg', voice: voiceNote };
}
