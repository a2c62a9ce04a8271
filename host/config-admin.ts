/** The "config-admin" service the host offers plugins (sdk/types/config-admin.ts). */
import type { ConfigAdmin } from '../sdk/config.js';
import { composeConfigSchema } from './config-schema.js';
import { disablePlugin, enablePlugin } from './plugin-admin.js';
import { describePlugin } from './plugin-summary.js';

export const configAdminService: ConfigAdmin = {
  configSchema: composeConfigSchema,
  describePlugin,
  setPluginEnabled: (raw, record, enabled) => (enabled ? enablePlugin(raw, record) : disablePlugin(raw, record)),
};
