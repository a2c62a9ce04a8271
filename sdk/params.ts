/**
 * Reading tool params. The kernel validates params against the tool's schema first; these
 * helpers give the tool typed values and clear messages for what a schema cannot say. A
 * wrong value is the model's mistake to correct, so it becomes an error result (via
 * ParamError and `guard`), never a crash.
 */
import type { ToolResult } from '../kernel/index.js';

export class ParamError extends Error {}

type Params = Record<string, unknown>;

/** A required string; blank counts as missing unless `allowEmpty`. */
export function requiredString(params: Params, name: string, options: { allowEmpty?: boolean } = {}): string {
  const value = params[name];
  if (typeof value !== 'string') throw new ParamError(`"${name}" is required and must be a string`);
  if (!options.allowEmpty && value.trim() === '')
    throw new ParamError(`"${name}" is required and must be a non-empty string`);
  return value;
}

export function optionalString(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ParamError(`"${name}" must be a string`);
  return value;
}

export function optionalNumber(
  params: Params,
  name: string,
  options: { minimum: number; integer?: boolean },
): number | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < options.minimum ||
    (options.integer && !Number.isInteger(value))
  ) {
    throw new ParamError(`"${name}" must be ${options.integer ? 'an integer' : 'a number'} ≥ ${options.minimum}`);
  }
  return value;
}

export function optionalInteger(params: Params, name: string, minimum: number): number | undefined {
  return optionalNumber(params, name, { minimum, integer: true });
}

export function optionalBoolean(params: Params, name: string): boolean | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new ParamError(`"${name}" must be true or false`);
  return value;
}

/** Runs a tool body, turning bad params into an error result the model can act on. */
export async function guard(tool: string, body: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof ParamError)
      return { content: [{ type: 'text', text: `${tool}: ${error.message}` }], isError: true };
    throw error;
  }
}
