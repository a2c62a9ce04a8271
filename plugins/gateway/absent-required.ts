/**
 * Params schemas and the refusal shared by absent-tasks, absent-environments, absent-audit,
 * absent-system-agent and absent-questions: schemas that tolerate what OpenClaw's clients send
 * beside their required fields, and the error a request to change or start such a feature gets.
 */
import { ErrorCodes, ProtocolError, type JsonSchema } from '../../sdk/index.js';

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
