/**
 * The agent runtime: where every inbound message (gateway, channel, CLI, HTTP) enters.
 * dispatch() fires message_received, handles slash commands, and then either starts a run
 * (session lane, then the global lane) or — when the session is busy — applies the queue
 * mode: steer into the live run, queue a follow-up, collect into one follow-up, or
 * interrupt. After a run, the reply goes out through the one delivery path:
 * message_sending → before_message_write → send → message_sent.
 */
import { randomUUID } from 'node:crypto';
import type { KernelServices, Logger, TranscriptMessage } from '../../sdk/index.js';
import { ensurePrivateDir, LaneClearedError } from '../../sdk/index.js';
import { statSync } from 'node:fs';
import { AgentIntake, noteInterruption, restartNote } from './intake.js';
import {
  acquireSessionLock,
  type AuthProfiles,
  BlockChunker,
  isStale,
  isSubagentSessionKey,
  type Models,
  type ModelService,
  type SessionService,
  normalizeQueueMode,
  parseReply,
  parseSessionKey,
  queueDefaults,
  resolveResetPolicy,
  resolveSendPolicy,
  sessionTypeOf,
  SilentReplyFilter,
  type SessionStore,
  Transcript,
  type AgentLoopSlot,
  type AgentSettings,
  type AgentStream,
  type CommandOutcome,
  type DispatchInput,
  type MessagesSection,
  type QueueSettings,
  type ReasoningLevel,
  type ReplyPayload,

  type RunHandle,
  type RunResult,
  type RunStatus,
  type SessionEntry,
  type SessionLock,
  SessionLockError,
  type SessionPatch,
  type SessionResetConfig,
  type SkillsService,
  IntakeClosedError,
  assertKnownAgent,
  type OpenRun,
  type TurnContext,
  type TurnResult,
  type VerboseLevel,
} from '../../sdk/agent/index.js';

/** Slash commands, handed in by the plugin's entry (they need the runtime; the runtime does not import them). */
export interface CommandHandlers {
  handle(runtime: AgentRuntime, input: DispatchInput): Promise<CommandOutcome | undefined>;
  applyInline(runtime: AgentRuntime, input: DispatchInput): Promise<DispatchInput>;
}

interface ActiveRun {
  runId: string;
  controller: AbortController;
  streaming: boolean;
  /** The turn is over and the reply is going out: a new message starts its own run. */
  finishing?: boolean;
  /** Messages steered into this run, not yet taken by the turn. */
  steering: SteerItem[];
  /** Steered messages the turn took: their senders get this run's result. */
  taken: SteerItem[];
  done: Promise<RunResult>;
}

interface SteerItem {
  input: DispatchInput;
  acceptedAt: number;
  /**
   * Mode "steer": the sender waits on this, and a message the run never takes (it answered
   * with text only, or stopped) becomes a follow-up run. Absent in "steer-backlog", which
   * queued the follow-up already.
   */
  settle?: QueuedItem['settle'];
}

interface QueuedItem {
  input: DispatchInput;
  enqueuedAt: number;
  settle: { resolve: (result: RunResult) => void; reject: (error: unknown) => void };
  runId: string;
}

interface FollowupQueue {
  items: QueuedItem[];
  dropped: QueuedItem[];
  settings: QueueSettings;
  timer?: NodeJS.Timeout;
  draining: boolean;
}

interface RunRecord {
  runId: string;
  sessionKey: string;
  status: 'queued' | 'running' | RunStatus;
  startedAt?: number;
  endedAt?: number;
  error?: string;
  done: Promise<RunResult>;
}

const CHAT_DELTA_THROTTLE_MS = 150;
const MAX_RUN_RECORDS = 500;
const DEDUPE_WINDOW_MS = 20 * 60_000;

export class AgentRuntime {
  readonly models: Models;
  private readonly active = new Map<string, ActiveRun>();
  private readonly followups = new Map<string, FollowupQueue>();
  private readonly runs = new Map<string, RunRecord>();
  private readonly seen = new Map<string, number>();
  private seq = 0;
  /** The intake journal: open in the gateway (the agent service's start), absent in CLI runs. */
  private intake?: AgentIntake;
  /** Shutting down: queued follow-ups wait for the next start instead of running now. */
  private closing = false;
  /** Resuming what a previous process left: new messages queue behind it. */
  private resuming?: Promise<void>;

