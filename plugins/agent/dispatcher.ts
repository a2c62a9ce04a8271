/**
 * Where every inbound message (gateway, channel, CLI, HTTP, cron, heartbeats, sub-agents)
 * enters. dispatch() fires message_received, handles slash commands, and then either starts
 * a run (turn.ts) or — when the session is busy — applies the queue mode: steer into the
 * live run, queue a follow-up (followups.ts), or interrupt.
 *
 * Every accepted message is its own durable unit (journal.ts): it is on disk before its
 * sender is told "accepted", a turn knows the messages it answers, and they are finished in
 * the journal only once its reply is delivered (delivery.ts). The intake opens when the
 * gateway starts the agent service, resumes what a previous process left (resume.ts), and
 * drains on shutdown.
 */
import { randomUUID } from 'node:crypto';
import type { KernelServices, Logger } from '../../sdk/index.js';
import {
  assertKnownAgent,
  IntakeClosedError,
  parseReply,
  type DispatchInput,
  type RequestState,
  type RunHandle,
  type RunResult,
  type SessionService,
} from '../../sdk/agent/index.js';
import type { Delivery } from './delivery.js';
import type { Followups } from './followups.js';
import { AgentIntake } from './intake.js';
import { routeOf, type Pending } from './queue.js';
import { resumeOpen } from './resume.js';
import type { RunBook } from './runs.js';
import type { RunEvents } from './streaming.js';
import type { TurnRunner } from './turn.js';

const DEDUPE_WINDOW_MS = 20 * 60_000;

/** What a slash command did: a reply, and/or a message to run the agent with. */
export interface CommandOutcome {
  /** Said back to the sender (through the normal delivery path). */
  reply?: string;
  /** Then run the agent with this message (and overrides). */
  continueWith?: Partial<DispatchInput>;
}

/** Slash commands and inline directives, bound to the runtime by the plugin's entry. */
export interface BoundCommands {
  handle(input: DispatchInput): Promise<CommandOutcome | undefined>;
  applyInline(input: DispatchInput): Promise<DispatchInput>;
}

export interface DispatcherDeps {
  kernel: KernelServices;
  logger: Logger;
  now: () => number;
  resolveTarget(input: { agentId?: string; sessionKey?: string }): { agentId: string; sessionKey: string };
  commands: BoundCommands;
  runs: RunBook;
  events: RunEvents;
  delivery: Delivery;
  followups: Followups;
  turns: TurnRunner;
  sessions: SessionService;
}

export class Dispatcher {
  /** Dedupe keys of recent messages, oldest first. */
  private readonly seen = new Map<string, number>();
  /** Resuming what a previous process left: new messages queue behind it. */
  private resuming?: Promise<void>;

  constructor(private readonly deps: DispatcherDeps) {}

