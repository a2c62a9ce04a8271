/**
 * The "sessions" service contract: the per-agent stores, transcripts, and the session
 * rules (`session.*` config: main key, reset and send policy) that the agent, its loop,
 * the session tools and the channels share. The sessions plugin provides it; a consumer
 * asks for it with `requireService<SessionService>(kernel, 'sessions', …)` and never
 * builds its own, since two stores on one sessions.json lose each other's writes.
 */
import type { ToolResultMessage } from '../../kernel/index.js';
import type { ChatMessage, ToolCallPart } from '../types/models.js';
import type { SessionType } from './keys.js';
import type { SessionEntry, SessionStore } from './store.js';
import type { Transcript, TranscriptOptions } from './transcript.js';

export type ResetMode = 'daily' | 'idle';

/** When a session of some type on some channel expires (from `session.reset*`). */
export interface ResetPolicy {
  mode: ResetMode;
  /** Daily reset hour (only meaningful for mode "daily"). */
  atHour: number;
  /** Idle window; with mode "daily" it is an extra, optional clock. */
  idleMinutes?: number;
  /** Which config produced the policy. */
  source: 'channel' | 'type' | 'reset' | 'legacy-idle' | 'default';
}

export type SendDecision = 'allow' | 'deny';

export interface SessionService {
  /** The clock entries are stamped with. */
  readonly now: () => number;
  /** The agent's store; the same object for the whole process. */
  store(agentId: string): SessionStore;
  defaultAgent(): string;
  /** `agent:<id>:<session.mainKey>`, the agent's main session. */
  mainKey(agentId: string): string;
  /** A full session key and its agent from what a caller gave: a key, "main", an agent id, or nothing. */
  resolveTarget(input: { agentId?: string; sessionKey?: string }): { agentId: string; sessionKey: string };
  /** Agents in config plus any with sessions on disk. */
  knownAgents(): string[];
  /** A reader and appender for one transcript file (`store(agentId).transcriptPath(…)`). */
  transcript(file: string, options?: TranscriptOptions): Transcript;
  /** The reset policy `session.*` config gives a session of this type on this channel. */
  resetPolicy(context: { type: SessionType; channel?: string }): ResetPolicy;
  /** Whether a session last updated at `updatedAt` (ms) has expired under `policy` at `now`. */
  isStale(updatedAt: number, policy: ResetPolicy, now: Date): boolean;
  /** The reset trigger (`/new`, `/reset`, `session.resetTriggers`) a message starts with, and the rest of it. */
  matchResetTrigger(text: string): { trigger: string; rest: string } | undefined;
  /** Whether replies and agent-to-agent messages may go out to a session (`session.sendPolicy`, its own override first). */
  sendPolicy(target: {
    sessionKey: string;
    entry?: Pick<SessionEntry, 'sendPolicy' | 'channel' | 'lastChannel' | 'chatType'>;
    channel?: string;
    chatType?: string;
  }): SendDecision;
  /** History with every tool call answered exactly once, right after its call (the input itself when it already is). */
  repairToolPairing(messages: readonly ChatMessage[]): ChatMessage[];
  /** The calls a stopped run left without results at the end of `messages`. */
  danglingToolCalls(messages: readonly ChatMessage[]): ToolCallPart[];
  /** The synthetic "aborted" result that answers a call a run never finished. */
  abortedToolResult(call: Pick<ToolCallPart, 'id' | 'name'>, timestamp?: number): ToolResultMessage;
  /** OpenClaw's session-row fields for one session (sessions.list rows, chat.history's sessionInfo). */
  openclawRow(facts: OpenClawRowFacts): Record<string, unknown>;
  /** OpenClaw's `defaults` beside a list of session rows. */
  openclawListDefaults(contextTokens: number | null, thinkingDefault: string): Record<string, unknown>;
}

/** What a session row is made of: the entry, its run state, and the agent's defaults. */
export interface OpenClawRowFacts {
  key: string;
  agentId: string;
  entry: SessionEntry;
  hasActiveRun: boolean;
  activeRunIds: string[];
  thinkingDefault: string;
  /** provider/model new turns of this session use. */
  modelRef?: string;
}
