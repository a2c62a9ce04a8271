/**
 * The contracts behind each `register*` call: what a plugin hands the kernel for each kind
 * of capability. The kernel stores and routes these; the plugins that consume them (the
 * gateway, the agent loop, channels) give them meaning.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonSchema } from '../validation.js';
import type { Logger } from '../log.js';
import type { Redactor } from '../redact.js';
import type { HookContext } from '../hooks/catalog.js';
import type { SlotName } from '../config/keys.js';
import type { PluginRecord } from './resolve.js';

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

// ── Channels ─────────────────────────────────────────────────────────────────────
//
// A channel plugin is a transport: it turns what a platform delivers into an
// InboundMessage and hands it to `ctx.receive`, and it sends one already-shaped piece of
// text or media when asked. Everything between — dedupe, access control, session keys,
// queueing, the agent, hooks, chunking, retries — is one pipeline behind the kernel's
// channel choke point (plugins/channels provides it), so no channel can skip a step.

export type PeerKind = 'direct' | 'group' | 'channel';

export interface InboundMedia {
  /** Where to fetch it (an http(s) URL the channel serves or a local file path). */
  url?: string;
  /** Inline content, base64. */
  data?: string;
  mimeType?: string;
  fileName?: string;
  caption?: string;
}

/** One received message, normalised. */
export interface InboundMessage {
  accountId: string;
  /** The conversation: the sender (direct) or the group / channel / room. */
  peer: { kind: PeerKind; id: string };
  sender: { id: string; name?: string; username?: string };
  text: string;
  /** The platform's id for the message (dedupe key, reply target). */
  messageId: string;
  media?: InboundMedia[];
  /** Forum topic / thread inside the peer. */
  threadId?: string;
  replyTo?: { messageId: string; text?: string; senderId?: string };
  /** The bot was addressed (mention, reply to the bot, or a command) — for mention gating. */
  mentioned?: boolean;
  /** Group title, for labels and the group context line. */
  peerName?: string;
  timestamp?: number;
}

/** What became of an inbound message. */
export type InboundOutcome =
  | { status: 'dispatched'; sessionKey: string; runId: string }
  | { status: 'duplicate' }
  | { status: 'pairing'; code: string; created: boolean }
  | { status: 'blocked'; reason: string }
  | { status: 'history'; reason: string };