  constructor(
    readonly kernel: KernelServices,
    readonly logger: Logger,
    private readonly sections: () => { session?: SessionResetConfig & Record<string, unknown>; messages?: MessagesSection },
    /** The skills plugin's service, when that plugin is on. */
    readonly skills: SkillsService | undefined,
    private readonly commands: CommandHandlers,
    /** Model selection and auth profiles, shared with the models plugin (service "models"). */
    private readonly modelService: ModelService,
    /** Session stores, shared with the sessions plugin (service "sessions"). */
    readonly sessions: SessionService,
    readonly now: () => number = Date.now,
  ) {
    this.models = modelService.models;
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

  isActive(sessionKey: string): boolean {
    return this.active.has(sessionKey);
  }

  activeRunIds(): string[] {
    return [...this.active.values()].map((run) => run.runId);
  }

  run(runId: string): RunRecord | undefined {
    return this.runs.get(runId);
  }

  // ── Entry point ──────────────────────────────────────────────────────────────

  async dispatch(input: DispatchInput): Promise<RunHandle> {
    const { agentId, sessionKey } = this.resolveTarget(input);
    // Every way in (methods, channels, cron, hooks, /v1) ends here: an unknown agent is refused, never created.
    assertKnownAgent(this.kernel.config(), agentId);
    const acceptedAt = this.now();
    const runId = randomUUID();
    const full: DispatchInput = { ...input, agentId, sessionKey };
    const hooks = this.kernel.hooks;
    if (this.closing) throw new IntakeClosedError();
    if (this.resuming) await this.resuming.catch(() => undefined);

    // Channels redeliver on reconnect; the same message id within the window runs once.
    let dedupeKey: string | undefined;
    if (input.messageId) {
      // Message ids are only unique per chat on most platforms (Telegram counts per chat).
      dedupeKey = `${input.channel ?? 'gateway'}:${input.accountId ?? ''}:${sessionKey}:${input.from ?? ''}:${input.messageId}`;
      this.pruneSeen();
      if (this.seen.has(dedupeKey)) return { runId, acceptedAt, status: 'duplicate', done: Promise.resolve(this.emptyResult(runId, sessionKey, 'ok')) };
      this.seen.set(dedupeKey, acceptedAt);
    }

    await hooks.ready('message_received');
    void hooks.runVoid(
      'message_received',
      { channel: input.channel ?? 'gateway', accountId: input.accountId, from: input.from ?? 'operator', content: input.message, messageId: input.messageId, timestamp: acceptedAt },
      { agentId, sessionKey, channel: input.channel },
    );

    // Commands (for authorized senders) and directives are handled before any model sees them.
    if (input.authorized !== false) {
      const outcome = await this.commands.handle(this, full);
      if (outcome) return this.afterCommand(outcome, full, runId, acceptedAt);
      return this.accept(await this.commands.applyInline(this, full), runId, acceptedAt, dedupeKey);
    }
    return this.accept(full, runId, acceptedAt, dedupeKey);
  }

  /**
   * On disk first (when the intake is open), then into a run or the queue: whoever is told
   * "accepted" can rely on it surviving a crash. The record is written before the run is
   * queued and fsync'd while the turn already starts; the handle (the acknowledgment) waits
   * for the fsync. A message that cannot be written is not accepted, and its dedupe key is
   * released so a redelivery gets another chance.
   */
  private async accept(input: DispatchInput, runId: string, acceptedAt: number, dedupeKey?: string): Promise<RunHandle> {
    if (!this.intake || input.callerJournaled) return this.submit(input, runId, acceptedAt);
    let durable: Promise<void>;
    try {
      durable = this.intake.accept(input, runId, acceptedAt, dedupeKey);
    } catch (error) {
      if (dedupeKey) this.seen.delete(dedupeKey);
      throw error;
    }
    const handle = this.submit(input, runId, acceptedAt);
    this.intake.track(input.agentId!, runId, handle.done);
    try {
      await durable;
    } catch (error) {
      // Not durable, so not accepted: stop what started and let the caller retry.
      this.abortRun(runId, 'intake journal write failed');
      if (dedupeKey) this.seen.delete(dedupeKey);
      throw error;
    }
    return handle;
  }

  private async afterCommand(outcome: CommandOutcome, input: DispatchInput, runId: string, acceptedAt: number): Promise<RunHandle> {
    const sessionKey = input.sessionKey!;
    const result: RunResult = { ...this.emptyResult(runId, sessionKey, 'ok'), text: outcome.reply ?? '' };
    if (outcome.reply) {
      const replyRunId = outcome.continueWith ? randomUUID() : runId;
      result.payloads = [parseReply(outcome.reply)];
      this.chatEvent(input, replyRunId, sessionKey, 'final', outcome.reply);
      if (input.deliver) await this.deliver(input, replyRunId, sessionKey, { text: outcome.reply, media: [], silent: false });
    }
    if (outcome.continueWith) {
      const next = await this.commands.applyInline(this, { ...input, ...outcome.continueWith });
      return this.accept(next, runId, acceptedAt);
    }
    return { runId, acceptedAt, status: 'command', done: Promise.resolve(result) };
  }

  /** The `session` config section (reset policy, triggers, main key). */
  sessionSection(): (SessionResetConfig & Record<string, unknown>) | undefined {
    return this.sections().session;
  }

  /** A run is active or messages are queued for the session. */
  hasWork(sessionKey: string): boolean {
    const queue = this.followups.get(sessionKey);
    return this.active.has(sessionKey) || (queue !== undefined && queue.items.length > 0);
  }

  /** `/new`, `/reset`, `sessions.reset`: stop what runs, then a new session id under the same key. */
  async resetSession(agentId: string, sessionKey: string, patch: SessionPatch = {}): Promise<SessionEntry> {
    this.stop(sessionKey, 'reset');
    const resolved = await this.store(agentId).resolve(sessionKey, { reset: true, patch });
    this.cachedQueueOverride.set(sessionKey, resolved.entry.queue);
    await this.sessionBoundary(agentId, sessionKey, resolved.entry, resolved.previous);
    return resolved.entry;
  }

  /** `/compact` and `sessions.compact`: in the session lane, so it never races a run. */
  async compactSession(
    agentId: string,
    sessionKey: string,
    instructions?: string,
  ): Promise<{ compacted: boolean; reason?: string; summarized?: number; compactions?: number; summary?: string }> {
    return this.kernel.lanes.runInSession(sessionKey, async () => {
      const store = this.store(agentId);
      const controller = new AbortController();
      const lock = await acquireSessionLock(store.dir, sessionKey, { timeoutMs: this.settings(agentId).timeoutSeconds * 1000 });
      try {
        const session = await store.get(sessionKey);
        if (!session) return { compacted: false, reason: 'no session yet' };
        let summarized = 0;
        const loop = await this.loop();
        if (!loop.compact) return { compacted: false, reason: 'the agent loop in use (plugins.slots.agentLoop) cannot compact' };
        const ctx = this.turnContext({ agentId, sessionKey } as DispatchInput, session, randomUUID(), controller, undefined, (stream, data) => {
          if (stream === 'compaction' && data.phase === 'end') summarized = Number(data.summarized ?? 0);
        });
        const outcome = await loop.compact(ctx, { instructions });
        if (!outcome.compacted) return { compacted: false, reason: 'too little history' };
        const entry = await store.get(sessionKey);
        return { compacted: true, summarized, compactions: entry?.compactionCount, summary: outcome.summary };
      } finally {
        lock.release();
      }
    });
  }

  /** The slot holder that runs turns; loaded on first use. */
  async loop(): Promise<AgentLoopSlot> {
    const loop = (await this.kernel.capabilities.slot('agentLoop')) as AgentLoopSlot | undefined;
    if (!loop) throw new Error('no agent loop is enabled (plugins.slots.agentLoop)');
    return loop;
  }

  private turnContext(
    input: DispatchInput,
    session: SessionEntry,
    runId: string,
    controller: AbortController,
    active: ActiveRun | undefined,
    emit: (stream: AgentStream, data: Record<string, unknown>) => void,
  ): TurnContext {
    const agentId = input.agentId!;
    const sessionKey = input.sessionKey!;
    const settings = this.settings(agentId);
    const store = this.store(agentId);
    return {
      kernel: this.kernel,
      models: this.models,
      store,
      transcript: new Transcript(this.transcriptFile(store, session, input), { redact: this.kernel.redact }),
      settings,
      runId,
      sessionKey,
      session,
      mainSession: sessionKey === this.mainKey(agentId),
      channel: input.channel,
      signal: controller.signal,
      takeSteering: () => {
        if (!active) return [];
        const items = active.steering.splice(0);
        active.taken.push(...items);
        return items.map((item) => item.input.message);
      },
      setStreaming: (streaming) => {
        if (active) active.streaming = streaming;
      },
      emit,
      skills: this.skills?.promptSkills({ agentId, workspaceDir: settings.workspaceDir, sessionKey, sessionId: session.sessionId }) ?? [],
    };
  }

  /** A topic's turns live in their own file; the key names the topic when the input does not. */
  private transcriptFile(store: SessionStore, session: SessionEntry, input: DispatchInput): string {
    return store.transcriptPath(session.sessionId, input.threadId ?? parseSessionKey(input.sessionKey!).threadId);
  }

  /** Start a run, or apply the queue mode when the session is busy. */
  private submit(input: DispatchInput, runId: string, acceptedAt: number): RunHandle {
    const sessionKey = input.sessionKey!;
    const active = this.active.get(sessionKey);
    const queue = this.followups.get(sessionKey);
    const busy = (active !== undefined && !active.finishing) || (queue !== undefined && (queue.items.length > 0 || queue.draining));
    if (!busy) return { runId, acceptedAt, status: 'started', done: this.startRun(input, runId) };

    const settings = this.queueSettings(input);
    if (settings.mode === 'interrupt' && active) {
      active.controller.abort('interrupted');
      return { runId, acceptedAt, status: 'started', done: this.startRun(input, runId) };
    }
    const steer = settings.mode === 'steer' || settings.mode === 'steer-backlog';
    if (steer && active?.streaming) {
      this.emitAgent(input, active.runId, sessionKey, 'lifecycle', { phase: 'steer-queued' });
      if (settings.mode === 'steer') {
        let settle!: QueuedItem['settle'];
        const done = new Promise<RunResult>((resolve, reject) => (settle = { resolve, reject }));
        active.steering.push({ input, acceptedAt, settle });
        return { runId: active.runId, acceptedAt, status: 'steered', done };
      }
      active.steering.push({ input, acceptedAt });
    }
    return this.enqueueFollowup(input, runId, acceptedAt, settings);
  }

  queueSettings(input: DispatchInput, entry?: SessionEntry): QueueSettings {
    const base = queueDefaults(this.sections().messages, input.channel);
    const override = entry?.queue ?? this.cachedQueueOverride.get(input.sessionKey ?? '');
    const mode = normalizeQueueMode(input.queueMode) ?? normalizeQueueMode(override?.mode) ?? base.mode;
    return {
      mode,
      debounceMs: override?.debounceMs ?? base.debounceMs,
      cap: override?.cap ?? base.cap,
      drop: override?.drop ?? base.drop,
    };
  }

  /** Session queue overrides, mirrored from the store so queue decisions stay synchronous. */
  readonly cachedQueueOverride = new Map<string, SessionEntry['queue']>();

  private enqueueFollowup(input: DispatchInput, runId: string, acceptedAt: number, settings: QueueSettings): RunHandle {
    const sessionKey = input.sessionKey!;
    let queue = this.followups.get(sessionKey);
    if (!queue) {
      queue = { items: [], dropped: [], settings, draining: false };
      this.followups.set(sessionKey, queue);
    }
    queue.settings = settings;
    let settle!: QueuedItem['settle'];
    const done = new Promise<RunResult>((resolve, reject) => (settle = { resolve, reject }));
    const item: QueuedItem = { input, enqueuedAt: acceptedAt, settle, runId };
    if (queue.items.length >= settings.cap) {
      if (settings.drop === 'new') {
        settle.resolve({ ...this.emptyResult(runId, sessionKey, 'error'), error: `queue full (${settings.cap} messages); message dropped` });
        return { runId, acceptedAt, status: 'dropped', done };
      }
      const oldest = queue.items.shift()!;
      if (settings.drop === 'summarize') queue.dropped.push(oldest);
      oldest.settle.resolve({ ...this.emptyResult(oldest.runId, sessionKey, 'error'), error: 'dropped from a full queue' });
    }
    queue.items.push(item);
    this.recordRun(runId, sessionKey, 'queued', done);
    this.scheduleDrain(sessionKey);
    return { runId, acceptedAt, status: 'queued', done };
  }

  /** After the session goes quiet for debounceMs, run what was queued. */
  private scheduleDrain(sessionKey: string): void {
    const queue = this.followups.get(sessionKey);
    if (!queue || queue.draining) return;
    clearTimeout(queue.timer);
    if (this.active.has(sessionKey) || this.closing) return; // The run's end schedules the drain again.
    queue.timer = setTimeout(() => void this.drain(sessionKey), queue.settings.debounceMs);
  }

  private async drain(sessionKey: string): Promise<void> {
    const queue = this.followups.get(sessionKey);
    if (!queue || queue.draining || this.active.has(sessionKey)) return;
    queue.draining = true;
    try {
      while ((queue.items.length > 0 || queue.dropped.length > 0) && !this.closing) {
        if (queue.settings.mode === 'collect') {
          // One follow-up per route (channel + thread), so replies still go to the right place.
          const routeOf = (item: QueuedItem) => `${item.input.channel ?? ''}\u0000${item.input.threadId ?? ''}\u0000${item.input.deliver?.to ?? ''}`;
          const first = queue.items[0];
          const route = first ? routeOf(first) : undefined;
          const batch = route === undefined ? [] : queue.items.filter((item) => routeOf(item) === route);
          queue.items = queue.items.filter((item) => !batch.includes(item));
          const dropped = queue.dropped.splice(0);
          const prompt = collectPrompt(batch.map((item) => item.input.message), dropped.map((item) => item.input.message));
          const base = batch[batch.length - 1]?.input ?? dropped[dropped.length - 1]!.input;
          const runId = batch[batch.length - 1]?.runId ?? randomUUID();
          const merged: DispatchInput = { ...base, message: prompt, images: batch.flatMap((item) => item.input.images ?? []) };
          this.intake?.merge(merged, runId, batch.map((item) => item.runId));
          const result = await this.startRun(merged, runId).catch((error: unknown) => ({
            ...this.emptyResult(runId, sessionKey, 'error'),
            error: String(error),
          }));
          for (const item of batch) item.settle.resolve({ ...result, runId: item.runId });
        } else {
          const item = queue.items.shift();
          const dropped = queue.dropped.splice(0);
          if (!item) {
            const summary: DispatchInput = { ...dropped[dropped.length - 1]!.input, message: collectPrompt([], dropped.map((d) => d.input.message)) };
            const summaryRunId = randomUUID();
            this.intake?.merge(summary, summaryRunId, []);
            const done = this.startRun(summary, summaryRunId);
            this.intake?.track(summary.agentId!, summaryRunId, done);
            await done;
            continue;
          }
          const message = dropped.length ? `${collectPrompt([], dropped.map((d) => d.input.message))}\n\n${item.input.message}` : item.input.message;
          if (dropped.length) this.intake?.merge({ ...item.input, message }, item.runId, []);
          const result = await this.startRun({ ...item.input, message }, item.runId).catch((error: unknown) => ({
            ...this.emptyResult(item.runId, sessionKey, 'error'),
            error: String(error),
          }));
          item.settle.resolve(result);
        }
      }
    } finally {
      queue.draining = false;
      if (queue.items.length === 0) this.followups.delete(sessionKey);
    }
  }

  // ── Intake: durable acceptance, resume after a restart, drain on shutdown ────

  /**
   * The gateway starts the agent service: open the intake journals, and resume what a
   * previous process accepted and did not finish. Synchronous up to the resumes, so no
   * message is accepted before the journal is open.
   */
  openIntake(): Promise<void> {
    if (this.intake) return Promise.resolve();
    const intake = new AgentIntake(this.kernel.paths.stateDir, this.logger, this.now);
    const { open, seen } = intake.load();
    for (const [key, at] of seen) this.seen.set(key, at);
    this.intake = intake;
    this.closing = false;
    if (open.length === 0) return Promise.resolve();
    this.logger.info(`resuming ${open.length} accepted message(s) a previous gateway did not finish`);
    // New messages wait until the old ones are back in their queues, so they stay in order.
    const resumed = this.resume(open).finally(() => {
      if (this.resuming === resumed) this.resuming = undefined;
    });
    this.resuming = resumed;
    return resumed;
  }

  /** Runs a previous process left open: see plugins/agent/intake.ts for what each state gets. */
  private async resume(open: Array<{ agentId: string; run: OpenRun }>): Promise<void> {
    const intake = this.intake!;
    const redact = { redact: this.kernel.redact };
    for (const { agentId, run, state } of await intake.plan(open, redact)) {
      // Each resumed message gets its own turn.
      const input: DispatchInput = { ...run.input, queueMode: 'followup' };
      const sessionKey = input.sessionKey!;
      this.logger.info(`resuming run ${run.id} in ${sessionKey} (${state.kind}, attempt ${run.attempts})`);
      if (state.kind === 'answered') {
        noteInterruption(run, 'redelivered', redact);
        const delivered = input.deliver ? this.deliver(input, run.id, sessionKey, parseReply(state.text)) : Promise.resolve(undefined);
        void delivered.catch(() => undefined).then(() => intake.journal(agentId).done(run.id, 'ok'));
        continue;
      }
      if (state.kind === 'mid-turn') noteInterruption(run, 'continued', redact);
      const resumed: DispatchInput = state.kind === 'mid-turn' ? { ...input, message: restartNote(run.input.message), images: undefined } : input;
      const handle = this.submit(resumed, run.id, run.at);
      intake.track(agentId, run.id, handle.done);
    }
  }

  /**
   * The gateway stops or restarts (SIGTERM, config.apply): accept nothing new, let running
   * turns finish for up to `timeoutMs`, then stop the rest. With the intake open, what was
   * stopped or still queued stays in the journal and resumes at the next start.
   */
  async drainTurns(timeoutMs: number): Promise<void> {
    this.closing = true;
    if (this.intake) this.intake.closing = true;
    for (const queue of this.followups.values()) clearTimeout(queue.timer);
    const running = () => [...this.active.values()].map((run) => run.done);
    if (timeoutMs > 0 && this.active.size > 0) {
      this.logger.info(`waiting up to ${Math.round(timeoutMs / 1000)} s for ${this.active.size} running turn(s) to finish`);
      await settleWithin(Promise.allSettled(running()), timeoutMs);
    }
    const left = running();
    for (const key of new Set([...this.active.keys(), ...this.followups.keys()])) this.stop(key, 'shutdown');
    // Stopped turns write their last transcript lines before the journal closes.
    await settleWithin(Promise.allSettled(left), 2000);
  }

  /** Kernel stopping: whatever still runs is stopped now (see drain), and the journal is closed. */
  async shutdown(): Promise<void> {
    await this.drainTurns(0);
    await this.intake?.close();
    this.intake = undefined;
  }

  /** Abort one run (active or queued) without touching the rest of its session's queue. */
  abortRun(runId: string, reason = 'aborted'): boolean {
    const record = this.runs.get(runId);
    if (!record) return false;
    const active = this.active.get(record.sessionKey);
    if (active?.runId === runId) {
      active.controller.abort(reason);
      return true;
    }
    const queue = this.followups.get(record.sessionKey);
    const index = queue?.items.findIndex((item) => item.runId === runId) ?? -1;
    if (queue && index >= 0) {
      const [item] = queue.items.splice(index, 1);
      item!.settle.resolve({ ...this.emptyResult(runId, record.sessionKey, 'aborted') });
      return true;
    }
    return false;
  }

  /** Abort the session's run and drop what is queued. Returns how many were stopped. */
  stop(sessionKey: string, reason = 'stopped'): number {
    let count = 0;
    const active = this.active.get(sessionKey);
    if (active) {
      active.controller.abort(reason);
      count++;
      for (const item of active.steering.splice(0)) {
        item.settle?.resolve({ ...this.emptyResult(active.runId, sessionKey, 'aborted') });
        if (item.settle) count++;
      }
    }
    const queue = this.followups.get(sessionKey);
    if (queue) {
      clearTimeout(queue.timer);
      for (const item of queue.items.splice(0)) {
        item.settle.resolve({ ...this.emptyResult(item.runId, sessionKey, 'aborted') });
        count++;
      }
      queue.dropped = [];
      if (!queue.draining) this.followups.delete(sessionKey);
    }
    this.kernel.lanes.clear(`session:${sessionKey}`);
    return count;
  }

  // ── Running ──────────────────────────────────────────────────────────────────

  private startRun(input: DispatchInput, runId: string): Promise<RunResult> {
    const sessionKey = input.sessionKey!;
    const done = this.kernel.lanes
      .runInSession(sessionKey, () => this.execute(input, runId), input.lane)
      .catch((error: unknown) => {
        if (error instanceof LaneClearedError) return { ...this.emptyResult(runId, sessionKey, 'aborted') };
        throw error;
      });
    this.recordRun(runId, sessionKey, 'queued', done);
    return done;
  }

  private recordRun(runId: string, sessionKey: string, status: RunRecord['status'], done: Promise<RunResult>): void {
    this.runs.set(runId, { runId, sessionKey, status, done });
    while (this.runs.size > MAX_RUN_RECORDS) this.runs.delete(this.runs.keys().next().value as string);
    done.then(
      (result) => Object.assign(this.runs.get(runId) ?? {}, { status: result.status, endedAt: result.endedAt, startedAt: result.startedAt, error: result.error }),
      (error: unknown) => Object.assign(this.runs.get(runId) ?? {}, { status: 'error', endedAt: this.now(), error: String(error) }),
    );
  }

  private async execute(input: DispatchInput, runId: string): Promise<RunResult> {
    const agentId = input.agentId!;
    const sessionKey = input.sessionKey!;
    const settings = this.settings(agentId);
    const startedAt = this.now();
    const controller = new AbortController();
    let resolveDone!: (result: RunResult) => void;
    const donePromise = new Promise<RunResult>((resolve) => (resolveDone = resolve));
    const active: ActiveRun = { runId, controller, streaming: false, steering: [], taken: [], done: donePromise };
    this.active.set(sessionKey, active);
    const record = this.runs.get(runId);
    if (record) Object.assign(record, { status: 'running', startedAt });
    const timeoutMs = input.timeoutMs ?? settings.timeoutSeconds * 1000;
    const timer = setTimeout(() => controller.abort('timeout'), timeoutMs);
    timer.unref();
    const chat = new ChatStream(this, input, runId, sessionKey);
    this.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'start', startedAt });
    let result: RunResult;
    let lock: SessionLock | undefined;
    try {
      const store = this.store(agentId);
      // One writer per session across processes: `claw agent --local` beside the gateway, or another local run.
      lock = await acquireSessionLock(store.dir, sessionKey, {
        signal: controller.signal,
        onWait: (holder) => this.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'waiting', reason: 'session-lock', ...(holder ? { holderPid: holder.pid } : {}) }),
      });
      const session = await this.resolveSession(agentId, sessionKey, input);
      if (this.intake) {
        // Where this turn's transcript lines begin: a restart reads from here what the turn got done.
        const file = this.transcriptFile(store, session, input);
        this.intake.journal(agentId).started(runId, file, fileSize(file));
      }
      ensureDir(settings.workspaceDir, this.logger);
      const verbose = input.verbose ?? (session.verboseLevel as VerboseLevel | undefined) ?? 'off';
      const blocks = settings.blockStreaming.enabled && input.deliver && !input.deliver.livePreview ? new BlockDelivery(this, input, runId, sessionKey, settings.blockStreaming) : undefined;
      const loop = await this.loop();
      const ctx = this.turnContext(input, session, runId, controller, active, withoutSilentToken((stream, data) => {
        this.emitAgent(input, runId, sessionKey, stream, data);
        if (stream === 'assistant') {
          chat.onAssistant(data);
          blocks?.onAssistant(data);
        }
        // Verbose: each tool call is announced to the sender as it starts.
        if (verbose !== 'off' && stream === 'tool' && data.phase === 'start' && input.deliver) {
          void this.deliver(input, runId, sessionKey, { text: toolAnnouncement(data, verbose), media: [], silent: false });
        }
      }));
      const turnResult: TurnResult = await loop.runTurn(
        {
        message: input.message,
        images: input.images,
        thinking: input.thinking,
        model: input.model,
          extraSystemPrompt: input.extraSystemPrompt,
          ...(input.origin ? { origin: input.origin } : {}),
          // A sub-agent gets the minimal prompt: its task, not the persona and heartbeat rules.
          ...(isSubagentSessionKey(sessionKey) ? { promptMode: 'minimal' as const } : {}),
        },
        ctx,
      );
      active.finishing = true;
      const reason = controller.signal.reason;
      const status: RunStatus =
        turnResult.status === 'aborted' ? (reason === 'timeout' ? 'timeout' : 'aborted') : turnResult.status;
      await this.kernel.hooks.ready('agent_end');
      void this.kernel.hooks.runVoid(
        'agent_end',
        {
          messages: turnResult.messages as unknown as TranscriptMessage[],
          success: status === 'ok',
          ...(turnResult.error ? { error: turnResult.error } : {}),
          durationMs: this.now() - startedAt,
        },
        { agentId, sessionKey, sessionId: session.sessionId, runId, channel: input.channel },
      );
      const payloads: ReplyPayload[] = [];
      const reasoning = input.reasoning ?? (session.reasoningLevel as ReasoningLevel | undefined) ?? 'off';
      if (status === 'ok' && reasoning !== 'off' && input.deliver) {
        // Reasoning on: the model's thinking goes out as its own message, before the answer.
        const thought = turnResult.messages
          .flatMap((message) => (message.role === 'assistant' && Array.isArray(message.content) ? message.content : []))
          .flatMap((part) => (part.type === 'thinking' && part.thinking.trim() ? [part.thinking.trim()] : []))
          .join('\n\n');
        if (thought) await this.deliver(input, runId, sessionKey, { text: `Reasoning:\n${thought}`, media: [], silent: false });
      }
      if (blocks) {
        // Block streaming delivered the answer as it was written.
        await blocks.finish();
        payloads.push(...blocks.sent);
      } else if (status === 'ok') {
        const reply = parseReply(turnResult.text);
        if (reply.silent && !reply.text) {
          this.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'silent' });
        } else if (reply.text || reply.media.length) {
          const delivered = await this.deliver(input, runId, sessionKey, reply);
          if (delivered) payloads.push(delivered);
        } else if (turnResult.toolError && input.deliver) {
          // Nothing to say but a tool failed: tell the user rather than going quiet.
          const fallback = await this.deliver(input, runId, sessionKey, { text: `⚠️ ${turnResult.toolError.slice(0, 500)}`, media: [], silent: false });
          if (fallback) payloads.push(fallback);
        }
      }
      await store.upsert(sessionKey, (entry) => ({
        updatedAt: this.now(),
        inputTokens: turnResult.usage.input,
        outputTokens: turnResult.usage.output,
        totalTokens: turnResult.usage.input + turnResult.usage.output,
        contextTokens: entry?.contextTokens || 0,
        abortedLastRun: status !== 'ok',
        systemSent: true,
        ...(turnResult.model ? { lastModel: `${turnResult.provider}/${turnResult.model}` } : {}),
        ...(turnResult.cacheTouchedAt ? { lastCacheTouchAt: turnResult.cacheTouchedAt } : {}),
        ...(turnResult.promptReport ? { systemPromptReport: turnResult.promptReport as unknown as Record<string, unknown> } : {}),
        ...(input.channel ? { lastChannel: input.channel } : {}),
        ...(input.deliver
          ? { lastTo: input.deliver.to, lastAccountId: input.deliver.accountId, lastThreadId: input.deliver.threadId, deliveryContext: { channel: input.deliver.channel, to: input.deliver.to, accountId: input.deliver.accountId, threadId: input.deliver.threadId } }
          : {}),
      }));
      result = {
        runId,
        sessionKey,
        sessionId: session.sessionId,
        status,
        text: payloads.map((payload) => payload.text).join('\n\n'),
        payloads,
        usage: turnResult.usage,
        provider: turnResult.provider,
        model: turnResult.model,
        startedAt,
        endedAt: this.now(),
        ...(turnResult.error ? { error: turnResult.error } : status === 'timeout' ? { error: `the run timed out after ${timeoutMs < 10_000 ? Number((timeoutMs / 1000).toFixed(1)) : Math.round(timeoutMs / 1000)} s` } : {}),
      };
    } catch (error) {
      // Aborted while awaiting a hook (or anything else): the reason says stop or timeout.
      const stopped: RunStatus | undefined = controller.signal.aborted ? (controller.signal.reason === 'timeout' ? 'timeout' : 'aborted') : undefined;
      if (!stopped) this.logger.error(`run ${runId} failed: ${(error as Error).stack ?? String(error)}`);
      const message = error instanceof SessionLockError || stopped !== 'timeout' ? ((error as Error)?.message ?? String(error)) : `the run timed out after ${timeoutMs < 10_000 ? Number((timeoutMs / 1000).toFixed(1)) : Math.round(timeoutMs / 1000)} s`;
      result = { ...this.emptyResult(runId, sessionKey, stopped ?? 'error'), startedAt, error: message };
    } finally {
      clearTimeout(timer);
      lock?.release();
      this.requeueSteering(sessionKey, active);
      this.active.delete(sessionKey);
    }
    for (const item of active.taken) item.settle?.resolve(result);
    chat.finish(result);
    this.emitAgent(input, runId, sessionKey, 'lifecycle', {
      phase: result.status === 'ok' ? 'end' : 'error',
      status: result.status,
      ...(result.error ? { error: result.error } : {}),
      endedAt: result.endedAt,
    });
    resolveDone(result);
    this.scheduleDrain(sessionKey);
    return result;
  }

  /**
   * Steered messages the run ended without taking: it answered with text only (no tool
   * boundary came), or it stopped. Each gets a run of its own, ahead of what queued later.
   */
  private requeueSteering(sessionKey: string, active: ActiveRun): void {
    const left = active.steering.splice(0).filter((item) => item.settle);
    if (left.length === 0) return;
    let queue = this.followups.get(sessionKey);
    if (!queue) {
      queue = { items: [], dropped: [], settings: this.queueSettings(left[0]!.input), draining: false };
      this.followups.set(sessionKey, queue);
    }
    queue.items.unshift(...left.map((item) => ({ input: item.input, enqueuedAt: item.acceptedAt, settle: item.settle!, runId: randomUUID() })));
    this.emitAgent(left[0]!.input, active.runId, sessionKey, 'lifecycle', { phase: 'steer-followup', count: left.length });
  }

  /** The session entry for this run, starting a new session when the reset policy says so. */
  async resolveSession(agentId: string, sessionKey: string, input: Pick<DispatchInput, 'channel' | 'freshSession' | 'from' | 'threadId' | 'accountId'>): Promise<SessionEntry> {
    const store = this.store(agentId);
    const policy = resolveResetPolicy(this.sections().session, { type: sessionTypeOf(sessionKey), channel: input.channel });
    const resolved = await store.resolve(sessionKey, {
      reset: input.freshSession ? true : (entry) => isStale(entry.updatedAt, policy, new Date(this.now())),
      // The run's end writes updatedAt; touching it here too would cost a store write per turn.
      touch: false,
      ...(input.channel ? { patch: { channel: input.channel, origin: { provider: input.channel, from: input.from, accountId: input.accountId, threadId: input.threadId } } } : {}),
    });
    this.cachedQueueOverride.set(sessionKey, resolved.entry.queue);
    if (resolved.isNew) await this.sessionBoundary(agentId, sessionKey, resolved.entry, resolved.previous);
    return resolved.entry;
  }

  async sessionBoundary(agentId: string, sessionKey: string, entry: SessionEntry, previous?: SessionEntry): Promise<void> {
    const hooks = this.kernel.hooks;
    if (previous) {
      const count = new Transcript(this.store(agentId).transcriptPath(previous.sessionId, parseSessionKey(sessionKey).threadId)).messages().length;
      await hooks.ready('session_end');
      void hooks.runVoid('session_end', { sessionId: previous.sessionId, sessionKey, messageCount: count }, { agentId, sessionKey });
    }
    await hooks.ready('session_start');
    void hooks.runVoid('session_start', { sessionId: entry.sessionId, sessionKey, ...(previous ? { resumedFrom: previous.sessionId } : {}) }, { agentId, sessionKey });
  }

  /** Replies leave through the kernel's one outbound path (hooks, chunking, retries). */
  /** Texts the `message` tool already sent during a run, so the final reply does not repeat them. */
  private readonly toolSends = new Map<string, Set<string>>();

  noteToolSend(runId: string, channel: string, to: string, text: string): void {
    let sent = this.toolSends.get(runId);
    if (!sent) {
      sent = new Set();
      this.toolSends.set(runId, sent);
      // Runs end long before this; the entry only has to outlive the final reply.
      setTimeout(() => this.toolSends.delete(runId), 10 * 60_000).unref();
    }
    sent.add(`${channel}\u0000${to}\u0000${text.trim()}`);
  }

  async deliver(input: DispatchInput, runId: string, sessionKey: string, reply: ReplyPayload): Promise<ReplyPayload | undefined> {
    const target = input.deliver;
    if (target && this.toolSends.get(runId)?.has(`${target.channel}\u0000${target.to}\u0000${reply.text.trim()}`)) {
      // The agent already said exactly this with the message tool.
      this.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'delivery-deduplicated' });
      return undefined;
    }
    if (target && resolveSendPolicy(this.kernel.config(), { sessionKey, entry: await this.store(input.agentId ?? this.defaultAgent()).get(sessionKey), channel: target.channel }) === 'deny') {
      // session.sendPolicy (or the session's own override) keeps replies to this chat in.
      this.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'delivery-blocked', reason: 'sendPolicy' });
      return undefined;
    }
    const channel = target?.channel ?? input.channel ?? 'gateway';
    const send = target?.send?.bind(target);
    const result = await this.kernel.channels.send({
      channel,
      to: target?.to ?? sessionKey,
      ...(target?.accountId ? { accountId: target.accountId } : {}),
      ...(target?.threadId !== undefined ? { threadId: String(target.threadId) } : {}),
      text: reply.text,
      media: reply.media,
      ...((reply.replyTo ?? target?.replyTo) ? { replyTo: reply.replyTo ?? target?.replyTo } : {}),
      ...(!reply.replyTo && target?.replyToMode ? { replyToMode: target.replyToMode } : {}),
      // The run's signal: /stop and chat.abort cut a hook that hangs while the reply goes out.
      context: { agentId: input.agentId, sessionKey, runId, channel, signal: this.active.get(sessionKey)?.runId === runId ? this.active.get(sessionKey)!.controller.signal : undefined },
      ...(send
        ? { transport: (message) => send({ text: message.text ?? '', media: (message.media ?? []).map((item) => item.url), ...(message.replyTo ? { replyTo: message.replyTo } : {}), silent: false }) }
        : {}),
    });
    if (result.cancelled) {
      this.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'delivery-cancelled' });
      return undefined;
    }
    if (!result.delivered) {
      this.logger.error(`delivery to ${channel}:${target?.to ?? sessionKey} failed: ${result.error}`);
      return undefined;
    }
    return { ...reply, text: result.text };
  }

  // ── Events ───────────────────────────────────────────────────────────────────

  emitAgent(input: DispatchInput, runId: string, sessionKey: string, stream: AgentStream, data: Record<string, unknown>): void {
    const event = { runId, sessionKey, seq: ++this.seq, stream, ts: this.now(), data };
    input.onEvent?.({ kind: 'agent', ...event });
    this.kernel.protocol.emit('agent', event, { droppable: stream === 'assistant' });
  }

  chatEvent(input: DispatchInput, runId: string, sessionKey: string, state: 'delta' | 'final' | 'aborted' | 'error', text: string, extra: { deltaText?: string; errorMessage?: string } = {}): void {
    const seq = ++this.seq;
    input.onEvent?.({ kind: 'chat', runId, sessionKey, seq, state, text, ...extra });
    this.kernel.protocol.emit(
      'chat',
      {
        runId,
        sessionKey,
        seq,
        state,
        message: { role: 'assistant', content: [{ type: 'text', text }], timestamp: this.now() },
        ...(extra.deltaText !== undefined ? { deltaText: extra.deltaText } : {}),
        ...(extra.errorMessage ? { errorMessage: extra.errorMessage } : {}),
      },
      { droppable: state === 'delta' },
    );
  }

  emptyResult(runId: string, sessionKey: string, status: RunStatus): RunResult {
    const now = this.now();
    return { runId, sessionKey, sessionId: '', status, text: '', payloads: [], usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, startedAt: now, endedAt: now };
  }

  private pruneSeen(): void {
    const cutoff = this.now() - DEDUPE_WINDOW_MS;
    for (const [key, at] of this.seen) {
      if (at >= cutoff) break;
      this.seen.delete(key);
    }
  }
}

