/** One plugin as shown to people and clients (`claw plugins list --json`, the gateway's plugins.list). */
import { DECLARING_FIELD, type PluginRecord } from '../kernel/index.js';
import { declaredNames } from '../kernel/plugin-host/manifest.js';
import type { PluginSummary } from '../sdk/config.js';

export type { PluginSummary };

export function declaredCapabilities(record: PluginRecord): Record<string, string[]> {
  const manifest = record.manifest;
  if (!manifest) return {};
  const out: Record<string, string[]> = {};
  for (const field of Object.values(DECLARING_FIELD)) {
    const names = declaredNames(manifest, field);
    if (names.length > 0) out[field] = [...names];
  }
  if (manifest.hooks?.length) out.hooks = [...manifest.hooks];
  if (record.slots.length) out.kind = [...record.slots];
  return out;
}

export function describePlugin(record: PluginRecord): PluginSummary {
  return {
    id: record.id,
    name: record.name,
    version: record.version ?? null,
    description: record.description ?? null,
    origin: record.origin,
    dir: record.dir ?? null,
    enabled: record.enabled,
    status: record.status,
    reason: record.reason,
    error: record.error ?? null,
    warnings: [...record.warnings],
    capabilities: declaredCapabilities(record),
  };
}
