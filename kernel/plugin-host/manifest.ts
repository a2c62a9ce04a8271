/**
 * A plugin manifest as the plugin host takes it: checked against the manifest schema, its
 * config schemas usable JSON Schema. Finding and reading `openclaw.plugin.json` and the entry
 * module is the discoverer's (host/manifest.ts), which hands the result over in a candidate.
 */
import { KNOWN_MANIFEST_FIELDS, PLUGIN_MANIFEST_SCHEMA } from '../generated/schemas.js';
import { schemaProblems, validateWith } from '../validation.js';
import type { PluginManifest } from '../generated/types.js';
import { SLOT_NAMES, type SlotName } from '../config/keys.js';

export type { PluginManifest };

export type ManifestResult =
  | { ok: true; manifest: PluginManifest; entryPath: string; warnings: string[] }
  | { ok: false; error: string; id?: string };

/** `raw` as a manifest, with warnings for fields nobody reads; or what is wrong with it. */
export function checkManifest(raw: Record<string, unknown>): { manifest: PluginManifest; warnings: string[] } | string {
  const issues = validateWith(PLUGIN_MANIFEST_SCHEMA, raw);
  if (issues.length > 0) return issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  const manifest = raw as PluginManifest;
  const schemas: Array<[string, unknown]> = [['configSchema', manifest.configSchema]];
  for (const [section, schema] of Object.entries(manifest.configSections ?? {}))
    schemas.push([`configSections.${section}`, schema]);
  for (const [where, schema] of schemas) {
    const problems = schemaProblems(schema);
    if (problems.length > 0) return `${where} is not a valid JSON Schema: ${problems.join('; ')}`;
  }
  const warnings = Object.keys(raw)
    .filter((key) => !KNOWN_MANIFEST_FIELDS.includes(key))
    .map((key) => `unknown manifest field "${key}" ignored`);
  return { manifest, warnings };
}

/** Slot kinds a manifest declares, normalised to an array (OpenClaw kinds claw has no slot for left out). */
export function manifestSlots(manifest: PluginManifest): SlotName[] {
  const kinds: string[] = manifest.kind === undefined ? [] : [manifest.kind].flat();
  return kinds.filter((kind): kind is SlotName => (SLOT_NAMES as readonly string[]).includes(kind));
}

/** Names a manifest declares for a named capability field. */
export function declaredNames(manifest: PluginManifest, field: string): string[] {
  if (field === 'cliCommands') return (manifest.cliCommands ?? []).map((command) => command.name);
  const value = (manifest as Record<string, unknown>)[field];
  const contracted = field === 'tools' ? (manifest as { contracts?: { tools?: unknown } }).contracts?.tools : undefined; // OpenClaw's
  // A `commands` row may be OpenClaw-style, an object with a name.
  const name = (item: unknown) => (typeof item === 'object' && item !== null ? (item as { name: string }).name : item);
  return [value, contracted].flatMap((list) => (Array.isArray(list) ? (list.map(name) as string[]) : []));
}
