/**
 * The media step: what the pipeline's `attachments` (files a channel saved under
 * <stateDir>/media) say, as a user message the model can read and images it can see.
 * Every attachment ends in a block or a note; one bad file never costs the others or the
 * turn. Limits are checked on the file's size before it is read or sent anywhere.
 */
import { randomBytes } from 'node:crypto';
import { realpath, stat, readFile } from 'node:fs/promises';
import { basename, isAbsolute, relative } from 'node:path';
import {
  sanitizeExternal,
  type ImagePart,
  type InboundMedia,
  type KernelServices,
  type Logger,
  type MediaKind,
  type MediaPrepareInput,
  type MediaPrepared,
  type MediaUnderstandingService,
  type RuntimeDeps,
} from '../../sdk/index.js';
import { autoDetectedEntries, transcribe, transcriptionEndpoint } from './audio.js';
import { runCliEntry } from './cli-entry.js';
import { extractPdf, extractPlainText } from './document.js';
import type { MediaModelEntry } from './generated/types.js';
import { NotAnImage, prepareImage } from './image.js';
import { isPdf, isPdfName, kindOf } from './kinds.js';
import { entriesFor, formatBytes, mediaSettings, type Capability, type MediaSettings } from './settings.js';
import { ffmpegAvailable, sampleFrames } from './video.js';

/** Audio under this many bytes is treated as empty, as OpenClaw does. */
export const MIN_AUDIO_BYTES = 1024;
const LABEL: Record<MediaKind, string> = { image: 'Image', audio: 'Audio', video: 'Video', document: 'Document' };

interface Item {
  media: InboundMedia;
  index: number;
  name: string;
  kind: MediaKind | undefined;
}

interface Outcome {
  block: string;
  images: ImagePart[];
}

/** Time spent per attachment kind in the last prepare(), for the bench. */
export type StepTimings = Partial<Record<MediaKind, number>>;

export class MediaStep implements MediaUnderstandingService {
  lastTimings: StepTimings = {};

  constructor(
    private readonly kernel: Pick<KernelServices, 'config' | 'env' | 'paths'>,
    private readonly deps: RuntimeDeps,
    private readonly logger: Logger,
  ) {}

  async prepare(input: MediaPrepareInput): Promise<MediaPrepared> {
    const settings = mediaSettings(this.kernel.config());
    const items: Item[] = input.attachments.map((media, index) => {
      const name = media.fileName ?? (media.url ? basename(media.url) : `attachment ${index + 1}`);
      return { media, index, name, kind: kindOf(media.mimeType, name) };
    });
    // Per capability, OpenClaw's attachment policy: the first one unless attachments.mode is "all".
    const seen: Partial<Record<MediaKind, number>> = {};
    const tasks = items.map((item) => () => {
      const kind = item.kind;
      if (kind && kind !== 'document') {
        const n = (seen[kind] = (seen[kind] ?? 0) + 1);
        const limit = settings[kind].maxAttachments;
        if (n > limit)
          return Promise.resolve(
            note(
              item,
              `not processed: only the first ${limit} ${kind} attachment${limit === 1 ? ' is' : 's are'} (tools.media.${kind}.attachments)`,
            ),
          );
      }
      return this.one(item, settings, input.signal);
    });
    this.lastTimings = {};
    const outcomes = await pool(tasks, settings.concurrency);
    const blocks = outcomes.map((outcome) => outcome.block).filter(Boolean);
    return {
      text: [input.text.trim(), ...blocks].filter(Boolean).join('\n\n'),
      images: outcomes.flatMap((outcome) => outcome.images),
    };
  }

  private async one(item: Item, settings: MediaSettings, signal?: AbortSignal): Promise<Outcome> {
    const started = performance.now();
    try {
      return await this.understand(item, settings, signal);
    } catch (error) {
      this.logger.warn(`media: ${item.kind ?? 'file'} "${item.name}" failed: ${(error as Error).message}`);
      return note(item, `could not be processed: ${(error as Error).message}`);
    } finally {
      if (item.kind) this.lastTimings[item.kind] = (this.lastTimings[item.kind] ?? 0) + performance.now() - started;
    }
  }

