/**
 * tools.media with OpenClaw's defaults filled in; its shape is this plugin's (schemas.ts,
 * typed by generated/types.ts). Read on every message, so a config reload applies at once.
 */
import type { MediaCapabilityConfig, MediaModelEntry, MediaToolsConfig } from './generated/types.js';

export type Capability = 'image' | 'audio' | 'video';

export interface CapabilitySettings {
  enabled: boolean;
  maxBytes: number;
  maxChars?: number;
  timeoutMs: number;
  prompt: string;
  language?: string;
  /** How many matching attachments are processed per message. */
  maxAttachments: number;
}

export interface DocumentSettings {
  enabled: boolean;
  maxBytes: number;
  maxChars: number;
  maxPages: number;
}

export interface MediaSettings {
  concurrency: number;
  models: MediaModelEntry[];
  image: CapabilitySettings;
  audio: CapabilitySettings;
  video: CapabilitySettings;
  document: DocumentSettings;
}

const MB = 1024 * 1024;
const DEFAULT_MAX_BYTES: Record<Capability, number> = { image: 10 * MB, audio: 20 * MB, video: 50 * MB };
const DEFAULT_PROMPT: Record<Capability, string> = {
  image: 'Describe the image.',
  audio: 'Transcribe the audio.',
  video: 'Describe the video.',
};

function capability(kind: Capability, raw: MediaCapabilityConfig = {}): CapabilitySettings {
  const all = raw.attachments?.mode === 'all';
  return {
    enabled: raw.enabled !== false,
    maxBytes: raw.maxBytes ?? DEFAULT_MAX_BYTES[kind],
    ...(raw.maxChars !== undefined ? { maxChars: raw.maxChars } : kind === 'audio' ? {} : { maxChars: 500 }),
    timeoutMs: (raw.timeoutSeconds ?? (kind === 'video' ? 120 : 60)) * 1000,
    prompt: raw.prompt ?? DEFAULT_PROMPT[kind],
    ...(raw.language ? { language: raw.language } : {}),
    maxAttachments: raw.attachments?.maxAttachments ?? (all ? 8 : 1),
  };
}

export function mediaSettings(config: { tools?: unknown }): MediaSettings {
  const raw = (config.tools as { media?: MediaToolsConfig } | undefined)?.media ?? {};
  return {
    concurrency: raw.concurrency ?? 2,
    models: raw.models ?? [],
    image: capability('image', raw.image),
    audio: capability('audio', raw.audio),
    video: capability('video', raw.video),
    document: {
      enabled: raw.document?.enabled !== false,
      maxBytes: raw.document?.maxBytes ?? 20 * MB,
      maxChars: raw.document?.maxChars ?? 50_000,
      maxPages: raw.document?.maxPages ?? 50,
    },
  };
}

/** The entries for a capability, in order: explicit capabilities, else audio for provider entries. */
export function entriesFor(models: readonly MediaModelEntry[], kind: Capability): MediaModelEntry[] {
  return models.filter((entry) =>
    entry.capabilities?.length ? entry.capabilities.includes(kind) : entry.type !== 'cli' && kind === 'audio',
  );
}

/** "12.5 MB", "900 KB": for notes the model and the user read. */
export function formatBytes(bytes: number): string {
  if (bytes >= MB) return `${Number((bytes / MB).toFixed(1))} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}