/** Chat events for UIs: deltas coalesced to one per 150 ms, then final / aborted / error. */
class ChatStream {
  /** The current model message's text: the final answer is one message, so a delta is too. */
  private text = '';
  private pending = '';
  private timer?: NodeJS.Timeout;
  private messageEnded = false;

  constructor(
    private readonly runtime: AgentRuntime,
    private readonly input: DispatchInput,
    private readonly runId: string,
    private readonly sessionKey: string,
  ) {}

  onAssistant(data: Record<string, unknown>): void {
    if (data.reset) {
      this.text = '';
      this.pending = '';
      this.messageEnded = false;
      return;
    }
    if (typeof data.delta === 'string' && data.delta) {
      if (this.messageEnded) {
        this.text = '';
        this.messageEnded = false;
      }
      this.text += data.delta;
      this.pending += data.delta;
      this.timer ??= setTimeout(() => this.flush(), CHAT_DELTA_THROTTLE_MS);
    }
    if (data.messageEnd) {
      // Text written before a tool call goes out now; the next message starts afresh.
      clearTimeout(this.timer);
      this.flush();
      this.messageEnded = true;
    }
  }

  private flush(): void {
    this.timer = undefined;
    if (!this.pending) return;
    const deltaText = this.pending;
    this.pending = '';
    this.runtime.chatEvent(this.input, this.runId, this.sessionKey, 'delta', this.text, { deltaText });
  }

