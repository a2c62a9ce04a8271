/**
 * The settings memory-core reads for whichever memory plugin holds the slot
 * (`agents.defaults.memorySearch` / `contextLimits`, per agent in `agents.list[]`), as
 * TypeBox: a build input, not shipped. `npm run gen` writes them into memory-core's
 * manifest, so the keys are known while memory-core is installed, whichever backend is on.
 */
import { Type } from 'typebox';

const Strict = { additionalProperties: false } as const;
const Open = { additionalProperties: true } as const;

/** `agents.defaults.contextLimits` / `agents.list[].contextLimits`: the memory_get excerpt (OpenClaw's names and defaults). */
const ContextLimitsSchema = Type.Object(
  {
    memoryGetMaxChars: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Characters memory_get returns at most before it stops and says how to read on (default 12000).',
      }),
    ),
    memoryGetDefaultLines: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Lines memory_get reads when the call gives no lines (default 120).' }),
    ),
  },
  Strict,
);

/** `agents.defaults.memorySearch` / `agents.list[].memorySearch`: the embedding provider keys beside these are read by the embeddings plugin. */
const MemorySearchConfigSchema = Type.Object(
  {
    maxFileBytes: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'Index at most this many bytes of each memory file; a larger file is indexed up to it, with a note (default 2097152 = 2 MiB; 0: no cap).',
      }),
    ),
    sources: Type.Optional(
      Type.Array(Type.Union([Type.Literal('memory'), Type.Literal('sessions')]), {
        description:
          'What memory_search indexes (default ["memory"]); "sessions" adds this agent\'s own session transcripts (needs experimental.sessionMemory; SQLite backend only).',
      }),
    ),
    experimental: Type.Optional(
      Type.Object(
        {
          sessionMemory: Type.Optional(
            Type.Boolean({
              description: 'Opt in to indexing session transcripts (with sources: ["memory", "sessions"]).',
            }),
          ),
        },
        Strict,
      ),
    ),
  },
  Open,
);

export const configContributions = {
  agents: { memorySearch: MemorySearchConfigSchema, contextLimits: ContextLimitsSchema },
};
