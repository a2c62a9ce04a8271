/**
 * Capability kinds as data. The host stores what plugins register by kind and name and
 * checks only what it needs to route or call each; the full contracts are the SDK's
 * (sdk/types/). Tools and services are typed here in full: the kernel calls them itself.
 */
import type { JsonSchema } from '../validation.js';
import type { Logger } from '../log.js';
import type { SlotName } from '../config/keys.js';

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
  runId?: string;
  /** Relative paths in tool params resolve against it. */
  workspaceDir?: string;
  /** Streams partial output to UIs while the tool runs. */
  onUpdate?: (partial: ToolResult) => void;
  /** Set by the choke point when this session is sandboxed (the SDK's SandboxInstance). */
  sandbox?: ToolSandbox;
}

/** The kernel's view of a SandboxInstance (sdk/types/sandbox.ts has the full contract). */
export interface ToolSandbox {
  readonly id: string;
  readonly backend: string;
  readonly spec: { scopeKey: string; workspaceRoot: string; workspaceAccess: 'none' | 'ro' | 'rw'; workdir: string };
}

/** What a tool call needs approved: the approver's service id and the values the tool acts on. */
export type ToolApprovalSubject = { service: string; request: Record<string, unknown> };

export interface ToolDefinition<Params = Record<string, unknown>> {
  name: string;
  label?: string;
  description: string;
  /** JSON Schema of the params object the model must supply. */
  parameters: JsonSchema;
  /** Runs commands or touches files: in a sandboxed session it gets `ctx.sandbox`, or is refused. */
  runsInSandbox?: boolean;
  execute(params: Params, ctx: ToolContext): ToolResult | Promise<ToolResult>;
  /** What this call needs approved before it runs (the policy's approval step asks); undefined: nothing. */
  approval?(params: Params, ctx: ToolContext): ToolApprovalSubject | undefined;
}

/** A tool result as the model and the transcript see it; the tool choke point builds it. */
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
  /** What other plugins use, through `capabilities.find('service', id)`. */
  api?: unknown;
}

type Fn = (...args: any[]) => unknown;

/** Every kind of capability, keyed by the name the host stores it under. */
export interface CapabilityTypes {
  tool: ToolDefinition<any>;
  channel: { id: string; send: Fn };
  provider: { id: string; stream: Fn };
  gatewayMethod: {
    handler: Fn;
    params?: JsonSchema;
    scope?: string;
    sideEffect?: boolean | 'optional';
    description?: string;
  };
  command: { name: string; description: string; handler: Fn };
  service: ServiceDefinition;
  cli: { name: string; description: string; run: Fn };
  /** `path` is exact, or a prefix ending in `/*`; `auth: 'none'` opts out of gateway auth. */
  httpRoute: { method: string; path: string; auth?: 'gateway' | 'none'; handler: Fn };
  memory: { search: Fn; get: Fn };
  sandbox: { id: string; ensure: Fn; check: Fn; list: Fn; remove: Fn };
  agentLoop: { runTurn: Fn };
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

/** What `api.register<Kind>` checks: the property that names it (slot backends: their plugin) and the functions it must have. */
export const REGISTRATION: { [K in CapabilityKind]: { key?: string; calls: readonly string[] } } = {
  tool: { key: 'name', calls: ['execute'] },
  channel: { key: 'id', calls: ['send'] },
  provider: { key: 'id', calls: ['stream'] },
  gatewayMethod: { calls: ['handler'] },
  command: { key: 'name', calls: ['handler'] },
  service: { key: 'id', calls: [] },
  cli: { key: 'name', calls: ['run'] },
  httpRoute: { key: 'path', calls: ['handler'] },
  memory: { calls: ['search', 'get'] },
  sandbox: { calls: ['check', 'ensure', 'list', 'remove'] },
  agentLoop: { calls: ['runTurn'] },
};

export interface CapabilityInfo {
  kind: CapabilityKind;
  name: string;
  pluginId: string;
  loaded: boolean;
}

/** Finding capabilities by name; the owning plugin is loaded on first use. */
export interface CapabilityLookup {
  get<K extends CapabilityKind>(kind: K, name: string): Promise<CapabilityTypes[K]>;
  find<K extends CapabilityKind>(kind: K, name: string): Promise<CapabilityTypes[K] | undefined>;
  list(kind: CapabilityKind): CapabilityInfo[];
  slot<S extends SlotName>(slot: S): Promise<CapabilityTypes[S] | undefined>;
  /** HTTP path prefix (manifest `httpRoutes`) → owning plugin; the gateway matches requests against them. */
  routePrefixes(): ReadonlyMap<string, string>;
  /** The HTTP routes a plugin registered, loading it first. */
  routes(pluginId: string): Promise<Array<CapabilityTypes['httpRoute']>>;
}

/**
 * The channel choke point (`api.kernel.channels`): every inbound message, outbound send and
 * pairing decision crosses this one object. The machinery behind it (pipeline, access
 * control, chunking, retries) is the `api` of the service "channels" (plugins/channels or a
 * replacement), loaded when first needed. The SDK's ChannelsApi types it in full.
 */
export interface ChannelsApi {
  status(): Promise<unknown[]>;
  receive(channel: string, message: unknown): Promise<unknown>;
  send(request: { channel: string }): Promise<unknown>;
  pairing: {
    list(channel?: string): Promise<unknown[]>;
    approve(channel: string, code: string): Promise<unknown>;
  };
}

/** The service id whose `api` implements ChannelsApi. */
export const CHANNELS_SERVICE = 'channels';

export function channelsFacade(capabilities: CapabilityLookup): ChannelsApi {
  const provider = async (): Promise<ChannelsApi | undefined> => {
    const service = await capabilities.find('service', CHANNELS_SERVICE);
    return service?.api as ChannelsApi | undefined;
  };
  const required = async (what: string): Promise<ChannelsApi> => {
    const api = await provider();
    if (!api) {
      throw new Error(
        `cannot ${what}: no plugin provides the service "${CHANNELS_SERVICE}" (enable plugins/channels, the bundled "channels" plugin)`,
      );
    }
    return api;
  };
  return {
    status: async () => (await provider().catch(() => undefined))?.status() ?? [],
    receive: async (channel, message) => (await required(`receive a ${channel} message`)).receive(channel, message),
    send: async (request) => (await required(`send to ${request.channel}`)).send(request),
    pairing: {
      list: async (channel) => (await provider().catch(() => undefined))?.pairing.list(channel) ?? [],
      approve: async (channel, code) => (await required('approve a pairing code')).pairing.approve(channel, code),
    },
  };
}