  finish(result: RunResult): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (result.status === 'ok') this.runtime.chatEvent(this.input, this.runId, this.sessionKey, 'final', result.text);
    else if (result.status === 'aborted') this.runtime.chatEvent(this.input, this.runId, this.sessionKey, 'aborted', this.text);
    else this.runtime.chatEvent(this.input, this.runId, this.sessionKey, 'error', this.text, { errorMessage: result.error ?? result.status });
  }
}

/**
 * Block streaming (`agents.defaults.blockStreamingDefault: "on"`): a long answer goes out
 * in blocks of 800–1200 characters while it is written, each through the one delivery
 * path. What is buffered is sent when a model message ends; a failed attempt's unsent text
 * is dropped.
 */
class BlockDelivery {
  private chunker: BlockChunker;
  private chain: Promise<void> = Promise.resolve();
  readonly sent: ReplyPayload[] = [];

  constructor(
    private readonly runtime: AgentRuntime,
    private readonly input: DispatchInput,
    private readonly runId: string,
    private readonly sessionKey: string,
    private readonly limits: { minChars: number; maxChars: number },
  ) {
    this.chunker = new BlockChunker(limits.minChars, limits.maxChars);
  }

  onAssistant(data: Record<string, unknown>): void {
    if (data.reset) {
      this.chunker = new BlockChunker(this.limits.minChars, this.limits.maxChars);
      return;
    }
    if (typeof data.delta === 'string') this.enqueue(this.chunker.push(data.delta));
    if (data.messageEnd) this.enqueue(this.chunker.flush());
  }

