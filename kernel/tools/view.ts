/**
 * What plugins see of registered tools: name, label, description and parameter schema — never
 * `execute`. The only code holding a runnable tool is the choke point (invoke.ts), so no
 * caller can run a tool around policy, sandbox routing, approvals and hooks.
 */
import type { CapabilityLookup, ToolDefinition } from '../plugin-host/capabilities.js';

export type ToolView = Omit<ToolDefinition, 'execute'>;

function view(tool: ToolDefinition | undefined): ToolView | undefined {
  if (!tool) return undefined;
  const refuse = () => {
    throw new Error(`tool "${tool.name}" runs only through kernel.tools.invoke (the tool choke point)`);
  };
  return Object.freeze({
    name: tool.name,
    label: tool.label,
    description: tool.description,
    parameters: tool.parameters,
    execute: refuse,
  });
}

/** The lookup handed to plugins: tools come back as views whose `execute` refuses to run. */
export function withToolViews(lookup: CapabilityLookup): CapabilityLookup {
  return {
    ...lookup,
    find: (async (kind: string, name: string) => {
      const value = await lookup.find(kind as 'tool', name);
      return kind === 'tool' ? view(value) : value;
    }) as CapabilityLookup['find'],
    get: (async (kind: string, name: string) => {
      const value = await lookup.get(kind as 'tool', name);
      return kind === 'tool' ? view(value) : value;
    }) as CapabilityLookup['get'],
  };
}
