/**
 * Speech in two steps: synthesize (the chosen provider, then the other ready ones as
 * fallbacks, each under the timeout) and render for a channel (a voice note where the
 * channel has them, else an MP3 attachment), plus what `tts.status` reports.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { KernelServices, Logger } from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import { TTS_PROVIDER_PREFIX, type SpeechProvider } from '../../sdk/tts.js';
import { convert, store, type SpeechFile } from './audio.js';
import type { Prefs } from './prefs.js';
import { LOCAL_CLI, providerId, type AutoMode, type TtsSettings, type Where } from './settings.js';

/** Channels whose platform has voice notes (OpenClaw: Feishu, Matrix, Telegram, WhatsApp). */
const VOICE_NOTE_CHANNELS = new Set(['telegram', 'whatsapp', 'matrix', 'feishu']);
/** Channels that upload a local audio file (the others would get its path, so they get no speech). */
const AUDIO_CHANNELS = new Set([...VOICE_NOTE_CHANNELS, 'discord', 'slack']);
const AUTO_ORDER = ['openai', 'elevenlabs', LOCAL_CLI];
const KEEP_FILES_MS = 60 * 60_000;

export interface Speech {
  audio: Buffer;
  format: string;
  provider: string;
  attempts: string[];
}

export interface Attempt {
  at: number;
  provider?: string;
  ok: boolean;
  latencyMs: number;
  error?: string;
  attempts: string[];
}

export class TtsEngine {
  last?: Attempt;

  constructor(
    private readonly kernel: KernelServices,
    private readonly logger: Logger,
    readonly settings: (where?: Where) => TtsSettings,
    readonly prefs: Prefs,
    private readonly mediaDir: string,
  ) {}

  /** The mode for a session: its own (/tts), else the host's (tts.enable), else the config. */
  mode(sessionKey?: string, where?: Where): { auto: AutoMode; from: 'session' | 'local' | 'config' } {
    const own = this.prefs.session(sessionKey);
    if (own) return { auto: own, from: 'session' };
    const local = this.prefs.read().auto;
    return local ? { auto: local, from: 'local' } : { auto: this.settings(where).auto, from: 'config' };
  }

  providerIds(): string[] {
    return this.kernel.capabilities
      .list('service')
      .map((info) => info.name)
      .filter((name) => name.startsWith(TTS_PROVIDER_PREFIX))
      .map((name) => name.slice(TTS_PROVIDER_PREFIX.length));
  }

  async provider(id: string): Promise<SpeechProvider | undefined> {
    return useService<SpeechProvider>(this.kernel, `${TTS_PROVIDER_PREFIX}${id}`).catch(() => undefined);
  }

  /** The chosen provider (a directive's, the host's, the config's) first, then the other ready ones. */
  chosen(override?: string, where?: Where): string | undefined {
    const settings = this.settings(where);
    return override ?? this.prefs.read().provider ?? settings.provider;
  }

  async states(
    where?: Where,
  ): Promise<Array<{ provider: string; configured: boolean; ready: boolean; reason?: string }>> {
    const settings = this.settings(where);
    return Promise.all(
      this.providerIds().map(async (id) => {
        const provider = await this.provider(id);
        const readiness = provider?.readiness(settings.providers[id] ?? {}) ?? { ready: false, reason: 'not loaded' };
        return {
          provider: id,
          configured: settings.providers[id] !== undefined,
          ready: readiness.ready,
          ...(readiness.ready ? {} : { reason: readiness.reason }),
        };
      }),
    );
  }

  async order(override?: string, where?: Where): Promise<string[]> {
    const first = this.chosen(override, where);
    const installed = this.providerIds();
    if (first && !installed.includes(providerId(first)))
      throw new Error(`provider "${first}" is not available (installed: ${installed.join(', ') || 'none'})`);
    const ready = (await this.states(where)).filter((state) => state.ready).map((state) => state.provider);
    const rest = [...AUTO_ORDER, ...installed.sort()].filter(
      (id, at, all) => all.indexOf(id) === at && ready.includes(id),
    );
    const order = first ? [providerId(first), ...rest.filter((id) => id !== providerId(first))] : rest;
    if (order.length === 0)
      throw new Error(
        'no speech provider is set up: configure tts.providers.tts-local-cli.command, an OpenAI key, or an ElevenLabs key',
      );
    return order;
  }

  async synthesize(
    text: string,
    options: {
      voiceNote: boolean;
      provider?: string;
      overrides?: Record<string, unknown>;
      timeoutMs?: number;
      signal?: AbortSignal;
      where?: Where;
    },
  ): Promise<Speech> {
    const settings = this.settings(options.where);
    const started = performance.now();
    const attempts: string[] = [];
    const failures: string[] = [];
    try {
      for (const id of await this.order(options.provider, options.where)) {
        const provider = await this.provider(id);
        if (!provider) continue;
        const t0 = performance.now();
        try {
          const result = await provider.synthesize({
            text,
            settings: { ...(settings.providers[id] ?? {}), ...(options.overrides ?? {}) },
            voiceNote: options.voiceNote,
            timeoutMs: options.timeoutMs ?? settings.timeoutMs,
            ...(options.signal ? { signal: options.signal } : {}),
          });
          attempts.push(`${id}:ok ${Math.round(performance.now() - t0)}ms`);
          this.last = {
            at: Date.now(),
            provider: id,
            ok: true,
            latencyMs: Math.round(performance.now() - started),
            attempts,
          };
          return { ...result, provider: id, attempts };
        } catch (error) {
          attempts.push(`${id}:failed ${Math.round(performance.now() - t0)}ms`);
          failures.push((error as Error).message);
          if (options.signal?.aborted) break;
        }
      }
      throw new Error(failures.join('; ') || 'no speech provider could be loaded');
    } catch (error) {
      this.last = {
        at: Date.now(),
        ok: false,
        latencyMs: Math.round(performance.now() - started),
        error: (error as Error).message,
        attempts,
      };
      throw error;
    }
  }

  /** Whether a reply on `channel` can carry speech at all. */
  speaks(channel: string | undefined): boolean {
    return AUDIO_CHANNELS.has(String(channel ?? '').toLowerCase());
  }

  voiceNote(channel: string | undefined): boolean {
    return VOICE_NOTE_CHANNELS.has(String(channel ?? '').toLowerCase());
  }

  /** The speech as a file for `channel`: Ogg/Opus voice note, or MP3 (kept as is when it is MP3). */
  async render(speech: Speech, channel: string | undefined, signal?: AbortSignal): Promise<SpeechFile> {
    const voice = this.voiceNote(channel);
    const audio =
      !voice && speech.format === 'mp3'
        ? speech.audio
        : await convert(speech.audio, voice, {
            ffmpeg: 'ffmpeg',
            timeoutMs: this.settings({ channel }).timeoutMs,
            signal,
          });
    if (audio.length === 0) throw new Error('ffmpeg produced no audio');
    void this.sweep();
    return store(this.mediaDir, audio, voice);
  }

  /** Files an interrupted send left behind (older than an hour) go. */
  private async sweep(): Promise<void> {
    const names = await readdir(this.mediaDir).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(this.mediaDir, name);
      const info = await stat(path).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > KEEP_FILES_MS) await rm(path, { force: true });
    }
  }

  remove(path: string): void {
    rm(path, { force: true }).catch((error: Error) =>
      this.logger.debug?.(`tts: could not remove ${path}: ${error.message}`),
    );
  }
}
