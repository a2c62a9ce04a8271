/**
 * The run: one turn answering a set of accepted messages, in the session's lane. It takes
 * the session's lock (one writer across processes), resolves the session (starting a new
 * one when the reset policy says so), records in the journal where the turn's transcript
 * lines begin, fires the pre-turn hooks (turn-hooks.ts) and hands the turn to the
 * `agentLoop` slot. After it: agent_end, the reply out through delivery, the session's
 * usage, and the messages settled.
 */
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import type {
  KernelServices,
  Logger,
  MediaPrepared,
  MediaUnderstandingService,
  TranscriptMessage,
} from '../../sdk/index.js';
import { ensurePrivateDir, LaneClearedError, MEDIA_UNDERSTANDING_SERVICE } from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import {
  isSubagentSessionKey,
  parseSessionKey,
  SessionLockError,
  type AgentLoopSlot,
  type AgentStream,
  type DispatchInput,
  type ModelService,
  type RunResult,
  type RunStatus,
  type SessionEntry,
  type SessionLock,
  type SessionService,
  type SessionStore,
  type SkillsService,
  type TurnContext,
  type TurnResult,
  type VerboseLevel,
} from '../../sdk/agent/index.js';
import type { Delivery } from './delivery.js';
import type { SessionLifecycle } from './session-lifecycle.js';
import { routeOf, type Pending } from './queue.js';
import type { ActiveRun, RunBook } from './runs.js';
import { BlockDelivery, ChatStream, toolAnnouncement, withoutSilentToken, type RunEvents } from './streaming.js';
import { preparedTurnInput, turnHookContext, withHookContext } from './turn-hooks.js';
import { appendEntries, ledgerPath, runEntries } from './usage-ledger.js';

export interface TurnDeps {
  kernel: KernelServices;
  logger: Logger;
  now: () => number;
  models: ModelService;
  sessions: SessionService;
  /** The skills plugin's service, when that plugin is on. */
  skills: SkillsService | undefined;
  runs: RunBook;
  events: RunEvents;
  delivery: Delivery;
  lifecycle: SessionLifecycle;
  /** Steered messages the run ended without taking: back to the session's queue, ahead of the rest. */
  requeueSteering(sessionKey: string, active: ActiveRun): void;
  /** The session is free: what is queued for it may run. */
  scheduleDrain(sessionKey: string): void;
}

export class TurnRunner {
  constructor(private readonly deps: TurnDeps) {}

  /** The slot holder that runs turns; loaded on first use. */
  async loop(): Promise<AgentLoopSlot> {
    const loop = (await this.deps.kernel.capabilities.slot('agentLoop')) as AgentLoopSlot | undefined;
    if (!loop) throw new Error('no agent loop is enabled (plugins.slots.agentLoop)');
    return loop;
  }

  /** Run a turn answering `members`; resolves with its result once they are settled. */
  start(input: DispatchInput, runId: string, members: Pending[]): Promise<RunResult> {
    const { runs } = this.deps;
    const sessionKey = input.sessionKey!;
    const done = this.deps.kernel.lanes
      .runInSession(sessionKey, () => this.run(input, runId, members), input.lane)
      .catch((error: unknown) => {
        const stopped = error instanceof LaneClearedError;
        if (!stopped) this.deps.logger.error(`run ${runId} failed: ${(error as Error)?.stack ?? String(error)}`);
        const result: RunResult = {
          ...runs.emptyResult(runId, sessionKey, stopped ? 'aborted' : 'error'),
          ...(stopped ? {} : { error: String(error) }),
        };
        runs.settle(runId, members, result);
        return result;
      });
    if (!members.some((member) => member.id === runId)) runs.record(runId, sessionKey, 'queued', done);
    return done;
  }

