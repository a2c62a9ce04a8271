/**
 * What the host hands every kernel it boots (the CLI, `claw config` checks, the SDK's test kit):
 * claw's rules, plugin discovery and the loader for plugin code, the validator cache, the
 * config writer, the OpenClaw plugin adapter and the services the host offers itself (runtime
 * deps, the SSRF-guarded network access every plugin shares, launchers, sandbox checks and
 * routing, config admin, the tool policy).
 */
import type { KernelOptions } from '../kernel/index.js';
import { clawDiscovery, type DiscoveryOptions } from './discovery.js';
import { openclawPlugins } from './openclaw-plugins.js';
import { pluginLoader } from './plugin-loader.js';
import { clawPolicy } from './policy.js';
import { configWriter } from './config-write.js';
import { validatorCache } from './validator-cache.js';
import { runtimeDepsService } from './runtime-deps.js';
import { launchersService } from './launchers.js';
import { sandboxChecksService } from './sandbox-checks.js';
import { sandboxRouteService } from './sandbox-route.js';
import { RUNTIME_DEPS_SERVICE } from '../sdk/runtime-deps.js';
import { netService } from './net/index.js';
import { NET_SERVICE } from '../sdk/net/guard.js';
import { LAUNCHERS_SERVICE } from '../sdk/exec/index.js';
import { SANDBOX_CHECKS_SERVICE, SANDBOX_ROUTE_SERVICE } from '../sdk/sandbox/index.js';
import { CONFIG_ADMIN_SERVICE } from '../sdk/config.js';
import { configAdminService } from './config-admin.js';
import { TOOL_POLICY_SERVICE } from '../sdk/tool-policy.js';
import { toolPolicyService } from './tool-policy.js';

export type ClawKernelParts = Required<
  Pick<
    KernelOptions,
    'policy' | 'discover' | 'loadPlugin' | 'validators' | 'foreignPlugins' | 'configWriter' | 'services'
  >
>;

/** `jitiCacheDir`: where transpiled plugin code is kept (default `<stateDir>/cache/jiti`); the rest says where plugins are found. */
export function clawKernelParts(options: DiscoveryOptions & { jitiCacheDir?: string } = {}): ClawKernelParts {
  return {
    policy: clawPolicy,
    discover: clawDiscovery(options),
    loadPlugin: pluginLoader({ cacheDir: options.jitiCacheDir }),
    validators: validatorCache,
    foreignPlugins: openclawPlugins,
    configWriter,
    services: ({ paths, env, logger }) => ({
      [RUNTIME_DEPS_SERVICE]: runtimeDepsService({ stateDir: paths.stateDir, env, logger }),
      [NET_SERVICE]: netService(),
      [LAUNCHERS_SERVICE]: launchersService,
      [SANDBOX_CHECKS_SERVICE]: sandboxChecksService,
      [SANDBOX_ROUTE_SERVICE]: sandboxRouteService,
      [CONFIG_ADMIN_SERVICE]: configAdminService,
      [TOOL_POLICY_SERVICE]: toolPolicyService,
    }),
  };
}