  private async understand(item: Item, settings: MediaSettings, signal?: AbortSignal): Promise<Outcome> {
    const { kind } = item;
    if (!kind) return note(item, `(${item.media.mimeType ?? 'unknown type'}) is not a kind the media step reads`);
    const path = await this.localPath(item);
    const enabled = kind === 'document' ? settings.document.enabled : settings[kind].enabled;
    if (!enabled) return note(item, `not processed: tools.media.${kind}.enabled is false`);
    const maxBytes = kind === 'document' ? settings.document.maxBytes : settings[kind].maxBytes;
    const info = await stat(path);
    if (!info.isFile()) throw new Error('it is not a regular file');
    if (info.size > maxBytes)
      return note(
        item,
        `refused: ${formatBytes(info.size)} is over the ${formatBytes(maxBytes)} limit for ${kind} (tools.media.${kind}.maxBytes)`,
      );
    const data = await readFile(path);
    const mimeType = item.media.mimeType ?? 'application/octet-stream';
    switch (kind) {
      case 'audio':
        return this.audio(item, path, data, mimeType, settings, signal);
      case 'document':
        return this.document(item, data, settings);
      case 'image':
        return this.image(item, data, mimeType);
      case 'video':
        return this.video(item, path, mimeType, settings, signal);
    }
  }

