/**
 * The heartbeat scheduler and runner. One timer for all agents, armed at the nearest of:
 * each agent's next slot (last run, or the schedule's persisted anchor, plus `every`), a
 * pending wake, a busy retry. A slot missed while the gateway was down is due at once, so it
 * runs once shortly after start; a restart never moves a slot later.
 *
 * Each heartbeat is an ordinary agent turn in the agent's main session through the agent
 * service (queueing, lanes, tool policy, sandbox and approvals unchanged). Every outcome —
 * run, skipped, failed — is recorded (`last-heartbeat`) and emitted (`heartbeat` event).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KernelConfig, Logger, OutboundRequest, OutboundResult } from '../../sdk/index.js';
import { type AgentService, type SessionEntry, HEARTBEAT_ORIGIN } from '../../sdk/agent/index.js';
import { effectivelyEmpty, judgeReply } from './reply.js';
import {
  heartbeatAgents,
  heartbeatSettings,
  isolatedHeartbeatKey,
  withinActiveHours,
  type HeartbeatSettings,
} from './settings.js';
import type { HeartbeatEvent, HeartbeatState } from './state.js';
import type { SystemEventStore } from './event-store.js';

/** A wake or a missed slot waits this long after start, so channels are up to deliver. */
export const STARTUP_DELAY_MS = 1500;
/** The main session is busy: look again this soon (the heartbeat is not dropped). */
export const BUSY_RETRY_MS = 1000;
/** A heartbeat that threw (not a failed turn: that is recorded) is tried again after this. */
export const ERROR_RETRY_MS = 60_000;
/** Wakes that arrive together become one heartbeat. */
export const WAKE_COALESCE_MS = 250;
/** The timer re-reads config at least this often (a hot reload may change `every`). */
const MAX_TIMER_MS = 60_000;
const PREVIEW_CHARS = 200;

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface RunnerDeps {
  config(): Readonly<KernelConfig>;
  state: HeartbeatState;
  events: SystemEventStore;
  agent(): Promise<AgentService | undefined>;
  mainKey(agentId: string): string;
  session(agentId: string, sessionKey: string): Promise<SessionEntry | undefined>;
  /** The agent's workspace (where HEARTBEAT.md lives) and its user time zone. */
  workspace(agentId: string): { dir: string; userTimezone?: string };
  /**
   * A heartbeat does not keep its session alive (idle resets go by real conversation): put
   * back the `updatedAt` the session had before, unless something else touched it since.
   */
  restoreUpdatedAt(
    agentId: string,
    sessionKey: string,
    before: SessionEntry,
    run: { sessionId: string; startedAt: number; endedAt: number },
  ): Promise<void>;
  send(request: OutboundRequest): Promise<OutboundResult>;
  emit(event: HeartbeatEvent): void;
  logger: Logger;
  clock?: Clock;
  startupDelayMs?: number;
}

type Outcome = Omit<HeartbeatEvent, 'ts' | 'agentId' | 'trigger'>;

export class HeartbeatRunner {
  private readonly clock: Clock;
  private timer?: unknown;
  private timerAt?: number;
  private startedAt = 0;
  private running = false;
  /** agentId → why it was woken (`now` wakes not yet run). */
  private readonly wakes = new Map<string, string>();
  /** agentId → when to look again because the session was busy. */
  private readonly retries = new Map<string, number>();
  private readonly active = new Map<string, Promise<void>>();

  constructor(private readonly deps: RunnerDeps) {
    this.clock = deps.clock ?? SYSTEM_CLOCK;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.startedAt = this.clock.now();
    for (const agentId of heartbeatAgents(this.deps.config())) this.deps.state.ensure(agentId, this.startedAt);
    // A heartbeat the last process started and never finished (a crash, kill -9) runs again.
    for (const agentId of this.deps.state.agentIds()) {
      const inFlight = this.deps.state.agent(agentId)?.inFlight;
      if (inFlight) this.wakes.set(agentId, `recovered:${inFlight.trigger}`);
    }
    this.arm();
  }

