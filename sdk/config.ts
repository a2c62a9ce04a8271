/**
 * For whatever manages a running claw (the gateway's config.* and plugins.* methods): the
 * config file's revision a write is based on, the conflict a stale write is refused with,
 * and the host's "config-admin" service (plugin summaries, enabling and disabling plugins,
 * the whole config's schema).
 */
export * from './config-patch.js';
export type * from './types/config-admin.js';

export const CONFIG_ADMIN_SERVICE = 'config-admin';
