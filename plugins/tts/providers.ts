/**
 * The speech providers this plugin offers as `tts:<id>` services: an OpenAI-compatible
 * `POST {baseUrl}/audio/speech`, an ElevenLabs-compatible `POST {baseUrl}/v1/text-to-speech/{voiceId}`
 * (both through the SSRF guard; a base URL the user set is trusted even on a private host),
 * and OpenClaw's tts-local-cli: a configured command run without a shell.
 */
import { request as httpsRequest } from 'node:https';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePrivateDir, type KernelServices } from '../../sdk/index.js';
import { guardedNet, nodeHttp } from '../../sdk/net/index.js';
import type { SpeechProvider, SpeechRequest } from '../../sdk/tts.js';
import { LOCAL_CLI } from './settings.js';
import { MAX_AUDIO_BYTES, runCommand } from './run.js';

type Block = Readonly<Record<string, unknown>>;
const str = (block: Block, ...keys: string[]): string | undefined => {
  for (const key of keys)
    if (typeof block[key] === 'string' && (block[key] as string).trim()) return block[key] as string;
  return undefined;
};

/** A JSON POST through the SSRF guard, the answer read up to the audio cap. */
async function postJson(
  kernel: Pick<KernelServices, 'capabilities'>,
  provider: string,
  url: URL,
  trusted: boolean,
  headers: Record<string, string>,
  body: unknown,
  request: SpeechRequest,
): Promise<{ status: number; type: string; body: Buffer }> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`${provider}: baseUrl must be http(s), not ${url.protocol}`);
  const net = guardedNet(kernel, `the ${provider} speech provider`);
  const check = await net.checkUrl(url, trusted ? { allowedHostnames: [url.hostname.replace(/^\[|\]$/g, '')] } : {});
  if (!check.allowed) throw new Error(`${provider}: ${url.origin} refused: ${check.reason}`);
  if (url.protocol === 'http:' && !trusted) throw new Error(`${provider}: a public endpoint must use https`);
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : nodeHttp().request;
    const req = send(
      url,
      {
        method: 'POST',
        lookup: check.lookup,
        headers: { 'content-type': 'application/json', 'content-length': String(payload.length), ...headers },
        signal: request.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > MAX_AUDIO_BYTES) return req.destroy(new Error(`${provider}: the audio is larger than 50 MiB`));
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(request.timeoutMs, () =>
      req.destroy(new Error(`${provider}: no answer within ${request.timeoutMs} ms`)),
    );
    req.on('error', (error) =>
      reject(error.message.startsWith(provider) ? error : new Error(`${provider}: ${error.message}`)),
    );
    req.end(payload);
  });
}

function httpFailure(provider: string, status: number, keyHint: string): Error {
  const hint =
    status === 401 || status === 403 ? `; check the API key (${keyHint})` : status === 429 ? '; rate limited' : '';
  return new Error(`${provider}: the speech API answered HTTP ${status}${hint}`);
}

function withSlash(base: string): string {
  return base.endsWith('/') ? base : `${base}/`;
}

function parseBase(provider: string, base: string): URL {
  try {
    return new URL(withSlash(base));
  } catch {
    throw new Error(`${provider}: baseUrl "${base}" is not a valid URL`);
  }
}

