/**
 * The sub-agent limits, as TypeBox: a build input. `npm run gen` writes them into this
 * plugin's manifest (`configContributions`) and into generated/types.ts.
 */
import { Type } from 'typebox';

const Strict = { additionalProperties: false } as const;
const PositiveInt = Type.Integer({ minimum: 1 });

/** `agents.defaults.subagents` and `agents.list[].subagents` (the sub-agents plugin reads them). */
export const SubagentsConfigSchema = Type.Object(
  {
    maxConcurrent: Type.Optional(PositiveInt),
    maxSpawnDepth: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 5,
        description: 'How deep sessions_spawn may nest (default 1: children are leaves).',
      }),
    ),
    maxChildrenPerAgent: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 20,
        description: 'Children one session may have running at once (default 5).',
      }),
    ),
    runTimeoutSeconds: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Default child run timeout (0 = none).' }),
    ),
    archiveAfterMinutes: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Finished children are archived after this long (default 60; 0 keeps them).',
      }),
    ),
    announceTimeoutMs: Type.Optional(PositiveInt),
    model: Type.Optional(
      Type.Union([
        Type.String({ minLength: 1 }),
        Type.Object(
          {
            primary: Type.Optional(Type.String({ minLength: 1 })),
            fallbacks: Type.Optional(Type.Array(Type.String())),
          },
          Strict,
        ),
      ]),
    ),
    thinking: Type.Optional(Type.Enum(['off', 'minimal', 'low', 'medium', 'high'] as const)),
    allowAgents: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'Agent ids sessions_spawn may target besides its own ("*" = any).',
      }),
    ),
  },
  { ...Strict, description: 'Sub-agents (sessions_spawn).' },
);

export const configContributions = { agents: { subagents: SubagentsConfigSchema } };
