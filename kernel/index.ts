/**
 * The kernel's public surface. Four parts — lanes, hooks, config, protocol — plus the
 * plugin host that fills everything else from plugins.
 */
export { createKernel, type Kernel, type KernelOptions } from './kernel.js';

export * from './lanes.js';

export { HookBus, type HookErrorReport, type HookOptions, type HookBusOptions } from './hooks/bus.js';
export * from './hooks/catalog.js';

export { silentLogger, type Logger, type Redactor } from './log.js';
export type { KernelPolicy, PolicyToolCall, ToolSubject } from './policy.js';

export { ConfigError, judged, readConfigFile, snapshotOf, formatIssue, type ConfigSnapshot } from './config/store.js';
export { resolveConfigPath, resolveStateDir, expandHome, type Env } from './config/paths.js';
export { formatPath, getPath, type PathSegment } from './config/path.js';
export { SLOT_NAMES, DEFAULT_SLOT_HOLDERS, slotHolder, type SlotName, type PluginOrigin } from './config/keys.js';
export type { KernelConfig, PluginsConfig, InstallRecord } from './generated/types.js';

export { ProtocolRegistry, type EmittedEvent, type Validation } from './protocol/registry.js';

export { PluginHost } from './plugin-host/host.js';
export { checkManifest, type ManifestResult, type PluginManifest } from './plugin-host/manifest.js';
export type { PluginRecord, PluginCandidate, ConfigIssue } from './plugin-host/resolve.js';
export type * from './plugin-host/api.js';
export type * from './plugin-host/capabilities.js';
export { DECLARING_FIELD } from './plugin-host/capabilities.js';

export { parseJson5 } from './util/json5.js';
export { pathUnder } from './util/paths.js';
export {
  compileSchema,
  formatErrors,
  validateWith,
  schemaProblems,
  schemaCompiler,
  type JsonSchema,
  type ValidatorStore,
} from './validation.js';
