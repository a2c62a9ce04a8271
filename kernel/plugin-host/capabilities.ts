/**
 * The contracts behind each `register*` call: what a plugin hands the kernel for each kind
 * of capability. The kernel stores and routes these; the plugins that consume them (the
 * gateway, the agent loop, channels) give them meaning.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonSchema } from '../validation.js';
import type { Logger } from '../log.js';
import type { SlotName } from '../config/keys.js';

// ── Tools ────────────────────────────────────────────────────────────────────────

export type ToolContent = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

/** What a tool returns: `content` goes to the model, `details` to UIs and logs. */
export interface ToolResult {
  content: ToolContent[];
  details?: unknown;
  isError?: boolean;
}

export interface ToolContext {
  toolCallId: string;
  signal?: AbortSignal;
  agentId?: string;
  sessionKey?: string;
  /** The agent run making the call. */
  runId?: string;
  /** The agent's workspace; relative paths in tool params resolve against it. */
  workspaceDir?: string;
  /** Streams partial output to UIs while the tool runs. */
  onUpdate?: (partial: ToolResult) => void;
}

export interface ToolDefinition<Params = Record<string, unknown>> {
  name: string;
  label?: string;
  description: string;
  /** JSON Schema of the params object the model must supply. */
  parameters: JsonSchema;
  execute(params: Params, ctx: ToolContext): ToolResult | Promise<ToolResult>;
}

/**
 * A tool result as the model and the transcript see it (one of the SDK's ChatMessage
 * kinds); the tool choke point builds it.
 */
export interface ToolResultMessage {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: ToolContent[];
  isError?: boolean;
  /** For UIs and logs; never sent to the model. */
  details?: unknown;
  timestamp?: number;
}

// ── Capabilities the kernel only stores and hands out ───────────────────────────
//
// Channels, model providers and the slot backends mean something to the plugins that use
// them, not to the kernel: it checks the one method it needs to route or call them by and
// stores them. Their full contracts (ChannelPlugin, ModelProvider, MemoryBackend,
// SandboxBackend, the agent turn) are the SDK's (sdk/types/, sdk/agent/), which also types
// `api.register*` and `api.kernel.capabilities` with them for plugin authors.

/** A channel transport (SDK: ChannelPlugin). */
export interface ChannelCapability {
  id: string;
  send(...args: any[]): unknown;
}

/** A model provider (SDK: ModelProvider). */
export interface ProviderCapability {
  id: string;
  stream(...args: any[]): unknown;
}

/** The `memory` slot (SDK: MemoryBackend). */
export interface MemoryCapability {
  search(...args: any[]): unknown;
  get(...args: any[]): unknown;
}

/** The `sandbox` slot (SDK: SandboxBackend). */
export interface SandboxCapability {
  exec(...args: any[]): unknown;
}

/**
 * The channel choke point (`api.kernel.channels`): inbound dispatch, the one outbound path,
 * pairing and status. The kernel forwards each call to the `api` of the service "channels"
 * (the bundled plugins/channels); another plugin may provide it instead. Typed in full by
 * the SDK's ChannelsApi (sdk/types/channels.ts).
 */
export interface ChannelsApi {
  /** Channels declared by enabled plugins, with their accounts' state. */
  status(): Promise<unknown[]>;
  /** The inbound pipeline (channels call it through their account context). */
  receive(channel: string, message: unknown): Promise<unknown>;
  /** The one outbound path. */
  send(request: { channel: string }): Promise<unknown>;
  pairing: {
    list(channel?: string): Promise<unknown[]>;
    approve(channel: string, code: string): Promise<unknown>;
  };
}

/**
 * The `agentLoop` slot holds one turn: prompt, model/tool loop, streaming, compaction. Its
 * full contract (TurnInput, TurnContext, TurnResult) is the SDK's `claw/sdk/agent`; the
 * kernel only routes it.
 */
export interface AgentLoop {
  runTurn(input: any, ctx: any): Promise<any>;
}

// ── Control-plane surfaces ───────────────────────────────────────────────────────

