/**
 * Gateway methods written as a table, name → scope, description and handler: for plugins that
 * answer many small OpenClaw methods (the gateway's node and setup-code methods, the methods
 * for features claw lacks). Params are tolerated as OpenClaw's newer clients send them; a
 * handler checks what it needs itself.
 */
import { ErrorCodes } from './protocol/constants.js';
import { ProtocolError } from './protocol/frames.js';
import type { GatewayMethodContext } from './types/capabilities.js';
import type { PluginApi } from './types/plugin.js';

export type MethodParams = Record<string, unknown>;

export interface MethodEntry {
  /** OpenClaw's scope for the method (its method-scopes table). */
  scope?: string;
  description: string;
  handler(params: MethodParams, ctx: GatewayMethodContext, method: string): unknown;
}

export function registerMethodTable(api: PluginApi, methods: Record<string, MethodEntry>): void {
  for (const [name, { handler, ...spec }] of Object.entries(methods))
    api.registerGatewayMethod(name, {
      params: { type: 'object' },
      ...spec,
      handler: (params: MethodParams, ctx: GatewayMethodContext) => handler(params, ctx, name),
    });
}

/** The answer to a method that would change or start something claw has no counterpart for. */
export function lacks(what: string): never {
  throw new ProtocolError(ErrorCodes.UNAVAILABLE, `claw has no ${what}`);
}

/** A param OpenClaw requires, as a non-empty string, or INVALID_REQUEST naming the method and param. */
export function requiredMethodString(method: string, params: MethodParams, key: string): string {
  const value = params[key];
  if (typeof value === 'string' && value.trim()) return value.trim();
  throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `${method} requires ${key} (a non-empty string)`);
}
