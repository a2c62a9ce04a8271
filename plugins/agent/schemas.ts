/**
 * How the agent runs (per agent: timeouts, thinking, the prompt's time zone and budgets; in
 * agents.defaults only: block streaming), OpenClaw's names with the defaults in the
 * descriptions, as TypeBox: a build input. `npm run gen` writes them into this plugin's
 * manifest (`configContributions`) and into generated/types.ts. The loop reads them as
 * AgentSettings, which the models plugin resolves (plugins/models/settings.ts).
 */
import { Type } from 'typebox';

const Strict = { additionalProperties: false } as const;
const Count = (description: string) => Type.Integer({ minimum: 1, description });

export const BlockStreamingChunkSchema = Type.Object(
  { minChars: Type.Optional(Type.Integer({ minimum: 1 })), maxChars: Type.Optional(Type.Integer({ minimum: 1 })) },
  Strict,
);

export const configContributions = {
  agents: {
    timeoutSeconds: Count('Longest agent run, seconds (default 600).'),
    bootstrapMaxChars: Count(
      'Characters of each workspace bootstrap file (AGENTS.md, SOUL.md, …) put in the system prompt (default 20000).',
    ),
    userTimezone: Type.String({
      minLength: 1,
      description: 'IANA time zone of the user, for the system prompt and heartbeat hours (default the host zone).',
    }),
    thinkingDefault: Type.Union(
      [Type.Literal('off'), Type.Literal('minimal'), Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')],
      {
        description: 'Thinking level when a session sets none (default off).',
      },
    ),
    contextTokens: Count("Cap on the model's context window, tokens (default the model's own)."),
    toolResultMaxChars: Count(
      'Characters of one tool result kept (head and tail) before the model sees it (default 100000).',
    ),
  },
  /** Only `agents.defaults` has them. */
  agentDefaults: {
    blockStreamingDefault: Type.Union([Type.Literal('on'), Type.Literal('off')], {
      description: 'Send long answers in blocks as they are written (default off).',
    }),
    blockStreamingChunk: BlockStreamingChunkSchema,
  },
};
