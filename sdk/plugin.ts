/**
 * The smallest entry point for a plugin author: `definePlugin`, `defineTool`, tool results
 * and typed param reading. The root `@claw-assistant/claw/sdk` re-exports all of it beside
 * the kernel's types and the kits; this subpath is for a plugin that wants only these.
 */
import type { ToolContext, ToolDefinition, ToolResult } from '../kernel/index.js';
import type { SandboxInstance } from './types/sandbox.js';
import type { PluginDefinition } from './types/plugin.js';

export type { ToolContext, ToolDefinition, ToolResult } from '../kernel/index.js';
export type { CliContext, CliDefinition, PluginApi, PluginDefinition } from './types/plugin.js';
export * from './params.js';

/** Identity at run time; gives `register(api)` its types. `Config` types `api.config`. */
export function definePlugin<Config = Record<string, unknown>>(
  definition: PluginDefinition<Config>,
): PluginDefinition<Config> {
  return definition;
}

export function defineTool<Params = Record<string, unknown>>(tool: ToolDefinition<Params>): ToolDefinition<Params> {
  return tool;
}

/** The sandbox this call runs in (set by the tool choke point for `runsInSandbox` tools), if any. */
export function sandboxOf(ctx: Pick<ToolContext, 'sandbox'>): SandboxInstance | undefined {
  return ctx.sandbox as SandboxInstance | undefined;
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
