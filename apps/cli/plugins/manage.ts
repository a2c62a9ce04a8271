/**
 * Config edits only the CLI makes: forgetting an uninstalled plugin. Enabling and disabling
 * are shared with the gateway's plugins.enable/disable methods and live in the host.
 */
import { SLOT_NAMES } from '../../../kernel/index.js';
import { pluginsSection } from '../../../host/plugin-admin.js';

export { disablePlugin, enablePlugin, PluginManageError } from '../../../host/plugin-admin.js';
export { describePlugin, type PluginSummary } from '../../../host/plugin-summary.js';

/**
 * Remove a plugin from config: install record, settings, lists, slots and load paths. An
 * exact `{ enabled: false }` entry stays behind as the uninstall marker, so files kept on
 * disk (or a later copy) do not switch themselves back on.
 */
export function forgetPlugin(raw: Record<string, unknown>, id: string, installPath?: string): void {
  const plugins = pluginsSection(raw);
  if (plugins.installs) delete plugins.installs[id];
  plugins.entries ??= {};
  plugins.entries[id] = { enabled: false };
  for (const list of ['allow', 'deny'] as const) {
    if (plugins[list]) plugins[list] = plugins[list]!.filter((item) => item !== id);
  }
  for (const slot of SLOT_NAMES) {
    if (plugins.slots?.[slot] === id) delete (plugins.slots as Record<string, string>)[slot];
  }
  if (installPath && plugins.load?.paths) {
    plugins.load.paths = plugins.load.paths.filter((path) => path !== installPath);
  }
  for (const key of ['installs', 'slots'] as const) {
    const value = plugins[key] as Record<string, unknown> | undefined;
    if (value && Object.keys(value).length === 0) delete plugins[key];
  }
}
