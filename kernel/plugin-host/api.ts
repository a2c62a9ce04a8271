/**
 * What a plugin's `register(api)` receives. Every `register*` call checks the value's shape
 * (REGISTRATION) and hands it to the host, which checks that the manifest declared it (so
 * the host's view from manifests alone stays true) and undoes it if registration fails.
 */
import type { HookHandler, HookName } from '../hooks/catalog.js';
import type { HookBus } from '../hooks/bus.js';
import type { LaneScheduler } from '../lanes.js';
import type { Logger, Redactor } from '../log.js';
import type { ProtocolRegistry } from '../protocol/registry.js';
import type { KernelConfig } from '../generated/types.js';
import type { PluginOrigin, SlotName } from '../config/keys.js';
import type { JsonSchema } from '../validation.js';
import type { ConfigSnapshot } from '../config/store.js';
import type { ConfigIssue, PluginRecord } from './resolve.js';
import type { ToolCallOutcome, ToolCallRequest } from '../tools/invoke.js';
import {
  REGISTRATION,
  type CapabilityKind,
  type CapabilityLookup,
  type CapabilityTypes,
  type ChannelsApi,
  type ServiceDefinition,
  type ToolDefinition,
} from './capabilities.js';

/** Running hooks (not registering them: that goes through `api.on`, which checks the manifest). */
export type HookRunner = Pick<HookBus, 'runVoid' | 'runModifying' | 'runSync' | 'has' | 'list' | 'ready'>;

export interface KernelPaths {
  stateDir: string;
  workspaceDir: string;
  configPath: string;
}

/** Reading, checking and writing openclaw.json for plugins (writes are the host's: KernelOptions.configWriter). */
export interface ConfigAccess {
  /** The config file as it is on disk now (it may have changed since boot). */
  read(): ConfigSnapshot;
  /** Every problem `raw` would have as the config: kernel schema, env references, plugin schemas. */
  check(raw: Record<string, unknown>): Promise<ConfigIssue[]>;
  /** Make `snapshot` what `config()` returns from now on (hot reload of a validated change). */
  use(snapshot: ConfigSnapshot): void;
  /** Runs `edit` holding the lock every writer holds, refused (code CONFIG_CONFLICT) when the file's revision is no longer `baseHash`; `write` replaces it atomically. */
  locked<T>(
    purpose: string,
    edit: (write: (raw: Record<string, unknown>) => void) => T | Promise<T>,
    baseHash?: string,
  ): Promise<T>;
}

/** The kernel as a plugin sees it. */
export interface KernelServices {
  lanes: LaneScheduler;
  hooks: HookRunner;
  protocol: ProtocolRegistry;
  capabilities: CapabilityLookup;
  paths: KernelPaths;
  /** The environment the kernel resolved config against (process.env, or a test's own). */
  env: Readonly<Record<string, string | undefined>>;
  /** The resolved (env-substituted) config the kernel booted with. */
  config(): Readonly<KernelConfig>;
  configFile: ConfigAccess;
  /** The one redaction layer, for anything a plugin shows outside the process (`api.logger` already uses it). */
  redact: Redactor;
  /** Plugin records as the host sees them (no code loaded to answer). */
  plugins(): readonly PluginRecord[];
  /** The single path for running tools: policy, hooks, validation, size cap. */
  tools: { invoke(request: ToolCallRequest): Promise<ToolCallOutcome> };
  /** The channel choke point, forwarded to whichever plugin provides the service "channels". */
  channels: ChannelsApi;
}

/**
 * Capabilities are typed here by the shape the kernel needs; the SDK's PluginApi
 * (sdk/types/plugin.ts) types them with their full contracts.
 */
export interface PluginApi<Config = Record<string, unknown>> {
  readonly id: string;
  readonly name: string;
  readonly version?: string;
  readonly origin: PluginOrigin;
  /** Plugin directory, when the plugin came from one. */
  readonly rootDir?: string;
  /** `plugins.entries.<id>.config`, validated against the manifest's configSchema, defaults applied. */
  readonly config: Config;
  /** Top-level config sections this plugin owns (manifest `configSections`), validated. */
  section<T = Record<string, unknown>>(name: string): T;
  readonly logger: Logger;
  readonly kernel: KernelServices;

  /** A manifest `tools` glob (`*__*`) admits names known only at run time; the disposer removes this registration. */
  registerTool(tool: ToolDefinition<any>): () => void;
  registerChannel(channel: CapabilityTypes['channel']): void;
  registerProvider(provider: CapabilityTypes['provider']): void;
  registerMemory(backend: CapabilityTypes['memory']): void;
  registerSandbox(sandbox: CapabilityTypes['sandbox']): void;
  registerAgentLoop(loop: CapabilityTypes['agentLoop']): void;
  /** `timeoutMs`: longest wait for this handler (default per hook; the operator's config wins). */
  on(hook: HookName, handler: HookHandler, options?: { priority?: number; timeoutMs?: number }): void;
  registerGatewayMethod(name: string, method: CapabilityTypes['gatewayMethod']): void;
  registerCommand(command: CapabilityTypes['command']): void;
  registerService(service: ServiceDefinition): void;
  registerCli(cli: CapabilityTypes['cli']): void;
  registerHttpRoute(route: CapabilityTypes['httpRoute']): void;
}