export function openaiProvider(kernel: KernelServices): SpeechProvider {
  const models = () =>
    ((kernel.config().models as { providers?: Record<string, { apiKey?: string; baseUrl?: string }> } | undefined)
      ?.providers?.openai ?? {}) as { apiKey?: string; baseUrl?: string };
  const apiKey = (block: Block) => str(block, 'apiKey') ?? models().apiKey ?? (kernel.env.OPENAI_API_KEY || undefined);
  return {
    id: 'openai',
    label: 'OpenAI-compatible speech',
    readiness: (block) =>
      apiKey(block) || str(block, 'baseUrl')
        ? { ready: true }
        : {
            ready: false,
            reason: 'no API key (tts.providers.openai.apiKey, models.providers.openai or OPENAI_API_KEY)',
          },
    async synthesize(request) {
      const block = request.settings;
      const own = str(block, 'baseUrl') ?? models().baseUrl;
      const base = parseBase('openai', own ?? 'https://api.openai.com/v1');
      const format = str(block, 'responseFormat') ?? (request.voiceNote ? 'opus' : 'mp3');
      const extra = (block.extraBody ?? block.extra_body ?? {}) as Record<string, unknown>;
      const body: Record<string, unknown> = {
        model: str(block, 'model') ?? 'gpt-4o-mini-tts',
        input: request.text,
        voice: str(block, 'speakerVoice', 'voice') ?? 'coral',
        response_format: format,
        ...(typeof block.speed === 'number' ? { speed: block.speed } : {}),
        ...(str(block, 'instructions') ? { instructions: block.instructions } : {}),
      };
      for (const [key, value] of Object.entries(extra))
        if (!['__proto__', 'constructor', 'prototype'].includes(key)) body[key] = value;
      const key = apiKey(block);
      const answer = await postJson(
        kernel,
        'openai',
        new URL('audio/speech', base),
        own !== undefined,
        key ? { authorization: `Bearer ${key}` } : {},
        body,
        request,
      );
      if (answer.status !== 200) throw httpFailure('openai', answer.status, 'OPENAI_API_KEY');
      if (answer.body.length === 0 || /json|text\//i.test(answer.type))
        throw new Error('openai: the speech API answered without audio');
      return { audio: answer.body, format };
    },
  };
}

export function elevenlabsProvider(kernel: KernelServices): SpeechProvider {
  const apiKey = (block: Block) =>
    str(block, 'apiKey') ?? (kernel.env.ELEVENLABS_API_KEY || kernel.env.XI_API_KEY || undefined);
  return {
    id: 'elevenlabs',
    label: 'ElevenLabs-compatible speech',
    readiness: (block) =>
      apiKey(block)
        ? { ready: true }
        : { ready: false, reason: 'no API key (tts.providers.elevenlabs.apiKey or ELEVENLABS_API_KEY)' },
    async synthesize(request) {
      const block = request.settings;
      const key = apiKey(block);
      if (!key) throw new Error('elevenlabs: no API key');
      const own = str(block, 'baseUrl');
      const base = parseBase('elevenlabs', own ?? 'https://api.elevenlabs.io');
      const voiceId = str(block, 'speakerVoiceId', 'voiceId') ?? 'pMsXgVXv3BLzUgSXRplE';
      const format = request.voiceNote ? 'opus_48000_64' : 'mp3_44100_128';
      const url = new URL(`v1/text-to-speech/${encodeURIComponent(voiceId)}`, base);
      url.searchParams.set('output_format', format);
      const settings = { ...((block.voiceSettings as Record<string, unknown> | undefined) ?? {}) };
      if (typeof block.speed === 'number') settings.speed = block.speed;
      const answer = await postJson(
        kernel,
        'elevenlabs',
        url,
        own !== undefined,
        { 'xi-api-key': key, accept: 'audio/*' },
        {
          text: request.text,
          model_id: str(block, 'model', 'modelId') ?? 'eleven_multilingual_v2',
          ...(Object.keys(settings).length ? { voice_settings: settings } : {}),
          ...(str(block, 'applyTextNormalization') ? { apply_text_normalization: block.applyTextNormalization } : {}),
          ...(str(block, 'languageCode') ? { language_code: block.languageCode } : {}),
          ...(typeof block.seed === 'number' ? { seed: block.seed } : {}),
        },
        request,
      );
      if (answer.status !== 200) throw httpFailure('elevenlabs', answer.status, 'ELEVENLABS_API_KEY');
      if (answer.body.length === 0 || /json|text\//i.test(answer.type))
        throw new Error('elevenlabs: the speech API answered without audio');
      return { audio: answer.body, format: request.voiceNote ? 'opus' : 'mp3' };
    },
  };
}

const PLACEHOLDER = /\{\{\s*(Text|OutputPath|OutputDir|OutputBase)\s*\}\}/g;

/** OpenClaw's tts-local-cli: `command` with `args` ({{Text}}, {{OutputPath}}, …), no shell. */
export function localCliProvider(kernel: KernelServices, tmpRoot: string): SpeechProvider {
  return {
    id: LOCAL_CLI,
    label: 'Local CLI speech',
    readiness: (block) =>
      str(block, 'command')
        ? { ready: true }
        : { ready: false, reason: 'no command (tts.providers.tts-local-cli.command)' },
    async synthesize(request) {
      const block = request.settings;
      const command = str(block, 'command');
      if (!command) throw new Error(`${LOCAL_CLI}: no command configured`);
      const format = str(block, 'outputFormat') ?? 'mp3';
      const args = Array.isArray(block.args) ? (block.args as string[]) : [];
      ensurePrivateDir(tmpRoot);
      const dir = await mkdtemp(join(tmpRoot, 'cli-'));
      try {
        const base = 'speech';
        const output = join(dir, `${base}.${format === 'opus' ? 'ogg' : format}`);
        // Text that starts with "-" would read as an option ("-w /elsewhere"): a leading space keeps it text.
        const values: Record<string, string> = {
          Text: request.text.startsWith('-') ? ` ${request.text}` : request.text,
          OutputPath: output,
          OutputDir: dir,
          OutputBase: base,
        };
        const uses = (name: string) =>
          args.some((arg) => arg.includes(`{{${name}}}`) || new RegExp(`\\{\\{\\s*${name}\\s*\\}\\}`).test(arg));
        const filled = args.map((arg) => arg.replace(PLACEHOLDER, (_all, name: string) => values[name]!));
        const env = { ...kernel.env, ...((block.env as Record<string, string> | undefined) ?? {}) };
        const timeoutMs = typeof block.timeoutMs === 'number' ? block.timeoutMs : request.timeoutMs;
        const stdout = await runCommand(`${LOCAL_CLI} (${command})`, command, filled, {
          ...(uses('Text') ? {} : { input: request.text }),
          timeoutMs,
          ...(str(block, 'cwd') ? { cwd: block.cwd as string } : {}),
          env,
          signal: request.signal,
        });
        const audio = uses('OutputPath') ? await readFile(output).catch(() => Buffer.alloc(0)) : stdout;
        if (audio.length === 0) throw new Error(`${LOCAL_CLI} (${command}) produced no audio`);
        if (audio.length > MAX_AUDIO_BYTES) throw new Error(`${LOCAL_CLI} (${command}) wrote more than 50 MiB`);
        return { audio, format };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
