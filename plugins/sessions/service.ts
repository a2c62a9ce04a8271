/**
 * The "sessions" service: one SessionStore per agent for the whole process (two stores on
 * one sessions.json would lose each other's writes), the rules that turn "main" or a bare
 * agent id into a session key, and the `session.*` reset and send policies.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, KernelServices, Logger, ToolCallPart, ToolResultMessage } from '../../sdk/index.js';
import { agentIds, defaultAgentId } from '../../sdk/agent/index.js';
import {
  buildAgentMainSessionKey,
  normalizeAgentId,
  parseSessionKey,
  type ResetPolicy,
  type SendDecision,
  type SessionEntry,
  type SessionService as SessionServiceContract,
  type OpenClawRowFacts,
  type SessionType,
  type TranscriptOptions,
} from '../../sdk/sessions/index.js';
import { isStale, matchResetTrigger, resetTriggersFrom, resolveResetPolicy, type SessionResetConfig } from './reset.js';
import { resolveSendPolicy } from './send-policy.js';
import { SessionStore } from './store.js';
import { abortedToolResult, danglingToolCalls, repairToolPairing } from './tool-pairing.js';
import { Transcript } from './transcript.js';
import { openclawListDefaults, openclawRowFields } from './openclaw-row.js';

export class SessionService implements SessionServiceContract {
  private readonly stores = new Map<string, SessionStore>();
  readonly now: () => number;
  private readonly logger?: Pick<Logger, 'warn'>;

  /** `logger` hears about a store that could not be read and was rebuilt from its transcripts. */
  constructor(
    readonly kernel: Pick<KernelServices, 'config' | 'paths'>,
    options: { now?: () => number; logger?: Pick<Logger, 'warn'> } = {},
  ) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
  }

  store(agentId: string): SessionStore {
    let store = this.stores.get(agentId);
    if (!store) {
      const dir = join(this.kernel.paths.stateDir, 'agents', agentId, 'sessions');
      store = new SessionStore(dir, { now: this.now, agentId, logger: this.logger });
      this.stores.set(agentId, store);
    }
    return store;
  }

  defaultAgent(): string {
    return defaultAgentId(this.kernel.config());
  }

  /** `agent:<id>:<session.mainKey>`, the agent's main session. */
  mainKey(agentId: string): string {
    const mainKey = (this.kernel.config().session as { mainKey?: unknown } | undefined)?.mainKey;
    return buildAgentMainSessionKey(agentId, typeof mainKey === 'string' ? mainKey : 'main');
  }

  /** A full session key and its agent from what a caller gave: a key, "main", an agent id, or nothing. */
  resolveTarget(input: { agentId?: string; sessionKey?: string }): { agentId: string; sessionKey: string } {
    if (input.sessionKey && input.sessionKey !== 'main') {
      const parsed = parseSessionKey(input.sessionKey);
      return {
        agentId: normalizeAgentId(parsed.agentId ?? input.agentId ?? this.defaultAgent()),
        sessionKey: input.sessionKey,
      };
    }
    const agentId = normalizeAgentId(input.agentId ?? this.defaultAgent());
    return { agentId, sessionKey: this.mainKey(agentId) };
  }

  /** Agents in config plus any with sessions on disk. */
  knownAgents(): string[] {
    const ids = new Set(agentIds(this.kernel.config()));
    const dir = join(this.kernel.paths.stateDir, 'agents');
    try {
      for (const name of readdirSync(dir)) if (existsSync(join(dir, name, 'sessions'))) ids.add(name);
    } catch {
      // No agents directory yet.
    }
    return [...ids];
  }

  /** A reader and appender for one transcript file (`store(agentId).transcriptPath(…)`). */
  transcript(file: string, options?: TranscriptOptions): Transcript {
    return new Transcript(file, options);
  }

  /** The reset policy `session.*` config gives a session of this type on this channel. */
  resetPolicy(context: { type: SessionType; channel?: string }): ResetPolicy {
    return resolveResetPolicy(this.sessionConfig(), context);
  }

  /** Whether a session last updated at `updatedAt` (ms) has expired under `policy` at `now`. */
  isStale(updatedAt: number, policy: ResetPolicy, now: Date): boolean {
    return isStale(updatedAt, policy, now);
  }

  /** The reset trigger (`/new`, `/reset`, `session.resetTriggers`) a message starts with, and the rest of it. */
  matchResetTrigger(text: string): { trigger: string; rest: string } | undefined {
    return matchResetTrigger(text, resetTriggersFrom(this.sessionConfig()));
  }

  /** Whether replies and agent-to-agent messages may go out to a session (`session.sendPolicy`, its own override first). */
  sendPolicy(target: {
    sessionKey: string;
    entry?: Pick<SessionEntry, 'sendPolicy' | 'channel' | 'lastChannel' | 'chatType'>;
    channel?: string;
    chatType?: string;
  }): SendDecision {
    return resolveSendPolicy(this.kernel.config(), target);
  }

  /** History with every tool call answered exactly once, right after its call (the input itself when it already is). */
  repairToolPairing(messages: readonly ChatMessage[]): ChatMessage[] {
    return repairToolPairing(messages);
  }

  /** The calls a stopped run left without results at the end of `messages`. */
  danglingToolCalls(messages: readonly ChatMessage[]): ToolCallPart[] {
    return danglingToolCalls(messages);
  }

  /** The synthetic "aborted" result that answers a call a run never finished. */
  abortedToolResult(call: Pick<ToolCallPart, 'id' | 'name'>, timestamp?: number): ToolResultMessage {
    return abortedToolResult(call, timestamp);
  }

  private sessionConfig(): SessionResetConfig | undefined {
    return this.kernel.config().session as SessionResetConfig | undefined;
  }

  openclawRow(facts: OpenClawRowFacts): Record<string, unknown> {
    const messages = this.kernel.config().messages as { responseUsage?: unknown } | undefined;
    return openclawRowFields({ ...facts, responseUsageDefault: messages?.responseUsage });
  }

  openclawListDefaults(contextTokens: number | null, thinkingDefault: string): Record<string, unknown> {
    return openclawListDefaults(contextTokens, thinkingDefault);
  }
}