  /**
   * `options.runId`: the run id the caller asks for. OpenClaw's clients use their request's
   * idempotencyKey as the run id and match events and input receipts by it; a name already
   * taken by a remembered run gets a fresh id instead, so two runs never share one.
   */
  async dispatch(input: DispatchInput, options: { runId?: string } = {}): Promise<RunHandle> {
    const { agentId, sessionKey } = this.deps.resolveTarget(input);
    // Every way in (methods, channels, cron, hooks, /v1) ends here: an unknown agent is refused, never created.
    assertKnownAgent(this.deps.kernel.config(), agentId);
    const acceptedAt = this.deps.now();
    const runId = options.runId && !this.deps.runs.records.has(options.runId) ? options.runId : randomUUID();
    const full: DispatchInput = { ...input, agentId, sessionKey };
    const hooks = this.deps.kernel.hooks;
    if (this.deps.runs.closing) throw new IntakeClosedError();
    if (this.resuming) await this.resuming.catch(() => undefined);

    // Channels redeliver on reconnect; the same message id within the window runs once.
    let dedupeKey: string | undefined;
    if (input.messageId) {
      // Message ids are only unique per chat on most platforms (Telegram counts per chat).
      dedupeKey = `${input.channel ?? 'gateway'}:${input.accountId ?? ''}:${sessionKey}:${input.from ?? ''}:${input.messageId}`;
      this.pruneSeen();
      if (this.seen.has(dedupeKey))
        return {
          runId,
          acceptedAt,
          status: 'duplicate',
          done: Promise.resolve(this.deps.runs.emptyResult(runId, sessionKey, 'ok')),
        };
      this.seen.set(dedupeKey, acceptedAt);
    }

    await hooks.ready('message_received');
    void hooks.runVoid(
      'message_received',
      {
        channel: input.channel ?? 'gateway',
        accountId: input.accountId,
        from: input.from ?? 'operator',
        content: input.message,
        messageId: input.messageId,
        timestamp: acceptedAt,
        // What came with it (a voice note answers to tts.auto "inbound"), without the bytes.
        ...(input.attachments?.length
          ? { metadata: { attachments: input.attachments.map(({ mimeType, fileName }) => ({ mimeType, fileName })) } }
          : {}),
      },
      { agentId, sessionKey, channel: input.channel },
    );

    // Commands (for authorized senders) and directives are handled before any model sees them.
    if (input.authorized !== false) {
      const outcome = await this.deps.commands.handle(full);
      if (outcome) return this.afterCommand(outcome, full, runId, acceptedAt);
      return this.accept(await this.deps.commands.applyInline(full), runId, acceptedAt, dedupeKey);
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
  private async accept(
    input: DispatchInput,
    runId: string,
    acceptedAt: number,
    dedupeKey?: string,
  ): Promise<RunHandle> {
    const intake = this.deps.runs.intake;
    if (!intake || input.callerJournaled) return this.submit(input, runId, acceptedAt);
    let durable: Promise<void>;
    try {
      durable = intake.accept(input, runId, acceptedAt, dedupeKey);
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

  private async afterCommand(
    outcome: CommandOutcome,
    input: DispatchInput,
    runId: string,
    acceptedAt: number,
  ): Promise<RunHandle> {
    const sessionKey = input.sessionKey!;
    const result: RunResult = { ...this.deps.runs.emptyResult(runId, sessionKey, 'ok'), text: outcome.reply ?? '' };
    if (outcome.reply) {
      const replyRunId = outcome.continueWith ? randomUUID() : runId;
      result.payloads = [parseReply(outcome.reply)];
      this.deps.events.chatEvent(input, replyRunId, sessionKey, 'final', outcome.reply);
      if (input.deliver)
        await this.deps.delivery.deliver(input, replyRunId, sessionKey, {
          text: outcome.reply,
          media: [],
          silent: false,
        });
    }
    if (outcome.continueWith) {
      const next = await this.deps.commands.applyInline({ ...input, ...outcome.continueWith });
      return this.accept(next, runId, acceptedAt);
    }
    return { runId, acceptedAt, status: 'command', done: Promise.resolve(result) };
  }

  /**
   * Start a run, or apply the queue mode when the session is busy. `resumed`: accepted by an
   * earlier process, so no cap drops it now.
   */
  private submit(input: DispatchInput, id: string, acceptedAt: number, resumed = false): RunHandle {
    const { runs, followups, turns } = this.deps;
    const sessionKey = input.sessionKey!;
    const pending = this.pending(id, input, acceptedAt, resumed);
    const done = runs.records.get(id)!.done;
    const active = runs.active.get(sessionKey);
    const busy = (active !== undefined && !active.finishing) || followups.busy(sessionKey);
    if (!busy) {
      void turns.start(input, id, [pending]);
      return { runId: id, acceptedAt, status: 'started', done };
    }
    const settings = followups.settings(input);
    // A message resumed after a restart never interrupts the turn resumed before it.
    if (settings.mode === 'interrupt' && active && !resumed) {
      active.controller.abort('interrupted');
      void turns.start(input, id, [pending]);
      return { runId: id, acceptedAt, status: 'started', done };
    }
    const steer = settings.mode === 'steer' || settings.mode === 'steer-backlog';
    // A steered message is answered by the running turn, whose reply goes to one chat: only that chat's messages join it.
    if (steer && active?.streaming && active.route === routeOf(input)) {
      this.deps.events.emitAgent(input, active.runId, sessionKey, 'lifecycle', { phase: 'steer-queued' });
      if (settings.mode === 'steer') {
        active.steering.push({ pending });
        runs.records.get(id)!.steeredInto = active.runId;
        return { runId: active.runId, acceptedAt, status: 'steered', done };
      }
      active.steering.push({ pending, backlog: true });
    }
    return followups.enqueue(pending, settings);
  }

  /** A message on its way to a turn, with the record `agent.wait` and retries find it by. */
  private pending(id: string, input: DispatchInput, acceptedAt: number, resumed = false): Pending {
    let settle!: Pending['settle'];
    const done = new Promise<RunResult>((resolve, reject) => (settle = { resolve, reject }));
    this.deps.runs.record(id, input.sessionKey!, 'queued', done);
    return { id, input, acceptedAt, settle, ...(resumed ? { resumed } : {}) };
  }

  /** A run is active or messages are queued for the session. */
  hasWork(sessionKey: string): boolean {
    return this.deps.runs.active.has(sessionKey) || this.deps.followups.waiting(sessionKey);
  }

  /** Abort one run (active or queued) without touching the rest of its session's queue. */
  abortRun(runId: string, reason = 'aborted'): boolean {
    const { runs } = this.deps;
    const record = runs.records.get(runId);
    if (!record) return false;
    const active = runs.active.get(record.sessionKey);
    // A message collected into the running turn stops with it: the turn answers it and nothing else of its chat.
    if (active && (active.runId === runId || active.memberIds.has(runId))) {
      active.controller.abort(reason);
      return true;
    }
    const item = this.deps.followups.remove(record.sessionKey, runId);
    if (item) {
      runs.settle(runId, [item], { ...runs.emptyResult(runId, record.sessionKey, 'aborted') });
      return true;
    }
    return false;
  }

  /** Abort the session's run and drop what is queued. Returns how many were stopped. */
  stop(sessionKey: string, reason = 'stopped'): number {
    const { runs } = this.deps;
    let count = 0;
    const active = runs.active.get(sessionKey);
    if (active) {
      active.controller.abort(reason);
      count++;
      for (const { pending, backlog } of active.steering.splice(0)) {
        if (backlog) continue; // Also in the queue, stopped there.
        runs.settle(active.runId, [pending], { ...runs.emptyResult(active.runId, sessionKey, 'aborted') });
        count++;
      }
    }
    for (const item of this.deps.followups.clear(sessionKey)) {
      runs.settle(item.id, [item], { ...runs.emptyResult(item.id, sessionKey, 'aborted') });
      count++;
    }
    this.deps.kernel.lanes.clear(`session:${sessionKey}`);
    return count;
  }

  private pruneSeen(): void {
    const cutoff = this.deps.now() - DEDUPE_WINDOW_MS;
    for (const [key, at] of this.seen) {
      if (at >= cutoff) break;
      this.seen.delete(key);
    }
  }

  // ── Intake: open and resume, requests, drain on shutdown ─────────────────────

  /**
   * The gateway starts the agent service: open the intake journals, and resume what a
   * previous process accepted and did not finish. Synchronous up to the resumes, so no
   * message is accepted before the journal is open.
   */
  openIntake(): Promise<void> {
    const { runs, logger } = this.deps;
    if (runs.intake) return Promise.resolve();
    const intake = new AgentIntake(this.deps.kernel.paths.stateDir, logger, this.deps.now);
    const { open, seen } = intake.load();
    for (const [key, at] of seen) this.seen.set(key, at);
    runs.intake = intake;
    this.deps.delivery.openOutbox(intake);
    runs.closing = false;
    const count = open.reduce((total, agent) => total + agent.messages.length, 0);
    if (count === 0) return Promise.resolve();
    logger.info(`resuming ${count} accepted message(s) a previous gateway did not finish`);
    // New messages wait until the old ones are back in their queues, so they stay in order.
    const { kernel, now, sessions, delivery } = this.deps;
    const resumed = resumeOpen(intake, open, {
      kernel,
      logger,
      now,
      sessions,
      runs,
      delivery,
      submit: (input, id, acceptedAt, resumed) => void this.submit(input, id, acceptedAt, resumed),
      pending: (id, input, acceptedAt, resumed) => this.pending(id, input, acceptedAt, resumed),
      start: (input, runId, members) => this.deps.turns.start(input, runId, members),
    }).finally(() => {
      if (this.resuming === resumed) this.resuming = undefined;
    });
    this.resuming = resumed;
    return resumed;
  }

  /** What became of the message a gateway request brought (see AgentService.request). */
  async request(requestKey: string): Promise<RequestState> {
    const { runs } = this.deps;
    // Resumed messages get their records while the resume runs.
    if (this.resuming) await this.resuming.catch(() => undefined);
    const found = runs.intake?.request(requestKey);
    if (!found) return { state: 'unknown' };
    const id = 'open' in found ? found.open.id : found.finished.id;
    // This process ran it (resumed, or finished since the restart): its result is known.
    const record = runs.records.get(id);
    if (record)
      return {
        state: 'open',
        runId: id,
        acceptedAt: 'open' in found ? found.open.at : (record.startedAt ?? this.deps.now()),
        done: record.done,
      };
    if ('finished' in found) return { state: 'finished', runId: id, status: found.finished.status };
    return {
      state: 'open',
      runId: id,
      acceptedAt: found.open.at,
      done: Promise.resolve({ ...runs.emptyResult(id, found.open.input.sessionKey, 'ok') }),
    };
  }

  /**
   * The gateway stops or restarts (SIGTERM, config.apply): accept nothing new, let running
   * turns finish for up to `timeoutMs`, then stop the rest. With the intake open, what was
   * stopped or still queued stays in the journal and resumes at the next start.
   */
  async drainTurns(timeoutMs: number): Promise<void> {
    const { runs } = this.deps;
    runs.closing = true;
    if (runs.intake) runs.intake.closing = true;
    this.deps.followups.pause();
    const running = () => [...runs.active.values()].map((run) => run.done);
    if (timeoutMs > 0 && runs.active.size > 0) {
      this.deps.logger.info(
        `waiting up to ${Math.round(timeoutMs / 1000)} s for ${runs.active.size} running turn(s) to finish`,
      );
      await settleWithin(Promise.allSettled(running()), timeoutMs);
    }
    const left = running();
    for (const key of new Set([...runs.active.keys(), ...this.deps.followups.sessionKeys()]))
      this.stop(key, 'shutdown');
    // Stopped turns write their last transcript lines before the journal closes.
    await settleWithin(Promise.allSettled(left), 2000);
  }

  /** Kernel stopping: whatever still runs is stopped now (see drainTurns), and the journal is closed. */
  async shutdown(): Promise<void> {
    await this.drainTurns(0);
    this.deps.delivery.closeOutbox();
    await this.deps.runs.intake?.close();
    this.deps.runs.intake = undefined;
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
