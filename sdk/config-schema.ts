/**
 * The JSON Schema of the whole openclaw.json, for editors and the Control UI: the
 * kernel's own schema with each plugin's config schema placed at
 * plugins.entries.<id>.config and each plugin-owned section at the top level.
 */
import type { JsonSchema, PluginRecord } from '../kernel/index.js';
import { KERNEL_CONFIG_SCHEMA } from '../kernel/generated/schemas.js';

type Node = Record<string, any>;

export function composeConfigSchema(records: readonly PluginRecord[]): JsonSchema {
  const schema = structuredClone(KERNEL_CONFIG_SCHEMA) as Node;
  const entries = schema.properties.plugins.properties.entries as Node;
  const generic = Object.values(entries.patternProperties ?? {})[0] as Node;
  entries.properties = {};
  for (const record of records) {
    const manifest = record.manifest;
    if (!manifest) continue;
    const entry = structuredClone(generic);
    entry.properties.config = { ...manifest.configSchema, description: `Config of plugin "${record.id}"` };
    entries.properties[record.id] = entry;
    for (const [section, sectionSchema] of Object.entries(manifest.configSections ?? {})) {
      schema.properties[section] = { ...sectionSchema, description: `Owned by plugin "${record.id}"` };
    }
  }
  return schema;
}
