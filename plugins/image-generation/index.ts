/**
 * image_generate: generate or edit images through an image-generation provider (a service
 * `image-generation:<id>`; this plugin offers the OpenAI-compatible one). The images are
 * saved atomically and owner-only under <stateDir>/media/image-generation/ and named in the
 * result's `details.media`, so the turn's reply carries them to the channel. Runs through the
 * kernel's tool choke point like every tool.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  definePlugin,
  errorResult,
  jsonResult,
  writeFileAtomic,
  type ToolContext,
  type ToolResult,
} from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import {
  IMAGE_GENERATION_SERVICE_PREFIX,
  ImageGenerationError,
  type ImageGenerationProvider,
  type SourceImage,
} from './contract.js';
import { openAiImages } from './openai.js';
import { readSourceImage, SourceRefused } from './sources.js';

interface Params {
  action?: 'generate' | 'list';
  prompt?: string;
  model?: string;
  image?: string;
  images?: string[];
  size?: string;
  aspectRatio?: string;
  resolution?: string;
  quality?: string;
  outputFormat?: 'png' | 'jpeg' | 'webp';
  background?: 'transparent' | 'opaque' | 'auto';
  count?: number;
  timeoutMs?: number;
  filename?: string;
}

interface ImageModels {
  primary?: string;
  fallbacks?: string[];
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 180_000;
const MAX_TIMEOUT_MS = 600_000;
const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** OpenAI's sizes for an aspect-ratio hint: landscape, portrait or square. */
function sizeForAspect(aspect: string): string | undefined {
  const match = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(aspect.trim());
  if (!match) return undefined;
  const ratio = Number(match[1]) / Number(match[2]);
  if (!(ratio > 0)) return undefined;
  return ratio > 1.2 ? '1536x1024' : ratio < 1 / 1.2 ? '1024x1536' : '1024x1024';
}

