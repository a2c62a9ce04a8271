/**
 * The follow-ups of busy sessions: messages that arrive while a session's turn runs wait
 * in its queue (queue.ts) under the session's queue mode, and run once the session has
 * been quiet for `debounceMs` — one at a time ("followup", "steer-backlog") or collected
 * into one turn ("collect"). A message a full queue drops is answered with a notice.
 */
import { randomUUID } from 'node:crypto';
import { type DispatchInput, type RunHandle, type RunResult, type SessionEntry } from '../../sdk/agent/index.js';
import type { Delivery } from './delivery.js';
import { normalizeQueueMode, queueDefaults, type MessagesSection, type QueueSettings } from './queue-settings.js';
import { collectPrompt, FollowupQueue, type Pending } from './queue.js';
import type { ActiveRun, RunBook } from './runs.js';
import type { RunEvents } from './streaming.js';

export interface FollowupDeps {
  sections: () => { messages?: MessagesSection };
  runs: RunBook;
  events: RunEvents;
  delivery: Delivery;
  /** Run a turn answering `members` (turn.ts). */
  start(input: DispatchInput, runId: string, members: Pending[]): Promise<RunResult>;
}

export class Followups {
  private readonly queues = new Map<string, FollowupQueue>();
  /** Session queue overrides, mirrored from the store so queue decisions stay synchronous. */
  readonly overrides = new Map<string, SessionEntry['queue']>();

  constructor(private readonly deps: FollowupDeps) {}

  settings(input: DispatchInput, entry?: SessionEntry): QueueSettings {
    const base = queueDefaults(this.deps.sections().messages, input.channel);
    const override = entry?.queue ?? this.overrides.get(input.sessionKey ?? '');
    const mode = normalizeQueueMode(input.queueMode) ?? normalizeQueueMode(override?.mode) ?? base.mode;
    return {
      mode,
      debounceMs: override?.debounceMs ?? base.debounceMs,
      cap: override?.cap ?? base.cap,
      drop: override?.drop ?? base.drop,
    };
  }

  /** Messages wait for the session, or it is working through them: a new one queues behind them. */
  busy(sessionKey: string): boolean {
    const queue = this.queues.get(sessionKey);
    return queue !== undefined && (queue.size > 0 || queue.draining);
  }

  /** Messages are queued for the session. */
  waiting(sessionKey: string): boolean {
    const queue = this.queues.get(sessionKey);
    return queue !== undefined && queue.size > 0;
  }

  sessionKeys(): string[] {
    return [...this.queues.keys()];
  }

  enqueue(pending: Pending, settings: QueueSettings): RunHandle {
    const sessionKey = pending.input.sessionKey!;
    let queue = this.queues.get(sessionKey);
    if (!queue) {
      queue = new FollowupQueue(settings);
      this.queues.set(sessionKey, queue);
    }
    queue.settings = settings;
    const done = this.deps.runs.records.get(pending.id)!.done;
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
    const { runs } = this.deps;
    const { input } = pending;
    const sessionKey = input.sessionKey!;
    pending.settle.resolve({ ...runs.emptyResult(pending.id, sessionKey, 'error'), error: reason });
    const finish = () => runs.journal(input)?.done([pending.id], 'dropped');
    if (!input.deliver) return finish();
    const snippet = input.message.replace(/\s+/g, ' ').trim().slice(0, 120);
    const notice = `⚠️ Too many messages were waiting, so this one was dropped without an answer: "${snippet}". Send it again if you still need an answer.`;
    // Finished once the notice went out: a crash before that leaves it open, and the restart answers it after all.
    void this.deps.delivery
      .deliver(input, pending.id, sessionKey, { text: notice, media: [], silent: false })
      .finally(finish);
  }

  /**
   * Steered messages the run ended without taking: it answered with text only (no tool
   * boundary came), or it stopped. Each gets a run of its own, ahead of what queued later.
   */
  requeueSteering(sessionKey: string, active: ActiveRun): void {
    const left = active.steering
      .splice(0)
      .filter((item) => !item.backlog)
      .map((item) => item.pending);
    if (left.length === 0) return;
    let queue = this.queues.get(sessionKey);
    if (!queue) {
      queue = new FollowupQueue(this.settings(left[0]!.input));
      this.queues.set(sessionKey, queue);
    }
    for (const item of left) delete this.deps.runs.records.get(item.id)?.steeredInto;
    queue.unshift(left);
    this.deps.events.emitAgent(left[0]!.input, active.runId, sessionKey, 'lifecycle', {
      phase: 'steer-followup',
      count: left.length,
    });
  }

  /** After the session goes quiet for debounceMs, run what was queued. */
  scheduleDrain(sessionKey: string): void {
    const queue = this.queues.get(sessionKey);
    if (!queue || queue.draining) return;
    clearTimeout(queue.timer);
    if (this.deps.runs.active.has(sessionKey) || this.deps.runs.closing) return; // The run's end schedules the drain again.
    queue.timer = setTimeout(() => void this.drain(sessionKey), queue.settings.debounceMs);
  }

  private async drain(sessionKey: string): Promise<void> {
    const { runs } = this.deps;
    const queue = this.queues.get(sessionKey);
    if (!queue || queue.draining || runs.active.has(sessionKey)) return;
    queue.draining = true;
    try {
      while (!runs.closing) {
        const mode = queue.settings.mode;
        const batch = queue.next(mode);
        if (!batch) break;
        const { members, summarized } = batch;
        const dropped = summarized.map((item) => item.input.message);
        const last = (members[members.length - 1] ?? summarized[summarized.length - 1])!;
        const first = members[0];
        let message: string;
        if (mode === 'collect' || !first)
          message = collectPrompt(
            members.map((item) => item.input.message),
            dropped,
          );
        else message = dropped.length ? `${collectPrompt([], dropped)}\n\n${first.input.message}` : first.input.message;
        // One message alone keeps its id as the run's; a batch runs under its newest message's.
        const runId = members.length > 0 ? last.id : randomUUID();
        const input: DispatchInput = {
          ...last.input,
          message,
          images: members.flatMap((item) => item.input.images ?? []),
          attachments: members.flatMap((item) => item.input.attachments ?? []),
        };
        await this.deps.start(input, runId, [...members, ...summarized]);
      }
    } finally {
      queue.draining = false;
      if (queue.size === 0 && queue.summarized.length === 0) this.queues.delete(sessionKey);
    }
  }

  /** Take one queued message out (aborted on its own). */
  remove(sessionKey: string, runId: string): Pending | undefined {
    return this.queues.get(sessionKey)?.remove(runId);
  }

  /** Drop everything queued for the session and return it, to be settled as aborted. */
  clear(sessionKey: string): Pending[] {
    const queue = this.queues.get(sessionKey);
    if (!queue) return [];
    clearTimeout(queue.timer);
    const items = queue.clear();
    if (!queue.draining) this.queues.delete(sessionKey);
    return items;
  }

  /** Shutting down: nothing queued starts now. */
  pause(): void {
    for (const queue of this.queues.values()) clearTimeout(queue.timer);
  }
}
