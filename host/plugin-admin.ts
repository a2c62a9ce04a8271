/**
 * Enabling and disabling plugins as edits of the raw config. Pure functions over the
 * config object: the caller validates the result and writes it atomically. Used by
 * `claw plugins enable|disable|install` (apps/cli) and, through the host's "config-admin"
 * service, by the gateway's plugin methods.
 */
import { SLOT_NAMES, slotHolder, type PluginRecord, type PluginsConfig, type SlotName } from '../kernel/index.js';

export class PluginManageError extends Error {
  readonly code = 'PLUGIN_MANAGE';
  constructor(message: string) {
    super(message);
    this.name = 'PluginManageError';
  }
}

export function pluginsSection(raw: Record<string, unknown>): PluginsConfig & Record<string, any> {
  if (raw.plugins === undefined) raw.plugins = {};
  const plugins = raw.plugins;
  if (plugins === null || typeof plugins !== 'object' || Array.isArray(plugins)) {
    throw new PluginManageError('config "plugins" must be an object');
  }
  return plugins as PluginsConfig & Record<string, any>;
}

function entry(plugins: PluginsConfig & Record<string, any>, id: string): Record<string, unknown> {
  plugins.entries ??= {};
  const existing = plugins.entries[id];
  if (existing !== undefined && (existing === null || typeof existing !== 'object')) {
    throw new PluginManageError(`config "plugins.entries.${id}" must be an object`);
  }
  plugins.entries[id] ??= {};
  return plugins.entries[id] as Record<string, unknown>;
}

/** Turn a plugin on. Returns human-readable notes about side effects (slot switches, allowlist). */
export function enablePlugin(raw: Record<string, unknown>, record: PluginRecord): string[] {
  if (!record.manifest)
    throw new PluginManageError(`cannot enable "${record.id}": ${record.error ?? 'its manifest is invalid'}`);
  const plugins = pluginsSection(raw);
  if (plugins.enabled === false) {
    throw new PluginManageError('all plugins are off (plugins.enabled is false); set it to true first');
  }
  if (plugins.deny?.includes(record.id)) {
    throw new PluginManageError(`"${record.id}" is listed in plugins.deny; remove it there first`);
  }
  const notes: string[] = [];
  if (plugins.allow && plugins.allow.length > 0 && !plugins.allow.includes(record.id)) {
    plugins.allow.push(record.id);
    notes.push(`added "${record.id}" to plugins.allow`);
  }
  for (const slot of record.slots) {
    const previous = slotHolder(plugins, slot);
    if (previous !== record.id) {
      plugins.slots ??= {};
      (plugins.slots as Record<SlotName, string>)[slot] = record.id;
      notes.push(
        previous === 'none'
          ? `${slot} slot: now held by "${record.id}"`
          : `${slot} slot: "${previous}" → "${record.id}" ("${previous}" is now off)`,
      );
    }
  }
  entry(plugins, record.id).enabled = true;
  return notes;
}

/** Turn a plugin off; a slot it held is set to "none". */
export function disablePlugin(raw: Record<string, unknown>, record: PluginRecord): string[] {
  const plugins = pluginsSection(raw);
  const notes: string[] = [];
  for (const slot of SLOT_NAMES) {
    if (record.slots.includes(slot) && slotHolder(plugins, slot) === record.id) {
      plugins.slots ??= {};
      (plugins.slots as Record<SlotName, string>)[slot] = 'none';
      notes.push(`${slot} slot: now empty ("none")`);
    }
  }
  entry(plugins, record.id).enabled = false;
  return notes;
}
