/**
 * OpenClaw's `agents.defaults.sandbox.backend` / `agents.list[].sandbox.backend` in claw: a
 * backend is a plugin holding the exclusive `sandbox` slot, so the name picks that plugin.
 * Unset `plugins.slots.sandbox` is filled from it (policy `derive`, before the plugin host
 * reads the slot); a name claw has no backend for, or backends that disagree with each other
 * or with the slot, are config errors: the gateway runs one sandbox backend, and a session
 * quietly sandboxed by another would be worse than refusing the config.
 */
import { DEFAULT_SLOT_HOLDERS, type KernelConfig } from '../kernel/index.js';

type AnyRecord = Record<string, any>;

/** OpenClaw's backend names, and claw's plugin ids themselves. */
const BACKEND_PLUGINS: Readonly<Record<string, string>> = {
  docker: 'sandbox-docker',
  bwrap: 'sandbox-bwrap',
  bubblewrap: 'sandbox-bwrap',
  'sandbox-docker': 'sandbox-docker',
  'sandbox-bwrap': 'sandbox-bwrap',
};

/** Every `sandbox.backend` in the config, with its path. */
function backends(config: KernelConfig): Array<{ path: string; name: string }> {
  const agents = (config.agents ?? {}) as AnyRecord;
  const out: Array<{ path: string; name: string }> = [];
  const own = agents.defaults?.sandbox?.backend;
  if (typeof own === 'string') out.push({ path: 'agents.defaults.sandbox.backend', name: own });
  const list = Array.isArray(agents.list) ? (agents.list as AnyRecord[]) : [];
  list.forEach((agent, index) => {
    const name = agent?.sandbox?.backend;
    if (typeof name === 'string') out.push({ path: `agents.list[${index}].sandbox.backend`, name });
  });
  return out;
}

export function backendPlugin(name: string): string | undefined {
  return Object.hasOwn(BACKEND_PLUGINS, name.trim().toLowerCase())
    ? BACKEND_PLUGINS[name.trim().toLowerCase()]
    : undefined;
}

/** `config` with `plugins.slots.sandbox` set from the first known backend, when the slot is unset. */
export function deriveSandboxSlot(config: KernelConfig): KernelConfig {
  if (config.plugins?.slots?.sandbox !== undefined) return config;
  const plugin = backends(config)
    .map(({ name }) => backendPlugin(name))
    .find(Boolean);
  if (!plugin) return config;
  const plugins = (config.plugins ?? {}) as AnyRecord;
  return { ...config, plugins: { ...plugins, slots: { ...plugins.slots, sandbox: plugin } } } as KernelConfig;
}

/** Unknown backend names, and backends other than the one the slot runs (checked on the derived config). */
export function sandboxBackendIssues(config: KernelConfig): Array<{ path: string; message: string }> {
  const holder = String(config.plugins?.slots?.sandbox ?? DEFAULT_SLOT_HOLDERS.sandbox);
  const issues: Array<{ path: string; message: string }> = [];
  for (const { path, name } of backends(config)) {
    const plugin = backendPlugin(name);
    if (!plugin)
      issues.push({
        path,
        message: `unknown sandbox backend "${name}": claw has "docker" (plugin sandbox-docker) and "bwrap" (plugin sandbox-bwrap)`,
      });
    else if (plugin !== holder)
      issues.push({
        path,
        message: `sandbox backend "${name}" is plugin ${plugin}, but the sandbox slot is held by "${holder}": claw runs one sandbox backend per gateway (set every backend, and plugins.slots.sandbox if set, to the same one)`,
      });
  }
  return issues;
}
