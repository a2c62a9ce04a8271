/**
 * From discovered directories plus config to one record per plugin: manifest checked,
 * id clashes settled, enablement and slots decided, plugin config validated. Runs no
 * plugin code, so `claw plugins list` and config validation stay cheap.
 */
import { basename } from 'node:path';
import { KERNEL_CONFIG_KEYS, SLOT_NAMES, slotHolder, type PluginOrigin, type SlotName } from '../config/keys.js';
import type { InstallRecord, KernelConfig, PluginsConfig } from '../generated/types.js';
import { formatPath, type PathSegment } from '../config/path.js';
import { validateWith, type JsonSchema } from '../validation.js';
import type { KernelPolicy } from '../policy.js';
import { manifestSlots, type ManifestResult, type PluginManifest } from './manifest.js';

/** A plugin directory the discoverer found, with its manifest as read there (or what was wrong with it). */
export type PluginCandidate = { dir: string; origin: PluginOrigin } & ManifestResult;

export type PluginStatus = 'disabled' | 'ready' | 'active' | 'failed';

export interface PluginRecord {
  id: string;
  name: string;
  description?: string;
  version?: string;
  origin: PluginOrigin;
  dir?: string;
  manifest?: PluginManifest;
  entryPath?: string;
  slots: SlotName[];
  enabled: boolean;
  /** Why the plugin is on or off. */
  reason: string;
  status: PluginStatus;
  /** Why the plugin failed, when status is "failed". */
  error?: string;
  warnings: string[];
  config?: unknown;
  /** Validated top-level sections the plugin owns (manifest `configSections`), defaults applied. */
  sections?: Record<string, unknown>;
  install?: InstallRecord;
}

export interface ConfigIssue {
  level: 'error' | 'warning';
  path: string;
  message: string;
  /** "kernel", or the id of the plugin whose schema the value broke. */
  owner: string;
}

export interface Diagnostic {
  level: 'error' | 'warning';
  pluginId?: string;
  message: string;
}

/** A problem with the kernel's own part of the config. */
export function kernelIssue(path: string, message: string, level: ConfigIssue['level'] = 'error'): ConfigIssue {
  return { level, path, message, owner: 'kernel' };
}

/** `inline`: manifests of plugins handed over as objects (test kit); they precede every directory. */
export function resolvePlugins(input: {
  candidates: readonly PluginCandidate[];
  inline: readonly PluginManifest[];
  config: KernelConfig;
  /** `tolerate`: how an unknown key is reported (the policy may let some through as warnings). */
  policy: Pick<KernelPolicy, 'enablement' | 'tolerate'>;
}): { records: PluginRecord[]; issues: ConfigIssue[]; diagnostics: Diagnostic[] } {
  const plugins: PluginsConfig = input.config.plugins ?? {};
  const records: PluginRecord[] = [];
  const issues: ConfigIssue[] = [];
  const diagnostics: Diagnostic[] = [];
  const byId = new Map<string, PluginRecord>();

  const claim = (record: PluginRecord): void => {
    const first = byId.get(record.id);
    if (!first) return void (byId.set(record.id, record), records.push(record));
    const message = `duplicate plugin id "${record.id}": ${where(record)} is ignored; ${where(first)} takes precedence`;
    diagnostics.push({ level: 'warning', pluginId: record.id, message });
  };

  for (const manifest of input.inline) claim(baseRecord(manifest, 'inline'));
  for (const candidate of input.candidates) {
    const { origin, dir } = candidate;
    if (!candidate.ok) {
      // A broken manifest cannot claim an id; it is listed under its directory name.
      const label = candidate.id ?? basename(dir);
      const id = byId.has(label) ? `${label} (${dir})` : label;
      const failed = { status: 'failed', reason: 'manifest is invalid', error: candidate.error } as const;
      records.push({ id, name: label, origin, dir, slots: [], enabled: false, warnings: [], ...failed });
      continue;
    }
    const record = baseRecord(candidate.manifest, origin, dir);
    record.entryPath = candidate.entryPath;
    record.warnings.push(...candidate.warnings);
    claim(record);
  }

  // Config sections: each top-level key belongs to the kernel or to exactly one plugin.
  const sectionOwner = new Map<string, PluginRecord>();
  for (const record of byId.values()) {
    for (const section of Object.keys(record.manifest?.configSections ?? {})) {
      const owner = sectionOwner.get(section);
      if ((KERNEL_CONFIG_KEYS as readonly string[]).includes(section)) {
        fail(record, `manifest claims config section "${section}", which belongs to the kernel`);
      } else if (owner) {
        fail(record, `manifest claims config section "${section}", already owned by plugin "${owner.id}"`);
      } else {
        sectionOwner.set(section, record);
      }
    }
  }

  for (const record of byId.values()) {
    if (record.status === 'failed' || !record.manifest) continue;
    const enabledByDefault = record.manifest.enabledByDefault === true;
    Object.assign(record, input.policy.enablement({ ...record, enabledByDefault }, plugins));
    record.status = record.enabled ? 'ready' : 'disabled';
    record.install = plugins.installs?.[record.id];
  }

  // OpenClaw's `requiresPlugins`: a plugin that is on stays loadable, but it does little alone.
  for (const record of byId.values()) {
    for (const needed of record.status === 'ready' ? (record.manifest?.requiresPlugins ?? []) : []) {
      const message = `plugin "${record.id}" requires plugin "${needed}", which is not installed`;
      if (!byId.has(needed)) diagnostics.push({ level: 'warning', pluginId: record.id, message });
    }
  }

  checkSlots(plugins, byId, issues);

  for (const record of byId.values()) {
    if (record.status !== 'ready' || !record.manifest) continue;
    const found = validatePluginConfig(record, input.config, plugins).map(input.policy.tolerate);
    issues.push(...found);
    const problems = found.filter((issue) => issue.level === 'error');
    if (problems.length > 0)
      fail(record, `invalid config: ${problems.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`);
  }

  for (const key of Object.keys(input.config)) {
    if ((KERNEL_CONFIG_KEYS as readonly string[]).includes(key)) continue;
    const owner = sectionOwner.get(key);
    if (!owner) {
      issues.push(input.policy.tolerate(kernelIssue(key, 'is not a known config section (no plugin declares it)')));
    } else if (!owner.enabled) {
      const message = `belongs to plugin "${owner.id}", which is off (${owner.reason}); kept but unused`;
      issues.push({ level: 'warning', path: key, message, owner: owner.id });
    }
  }

  const stale = (path: string, id: string) =>
    issues.push(kernelIssue(path, `refers to unknown plugin "${id}"; stale entry ignored`, 'warning'));
  for (const [id, entry] of Object.entries(plugins.entries ?? {})) {
    // An exact { enabled: false } is the marker `claw plugins uninstall` leaves; not stale.
    const marker = Object.keys(entry).length === 1 && entry.enabled === false;
    if (!byId.has(id) && !marker) stale(formatPath(['plugins', 'entries', id]), id);
  }
  for (const id of Object.keys(plugins.installs ?? {}))
    if (!byId.has(id)) stale(formatPath(['plugins', 'installs', id]), id);
  for (const list of ['allow', 'deny'] as const) {
    (plugins[list] ?? []).forEach((id, index) => byId.has(id) || stale(formatPath(['plugins', list, index]), id));
  }

  return { records, issues, diagnostics };
}

