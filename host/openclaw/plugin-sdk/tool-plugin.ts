/**
 * `openclaw/plugin-sdk/tool-plugin` for OpenClaw plugins loaded by claw (an import alias).
 * Declarative tools run as `execute(params, config, context)`; a `factory` builds the tool
 * per session and uses the runtime order `execute(toolCallId, params, signal)`.
 */
import type { OpenclawPluginEntry } from './plugin-entry.js';

export interface DeclaredTool {
  name: string;
  label?: string;
  description?: string;
  parameters?: Record<string, unknown>;
  optional?: boolean;
  execute?(params: any, config: any, context: { toolCallId: string; signal?: AbortSignal }): unknown;
  factory?(input: { api: any; toolContext: any }): unknown;
}

export interface ToolPluginOptions {
  id: string;
  name?: string;
  description?: string;
  configSchema?: Record<string, unknown>;
  tools: (tool: (spec: DeclaredTool) => DeclaredTool) => DeclaredTool[];
}

export function defineToolPlugin(options: ToolPluginOptions): OpenclawPluginEntry {
  return {
    id: options.id,
    name: options.name,
    description: options.description,
    configSchema: options.configSchema,
    register(api) {
      for (const spec of options.tools((tool) => tool)) {
        if (spec.factory) {
          api.registerTool((toolContext: unknown) => spec.factory!({ api, toolContext }), { name: spec.name });
          continue;
        }
        api.registerTool({
          name: spec.name,
          label: spec.label,
          description: spec.description,
          parameters: spec.parameters,
          execute: (toolCallId: string, params: unknown, signal?: AbortSignal) =>
            spec.execute!(params, api.pluginConfig ?? {}, { toolCallId, signal }),
        });
      }
    },
  };
}
