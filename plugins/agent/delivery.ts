/**
 * Replies out: every reply of the agent leaves through the kernel's one outbound path
 * (`channels.send`: message_sending → before_message_write → send → message_sent, with
 * chunking and retries). Before that, a text the `message` tool already sent is not sent
 * again, and the session's send policy may keep a reply in.
 *
 * A turn's answer is finished in the journal the moment the platform took it (onDelivered),
 * so a kill after that never sends it twice; when it fails it waits in the outbox (outbox.ts),
 * its messages open, for another delivery round.
 */
import { join } from 'node:path';
import type { KernelServices, Logger } from '../../sdk/index.js';
import {
  parseReply,
  withToolMedia,
  parseSessionKey,
  type DispatchInput,
  type ReasoningLevel,
  type ReplyPayload,
  type RunStatus,
  type SessionEntry,
  type SessionService,
  type TurnResult,
} from '../../sdk/agent/index.js';
import { type AgentIntake, intakeInput } from './intake.js';
import { Outbox, type DeliveryOutcome, type OutboxEntry } from './outbox.js';
import type { Pending } from './queue.js';
import type { RunBook } from './runs.js';
import type { BlockDelivery, RunEvents } from './streaming.js';
import { effectiveMode, usageFooter } from './usage-footer.js';

export interface DeliveryDeps {
  kernel: KernelServices;
  logger: Logger;
  now: () => number;
  sessions: SessionService;
  defaultAgent: () => string;
  runs: RunBook;
  events: RunEvents;
}

export class Delivery {
  /** Texts the `message` tool already sent during a run, so the final reply does not repeat them. */
  private readonly toolSends = new Map<string, Set<string>>();
  /** Replies that failed to send, waiting for another round (only while the intake is open). */
  private outbox?: Outbox;

