/**
 * The dispatcher's contract: what the agent plugin offers other plugins as its service
 * (`useService(kernel, 'agent')`): channels, the OpenAI-compatible endpoint, cron and
 * sub-agents hand it messages; it answers with a handle whose `done` settles when the
 * reply has gone out.
 */
import type { InboundMedia } from '../types/channels.js';
import type { ImagePart, ThinkingLevel } from '../types/models.js';
import type { AgentStream, TurnResult } from './loop.js';
import type { ReplyPayload } from './reply.js';
import type { SessionEntry, SessionPatch } from '../sessions/store.js';

export type VerboseLevel = 'on' | 'off' | 'full';
export type ReasoningLevel = 'on' | 'off' | 'stream';

export interface DeliveryTarget {
  channel: string;
  to: string;
  accountId?: string;
  threadId?: string | number;
  /** Reply to this message (groups: the message that addressed the bot). */
  replyTo?: string;
  /** `replyTo` on every piece of the reply ("all"), not just the first. */
  replyToMode?: 'first' | 'all';
  /** The channel shows the reply live as it is written (Telegram's draft): no block streaming then. */
  livePreview?: boolean;
  /**
   * The caller's own transport. Without one, replies go to the channel plugin named by
   * `channel` through the kernel's outbound path (chunking, retries).
   */
  send?(payload: ReplyPayload): Promise<{ messageId?: string } | void>;
}

export interface DispatchInput {
  agentId?: string;
  /** Full session key; default: the agent's main session. */
  sessionKey?: string;
  message: string;
  images?: ImagePart[];
  /** Files the channel saved for this message (voice notes, documents, video): see sdk/types/media.ts. */
  attachments?: InboundMedia[];
  channel?: string;
  from?: string;
  messageId?: string;
  threadId?: string | number;
  accountId?: string;
  /** May run slash commands (operators and allow-listed senders). */
  authorized?: boolean;
  thinking?: ThinkingLevel;
  model?: string;
  extraSystemPrompt?: string;
  timeoutMs?: number;
  /** Where the final reply goes; without one it only reaches event listeners. */
  deliver?: DeliveryTarget;
  /** Override the session's queue mode for this message. */
  queueMode?: string;
  onEvent?: (event: RunEvent) => void;
  /** Start a fresh session for this run (cron, isolated jobs). */
  freshSession?: boolean;
  /** Who started the run when no person did ("heartbeat"); kept on the transcript's user message. */
  origin?: string;
  /** The global lane the turn runs in after its session lane (kernel/lanes.ts); default `main`. Cron runs use `cron`. */
  lane?: string;
  /**
   * The caller keeps its own journal and re-runs the message after a crash (cron): the
   * dispatcher's intake journal leaves it out, so a restart does not run it twice.
   */
  callerJournaled?: boolean;
  /**
   * The gateway request that brought the message (method and idempotencyKey): kept in the
   * intake journal, so a retry after a restart learns what became of it.
   */
  requestKey?: string;
  /** Per-message `/verbose` and `/reasoning`; the session's levels otherwise. */
  verbose?: VerboseLevel;
  reasoning?: ReasoningLevel;
}

export type RunEvent =
  | {
      kind: 'agent';
      runId: string;
      sessionKey: string;
      seq: number;
      stream: AgentStream;
      ts: number;
      data: Record<string, unknown>;
    }
  | {
      kind: 'chat';
      runId: string;
      sessionKey: string;
      seq: number;
      state: 'delta' | 'final' | 'aborted' | 'error';
      text: string;
      deltaText?: string;
      errorMessage?: string;
    };

export type RunStatus = 'ok' | 'error' | 'timeout' | 'aborted';

export interface RunResult {
  runId: string;
  sessionKey: string;
  sessionId: string;
  status: RunStatus;
  text: string;
  payloads: ReplyPayload[];
  usage: TurnResult['usage'];
  provider?: string;
  model?: string;
  startedAt: number;
  endedAt: number;
  error?: string;
}

export interface RunHandle {
  runId: string;
  acceptedAt: number;
  /** What happened to the message: a new run, queued behind one, steered into one, a command. */
  status: 'started' | 'queued' | 'steered' | 'command' | 'dropped' | 'duplicate';
  done: Promise<RunResult>;
}

/**
 * What became of the message a gateway request brought, asked by a retry after a restart:
 * still open (it resumes, and `done` settles with its result), finished, or unknown to
 * every journal (it never got in).
 */
export type RequestState =
  | { state: 'open'; runId: string; acceptedAt: number; done: Promise<RunResult> }
  | { state: 'finished'; runId: string; status: string }
  | { state: 'unknown' };

/** Replies of one channel account that could not be delivered yet (retried later), or were given up. */
export interface DeliveryStatus {
  channel: string;
  accountId: string;
  pending: number;
  failed: number;
  lastError?: string;
  lastErrorAt?: number;
}

/** One slash command as a menu shows it. */
export interface ChatCommandInfo {
  /** Without "/". */
  name: string;
  description: string;
  source: 'builtin' | 'plugin' | 'skill';
  /** Other names that run the same command (without "/"). */
  aliases?: string[];
  /** Whether text after the command is read (`/model gpt-4.1`). */
  acceptsArgs?: boolean;
}

/** The agent plugin's service api. */
export interface AgentService {
  dispatch(input: DispatchInput): Promise<RunHandle>;
  /** Dispatch and wait for the result; `signal` aborts the run. */
  run(input: DispatchInput, options?: { signal?: AbortSignal }): Promise<RunResult>;
  /** Abort one run; false when it is not running. */
  abortRun(runId: string, reason?: string): boolean;
  /**
   * The gateway is stopping or restarting: accept nothing new (IntakeClosedError), let
   * running turns finish for up to `timeoutMs` (default `gateway.agentDrainMs`), then stop
   * the rest; accepted messages not finished stay in the intake journal and resume at the
   * next start.
   */
  drain(timeoutMs?: number): Promise<void>;
  /** Stop everything running or queued for a session; returns how many runs were stopped. */
  stop(sessionKey: string, reason?: string): number;
  defaultAgent(): string;
  /** A run is going on in this session. */
  isActive(sessionKey: string): boolean;
  /** `/new`, `sessions.reset`: stop what runs, then a new session id (session_end/session_start fire). */
  resetSession(agentId: string, sessionKey: string, patch?: SessionPatch): Promise<SessionEntry>;
  /** `/compact`, `sessions.compact`: summarise older turns now, in the session lane. */
  compactSession(
    agentId: string,
    sessionKey: string,
    instructions?: string,
  ): Promise<{ compacted: boolean; reason?: string; summarized?: number; compactions?: number; summary?: string }>;
  /**
   * The slash commands a user can send this agent (built-in, plugin and user-invocable
   * skill commands), for command menus. Aliases are left out.
   */
  commands?(agentId?: string): Promise<ChatCommandInfo[]>;
  /** The session's entry changed (or was deleted) outside a run: queue settings follow it. */
  sessionChanged(sessionKey: string, entry: SessionEntry | undefined): void;
  /** What became of the message a gateway request (`DispatchInput.requestKey`) brought. */
  request?(requestKey: string): Promise<RequestState>;
  /** Per channel account: replies waiting for another delivery round, and given up. */
  deliveryStatus?(): DeliveryStatus[];
  /** Create `dir` with the files a new workspace starts with, as `claw setup` does; existing files are kept. */
  seedWorkspace?(dir: string): { created: string[]; kept: string[] };
}
