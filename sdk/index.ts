/**
 * The plugin SDK: what a plugin author imports. Everything here is either a type or a tiny
 * helper, so importing the SDK costs a plugin nothing at load time.
 *
 *   import { definePlugin, textResult } from 'claw/sdk';
 *   export default definePlugin({
 *     id: 'hello',
 *     register(api) {
 *       api.registerTool({ name: 'hello', description: 'Greets', parameters: { type: 'object' },
 *         execute: () => textResult('hi') });
 *     },
 *   });
 */
import type { PluginDefinition, ToolDefinition, ToolResult } from '../kernel/index.js';

export type * from '../kernel/index.js';

/** Identity at run time; gives `register(api)` its types. `Config` types `api.config`. */
export function definePlugin<Config = Record<string, unknown>>(definition: PluginDefinition<Config>): PluginDefinition<Config> {
  return definition;
}

export function defineTool<Params = Record<string, unknown>>(tool: ToolDefinition<Params>): ToolDefinition<Params> {
  return tool;
}

/** A tool result the model reads as text; `details` is for UIs and logs. */
export function textResult(text: string, details?: unknown): ToolResult {
  return details === undefined ? { content: [{ type: 'text', text }] } : { content: [{ type: 'text', text }], details };
}

/** A tool result carrying JSON: pretty-printed for the model, structured in `details`. */
export function jsonResult(value: unknown): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], details: value };
}

/** A failed tool call the model should see as an error, not an exception. */
export function errorResult(message: string, details?: unknown): ToolResult {
  return { content: [{ type: 'text', text: message }], isError: true, ...(details === undefined ? {} : { details }) };
}

export {
  ModelError,
  isModelError,
  classifyHttpFailure,
  errorFromResponse,
  errorFromFetch,
  retryAfterMs,
  parseModelRef,
  readSse,
  type FailureKind,
  type ModelRef,
  type SseEvent,
} from './models.js';

export { isInside, toPosix } from '../kernel/util/paths.js';

/** Masking secrets in anything a plugin shows (the kernel's own instance is `api.kernel.redact`). */
export { createRedactor, MASK } from '../kernel/redact.js';

export { eventJson, parseToolArguments, postSse, streamFailure, type SsePost } from './provider-http.js';
export * from './runtime-deps.js';