  /**
   * Stop the timer. A heartbeat already running is not waited for: it is an agent turn, and
   * the agent service drains (or keeps for the next start) its turns within its own limit.
   */
  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = undefined;
  }

  settings(agentId: string): HeartbeatSettings {
    return heartbeatSettings(this.deps.config(), agentId);
  }

  /** When the agent's next scheduled heartbeat is due; undefined when it has no schedule. */
  nextDue(agentId: string): number | undefined {
    if (!this.deps.state.enabled || !heartbeatAgents(this.deps.config()).includes(agentId)) return undefined;
    const everyMs = this.settings(agentId).everyMs;
    if (everyMs <= 0) return undefined;
    const state = this.deps.state.agent(agentId);
    if (!state) return undefined;
    return (state.lastRunAt ?? state.anchorAt) + everyMs;
  }

  /** `now`: a heartbeat as soon as the session is free. Returns why not when it cannot. */
  wakeNow(agentId: string, reason: string): { queued: boolean; reason?: string } {
    if (!this.deps.state.enabled) {
      this.record(agentId, reason, { status: 'skipped', reason: 'disabled' });
      return { queued: false, reason: 'heartbeats are disabled (claw system heartbeat enable)' };
    }
    this.wakes.set(agentId, reason);
    this.arm(WAKE_COALESCE_MS);
    return { queued: true };
  }

  /** `next-heartbeat`: the schedule will pick the event up, if there is a schedule. */
  wakeNext(agentId: string): { queued: boolean; reason?: string } {
    if (!this.deps.state.enabled)
      return {
        queued: false,
        reason:
          'heartbeats are disabled (claw system heartbeat enable); the event waits for the next turn in its session',
      };
    if (!heartbeatAgents(this.deps.config()).includes(agentId))
      return {
        queued: false,
        reason: `agent "${agentId}" runs no scheduled heartbeats; the event waits for its next turn`,
      };
    if (this.settings(agentId).everyMs <= 0)
      return {
        queued: false,
        reason: 'heartbeat.every is 0 (no schedule); the event waits for the next turn in its session',
      };
    return { queued: true };
  }

  setEnabled(enabled: boolean): void {
    this.deps.state.setEnabled(enabled);
    if (enabled)
      for (const agentId of heartbeatAgents(this.deps.config())) this.deps.state.ensure(agentId, this.clock.now());
    this.arm();
  }

  // ── Timer ──────────────────────────────────────────────────────────────────

  private arm(minDelay = 0): void {
    if (!this.running) return;
    const now = this.clock.now();
    const earliest = Math.max(now + minDelay, this.startedAt + (this.deps.startupDelayMs ?? STARTUP_DELAY_MS));
    let at = now + MAX_TIMER_MS;
    const scheduled = heartbeatAgents(this.deps.config());
    // An agent a config reload added starts its schedule now.
    for (const agentId of scheduled) this.deps.state.ensure(agentId, now);
    const agents = new Set([...scheduled, ...this.wakes.keys(), ...this.retries.keys()]);
    for (const agentId of agents) {
      if (this.active.has(agentId)) continue;
      const due = this.dueAt(agentId);
      if (due !== undefined) at = Math.min(at, Math.max(due, earliest));
    }
    if (this.timer !== undefined && this.timerAt !== undefined && this.timerAt <= at) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = undefined;
        this.tick();
      },
      Math.max(0, at - now),
    );
  }

  /** When an agent wants a heartbeat: a wake or a retry at once (or when retried), else its slot. */
  private dueAt(agentId: string): number | undefined {
    const retry = this.retries.get(agentId);
    if (retry !== undefined) return retry;
    if (this.wakes.has(agentId)) return this.clock.now();
    return this.nextDue(agentId);
  }

  private tick(): void {
    if (!this.running) return;
    const now = this.clock.now();
    for (const agentId of new Set([
      ...heartbeatAgents(this.deps.config()),
      ...this.wakes.keys(),
      ...this.retries.keys(),
    ])) {
      if (this.active.has(agentId)) continue;
      const due = this.dueAt(agentId);
      if (due === undefined || due > now) continue;
      this.retries.delete(agentId);
      const wake = this.wakes.get(agentId);
      this.wakes.delete(agentId);
      const run = this.runOnce(agentId, wake ?? 'interval')
        .then(() => undefined)
        .catch((error: unknown) => {
          // Something under the heartbeat broke (a file it could not read or write): try again later, not in a loop.
          this.retries.set(agentId, this.clock.now() + ERROR_RETRY_MS);
          if (wake) this.wakes.set(agentId, wake);
          this.deps.logger.error(
            `heartbeat for ${agentId} failed, trying again in ${ERROR_RETRY_MS / 1000} s: ${(error as Error).stack ?? String(error)}`,
          );
        })
        .finally(() => {
          this.active.delete(agentId);
          this.arm();
        });
      this.active.set(agentId, run);
    }
    this.arm();
  }

  // ── One heartbeat ──────────────────────────────────────────────────────────

  /** Run (or skip, with a recorded reason) one heartbeat for `agentId`; `trigger` is `interval` or the wake's reason. */
  async runOnce(agentId: string, trigger: string): Promise<HeartbeatEvent | undefined> {
    const settings = this.settings(agentId);
    const sessionKey = this.deps.mainKey(agentId);
    // isolatedSession: a fresh session beside the main one; events and the `last` route stay the main session's.
    const runKey = settings.isolatedSession ? isolatedHeartbeatKey(sessionKey) : sessionKey;
    const scheduled = trigger === 'interval';
    const now = this.clock.now();
    const pending = this.deps.events.pending(sessionKey);
    const workspace = this.deps.workspace(agentId);
    if (!this.deps.state.enabled)
      return this.record(agentId, trigger, { status: 'skipped', reason: 'disabled', sessionKey });

    // Quiet hours hold back the schedule only; an explicit wake (cron, a hook, the CLI) was asked for now.
    if (scheduled && settings.activeHours && !withinActiveHours(settings.activeHours, now, workspace.userTimezone)) {
      this.deps.state.update(agentId, now, { lastRunAt: now });
      return this.record(agentId, trigger, {
        status: 'skipped',
        reason: 'quiet-hours',
        sessionKey,
        systemEvents: pending.length,
      });
    }
    const agent = await this.deps.agent();
    if (!agent)
      return this.record(agentId, trigger, {
        status: 'failed',
        reason: 'no agent service (is the agent plugin enabled?)',
        sessionKey,
      });
    if (agent.isActive(runKey)) {
      // Not dropped: the same trigger comes back once the session is free.
      if (!scheduled) this.wakes.set(agentId, trigger);
      this.retries.set(agentId, now + BUSY_RETRY_MS);
      this.deps.logger.debug(`heartbeat for ${agentId} waits: ${runKey} is busy`);
      return undefined;
    }
    // An empty checklist saves the model call, but never holds back queued events or a wake.
    const file = join(workspace.dir, 'HEARTBEAT.md');
    if (scheduled && pending.length === 0 && existsSync(file) && effectivelyEmpty(readFileSync(file, 'utf8'))) {
      this.deps.state.update(agentId, now, { lastRunAt: now });
      return this.record(agentId, trigger, { status: 'skipped', reason: 'empty-heartbeat-file', sessionKey });
    }

    // In flight until its turn succeeded and the reply was handled: a crash, or a gateway
    // stop that cut the turn off, runs it again at the next start, and the system events it
    // was for are still queued (they go only after a turn succeeds).
    this.deps.state.update(agentId, now, { lastRunAt: now, inFlight: { trigger, startedAt: now } });
    let handled = false;
    try {
      const started = this.clock.now();
      const before = settings.isolatedSession ? undefined : await this.deps.session(agentId, sessionKey);
      let result;
      try {
        result = await agent.run({
          agentId,
          sessionKey: runKey,
          ...(settings.isolatedSession ? { freshSession: true } : {}),
          message: settings.prompt,
          ...(settings.model ? { model: settings.model } : {}),
          ...(settings.timeoutSeconds ? { timeoutMs: settings.timeoutSeconds * 1000 } : {}),
          // Its own turn, never merged into a user's queued messages; no slash commands.
          queueMode: 'followup',
          authorized: false,
          // Marks the prompt in the transcript, so chat.history can hide it and an OK-only reply.
          origin: HEARTBEAT_ORIGIN,
          // Not resumed by the intake journal after a crash (its reply would reach no one): the
          // inFlight mark below has this runner run it again instead, and deliver.
          callerJournaled: true,
        });
      } catch (error) {
        return this.record(agentId, trigger, {
          status: 'failed',
          reason: (error as Error).message ?? String(error),
          sessionKey,
          systemEvents: pending.length,
        });
      }
      if (before)
        await this.deps
          .restoreUpdatedAt(agentId, sessionKey, before, result)
          .catch((error: unknown) =>
            this.deps.logger.warn(
              `heartbeat ${agentId}: could not restore the session's updatedAt: ${(error as Error).message}`,
            ),
          );
      const base = {
        sessionKey: runKey,
        runId: result.runId,
        systemEvents: pending.length,
        durationMs: this.clock.now() - started,
      };
      if (result.status !== 'ok')
        return this.record(agentId, trigger, {
          ...base,
          status: 'failed',
          reason: result.error ?? `the turn ended ${result.status}`,
        });
      handled = true;
      const verdict = judgeReply(result.text, settings.ackMaxChars);
      if (verdict.kind === 'ack')
        return this.record(agentId, trigger, {
          ...base,
          status: 'ok-token',
          ...(verdict.rest ? { preview: verdict.rest.slice(0, PREVIEW_CHARS) } : {}),
        });
      if (verdict.kind === 'empty') return this.record(agentId, trigger, { ...base, status: 'ok-empty' });
      return this.record(agentId, trigger, { ...base, ...(await this.deliver(settings, sessionKey, verdict.text)) });
    } finally {
      if (handled) this.deps.state.update(agentId, this.clock.now(), { inFlight: undefined });
    }
  }

  private async deliver(settings: HeartbeatSettings, sessionKey: string, text: string): Promise<Outcome> {
    const preview = text.slice(0, PREVIEW_CHARS);
    if (settings.target === 'none') return { status: 'skipped', reason: 'target-none', preview };
    const entry = await this.deps.session(settings.agentId, sessionKey);
    const last =
      entry?.deliveryContext ??
      (entry?.lastChannel
        ? { channel: entry.lastChannel, to: entry.lastTo, accountId: entry.lastAccountId, threadId: entry.lastThreadId }
        : undefined);
    const channel = settings.target === 'last' ? last?.channel : settings.target;
    const sameChannel = last?.channel === channel;
    const to = settings.target === 'last' ? last?.to : (settings.to ?? (sameChannel ? last?.to : undefined));
    if (!channel || !to) {
      const why =
        settings.target === 'last'
          ? 'no-target: the main session has no last channel to reply to yet'
          : `no-target: heartbeat.target "${settings.target}" needs heartbeat.to`;
      return { status: 'skipped', reason: why, preview };
    }
    const accountId = settings.accountId ?? (sameChannel ? last?.accountId : undefined);
    const threadId = settings.target === 'last' || (sameChannel && !settings.to) ? last?.threadId : undefined;
    const sent = await this.deps.send({
      channel,
      to,
      ...(accountId ? { accountId } : {}),
      ...(threadId !== undefined ? { threadId: String(threadId) } : {}),
      text,
      context: { agentId: settings.agentId, sessionKey, channel },
    });
    const where = { channel, to };
    if (sent.cancelled) return { ...where, status: 'skipped', reason: 'cancelled by a message_sending hook', preview };
    if (!sent.delivered) return { ...where, status: 'failed', reason: sent.error ?? 'delivery failed', preview };
    return { ...where, status: 'sent', preview: sent.text.slice(0, PREVIEW_CHARS) };
  }

  private record(agentId: string, trigger: string, outcome: Outcome): HeartbeatEvent {
    const event: HeartbeatEvent = { ts: this.clock.now(), agentId, trigger, ...outcome };
    this.deps.state.update(agentId, event.ts, { last: event });
    this.deps.emit(event);
    const detail = event.reason ? ` (${event.reason})` : '';
    if (event.status === 'failed') this.deps.logger.warn(`heartbeat ${agentId}: failed${detail}`);
    else this.deps.logger.info(`heartbeat ${agentId}: ${event.status}${detail} [${trigger}]`);
    return event;
  }
}
