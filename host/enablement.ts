/**
 * Whether a plugin is on, and why (claw's KernelPolicy.enablement; `claw --help` uses it from
 * CommonJS, so it imports only leaf modules). Precedence, first match wins:
 *   plugins.enabled = false  → everything off
 *   plugins.deny             → off (deny beats allow)
 *   plugins.allow (non-empty) and not listed → off
 *   exclusive slot           → on only for the slot's holder
 *   plugins.entries.<id>.enabled
 *   default for where it came from (bundled: enabledByDefault; installed/config/inline: on;
 *   workspace: off, because a workspace may be someone else's repository)
 */
import { slotHolder, type PluginOrigin, type SlotName } from '../kernel/config/keys.js';
import type { PluginsConfig } from '../kernel/generated/types.js';

export interface Enablement {
  enabled: boolean;
  reason: string;
}

export function resolveEnablement(
  id: string,
  origin: PluginOrigin,
  slots: readonly SlotName[],
  enabledByDefault: boolean,
  plugins: PluginsConfig | undefined,
): Enablement {
  if (plugins?.enabled === false) return { enabled: false, reason: 'all plugins are off (plugins.enabled is false)' };
  if (plugins?.deny?.includes(id)) return { enabled: false, reason: 'listed in plugins.deny' };
  if (plugins?.allow && plugins.allow.length > 0 && !plugins.allow.includes(id)) {
    return { enabled: false, reason: 'not listed in plugins.allow' };
  }
  const explicit = plugins?.entries?.[id]?.enabled;
  for (const slot of slots) {
    const holder = slotHolder(plugins, slot);
    if (holder !== id)
      return {
        enabled: false,
        reason: holder === 'none' ? `the ${slot} slot is set to "none"` : `the ${slot} slot is held by "${holder}"`,
      };
  }
  if (slots.length > 0) {
    if (explicit === false) return { enabled: false, reason: `plugins.entries.${id}.enabled is false` };
    return { enabled: true, reason: `holds the ${slots.join(' and ')} slot` };
  }
  if (explicit !== undefined)
    return { enabled: explicit, reason: `plugins.entries.${id}.enabled is ${String(explicit)}` };
  const byOrigin: Record<PluginOrigin, Enablement> = {
    bundled: enabledByDefault
      ? { enabled: true, reason: 'bundled, on by default' }
      : { enabled: false, reason: 'bundled, off by default' },
    workspace: { enabled: false, reason: 'workspace plugin, off until enabled' },
    global: { enabled: true, reason: 'installed' },
    config: { enabled: true, reason: 'listed in plugins.load.paths' },
    inline: { enabled: true, reason: 'passed to the kernel directly' },
  };
  return byOrigin[origin];
}
