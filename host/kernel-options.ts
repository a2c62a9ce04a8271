/**
 * What the host hands every kernel it boots (the CLI, `claw config` checks, the SDK's test kit):
 * claw's rules, the loader for third-party plugins, the validator cache, the config writer and
 * the OpenClaw plugin adapter.
 */
import type { KernelOptions } from '../kernel/index.js';
import { openclawPlugins } from './openclaw-plugins.js';
import { pluginLoader } from './plugin-loader.js';
import { clawPolicy } from './policy.js';
import { configWriter } from './config-write.js';
import { validatorCache } from './validator-cache.js';

export type ClawKernelParts = Required<Pick<KernelOptions, 'policy' | 'loadModule' | 'validators' | 'foreignPlugins' | 'configWriter'>>;

/** `jitiCacheDir`: where transpiled plugin code is kept (default `<stateDir>/cache/jiti`). */
export function clawKernelParts(options: { jitiCacheDir?: string } = {}): ClawKernelParts {
  return { policy: clawPolicy, loadModule: pluginLoader({ cacheDir: options.jitiCacheDir }), validators: validatorCache, foreignPlugins: openclawPlugins, configWriter };
}
