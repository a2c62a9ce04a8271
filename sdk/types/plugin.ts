/**
 * The plugin API as a plugin author sees it: the kernel's PluginApi with the capability
 * contracts the SDK owns (channels, model providers, memory and sandbox backends) filled
 * in. The kernel stores those capabilities by a minimal shape (an `id` and a `send`, a
 * `search` and a `get`, …); these interfaces narrow `api.register*` and
 * `api.kernel.capabilities` to the full contracts, so plugin code stays fully typed.
 * At run time they are the very same objects.
 */
import type * as K from '../../kernel/index.js';
import type { SlotName } from '../../kernel/index.js';
import type { ChannelPlugin, ChannelsApi } from './channels.js';
import type { HookBus, HookHandler, HookName, HookRunner } from './hooks.js';
import type { ModelProvider } from './models.js';
import type { MemoryBackend } from './memory.js';
import type { SandboxBackend } from './sandbox.js';
import type { CommandDefinition, GatewayMethodDefinition, HttpRouteDefinition } from './capabilities.js';
import type { CliGateway } from './cli.js';

export type { ChannelsApi };

/** Every kind of capability with its full contract. */
export interface CapabilityTypes extends K.CapabilityTypes {
  channel: ChannelPlugin;
  provider: ModelProvider;
  memory: MemoryBackend;
  sandbox: SandboxBackend;
  gatewayMethod: GatewayMethodDefinition;
  command: CommandDefinition;
  cli: CliDefinition;
  httpRoute: HttpRouteDefinition;
}

/** Finding capabilities by name; the owning plugin is loaded on first use. */
export interface CapabilityLookup extends K.CapabilityLookup {
  get<Kind extends K.CapabilityKind>(kind: Kind, name: string): Promise<CapabilityTypes[Kind]>;
  find<Kind extends K.CapabilityKind>(kind: Kind, name: string): Promise<CapabilityTypes[Kind] | undefined>;
  slot<S extends SlotName>(slot: S): Promise<CapabilityTypes[S] | undefined>;
  routes(pluginId: string): Promise<HttpRouteDefinition[]>;
}

/** The kernel as a plugin sees it. */
export interface KernelServices extends K.KernelServices {
  hooks: HookRunner;
  capabilities: CapabilityLookup;
  /** The channel choke point: inbound pipeline, the single outbound path, pairing, status. */
  channels: ChannelsApi;
}

export interface PluginApi<Config = Record<string, unknown>> extends K.PluginApi<Config> {
  readonly kernel: KernelServices;
  registerChannel(channel: ChannelPlugin): void;
  registerProvider(provider: ModelProvider): void;
  registerMemory(backend: MemoryBackend): void;
  registerSandbox(sandbox: SandboxBackend): void;
  registerGatewayMethod(name: string, method: GatewayMethodDefinition): void;
  registerCommand(command: CommandDefinition): void;
  registerCli(cli: CliDefinition): void;
  registerHttpRoute(route: HttpRouteDefinition): void;
  /** `timeoutMs`: longest wait for this handler (default per hook; the operator's config wins). */
  on<H extends HookName>(hook: H, handler: HookHandler<H>, options?: { priority?: number; timeoutMs?: number }): void;
}

/** What a plugin module exports (usually through `definePlugin`). */
export interface PluginDefinition<Config = any> extends K.PluginDefinition<Config> {
  register(api: PluginApi<Config>): void | Promise<void>;
}

/** A booted kernel (`createKernel`, the test kit), with typed capability lookup. */
export interface Kernel extends Omit<K.Kernel, 'capabilities' | 'plugins' | 'hooks'> {
  readonly hooks: HookBus;
  readonly capabilities: CapabilityLookup;
  readonly plugins: Omit<K.PluginHost, 'kernelServices'> & { readonly kernelServices: KernelServices };
}

export interface CliBootOptions {
  logger?: K.Logger;
  /** The first call may return the kernel the command runs in (not started, its log sent to `logger`) instead of a fresh one. */
  reuse?: boolean;
}

/** What the CLI app hands a plugin's command (`api.registerCli`). */
export interface CliContext {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
  /**
   * Boot a fresh kernel the way the CLI does. Long-running commands (the gateway) own
   * their kernel: their logger, their `start()`/`stop()`, a reboot after a config change.
   */
  boot(options?: CliBootOptions): Promise<BootedKernel>;
  /** The gateway running for this state dir: whether there is one, calls to it, config changes through it. */
  gateway: CliGateway;
  /** Shows `label` on stderr while `work` runs longer than `afterMs` (default 2000): a spinner on a terminal, lines otherwise. */
  progress<T>(label: string, work: () => Promise<T>, options?: { afterMs?: number }): Promise<T>;
}

/** The part of a booted kernel (the kernel's `Kernel`) a CLI command drives. */
export interface BootedKernel {
  readonly capabilities: CapabilityLookup;
  readonly plugins: { get(id: string): K.PluginRecord | undefined };
  readonly redact: K.Redactor;
  /** Every config problem, warnings (settings kept but unused) included. */
  issues(): K.ConfigIssue[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface CliDefinition {
  name: string;
  description: string;
  /** Returns the process exit code (default 0). */
  run(argv: string[], ctx: CliContext): number | void | Promise<number | void>;
}
