/**
 * Video as a few still frames, when ffmpeg is on PATH: ffprobe for the length, then one
 * ffmpeg pass that picks frames evenly across it, scaled to at most MAX_EDGE, written as
 * JPEGs into a scratch dir that is removed afterwards. No shell; each program has a deadline.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ImagePart } from '../../sdk/index.js';
import { hasProgram, runProgram } from './run.js';

export const FRAME_COUNT = 4;
const MAX_EDGE = 1024;

export interface SampledFrames {
  frames: ImagePart[];
  /** Seconds into the video of each frame. */
  at: number[];
  durationSeconds?: number;
}

export async function ffmpegAvailable(): Promise<boolean> {
  return (await hasProgram('ffmpeg')) && (await hasProgram('ffprobe'));
}

async function durationOf(path: string, timeoutMs: number, signal?: AbortSignal): Promise<number | undefined> {
  const { stdout } = await runProgram(
    'ffprobe',
    ['-v', 'error', '-show_entries', 'format=duration', '-of', 'default=noprint_wrappers=1:nokey=1', '--', path],
    { timeoutMs, signal },
  );
  const seconds = Number.parseFloat(stdout.toString('utf8').trim());
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

export async function sampleFrames(
  path: string,
  options: { timeoutMs: number; signal?: AbortSignal; count?: number },
): Promise<SampledFrames> {
  const count = options.count ?? FRAME_COUNT;
  const duration = await durationOf(path, options.timeoutMs, options.signal);
  const dir = await mkdtemp(join(tmpdir(), 'claw-frames-'));
  try {
    // Evenly spaced: frame i at (i + 0.5) · duration / count.
    const at = duration ? Array.from({ length: count }, (_, i) => ((i + 0.5) * duration) / count) : [0];
    const scale = `scale='min(${MAX_EDGE},iw)':'min(${MAX_EDGE},ih)':force_original_aspect_ratio=decrease`;
    const filter = duration ? `fps=${count}/${duration.toFixed(3)},${scale}` : scale;
    await runProgram(
      'ffmpeg',
      [
        '-nostdin',
        '-v',
        'error',
        '-i',
        path,
        '-an',
        '-vf',
        filter,
        '-frames:v',
        String(at.length),
        '-q:v',
        '5',
        join(dir, 'frame-%02d.jpg'),
      ],
      { timeoutMs: options.timeoutMs, signal: options.signal },
    );
    const names = (await readdir(dir)).filter((name) => name.endsWith('.jpg')).sort();
    const frames = await Promise.all(
      names.map(async (name): Promise<ImagePart> => ({
        type: 'image',
        data: (await readFile(join(dir, name))).toString('base64'),
        mimeType: 'image/jpeg',
      })),
    );
    return { frames, at: at.slice(0, frames.length), ...(duration ? { durationSeconds: duration } : {}) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
