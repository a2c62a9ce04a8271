/**
 * The OpenAI-compatible Images API as an image-generation provider: `POST {baseUrl}/images/generations`
 * (JSON) to generate, `POST {baseUrl}/images/edits` (multipart, the reference images as files) to
 * edit. The endpoint and key are the OpenAI model provider's (models.providers.openai.baseUrl /
 * apiKey), else OPENAI_API_KEY and https://api.openai.com/v1 — the same trust as the model calls
 * to it. An answer may carry `b64_json` or a `url`; a URL is fetched through the SSRF guard, where
 * only the configured endpoint's own host may be private, and its size is capped.
 */
import { imageFormat, type KernelServices } from '../../sdk/index.js';
import { guardedNet, SsrfBlockedError, type SsrfPolicy } from '../../sdk/net/index.js';
import {
  ImageGenerationError,
  type GeneratedImage,
  type ImageGenerationProvider,
  type ImageRequest,
} from './contract.js';

const DEFAULT_BASE = 'https://api.openai.com/v1';
/** The largest answer read: JSON with base64 images, or one image fetched by URL. */
export const MAX_IMAGE_RESPONSE_BYTES = 64 * 1024 * 1024;

interface OpenAiSection {
  baseUrl?: unknown;
  apiKey?: unknown;
}

type Kernel = Pick<KernelServices, 'capabilities' | 'config' | 'env' | 'redact'> &
  Partial<Pick<KernelServices, 'plugins'>>;