  constructor(private readonly deps: DeliveryDeps) {}

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
  async deliver(
    input: DispatchInput,
    runId: string,
    sessionKey: string,
    reply: ReplyPayload,
    onDelivered?: () => void,
  ): Promise<(DeliveryOutcome & { status: 'skipped' | 'failed' }) | { status: 'delivered'; payload: ReplyPayload }> {
    const { kernel, events } = this.deps;
    const target = input.deliver;
    if (target && this.toolSends.get(runId)?.has(`${target.channel}\u0000${target.to}\u0000${reply.text.trim()}`)) {
      // The agent already said exactly this with the message tool.
      events.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'delivery-deduplicated' });
      return { status: 'skipped', reason: 'already sent with the message tool' };
    }
    if (
      target &&
      this.deps.sessions.sendPolicy({
        sessionKey,
        entry: await this.deps.sessions.store(input.agentId ?? this.deps.defaultAgent()).get(sessionKey),
        channel: target.channel,
      }) === 'deny'
    ) {
      // session.sendPolicy (or the session's own override) keeps replies to this chat in.
      events.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'delivery-blocked', reason: 'sendPolicy' });
      return { status: 'skipped', reason: 'session.sendPolicy' };
    }
    const channel = target?.channel ?? input.channel ?? 'gateway';
    const send = target?.send?.bind(target);
    const active = this.deps.runs.active;
    const result = await kernel.channels.send({
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
      context: {
        agentId: input.agentId,
        sessionKey,
        runId,
        channel,
        signal: active.get(sessionKey)?.runId === runId ? active.get(sessionKey)!.controller.signal : undefined,
      },
      ...(send
        ? {
            transport: (message) =>
              send({
                text: message.text ?? '',
                media: (message.media ?? []).map((item) => item.url),
                ...(message.replyTo ? { replyTo: message.replyTo } : {}),
                silent: false,
              }),
          }
        : {}),
    });
    if (result.cancelled) {
      events.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'delivery-cancelled' });
      return { status: 'skipped', reason: 'cancelled by a message_sending hook' };
    }
    if (!result.delivered) {
      this.deps.logger.error(`delivery to ${channel}:${target?.to ?? sessionKey} failed: ${result.error}`);
      return {
        status: 'failed',
        error: result.error ?? 'not delivered',
        ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}),
      };
    }
    return { status: 'delivered', payload: { ...reply, text: result.text } };
  }

  /**
   * Deliver a turn's answer (or the notice of its failure). When delivery fails and the
   * intake is open, the reply waits in the outbox and its messages stay open (`waiting`).
   */
  async answer(
    input: DispatchInput,
    runId: string,
    members: readonly Pending[],
    answer: ReplyPayload,
    status: RunStatus = 'ok',
  ): Promise<{ payload?: ReplyPayload; waiting: boolean }> {
    const journal = this.deps.runs.journal(input);
    const ids = members.filter((member) => journal?.isOpen(member.id)).map((member) => member.id);
    // Finished the moment the platform took the reply: a kill after that must not send it again.
    const outcome = await this.deliver(input, runId, input.sessionKey!, answer, () => journal?.done(ids, status));
    if (outcome.status === 'delivered') return { payload: outcome.payload, waiting: false };
    if (outcome.status !== 'failed' || !this.outbox || !input.deliver || ids.length === 0) return { waiting: false };
    const reply = { text: answer.text, media: answer.media, ...(answer.replyTo ? { replyTo: answer.replyTo } : {}) };
    await this.outbox.failed(
      { agentId: input.agentId!, turn: runId, ids, input: intakeInput(input), reply, attempt: 0, next: 0 },
      outcome.error,
      outcome.retryAfterMs,
    );
    return { waiting: true };
  }

  /**
   * The turn's reply out: its reasoning when asked for, then its answer — already sent in
   * blocks, or sent now — or, for a chat, the notice that it failed. `undelivered`: the
   * reply waits in the outbox, so its messages stay open.
   */
  async turnReply(
    input: DispatchInput,
    runId: string,
    members: readonly Pending[],
    session: SessionEntry,
    turnResult: TurnResult,
    status: RunStatus,
    blocks: BlockDelivery | undefined,
    timeoutMs: number,
  ): Promise<{ payloads: ReplyPayload[]; undelivered: boolean }> {
    const sessionKey = input.sessionKey!;
    const payloads: ReplyPayload[] = [];
    let undelivered = false;
    const reasoning = input.reasoning ?? (session.reasoningLevel as ReasoningLevel | undefined) ?? 'off';
    if (status === 'ok' && reasoning !== 'off' && input.deliver) {
      // Reasoning on: the model's thinking goes out as its own message, before the answer.
      const thought = turnResult.messages
        .flatMap((message) => (message.role === 'assistant' && Array.isArray(message.content) ? message.content : []))
        .flatMap((part) => (part.type === 'thinking' && part.thinking.trim() ? [part.thinking.trim()] : []))
        .join('\n\n');
      if (thought)
        await this.deliver(input, runId, sessionKey, { text: `Reasoning:\n${thought}`, media: [], silent: false });
    }
    const mediaDir = join(this.deps.kernel.paths.stateDir, 'media');
    if (blocks) {
      // Block streaming delivered the answer as it was written; files its tools made follow.
      await blocks.finish();
      payloads.push(...blocks.sent);
      const sentMedia = new Set(blocks.sent.flatMap((payload) => payload.media));
      const extra = withToolMedia({ text: '', media: [], silent: true }, turnResult.messages, mediaDir);
      extra.media = extra.media.filter((path) => !sentMedia.has(path));
      if (status === 'ok' && extra.media.length) {
        const sent = await this.answer(input, runId, members, { ...extra, silent: false });
        if (sent.payload) payloads.push(sent.payload);
      }
    } else if (status === 'ok') {
      const reply = withToolMedia(parseReply(turnResult.text), turnResult.messages, mediaDir);
      if (reply.silent && !reply.text) {
        this.deps.events.emitAgent(input, runId, sessionKey, 'lifecycle', { phase: 'silent' });
      } else {
        // Nothing to say but a tool failed: tell the user rather than going quiet.
        const footer = usageFooter(effectiveMode(this.deps.kernel, session, input.channel), turnResult);
        const answer =
          reply.text || reply.media.length
            ? footer
              ? { ...reply, text: reply.text ? `${reply.text}\n\n${footer}` : footer }
              : reply
            : turnResult.toolError && input.deliver
              ? { text: `⚠️ ${turnResult.toolError.slice(0, 500)}`, media: [], silent: false }
              : undefined;
        const sent = answer ? await this.answer(input, runId, members, answer) : undefined;
        if (sent?.payload) payloads.push(sent.payload);
        undelivered = sent?.waiting ?? false;
      }
    } else if ((status === 'error' || status === 'timeout') && input.deliver) {
      // A chat is told its message failed, rather than waiting for an answer that never comes.
      const error = turnResult.error ?? `the run timed out after ${Math.round(timeoutMs / 1000)} s`;
      const notice = {
        text: `⚠️ I couldn't answer that: ${this.deps.kernel.redact.text(error).slice(0, 400)}`,
        media: [],
        silent: false,
      };
      undelivered = (await this.answer(input, runId, members, notice, status)).waiting;
    }
    return { payloads, undelivered };
  }

  // ── The outbox: replies waiting for another delivery round ───────────────────

  /** The intake opened: failed replies wait in its journal for another round. */
  openOutbox(intake: AgentIntake): void {
    this.outbox = new Outbox({
      logger: this.deps.logger,
      now: this.deps.now,
      send: (entry) => this.deliverEntry(entry),
      persist: (entry) =>
        intake.journal(entry.agentId).undelivered(entry.turn, entry.ids, {
          reply: entry.reply,
          attempt: entry.attempt,
          next: entry.next,
          ...(entry.error ? { error: entry.error } : {}),
        }),
      delivered: (entry) => intake.journal(entry.agentId).done(entry.ids, 'ok'),
      givenUp: (entry) => void this.deliveryGivenUp(entry),
    });
  }

  closeOutbox(): void {
    this.outbox?.close();
    this.outbox = undefined;
  }

  /** Replies waiting for another delivery round, and given up, per channel account. */
  status() {
    return this.outbox?.status() ?? [];
  }

  /** A reply that failed before a restart: it waits for its next round. */
  schedule(entry: OutboxEntry): void {
    this.outbox!.schedule(entry);
  }

  /** Deliver a written reply; when it fails it waits in the outbox, its messages open, for another round. */
  async deliverReply(entry: OutboxEntry, status: 'ok' | 'abandoned' = 'ok'): Promise<void> {
    const outcome = await this.deliverEntry(entry, status);
    if (outcome.status === 'failed') return this.outbox!.failed(entry, outcome.error, outcome.retryAfterMs);
    this.deps.runs.intake?.journal(entry.agentId).done(entry.ids, status);
  }

  private deliverEntry(entry: OutboxEntry, status: 'ok' | 'abandoned' = 'ok'): Promise<DeliveryOutcome> {
    // Finished the moment the platform took it (see answer).
    return this.deliver(entry.input, entry.turn, entry.input.sessionKey, { ...entry.reply, silent: false }, () =>
      this.deps.runs.intake?.journal(entry.agentId).done(entry.ids, status),
    );
  }

  /** A reply given up after its last delivery round: the transcript says so, and the messages are finished. */
  private async deliveryGivenUp(entry: OutboxEntry): Promise<void> {
    this.deps.runs.intake?.journal(entry.agentId).done(entry.ids, 'undelivered');
    const file = await this.transcriptOf(entry.agentId, entry.input.sessionKey, entry.input.threadId);
    if (!file) return;
    this.deps.sessions.transcript(file, { redact: this.deps.kernel.redact }).append({
      type: 'delivery',
      status: 'failed',
      runId: entry.turn,
      to: entry.input.deliver ? `${entry.input.deliver.channel}:${entry.input.deliver.to}` : entry.input.sessionKey,
      attempts: entry.attempt,
      error: entry.error ?? 'unknown error',
    });
  }

  /** The transcript file of the session's current entry, if it has one. */
  async transcriptOf(agentId: string, sessionKey: string, threadId?: string | number): Promise<string | undefined> {
    const store = this.deps.sessions.store(agentId);
    const entry = await store.get(sessionKey).catch(() => undefined);
    return entry ? store.transcriptPath(entry.sessionId, threadId ?? parseSessionKey(sessionKey).threadId) : undefined;
  }
}
