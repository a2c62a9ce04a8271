/**
 * The plugin SDK: what a plugin author imports. Everything here is either a type or a tiny
 * helper, so importing the SDK costs a plugin nothing at load time.
 *
 *   import { definePlugin, textResult } from 'claw/sdk';
 *   export default definePlugin({
 *     id: 'hello',
 *     register(api) {
 *       api.registerTool({ name: 'hello', description: 'Greets', parameters: { type: 'object' },
 *         execute: () => textResult('hi') });
 *     },
 *   });
 */
import { HookBus as KernelHookBus, type HookBusOptions } from '../kernel/index.js';
import type { HookBus as TypedHookBus } from './types/hooks.js';

/** The kernel's public surface (lanes, hooks, config, protocol, capability types), so a plugin imports the SDK only. */
export * from '../kernel/index.js';

/**
 * The capability contracts the SDK owns, and the plugin API typed with them (these names
 * take precedence over the kernel's minimal shapes re-exported above).
 */
export type * from './types/channels.js';
export type * from './types/hooks.js';
export type { HookHandler, HookRunner } from './types/hooks.js';
export type * from './types/models.js';
export type * from './types/media.js';
export { MEDIA_UNDERSTANDING_SERVICE } from './types/media.js';
export type * from './types/memory.js';
export type * from './types/sandbox.js';
export type * from './types/automation.js';
export type * from './types/internal-hooks.js';
export type * from './types/capabilities.js';
export type * from './types/gateway-auth.js';
export type * from './types/cli.js';
export type {
  BootedKernel,
  CapabilityLookup,
  CapabilityTypes,
  ChannelsApi,
  CliBootOptions,
  CliContext,
  CliDefinition,
  Kernel,
  KernelServices,
  PluginApi,
  PluginDefinition,
} from './types/plugin.js';

/** The kernel's hook bus, typed with every hook's payload and result (the same class at run time). */
export const HookBus = KernelHookBus as unknown as new (options?: HookBusOptions) => TypedHookBus;
export type HookBus = TypedHookBus;

/** definePlugin, defineTool, tool results and param reading (also alone as `@claw-assistant/claw/sdk/plugin`). */
export * from './plugin.js';

export {
  ModelError,
  isModelError,
  classifyHttpFailure,
  errorFromResponse,
  errorFromFetch,
  retryAfterMs,
  parseModelRef,
  normalizeApi,
  PROVIDER_APIS,
  readSse,
  type FailureKind,
  type ModelRef,
  type SseEvent,
} from './models.js';

export { isInside } from '../kernel/util/paths.js';
export { createLogger, type LogLevel, type LogRecord, type SimpleLoggerOptions } from './logger.js';

/** Checking a credential that arrives over the network, and telling this machine from others. */
export { isLoopbackHost, safeEqual } from './net/auth-kit.js';
/** The device identity a gateway client signs the connect challenge with, and the payload both ends build. */
export * from './device-auth.js';
/** Paired nodes and sending them commands: the gateway's "nodes" service. */
export * from './nodes.js';

/** Secret-named keys and the mask, for plugins that show config or env (masking text is `api.kernel.redact`). */
export { isSecretKey, MASK } from './redact.js';

/** Where a session runs: the host's "sandbox-route" service (the rules themselves are the host's `clawPolicy`). */
export {
  SANDBOX_ROUTE_SERVICE,
  type SandboxCall,
  type SandboxRoute,
  type SandboxRouter,
  type SandboxSettings,
} from './sandbox/index.js';

export { eventJson, parseToolArguments, postSse, streamFailure, type SsePost } from './provider-http.js';

/** Cutting text into messages (block streaming, channel limits). */
export { BlockChunker, findBreak, findFences, splitForChannel, type Fence } from './text/chunker.js';
/** Fencing text from outside (webhooks, fetched pages, search results) before the agent reads it. */
export { sanitizeExternal, wrapExternalContent } from './text/external-content.js';
export { TtlCache } from './ttl-cache.js';
/** Image attachments as gateway methods take them. */
export * from './attachments.js';
/** Emitting internal hook events (a no-op without the hooks plugin). */
export { emitInternalHook } from './internal-hooks.js';
/** Loading a TypeScript module written against the SDK with jiti (hook handlers, plugins): the import aliases. */
export { sdkAliases, SDK_SUBPATHS, SDK_PACKAGE_NAMES } from './aliases.js';

/** Session keys: the names conversations are stored under (OpenClaw's formats). */
export {
  buildAgentMainSessionKey,
  normalizeAccountId,
  normalizeAgentId,
  normalizeChannelId,
  normalizeMainKey,
  parseSessionKey,
  sessionTypeOf,
  type ParsedSessionKey,
  type SessionKind,
  type SessionType,
} from './sessions/keys.js';

export { expandHome } from '../kernel/config/paths.js';
export * from './tool-policy.js';
export * from './fs.js';
export * from './fs-contain.js';
export * from './file-lock.js';
export { ConfigConflictError } from './config-patch.js';

/** The gateway's wire format: frames, the handshake, error shapes and codes. */
export * from './protocol/constants.js';
export * from './protocol/frames.js';
export type * from './generated/protocol.js';
export { hasPath, setPath, unsetPath } from './config-path.js';
export { redactConfig, REDACTED } from './config-redact.js';
export { clawVersion, clawPackageRoot, CLAW_PACKAGE_NAME } from './version.js';
export * from './runtime-deps.js';
export * from './method-table.js';
export { trace } from '../kernel/util/trace.js';
