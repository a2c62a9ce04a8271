/**
 * The "runtime-deps" service: heavy packages installed into `<stateDir>/runtime-deps` on first
 * use. The host provides it (no plugin does, and nothing turns it off). A plugin lists the
 * packages in its manifest's `runtimeDependencies` (`claw plugins enable` installs them ahead
 * of time), declares `requires: { services: ["runtime-deps"] }`, and imports them with
 *
 *   const deps = runtimeDeps(api.kernel, 'my plugin');
 *   const mod = await deps.import<typeof import('heavy')>(HEAVY, { retryCommand: 'claw plugins enable my-plugin' });
 */
import { requireService } from './services.js';
import type { KernelServices } from './types/plugin.js';
import type { RuntimeDependency, RuntimeDeps } from './types/runtime-deps.js';

export type * from './types/runtime-deps.js';

export const RUNTIME_DEPS_SERVICE = 'runtime-deps';

/**
 * One dependency's loader: imported (installed when missing) on the first call and kept; a
 * failure is not kept, so the next call tries again. A CommonJS package's exports may sit on
 * `default`, depending on the loader: `marker` names an export that tells which.
 */
export function runtimeDependencyLoader<T>(
  dep: RuntimeDependency,
  marker: string,
  retryCommand: string,
): (deps: RuntimeDeps) => Promise<T> {
  let loading: Promise<T> | undefined;
  return (deps) =>
    (loading ??= deps.import<T>(dep, { retryCommand }).then(
      (mod) => ((mod as Record<string, unknown>)[marker] ? mod : (mod as unknown as { default: T }).default),
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
}

/** The service, asked for on each import, so a plugin can take it at register() before anything needs it. */
export function runtimeDeps(
  kernel: Pick<KernelServices, 'capabilities'> & Partial<Pick<KernelServices, 'plugins'>>,
  what: string,
): RuntimeDeps {
  return {
    import: async (dep, options) =>
      (await requireService<RuntimeDeps>(kernel, RUNTIME_DEPS_SERVICE, what)).import(dep, options),
  };
}

/**
 * node-llama-cpp: the llama-cpp provider plugin and local memory embeddings. About 70 MB
 * with the CPU binary for one platform, against 700 MB with every optional variant.
 */
export const NODE_LLAMA_CPP: RuntimeDependency = {
  name: 'node-llama-cpp',
  version: '^3.22.1',
  approxSizeMb: 85,
  platformPackages: {
    'linux-x64': '@node-llama-cpp/linux-x64',
    'linux-arm64': '@node-llama-cpp/linux-arm64',
    'linux-arm': '@node-llama-cpp/linux-armv7l',
    'linux-riscv64': '@node-llama-cpp/linux-riscv64',
    'darwin-arm64': '@node-llama-cpp/mac-arm64-metal',
    'darwin-x64': '@node-llama-cpp/mac-x64',
    'win32-x64': '@node-llama-cpp/win-x64',
    'win32-arm64': '@node-llama-cpp/win-arm64',
  },
};
