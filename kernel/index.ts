/**
 * The kernel's public surface. Four parts — lanes, hooks, config, protocol — plus the
 * plugin host that fills everything else from plugins.
 */
export { createKernel, type Kernel, type KernelOptions } from './kernel.js';

export * from './lanes.js';

export {
  HookBus,
  type HookErrorReport,
  type HookOptions,
  type HookBusOptions,
  type HookRegistrationInfo,
} from './hooks/bus.js';
export * from './hooks/catalog.js';

export { silentLogger, redactingLogger, type Logger } from './log.js';
export type { KernelPolicy, Redactor, SandboxCall, SandboxDecision, ToolSubject } from './policy.js';

export { ConfigError, judged, readConfigFile, snapshotOf, formatIssue, type ConfigSnapshot } from './config/store.js';
export {
  resolveConfigPath,
  resolveStateDir,
  resolveExtensionsDir,
  resolveProfile,
  expandHome,
  type Env,
} from './config/paths.js';
export { formatPath, getPath, type PathSegment } from './config/path.js';
export { SLOT_NAMES, DEFAULT_SLOT_HOLDERS, KERNEL_CONFIG_KEYS, type SlotName } from './config/keys.js';
export type { KernelConfig, PluginsConfig, PluginEntry, InstallRecord } from './generated/types.js';

export {
  ProtocolRegistry,
  type MethodSpec,
  type EventSpec,
  type EmitOptions,
  type EmittedEvent,
} from './protocol/registry.js';

export { PluginHost, CapabilityError, PluginUnavailableError } from './plugin-host/host.js';
export {
  readManifest,
  MANIFEST_FILE,
  MAX_MANIFEST_BYTES,
  type PluginManifest,
  type ManifestResult,
} from './plugin-host/manifest.js';
export { resolveEnablement, slotHolder } from './plugin-host/enablement.js';
export type { PluginRecord, PluginStatus, ConfigIssue, Diagnostic } from './plugin-host/resolve.js';
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
  type SchemaIssue,
  type ValidatorStore,
} from './validation.js';
export type { ToolApprover } from './tools/approval.js';
export {
  invokeTool,
  capResult,
  DEFAULT_MAX_RESULT_CHARS,
  type ToolCallRequest,
  type ToolCallOutcome,
} from './tools/invoke.js';