  /** The attachment's file, which must be one a channel saved under <stateDir>/media. */
  private async localPath(item: Item): Promise<string> {
    const url = item.media.url ?? '';
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) throw new Error('remote URLs are not fetched by the media step');
    if (!isAbsolute(url)) throw new Error('it has no local file');
    const root = await realpath(`${this.kernel.paths.stateDir}/media`).catch(() => undefined);
    const real = await realpath(url);
    const rel = root ? relative(root, real) : '..';
    if (rel.startsWith('..') || isAbsolute(rel))
      throw new Error('its file is outside the media folder of the state dir');
    return real;
  }

  private async audio(
    item: Item,
    path: string,
    data: Buffer,
    mimeType: string,
    settings: MediaSettings,
    signal?: AbortSignal,
  ): Promise<Outcome> {
    if (data.length < MIN_AUDIO_BYTES)
      return block(item, `Transcript: (empty: the recording is under ${MIN_AUDIO_BYTES} bytes, nothing to transcribe)`);
    const config = this.kernel.config();
    const audio = settings.audio;
    let entries = entriesFor(settings.models, 'audio');
    if (entries.length === 0) entries = autoDetectedEntries(config, this.kernel.env);
    if (entries.length === 0)
      return note(
        item,
        'not transcribed: no transcription model is configured (add a tools.media.models entry with capabilities ["audio"])',
      );
    const problems: string[] = [];
    for (const entry of entries) {
      const maxBytes = entry.maxBytes ?? audio.maxBytes;
      if (data.length > maxBytes) {
        problems.push(`${describe(entry)}: over its ${formatBytes(maxBytes)} limit`);
        continue;
      }
      try {
        let text: string;
        if (entry.type === 'cli') {
          text = await runCliEntry(entry, {
            path,
            mimeType,
            index: item.index,
            prompt: entry.prompt ?? audio.prompt,
            maxChars: entry.maxChars ?? audio.maxChars,
            language: entry.language ?? audio.language,
            timeoutMs: audio.timeoutMs,
            signal,
          });
        } else {
          const endpoint = transcriptionEndpoint(entry, config, this.kernel.env);
          if (typeof endpoint === 'string') throw new Error(endpoint);
          const prompt = entry.prompt ?? (audio.prompt === 'Transcribe the audio.' ? undefined : audio.prompt);
          text = await transcribe(
            endpoint,
            { data, path, mimeType },
            {
              language: entry.language ?? audio.language,
              ...(prompt ? { prompt } : {}),
              timeoutMs: entry.timeoutSeconds ? entry.timeoutSeconds * 1000 : audio.timeoutMs,
              signal,
            },
          );
        }
        const maxChars = entry.maxChars ?? audio.maxChars;
        const shown = maxChars && text.length > maxChars ? `${text.slice(0, maxChars)} [… truncated]` : text;
        return block(item, `Transcript: ${shown || '(no speech recognized)'}`);
      } catch (error) {
        problems.push(`${describe(entry)}: ${(error as Error).message}`);
        if (signal?.aborted) break;
      }
    }
    this.logger.warn(`media: audio "${item.name}" not transcribed: ${problems.join('; ')}`);
    return note(item, `could not be transcribed (${problems.join('; ')})`);
  }

  private async document(item: Item, data: Buffer, settings: MediaSettings): Promise<Outcome> {
    const { maxChars, maxPages } = settings.document;
    const pdf = isPdfName(item.media.mimeType, item.name) || isPdf(data);
    const extracted = pdf
      ? await extractPdf(data, this.deps, { maxChars, maxPages })
      : extractPlainText(data, maxChars);
    if (!extracted.text.trim())
      return block(item, '[No extractable text]', pdf ? `PDF, ${extracted.pages} pages` : undefined);
    const id = randomBytes(4).toString('hex');
    return block(
      item,
      [
        `<<<EXTERNAL_UNTRUSTED_CONTENT id="${id}">>>`,
        `Source: External (file "${sanitizeExternal(item.name).replace(/["\n]/g, ' ')}")`,
        sanitizeExternal(extracted.text),
        `<<<END_EXTERNAL_UNTRUSTED_CONTENT id="${id}">>>`,
      ].join('\n'),
      pdf ? `PDF, ${extracted.pages} page${extracted.pages === 1 ? '' : 's'}` : undefined,
    );
  }

  private async image(item: Item, data: Buffer, mimeType: string): Promise<Outcome> {
    try {
      const prepared = await prepareImage(data, this.deps, mimeType);
      const size =
        prepared.resized && prepared.width ? ` (resized to ${prepared.width}×${prepared.height} for the model)` : '';
      return { block: `[Image "${item.name}" attached${size}]`, images: [prepared.image] };
    } catch (error) {
      if (error instanceof NotAnImage) return note(item, `not shown: ${error.message}`);
      throw error;
    }
  }

  private async video(
    item: Item,
    path: string,
    mimeType: string,
    settings: MediaSettings,
    signal?: AbortSignal,
  ): Promise<Outcome> {
    const video = settings.video;
    const described = await this.describeWithCli('video', item, path, mimeType, settings, signal);
    if (!(await ffmpegAvailable())) {
      return described
        ? block(item, `Description: ${described}`)
        : note(item, 'not shown: ffmpeg is not installed, so no frames could be taken from it');
    }
    const sampled = await sampleFrames(path, { timeoutMs: video.timeoutMs, signal });
    const at = sampled.at.map((seconds) => `${seconds.toFixed(1)} s`).join(', ');
    const length = sampled.durationSeconds ? `${sampled.durationSeconds.toFixed(1)} s long; ` : '';
    const lines = [`${length}${sampled.frames.length} frames attached as images (at ${at})`];
    if (described) lines.push(`Description: ${described}`);
    return { block: `[Video "${item.name}"] ${lines.join('\n')}`, images: sampled.frames };
  }

  /** A CLI entry for image/video (`gemini … {{AttachmentPath}}`), when configured: its text. */
  private async describeWithCli(
    kind: Capability,
    item: Item,
    path: string,
    mimeType: string,
    settings: MediaSettings,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    const cap = settings[kind];
    for (const entry of entriesFor(settings.models, kind).filter((candidate) => candidate.type === 'cli')) {
      try {
        const text = await runCliEntry(entry, {
          path,
          mimeType,
          index: item.index,
          prompt: entry.prompt ?? cap.prompt,
          maxChars: entry.maxChars ?? cap.maxChars,
          timeoutMs: cap.timeoutMs,
          signal,
        });
        const maxChars = entry.maxChars ?? cap.maxChars;
        if (text) return maxChars && text.length > maxChars ? `${text.slice(0, maxChars)} [… truncated]` : text;
      } catch (error) {
        this.logger.warn(
          `media: ${describe(entry)} could not describe ${kind} "${item.name}": ${(error as Error).message}`,
        );
      }
    }
    return undefined;
  }
}

function describe(entry: MediaModelEntry): string {
  return entry.type === 'cli'
    ? `cli:${entry.command ?? '?'}`
    : `${entry.provider ?? '?'}${entry.model ? `/${entry.model}` : ''}`;
}

function header(item: Item, detail?: string): string {
  return `[${item.kind ? LABEL[item.kind] : 'Attachment'} "${item.name}"${detail ? ` (${detail})` : ''}]`;
}

function block(item: Item, body: string, detail?: string): Outcome {
  return { block: `${header(item, detail)}\n${body}`, images: [] };
}

function note(item: Item, text: string): Outcome {
  return { block: `${header(item).slice(0, -1)} ${text}]`, images: [] };
}

/** Runs `tasks` with at most `limit` at once; results in the tasks' order. */
async function pool<T>(tasks: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const at = next++;
      results[at] = await tasks[at]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}
