/**
 * Finding plugin directories. Roots are searched in precedence order and the first
 * directory to claim an id wins; later claims are reported, not loaded:
 *   1. plugins.load.paths          (origin "config")
 *   2. <workspace>/.openclaw/extensions  ("workspace")
 *   3. the bundled plugins folder  ("bundled")
 *   4. <stateDir>/extensions       ("global", where `claw plugins install` puts plugins)
 * A root may be a plugin directory itself or a folder of plugin directories.
 */
import { existsSync, readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { MANIFEST_FILE } from './manifest.js';
import type { PluginOrigin } from './enablement.js';

export type { PluginOrigin };

/** A folder to search (a root) or a plugin directory found in one (a candidate). */
export interface DiscoveryRoot {
  dir: string;
  origin: PluginOrigin;
}

export type PluginCandidate = DiscoveryRoot;

export function findCandidates(roots: readonly DiscoveryRoot[]): PluginCandidate[] {
  const candidates = new Map<string, PluginCandidate>();
  const add = (dir: string, origin: PluginOrigin) => candidates.has(dir) || candidates.set(dir, { dir, origin });
  for (const root of roots) {
    if (existsSync(join(root.dir, MANIFEST_FILE))) {
      add(root.dir, root.origin);
      continue;
    }
    let entries: Dirent[];
    try {
      entries = readdirSync(root.dir, { withFileTypes: true });
    } catch {
      continue; // A missing root is normal (no workspace extensions, nothing installed yet).
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      // Dot-folders hold install staging and backups, never live plugins.
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      // Directories without a manifest are still candidates: they surface as failed
      // plugins ("openclaw.plugin.json not found") instead of vanishing silently.
      add(join(root.dir, entry.name), root.origin);
    }
  }
  return [...candidates.values()];
}
