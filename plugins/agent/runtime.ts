/**
 * The agent runtime: where every inbound message (gateway, channel, CLI, HTTP) enters.
 * dispatch() fires message_received, handles slash commands, and then either starts a run
 * (session lane, then the global lane) or — when the session is busy — applies the queue
 * mode: steer into the live run, queue a follow-up, collect into one follow-up, or
 * interrupt. After a run, the reply goes out through the one delivery path:
 * message_sending → before_message_write → send → message_sent.
 *
 * Every accepted message is its own durable unit (journal.ts): a turn knows the messages
 * it answers (`members`), and they are finished in the journal only once its reply is
 * delivered — or they wait in the outbox (outbox.ts) for another delivery round.
 */
import { randomUUID } from 'node:crypto';
import type { KernelServices, Logger, TranscriptMessage } from '../../sdk/index.js';
import { ensurePrivateDir, LaneClearedError } from '../../sdk/index.js';
import { statSync } from 'node:fs';
import { AgentIntake, intakeInput, noteRecovery } from './intake.js';
import type { OpenMessage, TurnRecord } from './journal.js';
import { Outbox, type DeliveryOutcome, type OutboxEntry } from './outbox.js';
import { collectPrompt, FollowupQueue, routeOf, type Pending } from './queue.js';
import { preparedTurnInput, turnHookContext, withHookContext } from './turn-hooks.js';
import {
  type AuthProfiles,
  BlockChunker,
  isSubagentSessionKey,
  type Models,
  type ModelService,
  type SessionService,
  normalizeQueueMode,
  parseReply,
  parseSessionKey,
  queueDefaults,
  sessionTypeOf,
  SilentReplyFilter,
  type SessionStore,
  type Transcript,
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
  type SkillsService,
  IntakeClosedError,
  assertKnownAgent,
  type RequestState,
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
  /** The messages the turn answers (a batch's each, under the turn's runId). */
  memberIds: ReadonlySet<string>;
  /** The chat its reply goes to: only messages of the same route may be steered into it. */
  route: string;
  controller: AbortController;
  streaming: boolean;
  /** The turn is over and the reply is going out: a new message starts its own run. */
  finishing?: boolean;
  /**
   * Messages steered into this run, not yet taken by the turn. In mode "steer" the sender
   * waits on this run, and a message it never takes becomes a follow-up; in "steer-backlog"
   * (`backlog`) the message is queued as a follow-up as well, which answers it.
   */
  steering: Array<{ pending: Pending; backlog?: boolean }>;
  /** Steered messages ("steer") the turn took: this run answers them too. */
  taken: Pending[];
  done: Promise<RunResult>;
}

interface RunRecord {
  runId: string;
  sessionKey: string;
  /** A message steered into a running turn: its sender was given that turn's runId. */
  steeredInto?: string;
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
  /** Replies that failed to send, waiting for another round (only while the intake is open). */
  private outbox?: Outbox;
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
    private readonly sections: () => { messages?: MessagesSection },
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

