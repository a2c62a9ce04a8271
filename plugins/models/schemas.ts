/**
 * The models plugin's config, as TypeBox: a build input. `npm run gen` writes it into this
 * plugin's manifest (`configContributions`). `retry.provider` takes OpenClaw's names for the
 * recovery budget plus `fallbackRetries`, the budget when a fallback could answer instead.
 */
import { Type } from 'typebox';

const Strict = { additionalProperties: false } as const;

export const ProviderRetrySchema = Type.Object(
  {
    maxRetries: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Retries of a transient model failure (5xx, overload, timeout) with no fallback (default 8).',
      }),
    ),
    maxRetryDelayMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'Longest server-asked wait (Retry-After) honoured before a fallback is tried instead, ms; 0 honours any (default 60000).',
      }),
    ),
    fallbackRetries: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'Retries of a transient failure when a fallback model could answer, within 5 s; a timeout is not retried then (default 1).',
      }),
    ),
  },
  Strict,
);

export const configContributions = {
  agents: {
    retry: Type.Object({ provider: Type.Optional(ProviderRetrySchema) }, Strict),
  },
};
