/**
 * The agent runtime: the agent plugin's parts put together, and what the plugin's methods,
 * commands, CLI and `message` tool call. Each part is its own file, in the order a message
 * meets them:
 *
 *   dispatcher.ts         accepting a message: dedupe, message_received, commands, the journal, queue modes, steering
 *   followups.ts          the queue of a busy session and its drain
 *   turn.ts               the run: one turn through the `agentLoop` slot (pre-turn hooks in turn-hooks.ts)
 *   session-lifecycle.ts  the run's session resolved; session_end / session_start when a new one begins
 *   delivery.ts           replies out through the one outbound path (a turn's reply, notices), and the outbox
 *   streaming.ts          agent and chat events, block streaming
 *   runs.ts               the records, active runs and settling that they share
 *   resume.ts             what a restart makes of the messages a previous process left open
 */
import type { KernelServices, Logger } from '../../sdk/index.js';
import type {
  AgentLoopSlot,
  AgentSettings,
  AuthProfiles,
  DispatchInput,
  Models,
  ModelService,
  RequestState,
  RunHandle,
  RunResult,
  RunStatus,
  SessionEntry,
  SessionPatch,
  SessionService,
  SessionStore,
  SkillsService,
} from '../../sdk/agent/index.js';
import { Delivery } from './delivery.js';
import type { MessagesSection, QueueSettings } from './queue-settings.js';
import { Dispatcher, type CommandOutcome } from './dispatcher.js';
import { Followups } from './followups.js';
import { RunBook, type RunRecord } from './runs.js';
import { RunEvents } from './streaming.js';
import { SessionLifecycle } from './session-lifecycle.js';
import { TurnRunner } from './turn.js';

/** Slash commands, handed in by the plugin's entry (they need the runtime; the runtime does not import them). */
export interface CommandHandlers {
  handle(runtime: AgentRuntime, input: DispatchInput): Promise<CommandOutcome | undefined>;
  applyInline(runtime: AgentRuntime, input: DispatchInput): Promise<DispatchInput>;
}

export class AgentRuntime {
  readonly models: Models;
  private readonly runs: RunBook;
  private readonly delivery: Delivery;
  private readonly followups: Followups;
  private readonly lifecycle: SessionLifecycle;
  private readonly turns: TurnRunner;
  private readonly dispatcher: Dispatcher;

  constructor(
    readonly kernel: KernelServices,
    readonly logger: Logger,
    sections: () => { messages?: MessagesSection },
    /** The skills plugin's service, when that plugin is on. */
    readonly skills: SkillsService | undefined,
    commands: CommandHandlers,
    /** Model selection and auth profiles, shared with the models plugin (service "models"). */
    private readonly modelService: ModelService,
    /** Session stores, shared with the sessions plugin (service "sessions"). */
    readonly sessions: SessionService,
    readonly now: () => number = Date.now,
  ) {
    this.models = modelService.models;
    const defaultAgent = () => this.defaultAgent();
    const runs = (this.runs = new RunBook(now, defaultAgent));
    const events = new RunEvents(kernel, now);
    const delivery = (this.delivery = new Delivery({ kernel, logger, now, sessions, defaultAgent, runs, events }));
    const followups = (this.followups = new Followups({
      sections,
      runs,
      events,
      delivery,
      start: (input, runId, members) => this.turns.start(input, runId, members),
    }));
    const lifecycle = (this.lifecycle = new SessionLifecycle({
      kernel,
      now,
      sessions,
      queueOverrides: followups.overrides,
    }));
    const turns = (this.turns = new TurnRunner({
      kernel,
      logger,
      now,
      models: modelService,
      sessions,
      skills,
      runs,
      events,
      delivery,
      lifecycle,
      requeueSteering: (sessionKey, active) => followups.requeueSteering(sessionKey, active),
      scheduleDrain: (sessionKey) => followups.scheduleDrain(sessionKey),
    }));
    this.dispatcher = new Dispatcher({
      kernel,
      logger,
      now,
      resolveTarget: (input) => this.resolveTarget(input),
      commands: {
        handle: (input) => commands.handle(this, input),
        applyInline: (input) => commands.applyInline(this, input),
      },
      runs,
      events,
      delivery,
      followups,
      turns,
      sessions,
    });
  }

  // ── Per-agent state ──────────────────────────────────────────────────────────

