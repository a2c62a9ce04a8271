/**
 * How the plugin host loads plugins that are not bundled (kernel option `loadModule`):
 * through jiti, so TypeScript runs without a build step and `claw/sdk` (and OpenClaw's
 * `openclaw/plugin-sdk/*`) resolve to this installation's SDK (aliases.ts). Transpiled code
 * is cached under `<stateDir>/cache/jiti`; jiti creates its cache with the umask's modes, so
 * the folder is made owner-only first and what jiti adds is restricted after.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type KernelOptions } from '../kernel/index.js';
import { ensurePrivateDir } from '../sdk/fs.js';
import { sdkAliases } from '../sdk/aliases.js';
import { restrictTree } from '../sdk/fs.js';

/** `cacheDir`: where transpiled code is kept (default `<stateDir>/cache/jiti`); modules stay cached for the whole process. */
export function pluginLoader(options: { cacheDir?: string } = {}): NonNullable<KernelOptions['loadModule']> {
  const alias = sdkAliases();
  return async (entry, paths) => {
    const { createJiti } = await import('jiti');
    const cacheDir = options.cacheDir ?? join(paths.stateDir, 'cache', 'jiti');
    try {
      ensurePrivateDir(cacheDir);
    } catch {
      // A read-only state dir: jiti notices too and transpiles without a cache.
    }
    const before = new Set(entries(cacheDir));
    const jiti = createJiti(import.meta.url, { fsCache: cacheDir, alias, interopDefault: false, moduleCache: true });
    try {
      return (await jiti.import(entry)) as Record<string, unknown>;
    } finally {
      for (const name of entries(cacheDir).filter((name) => !before.has(name))) {
        try {
          restrictTree(join(cacheDir, name));
        } catch {
          // Removed meanwhile by another process; nothing left to protect.
        }
      }
    }
  };
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