  /** A run is active or messages are queued for the session. */
  hasWork(sessionKey: string): boolean {
    const queue = this.followups.get(sessionKey);
    return this.active.has(sessionKey) || (queue !== undefined && queue.size > 0);
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
      const lock = await store.lock(sessionKey, { timeoutMs: this.settings(agentId).timeoutSeconds * 1000 });
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
    const hookContext = turnHookContext({ settings, sessionKey, session, runId, channel: input.channel, signal: controller.signal });
    return {
      kernel: this.kernel,
      models: withHookContext(this.models, hookContext),
      store,
      // The header names the key, so a store rebuilt from the transcripts lists the session under it; every
      // line the turn writes names the run, so a restart can tell this turn's lines from later ones.
      transcript: this.sessions.transcript(this.transcriptFile(store, session, input), {
        redact: this.kernel.redact,
        header: { sessionKey },
        stamp: { runId },
        hooks: { runner: this.kernel.hooks, context: hookContext },
      }),
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
        // Taken: this turn answers them now (a "steer-backlog" message is answered by its own follow-up as well).
        const joined = items.filter((item) => !item.backlog).map((item) => item.pending);
        active.taken.push(...joined);
        if (joined.length) this.journal(input)?.join(runId, joined.map((item) => item.id));
        return items.map((item) => item.pending.input.message);
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

  /**
   * Start a run, or apply the queue mode when the session is busy. `resumed`: accepted by an
   * earlier process, so no cap drops it now.
   */
  private submit(input: DispatchInput, id: string, acceptedAt: number, resumed = false): RunHandle {
    const sessionKey = input.sessionKey!;
    const pending = this.pending(id, input, acceptedAt, resumed);
    const done = this.runs.get(id)!.done;
    const active = this.active.get(sessionKey);
    const queue = this.followups.get(sessionKey);
    const busy = (active !== undefined && !active.finishing) || (queue !== undefined && (queue.size > 0 || queue.draining));
    if (!busy) {
      void this.startRun(input, id, [pending]);
      return { runId: id, acceptedAt, status: 'started', done };
    }
    const settings = this.queueSettings(input);
    // A message resumed after a restart never interrupts the turn resumed before it.
    if (settings.mode === 'interrupt' && active && !resumed) {
      active.controller.abort('interrupted');
      void this.startRun(input, id, [pending]);
      return { runId: id, acceptedAt, status: 'started', done };
    }
    const steer = settings.mode === 'steer' || settings.mode === 'steer-backlog';
    // A steered message is answered by the running turn, whose reply goes to one chat: only that chat's messages join it.
    if (steer && active?.streaming && active.route === routeOf(input)) {
      this.emitAgent(input, active.runId, sessionKey, 'lifecycle', { phase: 'steer-queued' });
      if (settings.mode === 'steer') {
        active.steering.push({ pending });
        this.runs.get(id)!.steeredInto = active.runId;
        return { runId: active.runId, acceptedAt, status: 'steered', done };
      }
      active.steering.push({ pending, backlog: true });
    }
    return this.enqueueFollowup(pending, settings);
  }

  /** A message on its way to a turn, with the record `agent.wait` and retries find it by. */
  private pending(id: string, input: DispatchInput, acceptedAt: number, resumed = false): Pending {
    let settle!: Pending['settle'];
    const done = new Promise<RunResult>((resolve, reject) => (settle = { resolve, reject }));
    this.recordRun(id, input.sessionKey!, 'queued', done);
    return { id, input, acceptedAt, settle, ...(resumed ? { resumed } : {}) };
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

  private enqueueFollowup(pending: Pending, settings: QueueSettings): RunHandle {
    const sessionKey = pending.input.sessionKey!;
    let queue = this.followups.get(sessionKey);
    if (!queue) {
      queue = new FollowupQueue(settings);
      this.followups.set(sessionKey, queue);
    }
    queue.settings = settings;
    const done = this.runs.get(pending.id)!.done;
    const { refused, dropped } = queue.add(pending);
    if (refused) {
      this.dropped(refused, `queue full (${settings.cap} messages); message dropped`);
      return { runId: pending.id, acceptedAt: pending.acceptedAt, status: 'dropped', done };
    }
    if (dropped) this.dropped(dropped, 'dropped from a full queue');
    this.scheduleDrain(sessionKey);
    return { runId: pending.id, acceptedAt: pending.acceptedAt, status: 'queued', done };
  }

  /**
   * A message the queue dropped (`messages.queue.drop` "old" or "new" at the cap): its
   * sender is told, in their chat, rather than left waiting for an answer that never comes.
   */
  private dropped(pending: Pending, reason: string): void {
    const { input } = pending;
    const sessionKey = input.sessionKey!;
    pending.settle.resolve({ ...this.emptyResult(pending.id, sessionKey, 'error'), error: reason });
    const finish = () => this.journal(input)?.done([pending.id], 'dropped');
    if (!input.deliver) return finish();
    const snippet = input.message.replace(/\s+/g, ' ').trim().slice(0, 120);
    const notice = `⚠️ Too many messages were waiting, so this one was dropped without an answer: "${snippet}". Send it again if you still need an answer.`;
    // Finished once the notice went out: a crash before that leaves it open, and the restart answers it after all.
    void this.deliver(input, pending.id, sessionKey, { text: notice, media: [], silent: false }).finally(finish);
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
      while (!this.closing) {
        const mode = queue.settings.mode;
        const batch = queue.next(mode);
        if (!batch) break;
        const { members, summarized } = batch;
        const dropped = summarized.map((item) => item.input.message);
        const last = (members[members.length - 1] ?? summarized[summarized.length - 1])!;
        const first = members[0];
        let message: string;
        if (mode === 'collect' || !first) message = collectPrompt(members.map((item) => item.input.message), dropped);
        else message = dropped.length ? `${collectPrompt([], dropped)}\n\n${first.input.message}` : first.input.message;
        // One message alone keeps its id as the run's; a batch runs under its newest message's.
        const runId = members.length > 0 ? last.id : randomUUID();
        const input: DispatchInput = { ...last.input, message, images: members.flatMap((item) => item.input.images ?? []) };
        await this.startRun(input, runId, [...members, ...summarized]);
      }
    } finally {
      queue.draining = false;
      if (queue.size === 0 && queue.summarized.length === 0) this.followups.delete(sessionKey);
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
    this.outbox = new Outbox({
      logger: this.logger,
      now: this.now,
      send: (entry) => this.deliverEntry(entry),
      persist: (entry) => intake.journal(entry.agentId).undelivered(entry.turn, entry.ids, { reply: entry.reply, attempt: entry.attempt, next: entry.next, ...(entry.error ? { error: entry.error } : {}) }),
      delivered: (entry) => intake.journal(entry.agentId).done(entry.ids, 'ok'),
      givenUp: (entry) => void this.deliveryGivenUp(entry),
    });
    this.closing = false;
    const count = open.reduce((total, agent) => total + agent.messages.length, 0);
    if (count === 0) return Promise.resolve();
    this.logger.info(`resuming ${count} accepted message(s) a previous gateway did not finish`);
    // New messages wait until the old ones are back in their queues, so they stay in order.
    const resumed = this.resume(open).finally(() => {
      if (this.resuming === resumed) this.resuming = undefined;
    });
    this.resuming = resumed;
    return resumed;
  }

  /**
   * The journal of the message's agent, while the intake is open. It keeps only what was
   * accepted into it, so records naming other ids (a caller's own journal: cron,
   * heartbeats, sub-agents) change nothing.
   */
  private journal(input: Pick<DispatchInput, 'agentId'>) {
    return this.intake?.journal(input.agentId ?? this.defaultAgent());
  }

  /** What a previous process left open: see plugins/agent/intake.ts for what each message gets. */
  private async resume(open: Array<{ agentId: string; messages: OpenMessage[]; turns: Map<string, TurnRecord> }>): Promise<void> {
    const intake = this.intake!;
    const transcriptAt = (file: string): Transcript => this.sessions.transcript(file, { redact: this.kernel.redact });
    for (const step of await intake.plan(open)) {
      if (step.kind === 'redispatch') {
        const { message } = step;
        this.logger.info(`resuming message ${message.id} in ${message.input.sessionKey} (not started)`);
        this.submit({ ...message.input }, message.id, message.at, true);
        continue;
      }
      if (step.kind === 'continue') {
        const last = step.messages[step.messages.length - 1]!;
        const sessionKey = last.input.sessionKey;
        const handedBack = step.handedBack === true;
        // The plan has charged the attempt already (a handed-back message is not charged again).
        const attempt = Math.max(...step.messages.map((message) => message.attempts));
        this.logger.info(`resuming run ${step.turn} in ${sessionKey} (${handedBack ? 'handed back alone' : 'mid-turn'}, ${step.messages.length} message(s), attempt ${attempt})`);
        noteRecovery(step.file, { runId: step.turn, action: handedBack ? 'handed-back' : 'continued', attempt }, transcriptAt);
        const members = step.messages.map((message) => this.pending(message.id, message.input, message.at, true));
        void this.startRun({ ...last.input, message: step.note, images: undefined }, step.turn, members);
        continue;
      }
      if (step.kind === 'deliver') {
        const last = step.messages[step.messages.length - 1]!;
        const ids = step.messages.map((message) => message.id);
        // The answer exists: whoever waits on these messages gets it now; only its delivery is left.
        for (const message of step.messages) {
          this.pending(message.id, message.input, message.at, true).settle.resolve({ ...this.emptyResult(message.id, message.input.sessionKey, 'ok'), text: step.reply.reply.text });
        }
        const entry: OutboxEntry = { agentId: step.agentId, turn: step.turn, ids, input: last.input, ...step.reply };
        if (!last.input.deliver) {
          intake.journal(step.agentId).done(ids, 'ok');
        } else if (step.reply.attempt > 0) {
          this.logger.info(`reply of run ${step.turn} to ${last.input.deliver.channel}:${last.input.deliver.to} waits for delivery round ${step.reply.attempt + 1}`);
          this.outbox!.schedule(entry);
        } else {
          this.logger.info(`resuming run ${step.turn} in ${last.input.sessionKey} (answered; delivering the reply again)`);
          const file = this.transcriptOf(step.agentId, last.input.sessionKey, last.input.threadId);
          noteRecovery(await file, { runId: step.turn, action: 'redelivered' }, transcriptAt);
          void this.deliverReply(entry);
        }
        continue;
      }
      // Out of budget on its own: answered with an error naming it, in its transcript and its chat.
      const { message, notice } = step;
      const sessionKey = message.input.sessionKey;
      if (step.file) {
        transcriptAt(step.file).appendMessage({ role: 'assistant', content: [{ type: 'text', text: notice }], stopReason: 'error', errorMessage: notice, timestamp: this.now() });
        noteRecovery(step.file, { runId: message.id, action: 'abandoned', attempt: message.attempts }, transcriptAt);
      }
      this.pending(message.id, message.input, message.at, true).settle.resolve({ ...this.emptyResult(message.id, sessionKey, 'error'), error: notice });
      const entry: OutboxEntry = { agentId: step.agentId, turn: message.id, ids: [message.id], input: message.input, reply: { text: notice, media: [] }, attempt: 0, next: 0 };
      if (message.input.deliver) void this.deliverReply(entry, 'abandoned');
      else intake.journal(step.agentId).done([message.id], 'abandoned');
    }
  }

  /** Deliver a written reply; when it fails it waits in the outbox, its messages open, for another round. */
  private async deliverReply(entry: OutboxEntry, status: 'ok' | 'abandoned' = 'ok'): Promise<void> {
    const outcome = await this.deliverEntry(entry, status);
    if (outcome.status === 'failed') return this.outbox!.failed(entry, outcome.error, outcome.retryAfterMs);
    this.intake?.journal(entry.agentId).done(entry.ids, status);
  }

  /**
   * Deliver a turn's answer (or the notice of its failure). When delivery fails and the
   * intake is open, the reply waits in the outbox and its messages stay open (`waiting`).
   */
  private async deliverAnswer(input: DispatchInput, runId: string, members: readonly Pending[], answer: ReplyPayload, status: RunStatus = 'ok'): Promise<{ payload?: ReplyPayload; waiting: boolean }> {
    const journal = this.journal(input);
    const ids = members.filter((member) => journal?.isOpen(member.id)).map((member) => member.id);
    // Finished the moment the platform took the reply: a kill after that must not send it again.
    const outcome = await this.deliver(input, runId, input.sessionKey!, answer, () => journal?.done(ids, status));
    if (outcome.status === 'delivered') return { payload: outcome.payload, waiting: false };
    if (outcome.status !== 'failed' || !this.outbox || !input.deliver || ids.length === 0) return { waiting: false };
    const reply = { text: answer.text, media: answer.media, ...(answer.replyTo ? { replyTo: answer.replyTo } : {}) };
    await this.outbox.failed({ agentId: input.agentId!, turn: runId, ids, input: intakeInput(input), reply, attempt: 0, next: 0 }, outcome.error, outcome.retryAfterMs);
    return { waiting: true };
  }

  private deliverEntry(entry: OutboxEntry, status: 'ok' | 'abandoned' = 'ok'): Promise<DeliveryOutcome> {
    // Finished the moment the platform took it (see deliverAnswer).
    return this.deliver(entry.input, entry.turn, entry.input.sessionKey, { ...entry.reply, silent: false }, () => this.intake?.journal(entry.agentId).done(entry.ids, status));
  }

  /** A reply given up after its last delivery round: the transcript says so, and the messages are finished. */
  private async deliveryGivenUp(entry: OutboxEntry): Promise<void> {
    this.intake?.journal(entry.agentId).done(entry.ids, 'undelivered');
    const file = await this.transcriptOf(entry.agentId, entry.input.sessionKey, entry.input.threadId);
    if (!file) return;
    this.sessions.transcript(file, { redact: this.kernel.redact }).append({
      type: 'delivery',
      status: 'failed',
      runId: entry.turn,
      to: entry.input.deliver ? `${entry.input.deliver.channel}:${entry.input.deliver.to}` : entry.input.sessionKey,
      attempts: entry.attempt,
      error: entry.error ?? 'unknown error',
    });
  }

  /** The transcript file of the session's current entry, if it has one. */
  private async transcriptOf(agentId: string, sessionKey: string, threadId?: string | number): Promise<string | undefined> {
    const store = this.store(agentId);
    const entry = await store.get(sessionKey).catch(() => undefined);
    return entry ? store.transcriptPath(entry.sessionId, threadId ?? parseSessionKey(sessionKey).threadId) : undefined;
  }

  /** What became of the message a gateway request brought (see AgentService.request). */
  async request(requestKey: string): Promise<RequestState> {
    // Resumed messages get their records while the resume runs.
    if (this.resuming) await this.resuming.catch(() => undefined);
    const found = this.intake?.request(requestKey);
    if (!found) return { state: 'unknown' };
    const id = 'open' in found ? found.open.id : found.finished.id;
    // This process ran it (resumed, or finished since the restart): its result is known.
    const record = this.runs.get(id);
    if (record) return { state: 'open', runId: id, acceptedAt: 'open' in found ? found.open.at : (record.startedAt ?? this.now()), done: record.done };
    if ('finished' in found) return { state: 'finished', runId: id, status: found.finished.status };
    return { state: 'open', runId: id, acceptedAt: found.open.at, done: Promise.resolve({ ...this.emptyResult(id, found.open.input.sessionKey, 'ok') }) };
  }

  /** Replies waiting for another delivery round, and given up, per channel account. */
  deliveryStatus() {
    return this.outbox?.status() ?? [];
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
    this.outbox?.close();
    this.outbox = undefined;
    await this.intake?.close();
    this.intake = undefined;
  }

  /**
   * The turn's messages are settled: each sender gets the result, and the journal finishes
   * them — unless the reply waits in the outbox, or the shutdown stopped the turn (then they
   * resume at the next start).
   */
  private settle(runId: string, members: readonly Pending[], result: RunResult, undelivered = false): void {
    const first = members[0];
    if (first && !undelivered && !(this.closing && result.status === 'aborted')) {
      this.journal(first.input)?.done(
        members.map((member) => member.id),
        result.status,
      );
    }
    for (const member of members) member.settle.resolve(member.id === runId || this.isSteered(member, runId) ? result : { ...result, runId: member.id });
  }

  /** Steered senders were given the turn's runId, so they get its result as it is. */
  private isSteered(member: Pending, runId: string): boolean {
    return this.runs.get(member.id)?.steeredInto === runId;
  }

  /** Abort one run (active or queued) without touching the rest of its session's queue. */
  abortRun(runId: string, reason = 'aborted'): boolean {
    const record = this.runs.get(runId);
    if (!record) return false;
    const active = this.active.get(record.sessionKey);
    // A message collected into the running turn stops with it: the turn answers it and nothing else of its chat.
    if (active && (active.runId === runId || active.memberIds.has(runId))) {
      active.controller.abort(reason);
      return true;
    }
    const item = this.followups.get(record.sessionKey)?.remove(runId);
    if (item) {
      this.settle(runId, [item], { ...this.emptyResult(runId, record.sessionKey, 'aborted') });
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
      for (const { pending, backlog } of active.steering.splice(0)) {
        if (backlog) continue; // Also in the queue, stopped there.
        this.settle(active.runId, [pending], { ...this.emptyResult(active.runId, sessionKey, 'aborted') });
        count++;
      }
    }
    const queue = this.followups.get(sessionKey);
    if (queue) {
      clearTimeout(queue.timer);
      for (const item of queue.clear()) {
        this.settle(item.id, [item], { ...this.emptyResult(item.id, sessionKey, 'aborted') });
        count++;
      }
      if (!queue.draining) this.followups.delete(sessionKey);
    }
    this.kernel.lanes.clear(`session:${sessionKey}`);
    return count;
  }

  // ── Running ──────────────────────────────────────────────────────────────────

  /** Run a turn answering `members`; resolves with its result once they are settled. */
  private startRun(input: DispatchInput, runId: string, members: Pending[]): Promise<RunResult> {
    const sessionKey = input.sessionKey!;
    const done = this.kernel.lanes
      .runInSession(sessionKey, () => this.runTurnOf(input, runId, members), input.lane)
      .catch((error: unknown) => {
        const stopped = error instanceof LaneClearedError;
        if (!stopped) this.logger.error(`run ${runId} failed: ${(error as Error)?.stack ?? String(error)}`);
        const result: RunResult = { ...this.emptyResult(runId, sessionKey, stopped ? 'aborted' : 'error'), ...(stopped ? {} : { error: String(error) }) };
        this.settle(runId, members, result);
        return result;
      });
    if (!members.some((member) => member.id === runId)) this.recordRun(runId, sessionKey, 'queued', done);
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

  private async runTurnOf(input: DispatchInput, runId: string, members: Pending[]): Promise<RunResult> {
    const agentId = input.agentId!;
    const sessionKey = input.sessionKey!;
    const settings = this.settings(agentId);
    const startedAt = this.now();
    const controller = new AbortController();
    let resolveDone!: (result: RunResult) => void;
    const donePromise = new Promise<RunResult>((resolve) => (resolveDone = resolve));
    const memberIds = new Set(members.map((member) => member.id));
    const active: ActiveRun = { runId, memberIds, route: routeOf(input), controller, streaming: false, steering: [], taken: [], done: donePromise };
    this.active.set(sessionKey, active);
    for (const id of new Set([runId, ...memberIds])) {
      const record = this.runs.get(id);
      if (record) Object.assign(record, { status: 'running', startedAt });
    }
    let undelivered = false;
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
      lock = await store.lock(sessionKey, {
        signal: controller.signal,
        onWait: (holder) => this.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'waiting', reason: 'session-lock', ...(holder ? { holderPid: holder.pid } : {}) }),
      });
      const session = await this.resolveSession(agentId, sessionKey, input);
      // Where this turn's transcript lines begin, and which messages it answers: a restart reads from here what it got done.
      const journal = this.journal(input);
      if (journal) {
        const file = this.transcriptFile(store, session, input);
        journal.turn(runId, members.map((member) => member.id), file, fileSize(file));
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
      const turnInput = await preparedTurnInput(ctx, {
        message: input.message,
        images: input.images,
        thinking: input.thinking,
        model: input.model,
        extraSystemPrompt: input.extraSystemPrompt,
        ...(input.origin ? { origin: input.origin } : {}),
        // A sub-agent gets the minimal prompt: its task, not the persona and heartbeat rules.
        ...(isSubagentSessionKey(sessionKey) ? { promptMode: 'minimal' as const } : {}),
      });
      const turnResult: TurnResult = await loop.runTurn(turnInput, ctx);
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
        } else {
          // Nothing to say but a tool failed: tell the user rather than going quiet.
          const answer = reply.text || reply.media.length ? reply : turnResult.toolError && input.deliver ? { text: `⚠️ ${turnResult.toolError.slice(0, 500)}`, media: [], silent: false } : undefined;
          const sent = answer ? await this.deliverAnswer(input, runId, [...members, ...active.taken], answer) : undefined;
          if (sent?.payload) payloads.push(sent.payload);
          undelivered = sent?.waiting ?? false;
        }
      } else if ((status === 'error' || status === 'timeout') && input.deliver) {
        // A chat is told its message failed, rather than waiting for an answer that never comes.
        const error = turnResult.error ?? `the run timed out after ${Math.round(timeoutMs / 1000)} s`;
        const notice = { text: `⚠️ I couldn't answer that: ${this.kernel.redact.text(error).slice(0, 400)}`, media: [], silent: false };
        undelivered = (await this.deliverAnswer(input, runId, [...members, ...active.taken], notice, status)).waiting;
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
    this.settle(runId, [...members, ...active.taken], result, undelivered);
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
    const left = active.steering
      .splice(0)
      .filter((item) => !item.backlog)
      .map((item) => item.pending);
    if (left.length === 0) return;
    let queue = this.followups.get(sessionKey);
    if (!queue) {
      queue = new FollowupQueue(this.queueSettings(left[0]!.input));
      this.followups.set(sessionKey, queue);
    }
    for (const item of left) delete this.runs.get(item.id)?.steeredInto;
    queue.unshift(left);
    this.emitAgent(left[0]!.input, active.runId, sessionKey, 'lifecycle', { phase: 'steer-followup', count: left.length });
  }

  /** The session entry for this run, starting a new session when the reset policy says so. */
  async resolveSession(agentId: string, sessionKey: string, input: Pick<DispatchInput, 'channel' | 'freshSession' | 'from' | 'threadId' | 'accountId'>): Promise<SessionEntry> {
    const store = this.store(agentId);
    const policy = this.sessions.resetPolicy({ type: sessionTypeOf(sessionKey), channel: input.channel });
    const resolved = await store.resolve(sessionKey, {
      reset: input.freshSession ? true : (entry) => this.sessions.isStale(entry.updatedAt, policy, new Date(this.now())),
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
      const count = this.sessions.transcript(this.store(agentId).transcriptPath(previous.sessionId, parseSessionKey(sessionKey).threadId)).messages().length;
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

  /** Delivered (with the payload as sent), skipped on purpose (deduplicated, blocked, cancelled), or failed. */
  async deliver(input: DispatchInput, runId: string, sessionKey: string, reply: ReplyPayload, onDelivered?: () => void): Promise<(DeliveryOutcome & { status: 'skipped' | 'failed' }) | { status: 'delivered'; payload: ReplyPayload }> {
    const target = input.deliver;
    if (target && this.toolSends.get(runId)?.has(`${target.channel}\u0000${target.to}\u0000${reply.text.trim()}`)) {
      // The agent already said exactly this with the message tool.
      this.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'delivery-deduplicated' });
      return { status: 'skipped', reason: 'already sent with the message tool' };
    }
    if (target && this.sessions.sendPolicy({ sessionKey, entry: await this.store(input.agentId ?? this.defaultAgent()).get(sessionKey), channel: target.channel }) === 'deny') {
      // session.sendPolicy (or the session's own override) keeps replies to this chat in.
      this.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'delivery-blocked', reason: 'sendPolicy' });
      return { status: 'skipped', reason: 'session.sendPolicy' };
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
      ...(onDelivered ? { onDelivered } : {}),
      // The run's signal: /stop and chat.abort cut a hook that hangs while the reply goes out.
      context: { agentId: input.agentId, sessionKey, runId, channel, signal: this.active.get(sessionKey)?.runId === runId ? this.active.get(sessionKey)!.controller.signal : undefined },
      ...(send
        ? { transport: (message) => send({ text: message.text ?? '', media: (message.media ?? []).map((item) => item.url), ...(message.replyTo ? { replyTo: message.replyTo } : {}), silent: false }) }
        : {}),
    });
    if (result.cancelled) {
      this.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'delivery-cancelled' });
      return { status: 'skipped', reason: 'cancelled by a message_sending hook' };
    }
    if (!result.delivered) {
      this.logger.error(`delivery to ${channel}:${target?.to ?? sessionKey} failed: ${result.error}`);
      return { status: 'failed', error: result.error ?? 'not delivered', ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}) };
    }
    return { status: 'delivered', payload: { ...reply, text: result.text } };
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
        const outcome = await this.runtime.deliver(this.input, this.runId, this.sessionKey, reply);
        if (outcome.status === 'delivered') this.sent.push(outcome.payload);
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