export interface OutboundMessage {
  accountId?: string;
  /** Peer id to send to (chat id, channel id, phone number). */
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

/** Thrown by a channel's send: whether (and when) the kernel should try again. */
export interface ChannelSendFailure extends Error {
  retryable?: boolean;
  retryAfterMs?: number;
}

export interface ChannelStatus {
  accountId: string;
  connected: boolean;
  running?: boolean;
  detail?: string;
  lastError?: string;
  [key: string]: unknown;
}

/** Passed to `start` for one account. */
export interface ChannelAccountContext {
  accountId: string;
  /** The channel's config (`channels.<id>`) with the account's overrides applied. */
  config: Readonly<Record<string, unknown>>;
  logger: Logger;
  /** Aborted when the account stops. */
  signal: AbortSignal;
  stateDir: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Hand a received message to the pipeline; resolves once it is accepted or refused. */
  receive(message: InboundMessage): Promise<InboundOutcome>;
}

export interface ChannelPlugin {
  id: string;
  label?: string;
  /** Longest text one outbound message may carry; longer text is cut to fit. */
  textLimit: number;
  /**
   * Config this channel has before the user writes any (`channels.<id>` is merged over it).
   * With `enabled: true` the channel runs without being configured — for channels whose
   * access is already controlled elsewhere (WebChat rides on gateway auth).
   */
  defaults?: Readonly<Record<string, unknown>>;
  /** Account ids configured for this channel (default: the keys of `accounts`, else "default"). */
  accounts?(config: Readonly<Record<string, unknown>>): string[];
  start?(ctx: ChannelAccountContext): void | Promise<void>;
  stop?(accountId: string): void | Promise<void>;
  /** Send one piece (already within textLimit). Throw a ChannelSendFailure to ask for a retry. */
  send(message: OutboundMessage): Promise<SendResult>;
  /** Show "typing…" while the agent works, when the platform has it. */
  typing?(target: { accountId: string; to: string; threadId?: string }): Promise<void>;
  status?(): ChannelStatus[] | Promise<ChannelStatus[]>;
}

/** One message for the outbound path (`api.kernel.channels.send`). */
export interface OutboundRequest {
  /** Channel id ("telegram"), or an internal surface ("gateway", "cli") that has no transport. */
  channel: string;
  to: string;
  accountId?: string;
  threadId?: string;
  text: string;
  media?: string[];
  replyTo?: string;
  /** Who is sending (agent, session, run) — passed to the hooks. */
  context?: HookContext;
  /** Send through this instead of the channel plugin (callers with their own transport). */
  transport?: (message: OutboundMessage) => Promise<SendResult | void>;
}

export interface OutboundResult {
  /** Everything reached the transport (true for surfaces without one). */
  delivered: boolean;
  /** A message_sending handler cancelled it. */
  cancelled: boolean;
  /** The text as sent (after message_sending). */
  text: string;
  pieces: number;
  attempts: number;
  messageIds: string[];
  error?: string;
}

/** A sender waiting for the owner to approve their pairing code. */
export interface PairingRequest {
  code: string;
  channel: string;
  accountId: string;
  senderId: string;
  senderName?: string;
  createdAt: number;
  expiresAt: number;
}

export interface ChannelInfo {
  id: string;
  pluginId: string;
  configured: boolean;
  enabled: boolean;
  accounts: Array<ChannelStatus & { running: boolean; lastError?: string; lastInboundAt?: number; lastOutboundAt?: number }>;
}

/**
 * The channel choke point (`api.kernel.channels`): inbound dispatch, the one outbound path,
 * pairing and status. The kernel forwards each call to the `api` of the service "channels"
 * (the bundled plugins/channels); another plugin may provide it instead.
 */
export interface ChannelsApi {
  /** Channels declared by enabled plugins, with their accounts' state. */
  status(): Promise<ChannelInfo[]>;
  /** The inbound pipeline (channels call it through their account context). */
  receive(channel: string, message: InboundMessage): Promise<InboundOutcome>;
  /** The one outbound path. */
  send(request: OutboundRequest): Promise<OutboundResult>;
  pairing: {
    list(channel?: string): Promise<PairingRequest[]>;
    approve(channel: string, code: string): Promise<PairingRequest | undefined>;
  };
}

// ── Model providers ──────────────────────────────────────────────────────────────
//
// The loop speaks one message format to every provider; each provider plugin translates
// it to its API (OpenAI Chat/Responses, Anthropic Messages, a local GGUF) and streams back
// the same small set of events. Providers hold no credentials: the loop resolves the auth
// profile and endpoint for each request.

export type TextPart = { type: 'text'; text: string };
export type ImagePart = { type: 'image'; data: string; mimeType: string };
export type ThinkingPart = { type: 'thinking'; thinking: string; signature?: string };
export type ToolCallPart = { type: 'toolCall'; id: string; name: string; arguments: Record<string, unknown> };

export type StopReason = 'stop' | 'length' | 'toolUse' | 'error' | 'aborted';

export interface Usage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface UserMessage {
  role: 'user';
  content: string | Array<TextPart | ImagePart>;
  timestamp?: number;
}

export interface AssistantMessage {
  role: 'assistant';
  content: Array<TextPart | ThinkingPart | ToolCallPart>;
  provider?: string;
  model?: string;
  stopReason?: StopReason;
  usage?: Usage;
  errorMessage?: string;
  timestamp?: number;
}

export interface ToolResultMessage {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: Array<TextPart | ImagePart>;
  isError?: boolean;
  /** For UIs and logs; never sent to the model. */
  details?: unknown;
  timestamp?: number;
}

export type ChatMessage = UserMessage | AssistantMessage | ToolResultMessage;

export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high';

/** Where and how to reach the model for one request (from config and the auth profile). */
export interface ModelEndpoint {
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  /** Which wire API to use when a provider speaks several (openai: "chat" | "responses"). */
  api?: string;
  /** Abort the HTTP request after this long without completing (ms). */
  timeoutMs?: number;
}

export interface ModelRequest {
  /** Provider-local model id (the part of "provider/model" after the first "/"). */
  model: string;
  systemPrompt?: string;
  messages: ChatMessage[];
  tools?: Array<{ name: string; description: string; parameters: JsonSchema }>;
  maxTokens?: number;
  temperature?: number;
  thinking?: ThinkingLevel;
  endpoint?: ModelEndpoint;
}

/**
 * What a provider streams. `tool_call` is emitted once the call's arguments are complete.
 * The stream ends with exactly one `done`; failures are thrown (a ModelError from the SDK,
 * whose `kind` drives profile rotation and model fallback).
 */
export type ModelStreamEvent =
  | { type: 'text_delta'; delta: string }
  /** `signature` (Anthropic) arrives once, usually on a final empty delta, and must be sent back with the thinking. */
  | { type: 'thinking_delta'; delta: string; signature?: string }
  | { type: 'tool_call'; id: string; name: string; arguments: Record<string, unknown> }
  | { type: 'done'; stopReason: StopReason; usage?: Usage };

export interface ModelInfo {
  id: string;
  name?: string;
  contextWindow?: number;
  maxTokens?: number;
  /** Supports thinking / reasoning output. */
  reasoning?: boolean;
}

export interface ModelProvider {
  id: string;
  label?: string;
  /** Environment variables that hold an API key for this provider, in order of preference. */
  envKeys?: string[];
  /** Whether requests need an API key (a local model does not). */
  requiresKey?: boolean;
  /**
   * With a custom `baseUrl` the provider may run keyless: OpenAI-compatible local servers
   * (Ollama, vLLM, llama.cpp server) take no key.
   */
  keylessWithBaseUrl?: boolean;
  models?(): ModelInfo[] | Promise<ModelInfo[]>;
  stream(request: ModelRequest, options: { signal?: AbortSignal }): AsyncIterable<ModelStreamEvent>;
}

// ── Slot capabilities ────────────────────────────────────────────────────────────

export interface MemorySearchHit {
  /** Workspace-relative path (or `extra/<name>/…`, `qmd/<collection>/…` for other roots). */
  path: string;
  startLine: number;
  endLine: number;
  score: number;
  /** At most 700 characters of the chunk. */
  snippet: string;
  /** Which file set it came from: `memory` (MEMORY.md, memory/) or `extra` (extraPaths). */
  source?: string;
}

export interface MemorySearchOptions {
  agentId?: string;
  maxResults?: number;
  minScore?: number;
  signal?: AbortSignal;
}

/** What answered a search and how: the same contract for every backend. */
export interface MemorySearchResult {
  results: MemorySearchHit[];
  /** The backend that answered (after any fallback), e.g. "sqlite", "minisearch", "qmd". */
  backend: string;
  /** hybrid (vector + keyword), keyword (no embeddings), or vector (no full-text index). */
  mode: 'hybrid' | 'keyword' | 'vector';
  /** Embedding provider and model, when vectors took part. */
  provider?: string;
  model?: string;
  /** Why the answer is degraded (fallback backend, keyword-only, …). */
  notice?: string;
}

export interface MemorySyncProgress {
  phase: 'scan' | 'chunk' | 'embed' | 'write' | 'done';
  files: number;
  filesTotal: number;
  chunks: number;
  embedded: number;
}

export interface MemorySyncStats {
  files: number;
  /** Files (re)indexed because they were new or changed. */
  indexed: number;
  /** Unchanged files skipped by content hash. */
  skipped: number;
  removed: number;
  chunks: number;
  /** Texts sent to the embedding provider (cache misses). */
  embedded: number;
  cacheHits: number;
  /** The whole index was rebuilt (forced, or the provider/model/chunking changed). */
  rebuilt: boolean;
  durationMs: number;
}

export interface MemoryBackend {
  search(query: string, options?: MemorySearchOptions): Promise<MemorySearchResult>;
  /** Lines of one memory file; refuses any path outside the memory files. */
  get(path: string, options?: { agentId?: string; from?: number; lines?: number }): Promise<{ path: string; text: string; from: number; lines: number; totalLines: number }>;
  status(options?: { agentId?: string; deep?: boolean }): Promise<Record<string, unknown>> | Record<string, unknown>;
  sync?(options?: { agentId?: string; force?: boolean; onProgress?: (progress: MemorySyncProgress) => void }): Promise<MemorySyncStats>;
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
  boot(options?: CliBootOptions): Promise<BootedKernel>;
}

/**
 * The part of a booted kernel (kernel.ts `Kernel`) a CLI command drives. Declared here, not
 * imported, so the capability types do not depend on the kernel and its plugin host.
 */
export interface BootedKernel {
  readonly capabilities: CapabilityLookup;
  readonly plugins: { get(id: string): PluginRecord | undefined };
  readonly redact: Redactor;
  start(): Promise<void>;
  stop(): Promise<void>;
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
