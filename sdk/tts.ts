/**
 * The text-to-speech provider contract. The tts plugin owns the feature (settings, auto modes,
 * `/tts`, conversion to voice notes, delivery); each speech provider is a service named
 * `tts:<id>` (declared under `services` in its plugin's manifest) whose api is a SpeechProvider,
 * so another plugin can add one the way web search providers are added.
 */
import type { PluginApi } from './types/plugin.js';

export const TTS_SERVICE = 'tts';
export const TTS_PROVIDER_PREFIX = 'tts:';

export interface SpeechRequest {
  text: string;
  /** The provider's block, `tts.providers.<id>` (an empty object when unset). */
  settings: Readonly<Record<string, unknown>>;
  /** The target wants a voice note: a provider that can answer Ogg/Opus should. */
  voiceNote: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface SpeechResult {
  audio: Buffer;
  /** Container of `audio`: mp3, opus (Ogg/Opus), wav, … (what ffmpeg is told it reads). */
  format: string;
}

export interface SpeechProvider {
  id: string;
  label: string;
  /** Whether its block has what it needs (a key, a command); why not, when not. */
  readiness(settings: Readonly<Record<string, unknown>>): { ready: true } | { ready: false; reason: string };
  synthesize(request: SpeechRequest): Promise<SpeechResult>;
}

export function registerSpeechProvider(api: Pick<PluginApi, 'registerService'>, provider: SpeechProvider): void {
  api.registerService({ id: `${TTS_PROVIDER_PREFIX}${provider.id}`, api: provider });
}
