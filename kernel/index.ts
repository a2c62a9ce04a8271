/**
 * The kernel's public surface. Four parts — lanes, hooks, config, protocol — plus the
 * plugin host that fills everything else from plugins.
 */
export { createKernel, type Kernel, type KernelOptions } from './kernel.js';

export {
  LaneScheduler,
  LaneClearedError,
  sessionLane,
  DEFAULT_LANE_CAPS,
  GLOBAL_LANES,
  LANE_WAIT_NOTICE_MS,
  type LaneStats,
  type LaneWaitNotice,
  type LaneTask,
} from './lanes.js';

export { HookBus, type HookErrorReport, type HookOptions, type VoidHookName, type ModifyingHookName, type SyncHookName } from './hooks/bus.js';
export * from './hooks/catalog.js';

export { createLogger, silentLogger, redactingLogger, type Logger, type LogLevel, type LogRecord } from './log.js';
export { createRedactor, compileRedactPattern, MASK, type Redactor, type RedactorOptions } from './redact.js';

export { ConfigError, readConfigFile, snapshotOf, writeConfigFile, formatIssue, type ConfigSnapshot } from './config/store.js';
export { resolveConfigPath, resolveStateDir, resolveExtensionsDir, resolveProfile, expandHome, type Env } from './config/paths.js';
export { formatPath, getPath, type PathSegment } from './config/path.js';
export { redactConfig, isSecretKey, REDACTED } from './config/redact.js';
export { SLOT_NAMES, DEFAULT_SLOT_HOLDERS, KERNEL_CONFIG_KEYS, type SlotName } from './config/keys.js';
export type { KernelConfig, PluginsConfig, PluginEntry, InstallRecord } from './config/schema.js';

export { ProtocolRegistry, ProtocolError, errorShape, parseFrame, validateConnectParams, type MethodSpec, type EventSpec, type EmitOptions, type EmittedEvent } from './protocol/registry.js';
export * from './protocol/constants.js';
export type { ErrorShape, RequestFrame, ResponseFrame, EventFrame, Frame, ConnectParams, HelloOk } from './protocol/schema.js';

export { PluginHost, CapabilityError, PluginUnavailableError } from './plugin-host/host.js';
export { readManifest, MANIFEST_FILE, type PluginManifest, type ManifestResult } from './plugin-host/manifest.js';
export { composeConfigSchema } from './config/compose.js';
export { resolveEnablement, slotHolder } from './plugin-host/enablement.js';
export type { PluginRecord, PluginStatus, ConfigIssue, Diagnostic } from './plugin-host/resolve.js';
export type { PluginOrigin } from './plugin-host/discovery.js';
export type * from './plugin-host/api.js';
export type * from './plugin-host/capabilities.js';
export { DECLARING_FIELD } from './plugin-host/capabilities.js';

export {
  writeFileAtomic,
  writeJsonAtomic,
  ensurePrivateDir,
  restrictTree,
  privateModeOf,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  NON_OWNER_BITS,
} from './util/fs.js';
export { parseJson5 } from './util/json5.js';
export { compileSchema, validateWith, schemaProblems, type JsonSchema, type SchemaIssue } from './validation.js';
export { invokeTool, capResult, DEFAULT_MAX_RESULT_CHARS, type ToolCallRequest, type ToolCallOutcome } from './tools/invoke.js';
export { compileToolPolicy, compileLayer, TOOL_GROUPS, TOOL_PROFILES, type ToolsConfig, type ToolPolicyLayer, type ToolProfile, type PolicyInput, type ToolMatcher } from './tools/policy.js';
