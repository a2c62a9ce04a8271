/**
 * The kernel's public surface. Four parts — lanes, hooks, config, protocol — plus the
 * plugin host that fills everything else from plugins.
 */
export { createKernel, type Kernel, type KernelOptions } from './kernel.js';

export * from './lanes.js';

export { HookBus, type HookErrorReport, type HookOptions, type HookBusOptions } from './hooks/bus.js';
export * from './hooks/catalog.js';

export { silentLogger, type Logger } from './log.js';
export type { KernelPolicy, Redactor, SandboxCall, SandboxDecision, ToolSubject } from './policy.js';

export { ConfigError, judged, readConfigFile, snapshotOf, formatIssue, type ConfigSnapshot } from './config/store.js';
export { resolveConfigPath, resolveStateDir, resolveExtensionsDir, expandHome, type Env } from './config/paths.js';
export { formatPath, getPath, type PathSegment } from './config/path.js';
export { SLOT_NAMES, DEFAULT_SLOT_HOLDERS, type SlotName } from './config/keys.js';
export type { KernelConfig, PluginsConfig, PluginEntry, InstallRecord } from './generated/types.js';

export { ProtocolRegistry, type EmittedEvent } from './protocol/registry.js';

export { PluginHost } from './plugin-host/host.js';
export { readManifest, MAX_MANIFEST_BYTES, type PluginManifest } from './plugin-host/manifest.js';
export { resolveEnablement, slotHolder } from './plugin-host/enablement.js';
export type { PluginRecord, ConfigIssue } from './plugin-host/resolve.js';
export type { PluginOrigin } from './plugin-host/discovery.js';
export type * from './plugin-host/api.js';
export type * from './plugin-host/capabilities.js';
export { DECLARING_FIELD } from './plugin-host/capabilities.js';

export { parseJson5 } from './util/json5.js';
export { pathUnder } from './util/paths.js';
export {
  compileSchema,
  validateWith,
  schemaProblems,
  schemaCompiler,
  useValidatorStore,
  type JsonSchema,
  type ValidatorStore,
} from './validation.js';
export type { ToolApprover } from './tools/approval.js';
export { invokeTool } from './tools/invoke.js';
