/** Names the kernel's config schema and the plugin host share. */
import type { PluginsConfig } from '../generated/types.js';

/** Exclusive plugin slots; a slot holds at most one plugin (or "none"). */
export const SLOT_NAMES = ['memory', 'agentLoop', 'sandbox'] as const;
export type SlotName = (typeof SLOT_NAMES)[number];

/** Default holder of each slot when `plugins.slots.<slot>` is unset. */
export const DEFAULT_SLOT_HOLDERS: Readonly<Record<SlotName, string>> = {
  memory: 'memory-sqlite',
  agentLoop: 'agent-loop',
  // As in OpenClaw, sandboxed sessions run in Docker unless another backend is chosen; with
  // agents.*.sandbox.mode "off" (the default) the plugin never loads.
  sandbox: 'sandbox-docker',
};

/** Where a plugin was found: a discoverer's roots (host/discovery.ts), or handed over as an object. */
export type PluginOrigin = 'config' | 'workspace' | 'bundled' | 'global' | 'inline';

export function slotHolder(plugins: PluginsConfig | undefined, slot: SlotName): string {
  return plugins?.slots?.[slot] ?? DEFAULT_SLOT_HOLDERS[slot];
}

/** Top-level keys the kernel owns; any other top-level key must be declared by a plugin. */
export const KERNEL_CONFIG_KEYS = [
  '$schema',
  'meta',
  'plugins',
  'agents',
  'tools',
  'channels',
  'bindings',
  'logging',
] as const;
