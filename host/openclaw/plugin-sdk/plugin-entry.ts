/**
 * `openclaw/plugin-sdk/plugin-entry` for OpenClaw plugins loaded by claw (an import alias,
 * see host/plugin-loader.ts). The entry is the plugin definition itself; claw's adapter
 * (host/openclaw-plugins.ts) gives its register() an OpenClaw-shaped api.
 */
export interface OpenclawPluginEntry {
  id: string;
  name?: string;
  description?: string;
  configSchema?: Record<string, unknown> | (() => Record<string, unknown>);
  register(api: any): void | Promise<void>;
}

export function definePluginEntry<T extends OpenclawPluginEntry>(entry: T): T {
  return entry;
}
