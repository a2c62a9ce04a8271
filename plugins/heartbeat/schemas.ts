/**
 * The heartbeat's settings, as TypeBox: a build input. `npm run gen` writes them into this
 * plugin's manifest (`configContributions`, what config validation reads without loading the
 * plugin) and into generated/types.ts (the types settings.ts reads them with).
 */
import { Type } from 'typebox';

const Strict = { additionalProperties: false } as const;

/** `heartbeat.activeHours`. */
export const ActiveHoursSchema = Type.Object(
  {
    start: Type.String({
      pattern: '^([01]\\d|2[0-3]):[0-5]\\d$',
      description: 'Start of the window, HH:MM (inclusive).',
    }),
    end: Type.String({
      pattern: '^(([01]\\d|2[0-3]):[0-5]\\d|24:00)$',
      description: 'End of the window, HH:MM (exclusive; 24:00 for end of day).',
    }),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          '"user" (agents.defaults.userTimezone, else the host zone; default), "local" (the host zone) or an IANA zone.',
      }),
    ),
  },
  {
    ...Strict,
    description:
      'Scheduled heartbeats run only inside this daily window; outside it they are skipped (recorded as quiet-hours).',
  },
);

/**
 * `agents.defaults.heartbeat` / `agents.list[].heartbeat` (OpenClaw's names): periodic turns
 * in the agent's main session. Defaults in the descriptions.
 */
export const HeartbeatConfigSchema = Type.Object(
  {
    every: Type.Optional(
      Type.String({
        pattern: '^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h|d)?\\s*$',
        description:
          'How often: a duration such as "30m", "1h", "45s" (a bare number is minutes; default 30m; "0m" turns the schedule off).',
      }),
    ),
    model: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Model for heartbeat turns ("provider/model" or an alias); default the agent model.',
      }),
    ),
    target: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Where an alert goes: "last" (the main session\'s last channel and recipient, default), "none", or a channel id such as "telegram" (with `to`).',
      }),
    ),
    to: Type.Optional(
      Type.String({ minLength: 1, description: 'Recipient on the target channel (a chat id, a number).' }),
    ),
    accountId: Type.Optional(
      Type.String({ minLength: 1, description: 'Channel account to send from (multi-account channels).' }),
    ),
    prompt: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'The heartbeat message sent to the agent (replaces the built-in one).',
      }),
    ),
    ackMaxChars: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'A reply with HEARTBEAT_OK at its start or end and at most this many other characters is not delivered (default 300).',
      }),
    ),
    timeoutSeconds: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Longest heartbeat turn (default: the agent timeout).' }),
    ),
    isolatedSession: Type.Optional(
      Type.Boolean({
        description:
          'Run each heartbeat in a fresh session of its own (<main key>:heartbeat) instead of the main session: no conversation history, fewer tokens (default false). System events of the main session still show.',
      }),
    ),
    activeHours: Type.Optional(ActiveHoursSchema),
  },
  Strict,
);

export const configContributions = { agents: { heartbeat: HeartbeatConfigSchema } };