/** A record before enablement has been decided: off, with no reason yet. */
export function baseRecord(manifest: PluginManifest, origin: PluginOrigin, dir?: string): PluginRecord {
  const { id, name = id, description, version } = manifest;
  const off = { enabled: false, reason: '', status: 'disabled' } as const;
  const slots = manifestSlots(manifest);
  return { id, name, description, version, origin, dir, manifest, slots, ...off, warnings: [] };
}

const where = (record: PluginRecord): string =>
  record.dir ? `${record.dir} (${record.origin})` : `the ${record.origin} plugin`;

export function fail(record: PluginRecord, error: string): void {
  record.status = 'failed';
  record.error = error;
}

function checkSlots(plugins: PluginsConfig, byId: Map<string, PluginRecord>, issues: ConfigIssue[]): void {
  for (const slot of SLOT_NAMES) {
    const configured = plugins.slots?.[slot];
    const holder = slotHolder(plugins, slot);
    if (holder === 'none') continue;
    const record = byId.get(holder);
    const path = formatPath(['plugins', 'slots', slot]);
    if (!record) {
      // The built-in default may simply not be installed; only an explicit choice is an error.
      if (configured !== undefined) issues.push(kernelIssue(path, `no plugin "${holder}" is installed`));
      continue;
    }
    if (record.manifest && !record.slots.includes(slot))
      issues.push(kernelIssue(path, `plugin "${holder}" does not declare kind "${slot}"`));
  }
}

/**
 * An unconfigured plugin's config when its schema is simple enough to see that `{}` passes:
 * `{}` plus top-level defaults, with no ajv (~1 ms per schema). Undefined: ask the validator.
 */
function unconfiguredDefaults(schema: JsonSchema): Record<string, unknown> | undefined {
  const allowed = new Set(['type', 'properties', 'additionalProperties', 'description', 'title', '$schema', '$id']);
  if (!Object.keys(schema).every((key) => allowed.has(key))) return undefined;
  if (schema.type !== undefined && schema.type !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, unknown>)) {
    if (property === null || typeof property !== 'object') return undefined;
    if ('default' in property) out[key] = structuredClone((property as { default: unknown }).default);
  }
  return out;
}

function validatePluginConfig(record: PluginRecord, config: KernelConfig, plugins: PluginsConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  /** `given` with schema defaults applied; an absent section is only run through the schema for its defaults. */
  const validated = (schema: JsonSchema, given: unknown, path: PathSegment[], what: string): unknown => {
    const value = given === undefined ? {} : structuredClone(given);
    try {
      const problems = validateWith(schema, value, path);
      if (given !== undefined)
        for (const issue of problems) issues.push({ level: 'error', ...issue, owner: record.id });
    } catch (error) {
      const message = `cannot be checked: ${what} does not compile (${(error as Error).message})`;
      issues.push({ level: 'error', path: formatPath(path), message, owner: record.id });
    }
    return value;
  };
  const manifest = record.manifest!;
  const given = plugins.entries?.[record.id]?.config;
  const configPath = ['plugins', 'entries', record.id, 'config'];
  record.config =
    (given === undefined && unconfiguredDefaults(manifest.configSchema)) ||
    validated(manifest.configSchema, given ?? {}, configPath, "the plugin's configSchema");
  record.sections = {};
  for (const [section, sectionSchema] of Object.entries(manifest.configSections ?? {})) {
    record.sections[section] = validated(sectionSchema as JsonSchema, config[section], [section], 'schema');
  }
  return issues;
}