/** What a plugin module exports (usually through the SDK's `definePlugin`). */
export interface PluginDefinition<Config = any> {
  /** Must equal the manifest id when both are given. */
  id?: string;
  name?: string;
  description?: string;
  version?: string;
  /** Stand in for the manifest of a plugin handed over as an object (the test kit); it loads at boot and declares by registering. */
  configSchema?: JsonSchema;
  kind?: SlotName | SlotName[];
  register(api: PluginApi<Config>): void | Promise<void>;
}

/** Loads a plugin's code from its entry module (the host's pluginLoader: prebuilt JavaScript, or TypeScript via jiti). */
export type PluginLoader = (record: PluginRecord, paths: KernelPaths) => Promise<PluginDefinition>;

/** Runs plugins written for OpenClaw's API (host/openclaw-plugins.ts); they declare by registering, so they load at start. */
export interface ForeignPluginAdapter {
  accepts(record: PluginRecord): boolean;
  adapt(definition: PluginDefinition, record: PluginRecord): PluginDefinition;
}

/** The host side of registration, as seen by the api object of one plugin. */
export interface RegistrationSink {
  register<K extends CapabilityKind>(kind: K, name: string, value: CapabilityTypes[K]): () => void;
  onHook(hook: HookName, handler: HookHandler, options: { priority?: number; timeoutMs?: number }): void;
}

function requireFunction(what: string, value: unknown): void {
  if (typeof value !== 'function') throw new TypeError(`${what} must be a function`);
}
function requireName(what: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw new TypeError(`${what} must be a non-empty string`);
  return value;
}

export function createPluginApi(
  record: PluginRecord,
  sink: RegistrationSink,
  kernel: KernelServices,
  logger: Logger,
): PluginApi {
  /** Slot backends are named by their plugin; `check` adds what one kind needs beyond its functions. */
  const register = (kind: CapabilityKind, value: any, name?: string, check?: (name: string) => void) => {
    const { key, calls } = REGISTRATION[kind];
    name ??= key ? requireName(`${kind}.${key}`, value?.[key]) : record.id;
    check?.(name);
    for (const call of calls) requireFunction(`${kind} "${name}" ${call}`, value?.[call]);
    return sink.register(kind, name, value);
  };
  const sections = record.sections ?? {};
  const { id, name, version, origin, dir: rootDir } = record;
  return {
    id,
    name,
    version,
    origin,
    rootDir,
    config: (record.config ?? {}) as Record<string, unknown>,
    section<T>(name: string): T {
      if (name in sections) return sections[name] as T;
      throw new Error(`plugin "${record.id}" does not own config section "${name}" (declare it in configSections)`);
    },
    logger,
    kernel,
    registerTool: (tool) =>
      register('tool', tool, undefined, (name) => {
        requireName(`tool "${name}" description`, tool.description);
        if (tool.parameters === null || typeof tool.parameters !== 'object')
          throw new TypeError(`tool "${name}" parameters must be a JSON Schema object`);
      }),
    registerChannel: (channel) => register('channel', channel),
    registerProvider: (provider) => register('provider', provider),
    registerMemory: (backend) => register('memory', backend),
    registerSandbox: (sandbox) => register('sandbox', sandbox),
    registerAgentLoop: (loop) => register('agentLoop', loop),
    on(hook, handler, options = {}) {
      requireFunction(`handler for hook "${String(hook)}"`, handler);
      sink.onHook(hook, handler, options);
    },
    registerGatewayMethod: (name, method) =>
      register('gatewayMethod', method, requireName('gateway method name', name)),
    registerCommand: (command) =>
      register('command', command, undefined, (name) => {
        if (name.startsWith('/')) throw new TypeError(`command "${name}" must be registered without the leading "/"`);
      }),
    registerService: (service) =>
      register('service', service, undefined, (name) => {
        if (service.start !== undefined) requireFunction(`service "${name}" start`, service.start);
        if (service.stop !== undefined) requireFunction(`service "${name}" stop`, service.stop);
      }),
    registerCli: (cli) => register('cli', cli),
    registerHttpRoute(route) {
      const path = requireName('httpRoute.path', route?.path);
      if (!path.startsWith('/')) throw new TypeError(`route path "${path}" must start with "/"`);
      register('httpRoute', route, `${route.method ?? '*'} ${path}`);
    },
  };
}
