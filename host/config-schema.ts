/**
 * The JSON Schema of the whole openclaw.json, for editors and the Control UI: the
 * kernel's own schema with each plugin's config schema placed at
 * plugins.entries.<id>.config, each plugin-owned section at the top level, and the keys
 * plugins contribute to `agents.defaults`, `agents.list[]` and `tools` in their places.
 */
import type { JsonSchema, PluginRecord } from '../kernel/index.js';
import { KERNEL_CONFIG_SCHEMA } from '../kernel/generated/schemas.js';

type Node = Record<string, any>;

/** The kernel-owned objects plugins add keys to: `agents.defaults`, each `agents.list[]` entry, `tools`. */
export type ContributionPlace = 'defaults' | 'list' | 'tools';

export interface ContributedKey {
  /** The schema a value must meet: the contributors' schemas merged. */
  schema: JsonSchema;
  /** The plugins that contribute the key (installed; on or off). */
  owners: PluginRecord[];
}

/** Manifest `configContributions` field → the places its keys go. */
const PLACES: Record<string, ContributionPlace[]> = {
  agents: ['defaults', 'list'],
  agentDefaults: ['defaults'],
  tools: ['tools'],
};

/**
 * Every contribution of the plugins given (manifest `configContributions`), by place and
 * key. Manifests only: no plugin code runs, so a disabled plugin's keys still validate.
 */
export function configContributions(
  records: readonly PluginRecord[],
): Record<ContributionPlace, Map<string, ContributedKey>> {
  type Found = Map<string, { schemas: JsonSchema[]; owners: PluginRecord[] }>;
  const found: Record<ContributionPlace, Found> = { defaults: new Map(), list: new Map(), tools: new Map() };
  for (const record of records) {
    for (const [field, keys] of Object.entries(record.manifest?.configContributions ?? {})) {
      for (const [key, schema] of Object.entries((keys ?? {}) as Record<string, JsonSchema>)) {
        for (const place of PLACES[field] ?? []) {
          const entry = found[place].get(key) ?? { schemas: [], owners: [] };
          entry.schemas.push(schema);
          if (!entry.owners.includes(record)) entry.owners.push(record);
          found[place].set(key, entry);
        }
      }
    }
  }
  const merged = (map: Found) =>
    new Map([...map].map(([key, { schemas, owners }]) => [key, { schema: mergeSchemas(schemas), owners }]));
  return { defaults: merged(found.defaults), list: merged(found.list), tools: merged(found.tools) };
}

const MERGEABLE = new Set(['type', 'properties', 'required', 'additionalProperties', 'description', 'title']);

/**
 * One schema a value must meet to meet all of `schemas`. Plain object schemas merge property
 * by property (so web-fetch's `tools.web.fetch` and web-search's `tools.web.search` make one
 * `tools.web`), closed when each is; anything else is required all at once (allOf).
 */
export function mergeSchemas(all: readonly JsonSchema[]): JsonSchema {
  // Plugins built on one kit contribute the kit's schema alike.
  const schemas = [...new Map(all.map((schema) => [JSON.stringify(schema), schema])).values()];
  if (schemas.length === 1) return schemas[0]!;
  const plainObject = (schema: Node) =>
    schema.type === 'object' && Object.keys(schema).every((key) => MERGEABLE.has(key));
  if (!schemas.every(plainObject)) return { allOf: [...schemas] };
  const properties: Node = {};
  for (const schema of schemas as Node[]) {
    for (const [key, property] of Object.entries((schema.properties ?? {}) as Node)) {
      properties[key] = key in properties ? { allOf: [properties[key], property] } : property;
    }
  }
  const required = [...new Set(schemas.flatMap((schema) => (schema.required ?? []) as string[]))];
  const closed = schemas.every((schema) => schema.additionalProperties === false);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: !closed };
}

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
  const agents = schema.properties.agents.properties as Node;
  const contributions = configContributions(records);
  const place = (target: Node, keys: Map<string, ContributedKey>, closed: boolean) => {
    for (const [key, { schema: keySchema, owners }] of keys) {
      if (key in target.properties) continue; // the kernel's own key: its schema stands
      target.properties[key] = {
        ...keySchema,
        description: [keySchema.description, `(plugin ${owners.map((owner) => owner.id).join(', ')})`]
          .filter(Boolean)
          .join(' '),
      };
    }
    if (closed) target.additionalProperties = false;
  };
  place(agents.defaults, contributions.defaults, true);
  place(agents.list.items, contributions.list, true);
  place(schema.properties.tools, contributions.tools, false);
  return schema;
}
