/**
 * The "config-admin" service: what the host knows about managing claw that a plugin which
 * administers it over the wire (the gateway's plugins.* and config.schema methods) needs.
 * The host provides it (host/config-admin.ts), as it does for `claw plugins` and `claw config`.
 */
import type { JsonSchema, PluginRecord } from '../../kernel/index.js';

/** One plugin as shown to people and clients (`claw plugins list --json`, the gateway's plugins.list). */
export interface PluginSummary {
  id: string;
  name: string;
  version: string | null;
  description: string | null;
  origin: PluginRecord['origin'];
  dir: string | null;
  enabled: boolean;
  status: PluginRecord['status'];
  reason: string;
  error: string | null;
  warnings: string[];
  /** Capabilities as the manifest declares them, by manifest field (plus `hooks` and `kind`). */
  capabilities: Record<string, string[]>;
}

export interface ConfigAdmin {
  /** The JSON Schema of the whole openclaw.json, with these plugins' config, sections and contributed keys in place. */
  configSchema(records: readonly PluginRecord[]): JsonSchema;
  describePlugin(record: PluginRecord): PluginSummary;
  /**
   * Turn a plugin on or off in the raw config (an exclusive slot switches holders, the
   * allowlist gains it). Returns notes on those side effects; a change that cannot be made
   * (plugins.deny lists it, all plugins are off) throws an error with code "PLUGIN_MANAGE".
   */
  setPluginEnabled(raw: Record<string, unknown>, record: PluginRecord, enabled: boolean): string[];
}
