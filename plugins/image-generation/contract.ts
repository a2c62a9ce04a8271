/**
 * What an image-generation provider offers, as the service `image-generation:<id>`: the tool
 * picks the provider from the model ref (`openai/gpt-image-2`) and hands it a request; the
 * provider answers with image bytes, or throws an ImageGenerationError whose message is
 * written for the user (the provider's own words, never the key).
 */
export const IMAGE_GENERATION_SERVICE_PREFIX = 'image-generation:';

export interface SourceImage {
  data: Buffer;
  mimeType: string;
  fileName: string;
}

export interface ImageRequest {
  model: string;
  prompt: string;
  count: number;
  size?: string;
  quality?: string;
  outputFormat?: 'png' | 'jpeg' | 'webp';
  background?: 'transparent' | 'opaque' | 'auto';
  /** Reference images: an edit. */
  images: SourceImage[];
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface GeneratedImage {
  data: Buffer;
  mimeType: string;
  revisedPrompt?: string;
}

export type Readiness = { ready: true } | { ready: false; reason: string };

export interface ImageGenerationProvider {
  id: string;
  label: string;
  defaultModel: string;
  readiness(): Readiness;
  generate(request: ImageRequest): Promise<GeneratedImage[]>;
}

export class ImageGenerationError extends Error {
  constructor(provider: string, message: string) {
    super(`${provider}: ${message}`);
    this.name = 'ImageGenerationError';
  }
}

/** The type of image bytes by their signature (PNG, JPEG, GIF, WebP), or undefined. */
export function imageType(data: Buffer): string | undefined {
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= 6 && /^GIF8[79]a$/.test(data.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (
    data.length >= 12 &&
    data.subarray(0, 4).toString('latin1') === 'RIFF' &&
    data.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'image/webp';
  return undefined;
}
