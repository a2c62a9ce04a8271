/**
 * What a plugin's `register(api)` receives. Every method records the capability against
 * the plugin, checks that the manifest declared it (so the host's view from manifests
 * alone stays true), and is undone if registration fails.
 */
import type { HookHandler, HookName } from '../hooks/catalog.js';
import type { HookBus } from '../hooks/bus.js';
import type { LaneScheduler } from '../lanes.js';
import type { Logger } from '../log.js';
import type { Redactor } from '../redact.js';
import type { ProtocolRegistry } from '../protocol/registry.js';
import type { KernelConfig } from '../config/schema.js';
import type { SlotName } from '../config/keys.js';
import type { JsonSchema } from '../validation.js';
import type { ConfigSnapshot } from '../config/store.js';
import type { ConfigIssue, PluginRecord } from './resolve.js';
import type { ToolCallOutcome, ToolCallRequest } from '../tools/invoke.js';
import type { PluginOrigin } from './discovery.js';
import type {
  AgentLoop,
  CapabilityKind,
  CapabilityLookup,
  ChannelsApi,
  CapabilityTypes,
  ChannelCapability,
  CliDefinition,
  CommandDefinition,
  GatewayMethodDefinition,
  HttpRouteDefinition,
  MemoryCapability,
  ProviderCapability,
  SandboxCapability,
  ServiceDefinition,
  ToolDefinition,
} from './capabilities.js';

/** Running hooks (not registering them: that goes through `api.on`, which checks the manifest). */
export type HookRunner = Pick<HookBus, 'runVoid' | 'runModifying' | 'runSync' | 'has' | 'list' | 'ready'>;

export interface KernelPaths {
  stateDir: string;
  workspaceDir: string;
  configPath: string;
}

/** Reading, checking and writing openclaw.json on behalf of plugins (the gateway's config.* methods). */
export interface ConfigAccess {
  /** The config file as it is on disk now (it may have changed since boot). */
  read(): ConfigSnapshot;
  /** Every problem `raw` would have as the config: kernel schema, env references, plugin schemas. */
  check(raw: Record<string, unknown>): Promise<ConfigIssue[]>;
  /** Write atomically, keeping `.bak` (read, edit and write inside `withConfigLock`, sdk/config-write.ts). */
  write(raw: Record<string, unknown>): void;
  /** JSON Schema of the whole file: the kernel's part plus every plugin's sections and config. */
  schema(): JsonSchema;
  /** Make `snapshot` what `config()` returns from now on (hot reload of a validated change). */
  use(snapshot: ConfigSnapshot): void;
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
  /**
   * The one redaction layer: mask secrets in anything a plugin shows outside the process
   * (status, errors, files it writes). `api.logger` already goes through it.
   */
  redact: Redactor;
  /** Plugin records as the host sees them (no code loaded to answer). */
  plugins(): readonly PluginRecord[];
  /** The single path for running tools: policy, hooks, validation, size cap. */
  tools: { invoke(request: ToolCallRequest): Promise<ToolCallOutcome> };
  /**
   * The channel choke point: the inbound pipeline, the single outbound path, pairing,
   * status — forwarded to whichever plugin provides the service "channels".
   */
  channels: ChannelsApi;
}

/**
 * Channels, providers and slot backends are checked here only for the method the kernel
 * needs; the SDK's PluginApi (sdk/types/plugin.ts) types them with their full contracts.
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

  registerTool(tool: ToolDefinition<any>): void;
  registerChannel(channel: ChannelCapability): void;
  registerProvider(provider: ProviderCapability): void;
  registerMemory(backend: MemoryCapability): void;
  registerSandbox(sandbox: SandboxCapability): void;
  registerAgentLoop(loop: AgentLoop): void;
  /** `timeoutMs`: longest wait for this handler (default per hook; the operator's config wins). */
  on<H extends HookName>(hook: H, handler: HookHandler<H>, options?: { priority?: number; timeoutMs?: number }): void;
  registerGatewayMethod(name: string, method: GatewayMethodDefinition): void;
  registerCommand(command: CommandDefinition): void;
  registerService(service: ServiceDefinition): void;
  registerCli(cli: CliDefinition): void;
  registerHttpRoute(route: HttpRouteDefinition): void;
}

