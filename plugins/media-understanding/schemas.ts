/**
 * The media step's settings (`tools.media`, OpenClaw's names), as TypeBox: a build input.
 * `npm run gen` writes them into this plugin's manifest (`configContributions`) and into
 * generated/types.ts. Keys OpenClaw documents that claw does not implement (preferredModel,
 * scope, echoFormat, providerOptions, a model entry's profile) are not declared here, so the
 * config check warns about them ("an OpenClaw setting claw does not implement; ignored")
 * instead of accepting them silently. The `…Schema` exports are in alphabetical order, the order
 * a module namespace lists them in, so `npm run gen` writes the same types under jiti and vitest.
 */
import { Type } from 'typebox';

const Strict = { additionalProperties: false } as const;
const Capability = Type.Enum(['image', 'audio', 'video'] as const);

const shared = {
  maxBytes: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'Largest input in bytes (default 10 MB image, 20 MB audio, 50 MB video).',
    }),
  ),
  maxChars: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Characters of output kept (default: unset for audio, 500 image/video).' }),
  ),
  timeoutSeconds: Type.Optional(
    Type.Number({ exclusiveMinimum: 0, description: 'Limit for one model or CLI call (default 60; video 120).' }),
  ),
  prompt: Type.Optional(Type.String({ minLength: 1, description: 'Prompt for a provider or CLI ({{Prompt}}).' })),
  language: Type.Optional(
    Type.String({ minLength: 1, description: 'Language hint for transcription (ISO-639-1, e.g. "en").' }),
  ),
};

const Attachments = Type.Object(
  {
    mode: Type.Optional(
      Type.Enum(['first', 'all'] as const, { description: 'Process the first matching attachment (default) or all.' }),
    ),
    maxAttachments: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Most attachments processed (default 1; with mode "all", 8).' }),
    ),
  },
  Strict,
);

/** `tools.media.image|audio|video`. */
export const MediaCapabilityConfigSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'false turns the capability off (default on).' })),
    attachments: Type.Optional(Attachments),
    ...shared,
  },
  Strict,
);

/** `tools.media.document` (claw): PDFs and text files, and the pdf tool's limits. */
export const MediaDocumentConfigSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'false leaves documents as the channel noted them.' })),
    maxBytes: Type.Optional(Type.Integer({ minimum: 1, description: 'Largest document in bytes (default 20 MB).' })),
    maxChars: Type.Optional(
      Type.Integer({ minimum: 100, description: 'Characters of extracted text kept (default 50000).' }),
    ),
    maxPages: Type.Optional(Type.Integer({ minimum: 1, description: 'Pages of a PDF read (default 50).' })),
  },
  Strict,
);

/** One `tools.media.models[]` entry: a provider (default) or a local CLI. */
export const MediaModelEntrySchema = Type.Object(
  {
    type: Type.Optional(Type.Enum(['provider', 'cli'] as const, { description: 'provider (default) or cli.' })),
    provider: Type.Optional(
      Type.String({ minLength: 1, description: 'A models.providers id (its baseUrl and apiKey are used).' }),
    ),
    model: Type.Optional(Type.String({ minLength: 1, description: 'Model id sent to the provider.' })),
    baseUrl: Type.Optional(
      Type.String({ minLength: 1, description: "Endpoint for this entry instead of the provider's baseUrl." }),
    ),
    command: Type.Optional(
      Type.String({ minLength: 1, description: 'CLI entries: the program, run without a shell.' }),
    ),
    args: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'CLI entries: its arguments, with {{AttachmentPath}}, {{AttachmentDir}}, {{AttachmentContentType}}, {{OutputDir}}, {{OutputBase}}, {{Prompt}}, {{MaxChars}}, {{Language}} replaced.',
      }),
    ),
    capabilities: Type.Optional(
      Type.Array(Capability, { description: 'What the entry handles (CLI entries need it; providers: audio).' }),
    ),
    ...shared,
  },
  Strict,
);

/** `tools.media`. */
export const MediaToolsConfigSchema = Type.Object(
  {
    concurrency: Type.Optional(Type.Integer({ minimum: 1, description: 'Attachments processed at once (default 2).' })),
    models: Type.Optional(
      Type.Array(MediaModelEntrySchema, { description: 'Provider and CLI entries, tried in order.' }),
    ),
    image: Type.Optional(MediaCapabilityConfigSchema),
    audio: Type.Optional(MediaCapabilityConfigSchema),
    video: Type.Optional(MediaCapabilityConfigSchema),
    document: Type.Optional(MediaDocumentConfigSchema),
  },
  Strict,
);

export const configContributions = { tools: { media: MediaToolsConfigSchema } };
