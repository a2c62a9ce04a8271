/**
 * After a restart: carry out the intake's plan (intake.ts) for what a previous process
 * accepted and did not finish — send a message through the queue again, continue an
 * interrupted turn, deliver an answer again, or answer a message out of budget with an
 * error naming it. Each step leaves a recovery note in the transcript.
 */
import type { KernelServices, Logger } from '../../sdk/index.js';
import type { DispatchInput, RunResult, SessionService, Transcript } from '../../sdk/agent/index.js';
import type { Delivery } from './delivery.js';
import { type AgentIntake, noteRecovery } from './intake.js';
import type { OpenMessage, TurnRecord } from './journal.js';
import type { OutboxEntry } from './outbox.js';
import type { Pending } from './queue.js';
import type { RunBook } from './runs.js';

export interface ResumeDeps {
  kernel: KernelServices;
  logger: Logger;
  now: () => number;
  sessions: SessionService;
  runs: RunBook;
  delivery: Delivery;
  /** Start a run or queue the message, as for a new one (`resumed`: no cap drops it). */
  submit(input: DispatchInput, id: string, acceptedAt: number, resumed: true): void;
  /** A resumed message's record and settle handle. */
  pending(id: string, input: DispatchInput, acceptedAt: number, resumed: true): Pending;
  /** Run a turn answering `members` (turn.ts). */
  start(input: DispatchInput, runId: string, members: Pending[]): Promise<RunResult>;
}

export type OpenIntake = Array<{ agentId: string; messages: OpenMessage[]; turns: Map<string, TurnRecord> }>;

/** What a previous process left open: see plugins/agent/intake.ts for what each message gets. */
export async function resumeOpen(intake: AgentIntake, open: OpenIntake, deps: ResumeDeps): Promise<void> {
  const { logger, runs, delivery } = deps;
  const transcriptAt = (file: string): Transcript => deps.sessions.transcript(file, { redact: deps.kernel.redact });
  for (const step of await intake.plan(open)) {
    if (step.kind === 'redispatch') {
      const { message } = step;
      logger.info(`resuming message ${message.id} in ${message.input.sessionKey} (not started)`);
      deps.submit({ ...message.input }, message.id, message.at, true);
      continue;
    }
    if (step.kind === 'continue') {
      const last = step.messages[step.messages.length - 1]!;
      const sessionKey = last.input.sessionKey;
      const handedBack = step.handedBack === true;
      // The plan has charged the attempt already (a handed-back message is not charged again).
      const attempt = Math.max(...step.messages.map((message) => message.attempts));
      logger.info(
        `resuming run ${step.turn} in ${sessionKey} (${handedBack ? 'handed back alone' : 'mid-turn'}, ${step.messages.length} message(s), attempt ${attempt})`,
      );
      noteRecovery(
        step.file,
        { runId: step.turn, action: handedBack ? 'handed-back' : 'continued', attempt },
        transcriptAt,
      );
      const members = step.messages.map((message) => deps.pending(message.id, message.input, message.at, true));
      void deps.start({ ...last.input, message: step.note, images: undefined }, step.turn, members);
      continue;
    }
    if (step.kind === 'deliver') {
      const last = step.messages[step.messages.length - 1]!;
      const ids = step.messages.map((message) => message.id);
      // The answer exists: whoever waits on these messages gets it now; only its delivery is left.
      for (const message of step.messages) {
        deps.pending(message.id, message.input, message.at, true).settle.resolve({
          ...runs.emptyResult(message.id, message.input.sessionKey, 'ok'),
          text: step.reply.reply.text,
        });
      }
      const entry: OutboxEntry = { agentId: step.agentId, turn: step.turn, ids, input: last.input, ...step.reply };
      if (!last.input.deliver) {
        intake.journal(step.agentId).done(ids, 'ok');
      } else if (step.reply.attempt > 0) {
        logger.info(
          `reply of run ${step.turn} to ${last.input.deliver.channel}:${last.input.deliver.to} waits for delivery round ${step.reply.attempt + 1}`,
        );
        delivery.schedule(entry);
      } else {
        logger.info(`resuming run ${step.turn} in ${last.input.sessionKey} (answered; delivering the reply again)`);
        const file = delivery.transcriptOf(step.agentId, last.input.sessionKey, last.input.threadId);
        noteRecovery(await file, { runId: step.turn, action: 'redelivered' }, transcriptAt);
        void delivery.deliverReply(entry);
      }
      continue;
    }
    // Out of budget on its own: answered with an error naming it, in its transcript and its chat.
    const { message, notice } = step;
    const sessionKey = message.input.sessionKey;
    if (step.file) {
      transcriptAt(step.file).appendMessage({
        role: 'assistant',
        content: [{ type: 'text', text: notice }],
        stopReason: 'error',
        errorMessage: notice,
        timestamp: deps.now(),
      });
      noteRecovery(step.file, { runId: message.id, action: 'abandoned', attempt: message.attempts }, transcriptAt);
    }
    deps
      .pending(message.id, message.input, message.at, true)
      .settle.resolve({ ...runs.emptyResult(message.id, sessionKey, 'error'), error: notice });
    const entry: OutboxEntry = {
      agentId: step.agentId,
      turn: message.id,
      ids: [message.id],
      input: message.input,
      reply: { text: notice, media: [] },
      attempt: 0,
      next: 0,
    };
    if (message.input.deliver) void delivery.deliverReply(entry, 'abandoned');
    else intake.journal(step.agentId).done([message.id], 'abandoned');
  }
}
