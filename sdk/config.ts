/**
 * For whatever manages a running claw (the gateway's config.* and plugins.* methods, the
 * CLI): merge patches and the revision they are based on, which changes apply hot and which
 * take a restart, enabling and disabling plugins as config edits, and one plugin as shown
 * to people and clients.
 */
export * from './config-patch.js';
export * from './config-reload.js';
export * from './plugin-admin.js';
export * from './plugin-summary.js';