/** What a plugin module exports (usually through the SDK's `definePlugin`). */
export interface PluginDefinition<Config = any> {
  /** Must equal the manifest id when both are given. */
  id?: string;
  name?: string;
  description?: string;
  version?: string;
  /**
   * For plugins handed to the kernel as objects (the test kit): there is no manifest file,
   * so these stand in for it. Such plugins are loaded at boot and need not declare
   * capabilities up front.
   */
  configSchema?: JsonSchema;
  kind?: SlotName | SlotName[];
  register(api: PluginApi<Config>): void | Promise<void>;
}

/** The host side of registration, as seen by the api object of one plugin. */
export interface RegistrationSink {
  register<K extends CapabilityKind>(kind: K, name: string, value: CapabilityTypes[K]): void;
  onHook<H extends HookName>(hook: H, handler: HookHandler<H>, options: { priority?: number; timeoutMs?: number }): void;
}

export interface PluginIdentity {
  id: string;
  name: string;
  version?: string;
  origin: PluginOrigin;
  dir?: string;
  config: unknown;
  sections: Record<string, unknown>;
}

function requireFunction(what: string, value: unknown): void {
  if (typeof value !== 'function') throw new TypeError(`${what} must be a function`);
}

function requireName(what: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw new TypeError(`${what} must be a non-empty string`);
  return value;
}

export function createPluginApi(
  identity: PluginIdentity,
  sink: RegistrationSink,
  kernel: KernelServices,
  logger: Logger,
): PluginApi {
  return {
    id: identity.id,
    name: identity.name,
    version: identity.version,
    origin: identity.origin,
    rootDir: identity.dir,
    config: identity.config as Record<string, unknown>,
    section<T>(name: string): T {
      if (!(name in identity.sections)) {
        throw new Error(`plugin "${identity.id}" does not own config section "${name}" (declare it in configSections)`);
      }
      return identity.sections[name] as T;
    },
    logger,
    kernel,

    registerTool(tool) {
      const name = requireName('tool.name', tool?.name);
      requireName(`tool "${name}" description`, tool.description);
      if (tool.parameters === null || typeof tool.parameters !== 'object') {
        throw new TypeError(`tool "${name}" parameters must be a JSON Schema object`);
      }
      requireFunction(`tool "${name}" execute`, tool.execute);
      sink.register('tool', name, tool);
    },
    registerChannel(channel) {
      const name = requireName('channel.id', channel?.id);
      requireFunction(`channel "${name}" send`, channel.send);
      sink.register('channel', name, channel);
    },
    registerProvider(provider) {
      const name = requireName('provider.id', provider?.id);
      requireFunction(`provider "${name}" stream`, provider.stream);
      sink.register('provider', name, provider);
    },
    registerMemory(backend) {
      requireFunction('memory backend search', backend?.search);
      requireFunction('memory backend get', backend.get);
      sink.register('memory', identity.id, backend);
    },
    registerSandbox(sandbox) {
      requireFunction('sandbox exec', sandbox?.exec);
      sink.register('sandbox', identity.id, sandbox);
    },
    registerAgentLoop(loop) {
      requireFunction('agent loop runTurn', loop?.runTurn);
      sink.register('agentLoop', identity.id, loop);
    },
    on(hook, handler, options = {}) {
      requireFunction(`handler for hook "${String(hook)}"`, handler);
      sink.onHook(hook, handler, options);
    },
    registerGatewayMethod(name, method) {
      requireName('gateway method name', name);
      requireFunction(`gateway method "${name}" handler`, method?.handler);
      sink.register('gatewayMethod', name, method);
    },
    registerCommand(command) {
      const name = requireName('command.name', command?.name);
      if (name.startsWith('/')) throw new TypeError(`command "${name}" must be registered without the leading "/"`);
      requireFunction(`command "${name}" handler`, command.handler);
      sink.register('command', name, command);
    },
    registerService(service) {
      const name = requireName('service.id', service?.id);
      if (service.start !== undefined) requireFunction(`service "${name}" start`, service.start);
      if (service.stop !== undefined) requireFunction(`service "${name}" stop`, service.stop);
      sink.register('service', name, service);
    },
    registerCli(cli) {
      const name = requireName('cli.name', cli?.name);
      requireFunction(`cli command "${name}" run`, cli.run);
      sink.register('cli', name, cli);
    },
    registerHttpRoute(route) {
      const path = requireName('route.path', route?.path);
      if (!path.startsWith('/')) throw new TypeError(`route path "${path}" must start with "/"`);
      requireFunction(`route "${path}" handler`, route.handler);
      sink.register('httpRoute', `${route.method ?? '*'} ${path}`, route);
    },
  };
}
