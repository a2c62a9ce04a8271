/**
 * OpenClaw gateway methods for features claw does not have, so OpenClaw's Control UI and CLI get
 * an answer instead of "unknown method". claw lacks them on purpose or not yet:
 *
 * - canvas, session boards and transcript artifacts (absent-canvas.ts): claw's web UI renders
 *   replies as text; it hosts no widgets and extracts no files from transcripts;
 * - talk, text-to-speech, voice wake and web push (absent-voice.ts): claw has no audio pipeline
 *   and sends no browser notifications;
 * - projects, worktrees, terminals, desktops, portals, attach grants and Claw packages
 *   (absent-workspace.ts): claw runs tools in the agent's workspace and sandboxes only;
 * - user profiles (users.ts): claw authenticates connections (token, password, device), not people.
 *
 * The rule each area follows: a method that lists or reads answers OpenClaw's shape with OpenClaw's
 * empty values (what an OpenClaw gateway says when it has nothing of the kind); a method that would
 * create, change or start something answers UNAVAILABLE naming what claw lacks, never a pretend
 * success. Params are tolerated as OpenClaw's clients send them. This module holds what the areas
 * share (with the SDK's method table); the plugin's index registers each area. Tasks, environments, audit, the system agent
 * and questions (absent-tasks.ts … absent-questions.ts) use its params schemas and `absent`.
 */
import {
  ErrorCodes,
  lacks,
  ProtocolError,
  requiredMethodString,
  type JsonSchema,
  type MethodEntry,
} from '../../sdk/index.js';

/** A mutating method of an absent feature: its required params are still checked first, as OpenClaw does. */
export function unavailable(what: string, scope: string, description: string, required: string[] = []): MethodEntry {
  return {
    scope,
    description,
    handler(params, _ctx, method) {
      for (const key of required) requiredMethodString(method, params, key);
      return lacks(what);
    },
  };
}

/** An object with these required string fields; any other field OpenClaw sends is tolerated. */
export function requiring(...fields: string[]): JsonSchema {
  return {
    type: 'object',
    required: fields,
    properties: Object.fromEntries(fields.map((field) => [field, { type: 'string', minLength: 1 }])),
  };
}

/** An object with a required non-empty list of ids (OpenClaw's batch recovery params). */
export function requiringIds(field: string): JsonSchema {
  return {
    type: 'object',
    required: [field],
    properties: { [field]: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } },
  };
}

/** A change or start request for a missing feature: refused, never pretended. */
export function absent(message: string): never {
  throw new ProtocolError(ErrorCodes.UNAVAILABLE, message);
}
