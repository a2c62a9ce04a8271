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
 * share; the plugin's index registers each area. Tasks, environments, audit, the system agent
 * and questions (absent-tasks.ts … absent-questions.ts) use its params schemas and `absent`.
 */
import {
  ErrorCodes,
  ProtocolError,
  type GatewayMethodContext,
  type JsonSchema,
  type PluginApi,
} from '../../sdk/index.js';

/** OpenClaw's clients may send params newer than claw knows: tolerated, not refused. */
export const ANY_PARAMS: JsonSchema = { type: 'object' };

export type Params = Record<string, unknown>;

export interface AbsentMethod {
  /** OpenClaw's scope for the method (its method-scopes table). */
  scope?: string;
  description: string;
  handler(params: Params, ctx: GatewayMethodContext, method: string): unknown;
}

export function registerAll(api: PluginApi, methods: Record<string, AbsentMethod>): void {
  for (const [name, { handler, ...spec }] of Object.entries(methods))
    api.registerGatewayMethod(name, {
      params: ANY_PARAMS,
      ...spec,
      handler: (params: Params, ctx: GatewayMethodContext) => handler(params, ctx, name),
    });
}

/** The answer to a method that would change or start something claw has no counterpart for. */
export function lacks(what: string): never {
  throw new ProtocolError(ErrorCodes.UNAVAILABLE, `claw has no ${what}`);
}

/** A param OpenClaw requires, as a non-empty string, or INVALID_REQUEST naming the method and param. */
export function requiredString(method: string, params: Params, key: string): string {
  const value = params[key];
  if (typeof value === 'string' && value.trim()) return value.trim();
  throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `${method} requires ${key} (a non-empty string)`);
}

/** A mutating method of an absent feature: its required params are still checked first, as OpenClaw does. */
export function unavailable(what: string, scope: string, description: string, required: string[] = []): AbsentMethod {
  return {
    scope,
    description,
    handler(params, _ctx, method) {
      for (const key of required) requiredString(method, params, key);
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
