/**
 * Transcription: an OpenAI-compatible `POST {baseUrl}/audio/transcriptions` (multipart:
 * file, model, optional language and prompt) for a provider entry, whose endpoint and key
 * come from claw's provider config (`models.providers.<id>`), else the environment.
 */
import { basename } from 'node:path';
import { providerSettings } from '../../sdk/agent/index.js';
import type { KernelConfig } from '../../sdk/index.js';
import type { MediaModelEntry } from './generated/types.js';

/** Providers whose endpoint and key claw knows without config, and their transcription model. */
const KNOWN: Record<string, { baseUrl: string; envKey: string; baseUrlEnv?: string; model: string }> = {
  openai: {
    baseUrl: 'https://api.openai.com/v1',
    envKey: 'OPENAI_API_KEY',
    baseUrlEnv: 'OPENAI_BASE_URL',
    model: 'gpt-4o-mini-transcribe',
  },
  groq: { baseUrl: 'https://api.groq.com/openai/v1', envKey: 'GROQ_API_KEY', model: 'whisper-large-v3-turbo' },
};

export interface TranscriptionEndpoint {
  provider: string;
  model: string;
  baseUrl: string;
  apiKey?: string;
  headers: Record<string, string>;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The endpoint for a provider entry, or why there is none. */
export function transcriptionEndpoint(
  entry: MediaModelEntry,
  config: KernelConfig,
  env: Env,
): TranscriptionEndpoint | string {
  const id = entry.provider?.trim();
  if (!id) return 'a provider entry needs "provider"';
  const configured = providerSettings(config, id);
  const known = KNOWN[id];
  const baseUrl = entry.baseUrl ?? configured.baseUrl ?? (known?.baseUrlEnv && env[known.baseUrlEnv]) ?? known?.baseUrl;
  if (!baseUrl) return `models.providers.${id}.baseUrl is not set (the OpenAI-compatible server's address)`;
  if (!/^https?:\/\//i.test(baseUrl)) return `the base URL of ${id} is not an http(s) URL`;
  const apiKey =
    configured.apiKey ?? (known ? env[known.envKey] : env[`${id.toUpperCase().replace(/\W/g, '_')}_API_KEY`]);
  if (known && !apiKey && !configured.baseUrl && !entry.baseUrl)
    return `no API key for ${id} (set models.providers.${id}.apiKey or ${known.envKey})`;
  return {
    provider: id,
    model: entry.model ?? known?.model ?? 'whisper-1',
    baseUrl: baseUrl.replace(/\/+$/, ''),
    ...(apiKey ? { apiKey } : {}),
    headers: configured.headers ?? {},
  };
}

/** Whether config or the environment names a transcription provider, for when no entry is configured. */
export function autoDetectedEntries(config: KernelConfig, env: Env): MediaModelEntry[] {
  const providers = (config.models as { providers?: Record<string, unknown> } | undefined)?.providers ?? {};
  return Object.entries(KNOWN)
    .filter(([id, known]) => Object.hasOwn(providers, id) || Boolean(env[known.envKey]))
    .map(([id]) => ({ provider: id, capabilities: ['audio'] }));
}

export async function transcribe(
  endpoint: TranscriptionEndpoint,
  audio: { data: Buffer; path: string; mimeType: string },
  options: { language?: string; prompt?: string; timeoutMs: number; signal?: AbortSignal },
): Promise<string> {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(audio.data)], { type: audio.mimeType }), basename(audio.path));
  form.set('model', endpoint.model);
  form.set('response_format', 'json');
  if (options.language) form.set('language', options.language);
  if (options.prompt) form.set('prompt', options.prompt);
  const headers = new Headers(endpoint.headers);
  if (endpoint.apiKey) headers.set('authorization', `Bearer ${endpoint.apiKey}`);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await fetch(`${endpoint.baseUrl}/audio/transcriptions`, { method: 'POST', headers, body: form, signal });
  } catch (error) {
    if (timeout.aborted) throw new Error(`${endpoint.provider} did not answer within ${options.timeoutMs / 1000} s`);
    throw new Error(`${endpoint.provider} could not be reached: ${(error as Error).message}`);
  }
  const body = await response.text();
  if (!response.ok) {
    const detail = (() => {
      try {
        return String((JSON.parse(body) as { error?: { message?: string } }).error?.message ?? '');
      } catch {
        return '';
      }
    })();
    throw new Error(
      `${endpoint.provider} answered HTTP ${response.status}${detail ? `: ${detail.slice(0, 300)}` : ''}`,
    );
  }
  try {
    const parsed = JSON.parse(body) as { text?: unknown };
    if (typeof parsed.text === 'string') return parsed.text.trim();
  } catch {
    // response_format text, from a server that ignores the field
  }
  return body.trim();
}
