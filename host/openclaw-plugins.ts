/**
 * Running plugins written for OpenClaw: the kernel's ForeignPluginAdapter for them. A
 * plugin is OpenClaw's when its manifest has none of the fields only claw manifests have
 * (claw plugins must declare their tools, methods, commands, services, routes and hooks;
 * OpenClaw plugins declare by registering). Its `register(api)` gets an OpenClaw-shaped
 * api (./openclaw/api.ts); what it registers that claw cannot run is kept on the plugin record as
 * "needs <API> (why)" warnings.
 */
import type { ForeignPluginAdapter, PluginDefinition, PluginRecord } from '../kernel/index.js';
import type { PluginApi } from '../sdk/types/plugin.js';
import { missingNote, openclawApi } from './openclaw/api.js';

export { NEEDS_PREFIX, missingNote } from './openclaw/api.js';

const CLAW_ONLY_FIELDS = [
  'tools',
  'gatewayMethods',
  'commands',
  'services',
  'httpRoutes',
  'hooks',
  'configSections',
  'entry',
  'runtimeDependencies',
];

/** Whether a plugin is in OpenClaw's format (and so runs through this adapter). */
export function isOpenclawPlugin(record: Pick<PluginRecord, 'origin' | 'manifest'>): boolean {
  if (record.origin === 'bundled' || record.origin === 'inline' || !record.manifest) return false;
  const manifest = record.manifest as Record<string, unknown>;
  // Rows that are objects are OpenClaw's way of listing commands; claw's are plain names.
  const openclawCommands =
    Array.isArray(manifest.commands) && manifest.commands.some((row) => typeof row === 'object' && row !== null);
  return !CLAW_ONLY_FIELDS.some((field) => field in manifest && !(field === 'commands' && openclawCommands));
}

export const openclawPlugins: ForeignPluginAdapter = {
  accepts: isOpenclawPlugin,
  adapt(definition: PluginDefinition, record: PluginRecord): PluginDefinition {
    return {
      ...definition,
      register(api) {
        const missing = (name: string, why?: string) => {
          const note = missingNote(name, why);
          if (!record.warnings.includes(note)) record.warnings.push(note);
        };
        return definition.register(openclawApi(api as PluginApi, record, missing) as never);
      },
    };
  },
};