export default definePlugin({
  id: 'image-generation',
  register(api) {
    const kernel = api.kernel;
    api.registerService({ id: `${IMAGE_GENERATION_SERVICE_PREFIX}openai`, api: openAiImages(kernel) });

    const providerIds = () =>
      kernel.capabilities
        .list('service')
        .map((info) => info.name)
        .filter((name) => name.startsWith(IMAGE_GENERATION_SERVICE_PREFIX))
        .map((name) => name.slice(IMAGE_GENERATION_SERVICE_PREFIX.length))
        .sort();
    const provider = (id: string) =>
      useService<ImageGenerationProvider>(kernel, `${IMAGE_GENERATION_SERVICE_PREFIX}${id}`).catch(() => undefined);

    /** agents.list[<agent>].mediaModels.image over agents.defaults.mediaModels.image. */
    const settings = (agentId: string | undefined): ImageModels => {
      const agents = kernel.config().agents as
        | {
            defaults?: { mediaModels?: { image?: ImageModels } };
            list?: Array<{ id?: string; mediaModels?: { image?: ImageModels } }>;
          }
        | undefined;
      const own = agents?.list?.find((entry) => entry.id === agentId)?.mediaModels?.image;
      return { ...(agents?.defaults?.mediaModels?.image ?? {}), ...(own ?? {}) };
    };

    /** The models to try: the call's, else primary then fallbacks, else every ready provider's default. */
    async function candidates(params: Params, configured: ImageModels): Promise<string[] | { error: string }> {
      if (params.model) return [params.model];
      const listed = [configured.primary, ...(configured.fallbacks ?? [])].filter((ref): ref is string => !!ref);
      if (listed.length) return listed;
      const ready: string[] = [];
      const reasons: string[] = [];
      for (const id of providerIds()) {
        const found = await provider(id);
        const readiness = found?.readiness();
        if (found && readiness?.ready) ready.push(`${id}/${found.defaultModel}`);
        else if (readiness && !readiness.ready) reasons.push(`${id}: ${readiness.reason}`);
      }
      if (ready.length) return ready;
      return {
        error: `no image-generation provider is configured (${reasons.join('; ') || 'none installed'}); set agents.defaults.mediaModels.image.primary and the provider's key`,
      };
    }

    async function generate(params: Params, ctx: ToolContext): Promise<ToolResult> {
      const prompt = params.prompt?.trim();
      if (!prompt) return errorResult('image_generate: prompt is required to generate or edit an image');
      const configured = settings(ctx.agentId);
      const refs = await candidates(params, configured);
      if ('error' in refs) return errorResult(`image_generate: ${refs.error}`);
      const workspace = ctx.workspaceDir ?? kernel.paths.workspaceDir;
      const mediaDir = join(kernel.paths.stateDir, 'media');
      const sources: SourceImage[] = [];
      try {
        for (const path of [...(params.image ? [params.image] : []), ...(params.images ?? [])])
          sources.push(await readSourceImage(path, workspace, mediaDir));
      } catch (error) {
        if (error instanceof SourceRefused) return errorResult(`image_generate: ${error.message}`);
        throw error;
      }
      const ignored: string[] = [];
      let size = params.size;
      if (!size && params.aspectRatio) {
        size = sizeForAspect(params.aspectRatio);
        if (!size) ignored.push('aspectRatio');
      }
      if (params.resolution) ignored.push('resolution');
      const timeoutMs = Math.min(params.timeoutMs ?? configured.timeoutMs ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
      const failures: string[] = [];
      for (const ref of refs) {
        const slash = ref.indexOf('/');
        if (slash <= 0) {
          failures.push(`"${ref}" is not provider/model (for example openai/gpt-image-2)`);
          continue;
        }
        const id = ref.slice(0, slash);
        const found = await provider(id);
        if (!found) {
          failures.push(
            `no enabled plugin offers the image-generation provider "${id}" (available: ${providerIds().join(', ') || 'none'})`,
          );
          continue;
        }
        try {
          const images = await found.generate({
            model: ref.slice(slash + 1),
            prompt,
            count: Math.min(4, Math.max(1, Math.floor(params.count ?? 1))),
            ...(size ? { size } : {}),
            ...(params.quality ? { quality: params.quality } : {}),
            ...(params.outputFormat ? { outputFormat: params.outputFormat } : {}),
            ...(params.background ? { background: params.background } : {}),
            images: sources,
            timeoutMs,
            ...(ctx.signal ? { signal: ctx.signal } : {}),
          });
          const hint = params.filename
            ?.replace(/\.[a-z0-9]+$/i, '')
            .replace(/[^\w-]+/g, '-')
            .slice(0, 60);
          const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
          const paths = images.map((image, index) => {
            const name = `${stamp}-${randomBytes(4).toString('hex')}${hint ? `-${hint}` : ''}${images.length > 1 ? `-${index + 1}` : ''}`;
            const path = join(mediaDir, 'image-generation', `${name}.${EXTENSIONS[image.mimeType] ?? 'img'}`);
            writeFileAtomic(path, image.data);
            return path;
          });
          const result = jsonResult({
            provider: id,
            model: ref.slice(slash + 1),
            action: sources.length ? 'edit' : 'generate',
            count: paths.length,
            media: paths,
            ...(ignored.length ? { ignoredOverrides: ignored } : {}),
            ...(failures.length ? { attempts: failures } : {}),
            ...(images.some((image) => image.revisedPrompt)
              ? { revisedPrompts: images.map((image) => image.revisedPrompt ?? '') }
              : {}),
          });
          const note = `${sources.length ? 'Edited' : 'Generated'} ${paths.length} image${paths.length === 1 ? '' : 's'} with ${ref}; ${paths.length === 1 ? 'it goes' : 'they go'} out with your reply (no need to repeat the path).`;
          return {
            content: [{ type: 'text', text: `${note}\n${paths.map((path) => `MEDIA:${path}`).join('\n')}` }],
            details: result.details,
          };
        } catch (error) {
          if (!(error instanceof ImageGenerationError)) throw error;
          failures.push(error.message);
          if (params.model) break;
        }
      }
      return errorResult(`image_generate failed: ${failures.join('; ')}`, { attempts: failures });
    }

    async function list(): Promise<ToolResult> {
      const rows = [];
      for (const id of providerIds()) {
        const found = await provider(id);
        if (!found) continue;
        const readiness = found.readiness();
        rows.push({
          id,
          label: found.label,
          defaultModel: `${id}/${found.defaultModel}`,
          ready: readiness.ready,
          ...(readiness.ready ? {} : { reason: readiness.reason }),
        });
      }
      return jsonResult({ providers: rows });
    }

    api.registerTool({
      name: 'image_generate',
      label: 'Image generation',
      description:
        'Generate an image from a prompt, or edit images (image/images: workspace paths) with a prompt. The images are sent with your reply automatically. action "list" shows the providers.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          action: { type: 'string', enum: ['generate', 'list'], description: 'generate (default) or list' },
          prompt: {
            type: 'string',
            minLength: 1,
            maxLength: 32_000,
            description: 'What to draw, or how to change the image',
          },
          model: { type: 'string', minLength: 1, description: 'provider/model override, e.g. openai/gpt-image-2' },
          image: { type: 'string', minLength: 1, description: 'One reference image to edit (workspace path)' },
          images: {
            type: 'array',
            maxItems: 5,
            items: { type: 'string', minLength: 1 },
            description: 'Several reference images (workspace paths)',
          },
          size: {
            type: 'string',
            pattern: '^(auto|\\d{2,5}x\\d{2,5})$',
            description: 'e.g. 1024x1024, 1536x1024, 1024x1536',
          },
          aspectRatio: { type: 'string', description: 'e.g. 1:1, 3:2, 16:9 (mapped to the closest size)' },
          resolution: { type: 'string', enum: ['1K', '2K', '4K'] },
          quality: { type: 'string', enum: ['low', 'medium', 'high', 'xhigh', 'max', 'auto'] },
          outputFormat: { type: 'string', enum: ['png', 'jpeg', 'webp'] },
          background: { type: 'string', enum: ['transparent', 'opaque', 'auto'] },
          count: { type: 'integer', minimum: 1, maximum: 4, description: 'Number of images (default 1)' },
          timeoutMs: { type: 'integer', minimum: 1000, maximum: MAX_TIMEOUT_MS },
          filename: { type: 'string', maxLength: 100, description: 'Output file name hint' },
        },
      },
      execute: (params: Params, ctx: ToolContext) => (params.action === 'list' ? list() : generate(params, ctx)),
    });
  },
});
