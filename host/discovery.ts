/**
 * Finding plugin directories (kernel option `discover`). Roots are searched in precedence
 * order and the first directory to claim an id wins; later claims are reported, not loaded:
 *   1. plugins.load.paths          (origin "config")
 *   2. <workspace>/.openclaw/extensions  ("workspace")
 *   3. the bundled plugins folder  ("bundled")
 *   4. <stateDir>/extensions       ("global", where `claw plugins install` puts plugins)
 * A root may be a plugin directory itself or a folder of plugin directories. Each directory
 * found is handed to the kernel with its manifest read (manifest.ts).
 */
import { existsSync, readdirSync, type Dirent } from 'node:fs';
import { dirname, join } from 'node:path';
import type { KernelOptions, PluginOrigin } from '../kernel/index.js';
import { resolveUserPath } from '../kernel/config/paths.js';
import { MANIFEST_FILE, readManifest } from './manifest.js';

export interface DiscoveryOptions {
  /** Folder of bundled plugins (the CLI passes its own `plugins/`). */
  bundledDir?: string;
  /** Plugin directories searched before every root (origin "config"). */
  pluginDirs?: readonly string[];
  /** Which roots to search (default all; the test kit turns all off: exactly the plugins it was given). */
  roots?: { config?: boolean; workspace?: boolean; bundled?: boolean; global?: boolean };
}

/** Global install location for third-party plugins. */
export const resolveExtensionsDir = (stateDir: string): string => join(stateDir, 'extensions');

/** A folder to search: a plugin directory, or a folder of them. */
interface DiscoveryRoot {
  dir: string;
  origin: PluginOrigin;
}

export function clawDiscovery(options: DiscoveryOptions = {}): NonNullable<KernelOptions['discover']> {
  return ({ config, paths, env }) => {
    const on = { config: true, workspace: true, bundled: true, global: true, ...options.roots };
    const roots: DiscoveryRoot[] = (options.pluginDirs ?? []).map((dir) => ({ dir, origin: 'config' }));
    if (on.config) {
      for (const path of config.plugins?.load?.paths ?? [])
        roots.push({ dir: resolveUserPath(path, dirname(paths.configPath), env), origin: 'config' });
    }
    if (on.workspace) roots.push({ dir: join(paths.workspaceDir, '.openclaw', 'extensions'), origin: 'workspace' });
    if (on.bundled && options.bundledDir) roots.push({ dir: options.bundledDir, origin: 'bundled' });
    if (on.global) roots.push({ dir: resolveExtensionsDir(paths.stateDir), origin: 'global' });
    return findDirs(roots).map((root) => ({
      ...root,
      ...readManifest(root.dir, { bundled: root.origin === 'bundled' }),
    }));
  };
}

function findDirs(roots: readonly DiscoveryRoot[]): DiscoveryRoot[] {
  const found = new Map<string, DiscoveryRoot>();
  const add = (dir: string, origin: PluginOrigin) => found.has(dir) || found.set(dir, { dir, origin });
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
    // Code-point order, not localeCompare: the order only has to be stable, and a collator
    // loads ICU's data (≈ 3 MB resident) into every process that starts.
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      // Dot-folders hold install staging and backups, never live plugins.
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      // Directories without a manifest are still candidates: they surface as failed
      // plugins ("openclaw.plugin.json not found") instead of vanishing silently.
      add(join(root.dir, entry.name), root.origin);
    }
  }
  return [...found.values()];
}