  settings(agentId: string): AgentSettings {
    return this.modelService.settings(agentId);
  }

  defaultAgent(): string {
    return this.modelService.defaultAgent();
  }

  store(agentId: string): SessionStore {
    return this.sessions.store(agentId);
  }

  authProfiles(agentId: string): AuthProfiles {
    return this.modelService.authProfiles(agentId);
  }

  mainKey(agentId: string): string {
    return this.sessions.mainKey(agentId);
  }

  resolveTarget(input: { agentId?: string; sessionKey?: string }): { agentId: string; sessionKey: string } {
    return this.sessions.resolveTarget(input);
  }

  queueSettings(input: DispatchInput, entry?: SessionEntry): QueueSettings {
    return this.followups.settings(input, entry);
  }

  /** Session queue overrides, mirrored from the store so queue decisions stay synchronous. */
  get cachedQueueOverride(): Map<string, SessionEntry['queue']> {
    return this.followups.overrides;
  }

  // ── Runs ─────────────────────────────────────────────────────────────────────

  dispatch(input: DispatchInput, options?: { runId?: string }): Promise<RunHandle> {
    return this.dispatcher.dispatch(input, options);
  }

  isActive(sessionKey: string): boolean {
    return this.runs.active.has(sessionKey);
  }

  activeRunIds(): string[] {
    return [...this.runs.active.values()].map((run) => run.runId);
  }

  run(runId: string): RunRecord | undefined {
    return this.runs.records.get(runId);
  }

  /** A run is active or messages are queued for the session. */
  hasWork(sessionKey: string): boolean {
    return this.dispatcher.hasWork(sessionKey);
  }

  /** Abort one run (active or queued) without touching the rest of its session's queue. */
  abortRun(runId: string, reason = 'aborted'): boolean {
    return this.dispatcher.abortRun(runId, reason);
  }

  /** Abort the session's run and drop what is queued. Returns how many were stopped. */
  stop(sessionKey: string, reason = 'stopped'): number {
    return this.dispatcher.stop(sessionKey, reason);
  }

  emptyResult(runId: string, sessionKey: string, status: RunStatus): RunResult {
    return this.runs.emptyResult(runId, sessionKey, status);
  }

  /** The slot holder that runs turns; loaded on first use. */
  loop(): Promise<AgentLoopSlot> {
    return this.turns.loop();
  }

  // ── Sessions ─────────────────────────────────────────────────────────────────

  /** `/new`, `/reset`, `sessions.reset`: stop what runs, then a new session id under the same key. */
  async resetSession(agentId: string, sessionKey: string, patch: SessionPatch = {}): Promise<SessionEntry> {
    this.stop(sessionKey, 'reset');
    const resolved = await this.store(agentId).resolve(sessionKey, { reset: true, patch });
    this.cachedQueueOverride.set(sessionKey, resolved.entry.queue);
    await this.lifecycle.boundary(agentId, sessionKey, resolved.entry, resolved.previous);
    return resolved.entry;
  }

  /** `/compact` and `sessions.compact`: in the session lane, so it never races a run. */
  compactSession(agentId: string, sessionKey: string, instructions?: string): ReturnType<TurnRunner['compact']> {
    return this.turns.compact(agentId, sessionKey, instructions);
  }

  // ── Delivery ─────────────────────────────────────────────────────────────────

  /** A text the `message` tool sent during a run: the final reply does not repeat it. */
  noteToolSend(runId: string, channel: string, to: string, text: string): void {
    this.delivery.noteToolSend(runId, channel, to, text);
  }

  /** Replies waiting for another delivery round, and given up, per channel account. */
  deliveryStatus() {
    return this.delivery.status();
  }

  // ── Intake: durable acceptance, resume after a restart, drain on shutdown ────

  openIntake(): Promise<void> {
    return this.dispatcher.openIntake();
  }

  /** What became of the message a gateway request brought (see AgentService.request). */
  request(requestKey: string): Promise<RequestState> {
    return this.dispatcher.request(requestKey);
  }

  drainTurns(timeoutMs: number): Promise<void> {
    return this.dispatcher.drainTurns(timeoutMs);
  }

  shutdown(): Promise<void> {
    return this.dispatcher.shutdown();
  }
}

export type {
  DeliveryTarget,
  DispatchInput,
  RunEvent,
  RunHandle,
  RunResult,
  RunStatus,
} from '../../sdk/agent/index.js';
