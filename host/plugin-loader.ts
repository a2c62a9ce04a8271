/**
 * How the plugin host loads a plugin's code (kernel option `loadPlugin`). Bundled plugins are
 * prebuilt JavaScript and are imported as they are; others go through jiti, so TypeScript runs
 * without a build step and `claw/sdk` resolves to this installation's SDK (sdk/aliases.ts),
 * OpenClaw's `openclaw/plugin-sdk/*` to the entry helpers claw's adapter provides
 * (openclaw/plugin-sdk/). Transpiled code is cached under `<stateDir>/cache/jiti`;
 * jiti creates its cache with the umask's modes, so the folder is made owner-only first and
 * what jiti adds is restricted after.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { KernelPaths, PluginDefinition, PluginLoader } from '../kernel/index.js';
import { ensurePrivateDir } from '../sdk/fs.js';
import { sdkAliases } from '../sdk/aliases.js';
import { restrictTree } from './private-tree.js';

/** The parts of OpenClaw's `openclaw/plugin-sdk/*` that claw provides. */
const OPENCLAW_SDK_SUBPATHS = ['plugin-entry', 'tool-plugin'] as const;

function openclawSdkAliases(): Record<string, string> {
  const here = fileURLToPath(new URL('openclaw/plugin-sdk/', import.meta.url));
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return Object.fromEntries(
    OPENCLAW_SDK_SUBPATHS.map((subpath) => [`openclaw/plugin-sdk/${subpath}`, join(here, `${subpath}${ext}`)]),
  );
}

/** `cacheDir`: where transpiled code is kept (default `<stateDir>/cache/jiti`); modules stay cached for the whole process. */
export function pluginLoader(options: { cacheDir?: string } = {}): PluginLoader {
  const load = jitiLoader(options.cacheDir);
  return async (record, paths) => {
    const entry = record.entryPath;
    if (!entry) throw new Error('no entry module');
    const mod =
      record.origin === 'bundled' && !/\.[mc]?tsx?$/.test(entry)
        ? ((await import(pathToFileURL(entry).href)) as Record<string, unknown>)
        : await load(entry, paths);
    const definition = pickDefinition(mod);
    if (definition.id !== undefined && definition.id !== record.id) {
      throw new Error(`module exports plugin id "${definition.id}" but the manifest says "${record.id}"`);
    }
    return definition;
  };
}

function jitiLoader(cacheDirOption: string | undefined) {
  let alias: Record<string, string> | undefined; // worked out at the first plugin that needs jiti
  return async (entry: string, paths: KernelPaths): Promise<Record<string, unknown>> => {
    alias ??= { ...sdkAliases(), ...openclawSdkAliases() };
    const { createJiti } = await import('jiti');
    const cacheDir = cacheDirOption ?? join(paths.stateDir, 'cache', 'jiti');
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

function pickDefinition(mod: Record<string, unknown>): PluginDefinition {
  const isDefinition = (value: unknown): value is PluginDefinition =>
    value !== null && typeof value === 'object' && typeof (value as PluginDefinition).register === 'function';
  for (const candidate of [mod.default, mod.plugin, mod]) {
    if (typeof candidate === 'function') return { register: candidate as PluginDefinition['register'] };
    if (isDefinition(candidate)) return candidate;
    // jiti and CJS interop may wrap the default export once more.
    const nested =
      candidate !== null && typeof candidate === 'object' ? (candidate as { default?: unknown }).default : undefined;
    if (isDefinition(nested)) return nested;
  }
  throw new Error('the module does not export a plugin (expected a default export with register(api))');
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