  /**
   * The message's saved files as the model should see them (transcripts, document text,
   * frames), from the media-understanding service when a plugin offers one. A failure leaves
   * the message as the channel wrote it: the turn still runs.
   */
  private async understandMedia(
    input: DispatchInput,
    agentId: string,
    sessionKey: string,
    signal: AbortSignal,
  ): Promise<MediaPrepared | undefined> {
    const service = await useService<MediaUnderstandingService>(this.deps.kernel, MEDIA_UNDERSTANDING_SERVICE);
    if (!service) return undefined;
    try {
      return await service.prepare({
        agentId,
        sessionKey,
        ...(input.channel ? { channel: input.channel } : {}),
        text: input.message,
        attachments: input.attachments ?? [],
        signal,
      });
    } catch (error) {
      this.deps.logger.warn(
        `media understanding failed for ${sessionKey}: ${(error as Error)?.message ?? String(error)}`,
      );
      return undefined;
    }
  }
  private async run(input: DispatchInput, runId: string, members: Pending[]): Promise<RunResult> {
    const { kernel, runs, events, delivery } = this.deps;
    const agentId = input.agentId!;
    const sessionKey = input.sessionKey!;
    const settings = this.deps.models.settings(agentId);
    const startedAt = this.deps.now();
    const controller = new AbortController();
    let resolveDone!: (result: RunResult) => void;
    const donePromise = new Promise<RunResult>((resolve) => (resolveDone = resolve));
    const memberIds = new Set(members.map((member) => member.id));
    const active: ActiveRun = {
      runId,
      memberIds,
      route: routeOf(input),
      controller,
      streaming: false,
      steering: [],
      taken: [],
      done: donePromise,
    };
    runs.active.set(sessionKey, active);
    for (const id of new Set([runId, ...memberIds])) {
      const record = runs.records.get(id);
      if (record) Object.assign(record, { status: 'running', startedAt });
    }
    let undelivered = false;
    const timeoutMs = input.timeoutMs ?? settings.timeoutSeconds * 1000;
    const timer = setTimeout(() => controller.abort('timeout'), timeoutMs);
    timer.unref();
    const chat = new ChatStream(events, input, runId, sessionKey);
    events.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'start', startedAt });
    let result: RunResult;
    let lock: SessionLock | undefined;
    try {
      const store = this.deps.sessions.store(agentId);
      // One writer per session across processes: `claw agent --local` beside the gateway, or another local run.
      lock = await store.lock(sessionKey, {
        signal: controller.signal,
        onWait: (holder) =>
          events.emitAgent(input, runId, sessionKey, 'lifecycle', {
            phase: 'waiting',
            reason: 'session-lock',
            ...(holder ? { holderPid: holder.pid } : {}),
          }),
      });
      const session = await this.deps.lifecycle.resolve(agentId, sessionKey, input);
      // Where this turn's transcript lines begin, and which messages it answers: a restart reads from here what it got done.
      const journal = runs.journal(input);
      if (journal) {
        const file = this.transcriptFile(store, session, input);
        journal.turn(
          runId,
          members.map((member) => member.id),
          file,
          fileSize(file),
        );
      }
      ensureDir(settings.workspaceDir, this.deps.logger);
      const verbose = input.verbose ?? (session.verboseLevel as VerboseLevel | undefined) ?? 'off';
      const blocks =
        settings.blockStreaming.enabled && input.deliver && !input.deliver.livePreview
          ? new BlockDelivery((reply) => delivery.deliver(input, runId, sessionKey, reply), settings.blockStreaming)
          : undefined;
      const loop = await this.loop();
      const ctx = this.context(
        input,
        session,
        runId,
        controller,
        active,
        withoutSilentToken((stream, data) => {
          events.emitAgent(input, runId, sessionKey, stream, data);
          if (stream === 'assistant') {
            chat.onAssistant(data);
            blocks?.onAssistant(data);
          }
          // Verbose: each tool call is announced to the sender as it starts.
          if (verbose !== 'off' && stream === 'tool' && data.phase === 'start' && input.deliver) {
            void delivery.deliver(input, runId, sessionKey, {
              text: toolAnnouncement(data, verbose),
              media: [],
              silent: false,
            });
          }
        }),
      );
      const media = input.attachments?.length
        ? await this.understandMedia(input, agentId, sessionKey, controller.signal)
        : undefined;
      const turnInput = await preparedTurnInput(ctx, {
        message: media?.text ?? input.message,
        images: media?.images.length ? [...(input.images ?? []), ...media.images] : input.images,
        thinking: input.thinking,
        model: input.model,
        extraSystemPrompt: input.extraSystemPrompt,
        ...(input.origin ? { origin: input.origin } : {}),
        // A sub-agent gets the minimal prompt: its task, not the persona and heartbeat rules.
        ...(isSubagentSessionKey(sessionKey) ? { promptMode: 'minimal' as const } : {}),
      });
      const turnResult: TurnResult = await loop.runTurn(turnInput, ctx);
      active.finishing = true;
      this.recordUsage(turnResult, {
        runId,
        agentId,
        sessionKey,
        sessionId: session.sessionId,
        channel: input.channel,
      });
      const reason = controller.signal.reason;
      const status: RunStatus =
        turnResult.status === 'aborted' ? (reason === 'timeout' ? 'timeout' : 'aborted') : turnResult.status;
      await kernel.hooks.ready('agent_end');
      void kernel.hooks.runVoid(
        'agent_end',
        {
          messages: turnResult.messages as unknown as TranscriptMessage[],
          success: status === 'ok',
          ...(turnResult.error ? { error: turnResult.error } : {}),
          durationMs: this.deps.now() - startedAt,
        },
        { agentId, sessionKey, sessionId: session.sessionId, runId, channel: input.channel },
      );
      const sent = await delivery.turnReply(
        input,
        runId,
        [...members, ...active.taken],
        session,
        turnResult,
        status,
        blocks,
        timeoutMs,
      );
      undelivered = sent.undelivered;
      const { payloads } = sent;
      await store.upsert(sessionKey, (entry) => ({
        updatedAt: this.deps.now(),
        inputTokens: turnResult.usage.input,
        outputTokens: turnResult.usage.output,
        totalTokens: turnResult.usage.input + turnResult.usage.output,
        contextTokens: entry?.contextTokens || 0,
        abortedLastRun: status !== 'ok',
        systemSent: true,
        ...(turnResult.model ? { lastModel: `${turnResult.provider}/${turnResult.model}` } : {}),
        ...(turnResult.cacheTouchedAt ? { lastCacheTouchAt: turnResult.cacheTouchedAt } : {}),
        ...(turnResult.promptReport
          ? { systemPromptReport: turnResult.promptReport as unknown as Record<string, unknown> }
          : {}),
        ...(input.channel ? { lastChannel: input.channel } : {}),
        ...(input.deliver
          ? {
              lastTo: input.deliver.to,
              lastAccountId: input.deliver.accountId,
              lastThreadId: input.deliver.threadId,
              deliveryContext: {
                channel: input.deliver.channel,
                to: input.deliver.to,
                accountId: input.deliver.accountId,
                threadId: input.deliver.threadId,
              },
            }
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
        endedAt: this.deps.now(),
        ...(turnResult.error
          ? { error: turnResult.error }
          : status === 'timeout'
            ? { error: timedOut(timeoutMs) }
            : {}),
      };
    } catch (error) {
      // Aborted while awaiting a hook (or anything else): the reason says stop or timeout.
      const stopped: RunStatus | undefined = controller.signal.aborted
        ? controller.signal.reason === 'timeout'
          ? 'timeout'
          : 'aborted'
        : undefined;
      if (!stopped) this.deps.logger.error(`run ${runId} failed: ${(error as Error).stack ?? String(error)}`);
      const message =
        error instanceof SessionLockError || stopped !== 'timeout'
          ? ((error as Error)?.message ?? String(error))
          : timedOut(timeoutMs);
      result = { ...runs.emptyResult(runId, sessionKey, stopped ?? 'error'), startedAt, error: message };
    } finally {
      clearTimeout(timer);
      lock?.release();
      this.deps.requeueSteering(sessionKey, active);
      runs.active.delete(sessionKey);
    }
    runs.settle(runId, [...members, ...active.taken], result, undelivered);
    chat.finish(result);
    events.emitAgent(input, runId, sessionKey, 'lifecycle', {
      phase: result.status === 'ok' ? 'end' : 'error',
      status: result.status,
      ...(result.error ? { error: result.error } : {}),
      endedAt: result.endedAt,
    });
    resolveDone(result);
    this.deps.scheduleDrain(sessionKey);
    return result;
  }

  /** The run's model calls into the usage ledger; a failed write is logged, never the run's failure. */
  private recordUsage(turnResult: TurnResult, run: Parameters<typeof runEntries>[1]): void {
    try {
      appendEntries(
        ledgerPath(this.deps.kernel.paths.stateDir, run.agentId),
        runEntries(turnResult.messages, run, this.deps.now()),
      );
    } catch (error) {
      this.deps.logger.error(`usage ledger: run ${run.runId} not recorded: ${(error as Error).message}`);
    }
  }

  /** What the loop gets for one turn (or a compaction): the session, its transcript, the models, and the run's stream. */
  private context(
    input: DispatchInput,
    session: SessionEntry,
    runId: string,
    controller: AbortController,
    active: ActiveRun | undefined,
    emit: (stream: AgentStream, data: Record<string, unknown>) => void,
  ): TurnContext {
    const { kernel, sessions } = this.deps;
    const agentId = input.agentId!;
    const sessionKey = input.sessionKey!;
    const settings = this.deps.models.settings(agentId);
    const store = sessions.store(agentId);
    const hookContext = turnHookContext({
      settings,
      sessionKey,
      session,
      runId,
      channel: input.channel,
      signal: controller.signal,
    });
    return {
      kernel,
      models: withHookContext(this.deps.models.models, hookContext),
      store,
      // The header names the key, so a store rebuilt from the transcripts lists the session under it; every
      // line the turn writes names the run, so a restart can tell this turn's lines from later ones.
      transcript: sessions.transcript(this.transcriptFile(store, session, input), {
        redact: kernel.redact,
        header: { sessionKey },
        stamp: { runId },
        hooks: { runner: kernel.hooks, context: hookContext },
      }),
      settings,
      runId,
      sessionKey,
      session,
      mainSession: sessionKey === sessions.mainKey(agentId),
      channel: input.channel,
      signal: controller.signal,
      takeSteering: () => {
        if (!active) return [];
        const items = active.steering.splice(0);
        // Taken: this turn answers them now (a "steer-backlog" message is answered by its own follow-up as well).
        const joined = items.filter((item) => !item.backlog).map((item) => item.pending);
        active.taken.push(...joined);
        if (joined.length)
          this.deps.runs.journal(input)?.join(
            runId,
            joined.map((item) => item.id),
          );
        return items.map((item) => item.pending.input.message);
      },
      setStreaming: (streaming) => {
        if (active) active.streaming = streaming;
      },
      emit,
      skills:
        this.deps.skills?.promptSkills({
          agentId,
          workspaceDir: settings.workspaceDir,
          sessionKey,
          sessionId: session.sessionId,
        }) ?? [],
    };
  }

  /** `/compact` and `sessions.compact`: in the session lane, so it never races a run. */
  async compact(
    agentId: string,
    sessionKey: string,
    instructions?: string,
  ): Promise<{ compacted: boolean; reason?: string; summarized?: number; compactions?: number; summary?: string }> {
    return this.deps.kernel.lanes.runInSession(sessionKey, async () => {
      const store = this.deps.sessions.store(agentId);
      const controller = new AbortController();
      const lock = await store.lock(sessionKey, {
        timeoutMs: this.deps.models.settings(agentId).timeoutSeconds * 1000,
      });
      try {
        const session = await store.get(sessionKey);
        if (!session) return { compacted: false, reason: 'no session yet' };
        let summarized = 0;
        const loop = await this.loop();
        if (!loop.compact)
          return { compacted: false, reason: 'the agent loop in use (plugins.slots.agentLoop) cannot compact' };
        const ctx = this.context(
          { agentId, sessionKey } as DispatchInput,
          session,
          randomUUID(),
          controller,
          undefined,
          (stream, data) => {
            if (stream === 'compaction' && data.phase === 'end') summarized = Number(data.summarized ?? 0);
          },
        );
        const outcome = await loop.compact(ctx, { instructions });
        if (!outcome.compacted) return { compacted: false, reason: 'too little history' };
        const entry = await store.get(sessionKey);
        return { compacted: true, summarized, compactions: entry?.compactionCount, summary: outcome.summary };
      } finally {
        lock.release();
      }
    });
  }

  /** A topic's turns live in their own file; the key names the topic when the input does not. */
  private transcriptFile(store: SessionStore, session: SessionEntry, input: DispatchInput): string {
    return store.transcriptPath(session.sessionId, input.threadId ?? parseSessionKey(input.sessionKey!).threadId);
  }
}

/** The error of a run that hit its timeout. */
function timedOut(timeoutMs: number): string {
  return `the run timed out after ${timeoutMs < 10_000 ? Number((timeoutMs / 1000).toFixed(1)) : Math.round(timeoutMs / 1000)} s`;
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
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
