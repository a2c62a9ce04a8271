/**
 * Block streaming (`agents.defaults.blockStreamingDefault` / `blockStreamingChunk`, OpenClaw's
 * names), as TypeBox: a build input. `npm run gen` writes them into this plugin's manifest
 * (`configContributions`) and into generated/types.ts.
 */
import { Type } from 'typebox';

const Strict = { additionalProperties: false } as const;

export const BlockStreamingChunkSchema = Type.Object({ minChars: Type.Optional(Type.Integer({ minimum: 1 })), maxChars: Type.Optional(Type.Integer({ minimum: 1 })) }, Strict);

/** Only `agents.defaults` has them. */
export const configContributions = {
  agentDefaults: {
    blockStreamingDefault: Type.Union([Type.Literal('on'), Type.Literal('off')], { description: 'Send long answers in blocks as they are written (default off).' }),
    blockStreamingChunk: BlockStreamingChunkSchema,
  },
};
