/**
 * The contracts behind each `register*` call: what a plugin hands the kernel for each kind
 * of capability. The kernel stores and routes these; the plugins that consume them (the
 * gateway, the agent loop, channels) give them meaning.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonSchema } from '../validation.js';
import type { Logger } from '../log.js';
import type { Kernel } from '../kernel.js';

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

// ── Channels ─────────────────────────────────────────────────────────────────────

export type PeerKind = 'direct' | 'group' | 'channel';

export interface OutboundMessage {
  accountId?: string;
  to: string;
  text?: string;
  media?: Array<{ url: string; mimeType?: string; caption?: string }>;
  replyTo?: string;
  threadId?: string;
}

export interface SendResult {
  messageId?: string;
  [key: string]: unknown;
}

export interface ChannelStatus {
  accountId: string;
  connected: boolean;
  detail?: string;
  [key: string]: unknown;
}

export interface ChannelPlugin {
  id: string;
  label?: string;
  /** Longest text one outbound message may carry; longer text is chunked. */
  textLimit?: number;
  start?(ctx: { accountId: string; logger: Logger; signal: AbortSignal }): void | Promise<void>;
  stop?(accountId: string): void | Promise<void>;
  send(message: OutboundMessage): Promise<SendResult>;
  status?(): ChannelStatus[] | Promise<ChannelStatus[]>;
}

// ── Model providers ──────────────────────────────────────────────────────────────

export interface ModelInfo {
  id: string;
  name?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
}

export interface ProviderMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: unknown;
  [key: string]: unknown;
}

export interface ModelRequest {
  model: string;
  systemPrompt?: string;
  messages: ProviderMessage[];
  tools?: Array<{ name: string; description: string; parameters: JsonSchema }>;
  maxTokens?: number;
  temperature?: number;
  [key: string]: unknown;
}

export type ModelStreamEvent =
  | { type: 'text'; delta: string }
  | { type: 'thinking'; delta: string }
  | { type: 'tool_call'; id: string; name: string; params: Record<string, unknown> }
  | { type: 'done'; stopReason: string; usage?: { input?: number; output?: number } }
  | { type: 'error'; error: string; kind?: string };

export interface ModelProvider {
  id: string;
  label?: string;
  models?(): ModelInfo[] | Promise<ModelInfo[]>;
  stream(request: ModelRequest, options: { signal?: AbortSignal }): AsyncIterable<ModelStreamEvent>;
}

// ── Slot capabilities ────────────────────────────────────────────────────────────

export interface MemorySearchHit {
  path: string;
  startLine: number;
  endLine: number;
  score: number;
  snippet: string;
  source?: string;
}

export interface MemoryBackend {
  search(query: string, options?: { maxResults?: number; minScore?: number }): Promise<MemorySearchHit[]>;
  get(path: string, options?: { from?: number; lines?: number }): Promise<{ path: string; text: string }>;
  status(): Promise<Record<string, unknown>> | Record<string, unknown>;
  sync?(options?: { force?: boolean }): Promise<void>;
  close?(): Promise<void> | void;
}

export interface ExecRequest {
  command: string[];
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  stdin?: string;
  signal?: AbortSignal;
}

export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
}

export interface SandboxBackend {
  exec(request: ExecRequest): Promise<ExecResult>;
  dispose?(): Promise<void> | void;
}

export interface AgentRunRequest {
  sessionKey: string;
  message: string;
  agentId?: string;
  signal?: AbortSignal;
  [key: string]: unknown;
}

export interface AgentLoop {
  run(request: AgentRunRequest): Promise<{ text: string; [key: string]: unknown }>;
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
  start(ctx: ServiceContext): void | Promise<void>;
  stop?(): void | Promise<void>;
}

export interface CliBootOptions {
  logger?: Logger;
  /** Deep-merged over the config file before validation (e.g. command-line flags). */
  configOverlay?: Record<string, unknown>;
}

export interface CliContext {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
  /**
   * Boot a fresh kernel the way the CLI does. Long-running commands (the gateway) own
   * their kernel: their logger, their `start()`/`stop()`, a reboot after a config change.
   */
  boot(options?: CliBootOptions): Promise<Kernel>;
}

export interface CliDefinition {
  name: string;
  description: string;
  /** Returns the process exit code (default 0). */
  run(argv: string[], ctx: CliContext): number | void | Promise<number | void>;
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
  channel: ChannelPlugin;
  provider: ModelProvider;
  gatewayMethod: GatewayMethodDefinition;
  command: CommandDefinition;
  service: ServiceDefinition;
  cli: CliDefinition;
  httpRoute: HttpRouteDefinition;
  memory: MemoryBackend;
  sandbox: SandboxBackend;
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
