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