export interface GatewayMethodContext {
  /** Connection the request arrived on, when it came over the wire. */
  connId?: string;
  role?: string;
  scopes?: readonly string[];
  /** Paired device identity of the caller, when it presented one. */
  deviceId?: string;
  client?: { id: string; version?: string; platform?: string; mode?: string; instanceId?: string };
  /** Aborted when the caller disconnects or the gateway shuts down. */
  signal?: AbortSignal;
  /**
   * Send an interim successful response now (for example `{ runId, status: "accepted" }`);
   * the handler's return value follows later as the final response on the same request id.
   */
  ack?(payload: unknown): void;
  [key: string]: unknown;
}

export interface GatewayMethodDefinition<Params = any> {
  params?: JsonSchema;
  scope?: string;
  sideEffect?: boolean;
  description?: string;
  handler(params: Params, ctx: GatewayMethodContext): unknown;
}

export interface CommandContext {
  args: string;
  sessionKey?: string;
  channel?: string;
  senderId?: string;
}

export interface CommandDefinition {
  /** Without the leading "/". */
  name: string;
  description: string;
  acceptsArgs?: boolean;
  handler(ctx: CommandContext): { text?: string } | void | Promise<{ text?: string } | void>;
}

export interface ServiceContext {
  logger: Logger;
  stateDir: string;
  signal: AbortSignal;
}

export interface ServiceDefinition {
  id: string;
  /** Runs at gateway start (or when the plugin loads while the gateway runs). */
  start?(ctx: ServiceContext): void | Promise<void>;
  stop?(): void | Promise<void>;
  /** What other plugins use, through `capabilities.find('service', id)` (e.g. ChannelsApi for "channels"). */
  api?: unknown;
}

export interface CliDefinition {
  name: string;
  description: string;
  /**
   * Returns the process exit code (default 0). `ctx` is the CLI app's: output streams,
   * env and a way to boot a kernel (the SDK's CliContext).
   */
  run(argv: string[], ctx: any): number | void | Promise<number | void>;
}

export interface HttpRouteDefinition {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | '*';
  /** Exact path, or a prefix ending in `/*`. Must fall under a manifest `httpRoutes` prefix. */
  path: string;
  /** `gateway` (default) puts the route behind gateway auth. */
  auth?: 'gateway' | 'none';
  handler(req: IncomingMessage, res: ServerResponse): void | Promise<void>;
}

/** Every kind of capability, keyed by the name the host stores it under. */
export interface CapabilityTypes {
  tool: ToolDefinition<any>;
  channel: ChannelCapability;
  provider: ProviderCapability;
  gatewayMethod: GatewayMethodDefinition;
  command: CommandDefinition;
  service: ServiceDefinition;
  cli: CliDefinition;
  httpRoute: HttpRouteDefinition;
  memory: MemoryCapability;
  sandbox: SandboxCapability;
  agentLoop: AgentLoop;
}

export type CapabilityKind = keyof CapabilityTypes;

/** Manifest field that declares each named capability kind. Slot kinds are declared by `kind`. */
export const DECLARING_FIELD = {
  tool: 'tools',
  channel: 'channels',
  provider: 'providers',
  gatewayMethod: 'gatewayMethods',
  command: 'commands',
  service: 'services',
  cli: 'cliCommands',
  httpRoute: 'httpRoutes',
} as const;

export type NamedCapabilityKind = keyof typeof DECLARING_FIELD;
export type SlotCapabilityKind = Exclude<CapabilityKind, NamedCapabilityKind>;

export interface CapabilityInfo {
  kind: CapabilityKind;
  name: string;
  pluginId: string;
  /** False while the owning plugin has not been loaded. */
  loaded: boolean;
}

/** Finding capabilities by name; the owning plugin is loaded on first use. */
export interface CapabilityLookup {
  get<K extends CapabilityKind>(kind: K, name: string): Promise<CapabilityTypes[K]>;
  find<K extends CapabilityKind>(kind: K, name: string): Promise<CapabilityTypes[K] | undefined>;
  list(kind: CapabilityKind): CapabilityInfo[];
  slot<S extends SlotName>(slot: S): Promise<CapabilityTypes[S] | undefined>;
  /**
   * The HTTP route for a request: the plugin whose manifest `httpRoutes` prefix matches
   * (longest wins) is loaded, then its registered routes are matched (exact path, or a
   * prefix registered as `/path/*`).
   */
  route(method: string, path: string): Promise<{ pluginId: string; route: CapabilityTypes['httpRoute'] } | undefined>;
}
