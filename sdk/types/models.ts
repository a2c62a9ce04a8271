/**
 * The model contract: the messages, requests and stream events between the agent loop and a
 * provider plugin (`api.registerProvider`).
 *
 * The loop speaks one message format to every provider; each provider plugin translates
 * it to its API (OpenAI Chat/Responses, Anthropic Messages, a local GGUF) and streams back
 * the same small set of events. Providers hold no credentials: the loop resolves the auth
 * profile and endpoint for each request.
 */
import type { JsonSchema, ToolResultMessage } from '../../kernel/index.js';

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
  /** USD at the price in effect for the call (OpenClaw's shape); absent when the model has no price. */
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/** USD per million tokens (`models.providers.<id>.models[].cost`, OpenClaw's). */
export type ModelCost = { input: number; output: number; cacheRead?: number; cacheWrite?: number };

export interface UserMessage {
  role: 'user';
  content: string | Array<TextPart | ImagePart>;
  timestamp?: number;
  /** Who started the turn when no person did ("heartbeat"); providers never see it. */
  origin?: string;
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

export type ChatMessage = UserMessage | AssistantMessage | ToolResultMessage;

export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high';

/** Where and how to reach the model for one request (from config and the auth profile). */
export interface ModelEndpoint {
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  /**
   * Which wire API to use when a provider speaks several: "openai-completions" |
   * "openai-responses" (also spelled "chat" | "responses"), "anthropic-messages".
   */
  api?: string;
  /**
   * The configured provider id the request is for, when it is not the plugin's own: a
   * `models.providers.ollama` entry served by the openai plugin. Errors name it.
   */
  provider?: string;
  /** Abort the HTTP request after this long without completing (ms). */
  timeoutMs?: number;
  /** A local model file instead of the configured one (claw onboard's live test, before saving). */
  modelPath?: string;
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
  cost?: ModelCost;
}

export interface ModelProvider {
  id: string;
  label?: string;
  /** Environment variables that hold an API key for this provider, in order of preference. */
  envKeys?: string[];
  /** Environment variables naming its endpoint (OPENAI_BASE_URL); `models.providers.<id>.baseUrl` wins. */
  baseUrlEnvKeys?: string[];
  /** Whether requests need an API key (a local model does not). */
  requiresKey?: boolean;
  /**
   * With a custom `baseUrl` the provider may run keyless: OpenAI-compatible local servers
   * (Ollama, vLLM, llama.cpp server) take no key.
   */
  keylessWithBaseUrl?: boolean;
  /**
   * The wire APIs this provider speaks (OpenClaw's `api` names: "openai-completions",
   * "openai-responses", "anthropic-messages"). A `models.providers.<id>` entry with any
   * other id is served by the provider that speaks its `api`.
   */
  apis?: readonly string[];
  models?(): ModelInfo[] | Promise<ModelInfo[]>;
  /** Why it cannot answer now, found without the network (a local model file missing); undefined when it can. */
  unavailable?(): string | undefined;
  stream(request: ModelRequest, options: { signal?: AbortSignal }): AsyncIterable<ModelStreamEvent>;
}