async function readCapped(response: Response, max: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw new ImageGenerationError('openai', `${what} is larger than ${max / 1024 / 1024} MB`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

export function openAiImages(kernel: Kernel): ImageGenerationProvider {
  const section = (): OpenAiSection =>
    (kernel.config().models as { providers?: Record<string, OpenAiSection> } | undefined)?.providers?.openai ?? {};
  const apiKey = (): string | undefined => {
    const configured = section().apiKey;
    return typeof configured === 'string' && configured ? configured : kernel.env.OPENAI_API_KEY || undefined;
  };
  const baseUrl = (): { url: string; userConfigured: boolean } => {
    const configured = section().baseUrl;
    return typeof configured === 'string' && configured
      ? { url: configured.replace(/\/+$/, ''), userConfigured: true }
      : { url: DEFAULT_BASE, userConfigured: false };
  };
  const net = guardedNet(kernel, 'image_generate');

  /** The provider's error text with the key (and any other known secret) masked. */
  const mask = (text: string, key: string): string => kernel.redact.text(text.split(key).join('***'));

  async function post(request: ImageRequest, key: string): Promise<Buffer> {
    const { url: base } = baseUrl();
    const edit = request.images.length > 0;
    const endpoint = `${base}/images/${edit ? 'edits' : 'generations'}`;
    const fields: Record<string, string> = {
      model: request.model,
      prompt: request.prompt,
      n: String(request.count),
      ...(request.size ? { size: request.size } : {}),
      ...(request.quality ? { quality: request.quality } : {}),
      ...(request.outputFormat ? { output_format: request.outputFormat } : {}),
      ...(request.background ? { background: request.background } : {}),
    };
    let body: string | FormData;
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (edit) {
      body = new FormData();
      for (const [name, value] of Object.entries(fields)) body.append(name, value);
      const field = request.images.length > 1 ? 'image[]' : 'image';
      for (const image of request.images)
        body.append(field, new Blob([new Uint8Array(image.data)], { type: image.mimeType }), image.fileName);
    } else {
      body = JSON.stringify({ ...fields, n: request.count });
      headers['content-type'] = 'application/json';
    }
    const signals = [AbortSignal.timeout(request.timeoutMs), ...(request.signal ? [request.signal] : [])];
    let response: Response;
    try {
      response = await fetch(endpoint, { method: 'POST', headers, body, signal: AbortSignal.any(signals) });
    } catch (error) {
      const cause =
        (error as Error).name === 'TimeoutError' ? `timed out after ${request.timeoutMs} ms` : (error as Error).message;
      throw new ImageGenerationError('openai', `could not reach ${endpoint}: ${mask(cause, key)}`);
    }
    const data = await readCapped(response, MAX_IMAGE_RESPONSE_BYTES, 'the answer');
    if (!response.ok) {
      let message = data.toString('utf8').slice(0, 500);
      try {
        const parsed = JSON.parse(data.toString('utf8')) as { error?: { message?: string } | string };
        message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? message);
      } catch {
        // Not JSON: the start of the body says what went wrong.
      }
      const hint =
        response.status === 401 || response.status === 403
          ? ' (check models.providers.openai.apiKey or OPENAI_API_KEY)'
          : '';
      throw new ImageGenerationError(
        'openai',
        `the images API answered HTTP ${response.status}: ${mask(message.trim(), key)}${hint}`,
      );
    }
    return data;
  }

  async function fetchImage(url: string, request: ImageRequest): Promise<Buffer> {
    const { url: base, userConfigured } = baseUrl();
    const policy: SsrfPolicy = userConfigured ? { allowedHostnames: [new URL(base).hostname] } : {};
    try {
      const response = await net.fetch(url, {
        policy,
        maxRedirects: 3,
        timeoutMs: request.timeoutMs,
        maxBytes: MAX_IMAGE_RESPONSE_BYTES,
        headers: { accept: 'image/*' },
        ...(request.signal ? { signal: request.signal } : {}),
      });
      if (response.truncated)
        throw new ImageGenerationError(
          'openai',
          `the image at ${url} is larger than ${MAX_IMAGE_RESPONSE_BYTES / 1024 / 1024} MB`,
        );
      if (response.status !== 200)
        throw new ImageGenerationError('openai', `the image at ${url} answered HTTP ${response.status}`);
      return response.body;
    } catch (error) {
      if (error instanceof ImageGenerationError) throw error;
      if (error instanceof SsrfBlockedError || (error as Error).name === 'SsrfBlockedError')
        throw new ImageGenerationError(
          'openai',
          `refused to fetch the image the provider linked (${url}): ${(error as Error).message}`,
        );
      throw new ImageGenerationError('openai', `could not fetch the image at ${url}: ${(error as Error).message}`);
    }
  }

  return {
    id: 'openai',
    label: 'OpenAI-compatible Images API',
    defaultModel: 'gpt-image-2',
    readiness: () =>
      apiKey()
        ? { ready: true }
        : { ready: false, reason: 'no API key: set models.providers.openai.apiKey or OPENAI_API_KEY' },
    async generate(request: ImageRequest): Promise<GeneratedImage[]> {
      const key = apiKey();
      if (!key)
        throw new ImageGenerationError('openai', 'no API key: set models.providers.openai.apiKey or OPENAI_API_KEY');
      const raw = await post(request, key);
      let answer: { data?: Array<{ b64_json?: string; url?: string; revised_prompt?: string }> };
      try {
        answer = JSON.parse(raw.toString('utf8')) as typeof answer;
      } catch {
        throw new ImageGenerationError('openai', 'the images API answered with something that is not JSON');
      }
      const items = Array.isArray(answer.data) ? answer.data : [];
      if (items.length === 0) throw new ImageGenerationError('openai', 'the images API answered without any image');
      const images: GeneratedImage[] = [];
      for (const item of items) {
        const data =
          typeof item.b64_json === 'string'
            ? Buffer.from(item.b64_json, 'base64')
            : typeof item.url === 'string'
              ? await fetchImage(item.url, request)
              : undefined;
        if (!data) throw new ImageGenerationError('openai', 'an image in the answer has neither b64_json nor url');
        const mimeType = imageFormat(data);
        if (!mimeType)
          throw new ImageGenerationError(
            'openai',
            'the images API returned data that is not a PNG, JPEG, GIF or WebP image',
          );
        images.push({ data, mimeType, ...(item.revised_prompt ? { revisedPrompt: item.revised_prompt } : {}) });
      }
      return images;
    },
  };
}