  private enqueue(blocks: string[]): void {
    for (const block of blocks) {
      const reply = parseReply(block);
      if (reply.silent || (!reply.text && reply.media.length === 0)) continue;
      this.chain = this.chain.then(async () => {
        const payload = await this.runtime.deliver(this.input, this.runId, this.sessionKey, reply);
        if (payload) this.sent.push(payload);
      });
    }
  }

  async finish(): Promise<void> {
    this.enqueue(this.chunker.flush());
    await this.chain;
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Resolves when `promise` settles or `ms` pass, whichever is first. */
function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void promise.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** The prompt for messages that queued while the agent was busy. */
export function collectPrompt(messages: readonly string[], dropped: readonly string[]): string {
  const parts = ['[Queued messages while agent was busy]'];
  if (dropped.length > 0) {
    parts.push(`[${dropped.length} earlier message${dropped.length === 1 ? ' was' : 's were'} dropped from a full queue:]\n${dropped.map((text) => `• ${text.replace(/\s+/g, ' ').slice(0, 160)}`).join('\n')}`);
  }
  messages.forEach((text, index) => parts.push(`---\nQueued #${index + 1}\n${text}`));
  return parts.join('\n\n');
}

/**
 * The workspace is the tools' working directory: make sure it exists (a read-only one is
 * fine). Created owner-only: it holds the agent's memory and the user's notes.
 */
function ensureDir(dir: string, logger: Logger): void {
  try {
    ensurePrivateDir(dir);
  } catch (error) {
    logger.warn(`workspace ${dir} cannot be created: ${(error as Error).message}`);
  }
}

/** The agent stream with the silent token held back from every listener: UIs, SSE, the CLI, blocks. */
function withoutSilentToken(emit: (stream: AgentStream, data: Record<string, unknown>) => void): (stream: AgentStream, data: Record<string, unknown>) => void {
  const silence = new SilentReplyFilter();
  return (stream, data) => {
    if (stream !== 'assistant') return emit(stream, data);
    for (const item of silence.filter(data)) emit(stream, item);
  };
}

/** What `/verbose on` shows for a tool call: its name and a short form of its arguments. */
function toolAnnouncement(data: Record<string, unknown>, verbose: VerboseLevel): string {
  const args = JSON.stringify(data.args ?? {});
  const limit = verbose === 'full' ? 2000 : 120;
  return `🛠️ ${String(data.name)} ${args.length > limit ? `${args.slice(0, limit)}…` : args}`;
}

export type { DeliveryTarget, DispatchInput, RunEvent, RunHandle, RunResult, RunStatus } from '../../sdk/agent/index.js';
