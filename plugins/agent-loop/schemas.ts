/**
 * How the loop keeps a long session inside the context window (`agents.defaults.compaction`,
 * `agents.defaults.contextPruning`, OpenClaw's names; defaults in the descriptions), as
 * TypeBox: a build input. `npm run gen` writes them into this plugin's manifest
 * (`configContributions`) and into generated/types.ts.
 */
import { Type } from 'typebox';

const Strict = { additionalProperties: false } as const;
const Count = (description: string) => Type.Integer({ minimum: 1, description });
const Ratio = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
const ToolNames = Type.Array(Type.String({ minLength: 1 }));
const DurationSetting = Type.Union([
  Type.Number({ minimum: 0 }),
  Type.String({ pattern: '^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h)?\\s*$' }),
]);

export const CompactionConfigSchema = Type.Object(
  {
    reserveTokensFloor: Type.Optional(
      Count('Tokens kept free for the reply when deciding to compact (default 20000).'),
    ),
    keepRecentTokens: Type.Optional(Count('Tokens of the most recent messages kept as they are (default 20000).')),
    memoryFlush: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(
            Type.Boolean({ description: 'A silent turn before compaction to write durable memories (default true).' }),
          ),
          softThresholdTokens: Type.Optional(Count('How far before compaction the flush runs, tokens (default 4000).')),
          systemPrompt: Type.Optional(Type.String({ minLength: 1 })),
          prompt: Type.Optional(Type.String({ minLength: 1 })),
        },
        Strict,
      ),
    ),
  },
  { ...Strict, description: 'When a long session is summarised.' },
);

export const ContextPruningConfigSchema = Type.Object(
  {
    mode: Type.Optional(
      Type.Union([Type.Literal('off'), Type.Literal('cache-ttl')], {
        description: 'Trim old tool results from what the model sees (default off).',
      }),
    ),
    ttl: Type.Optional(DurationSetting),
    keepLastAssistants: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Tool results after the last N assistant messages are never pruned (default 3).',
      }),
    ),
    softTrimRatio: Type.Optional(
      Ratio('Context share above which old tool results are cut to head and tail (default 0.3).'),
    ),
    hardClearRatio: Type.Optional(Ratio('Context share above which old tool results are cleared (default 0.5).')),
    minPrunableToolChars: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Clear only when at least this many characters can go (default 50000).',
      }),
    ),
    softTrim: Type.Optional(
      Type.Object(
        {
          maxChars: Type.Optional(Type.Integer({ minimum: 1 })),
          headChars: Type.Optional(Type.Integer({ minimum: 0 })),
          tailChars: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        Strict,
      ),
    ),
    hardClear: Type.Optional(
      Type.Object({ enabled: Type.Optional(Type.Boolean()), placeholder: Type.Optional(Type.String()) }, Strict),
    ),
    tools: Type.Optional(Type.Object({ allow: Type.Optional(ToolNames), deny: Type.Optional(ToolNames) }, Strict)),
  },
  Strict,
);

/** Only `agents.defaults` has them: every agent compacts and prunes alike. */
export const configContributions = {
  agentDefaults: { compaction: CompactionConfigSchema, contextPruning: ContextPruningConfigSchema },
};
