/**
 * Durable intake for the dispatcher: one IntakeJournal per agent (sdk/agent/intake.ts),
 * opened when the gateway starts the agent service, and what a restart makes of the runs
 * a previous process left open (OpenClaw's restart recovery):
 *
 *   - never started (queued, or killed before its turn wrote anything): run it as sent;
 *   - answered but not finished (killed while the reply went out): deliver the answer
 *     from the transcript, no new model call;
 *   - interrupted mid-turn: note it in the transcript and continue with a message telling
 *     the agent its turn was cut off, so it picks up from what the transcript holds.
 *
 * Every resume of a run whose turn had begun is charged (fsync'd) before it is dispatched;
 * after MAX_RESUME_ATTEMPTS such a run is abandoned with a note instead of crash-looping.
 */
import { readFileSync } from 'node:fs';
import type { ChatMessage, Logger } from '../../sdk/index.js';
import {
  type DispatchInput,
  IntakeClosedError,
  type IntakeInput,
  IntakeJournal,
  intakeFile,
  journaledAgents,
  type OpenRun,
  type RunResult,
  Transcript,
} from '../../sdk/agent/index.js';

/** OpenClaw's budget: three charged automatic dispatch attempts per interrupted run. */
export const MAX_RESUME_ATTEMPTS = 3;

/** Starts the synthetic message a run interrupted mid-turn continues with. */
export const RESTART_NOTE_PREFIX = '[System] The gateway restarted';

/**
 * The synthetic message a run interrupted mid-turn continues with. It quotes the message,
 * since other turns may have been written to the session since.
 */
export function restartNote(message: string): string {
  return `${RESTART_NOTE_PREFIX} while you were working on a message, so your turn was interrupted. Continue from the transcript as it stands: finish the task and answer the message. Do not repeat tool calls whose results are already there; check the state of anything whose outcome is unknown.\n\nThe message:\n${message}`;
}

export type Interrupted = { kind: 'not-started' } | { kind: 'answered'; text: string } | { kind: 'mid-turn' };

/** What a journaled run had done when the process went away, read from its transcript. */
export function interruptedState(run: OpenRun): Interrupted {
  const start = run.starts[0];
  if (!start) return { kind: 'not-started' };
  let data: Buffer;
  try {
    data = readFileSync(start.file);
  } catch {
    return { kind: 'not-started' };
  }
  // Shorter than when the turn began: rewritten since, so nothing can be told apart safely.
  if (data.length < start.offset) return { kind: 'mid-turn' };
  const messages: ChatMessage[] = [];
  for (const line of data.subarray(start.offset).toString('utf8').split('\n')) {
    try {
      const entry = JSON.parse(line) as { type?: string; message?: ChatMessage };
      if (entry?.type === 'message' && entry.message) messages.push(entry.message);
    } catch {
      // A torn line.
    }
  }
  if (!messages.some((message) => message.role === 'user')) return { kind: 'not-started' };
  const last = messages[messages.length - 1]!;
  if (last.role === 'assistant' && last.stopReason !== 'error' && last.stopReason !== 'aborted' && !last.content.some((part) => part.type === 'toolCall')) {
    const text = last.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
    if (text.trim()) return { kind: 'answered', text };
  }
  return { kind: 'mid-turn' };
}

/** What the journal keeps of an input: no callbacks, no custom transport. */
export function intakeInput(input: DispatchInput): IntakeInput {
  const { onEvent: _onEvent, deliver, ...rest } = input;
  const kept = { ...rest } as IntakeInput;
  if (deliver) {
    const { send: _send, ...target } = deliver;
    kept.deliver = target;
  }
  return kept;
}

export class AgentIntake {
  private readonly journals = new Map<string, IntakeJournal>();
  /** Shutting down: nothing new is accepted, and runs stopped now stay open for the next start. */
  closing = false;

  constructor(
    private readonly stateDir: string,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** Open every agent's journal; returns the runs a previous process left open, oldest first. */
  load(): { open: Array<{ agentId: string; run: OpenRun }>; seen: Map<string, number> } {
    const open: Array<{ agentId: string; run: OpenRun }> = [];
    const seen = new Map<string, number>();
    for (const agentId of journaledAgents(this.stateDir)) {
      const journal = new IntakeJournal(intakeFile(this.stateDir, agentId), this.now);
      const read = journal.load();
      this.journals.set(agentId, journal);
      if (read.skippedLines > 0) this.logger.warn(`intake journal of agent "${agentId}": skipped ${read.skippedLines} damaged line(s) (a torn write from a crash)`);
      for (const run of read.open) open.push({ agentId, run });
      for (const [key, at] of read.seen) seen.set(key, at);
    }
    open.sort((a, b) => a.run.at - b.run.at);
    return { open, seen };
  }

  journal(agentId: string): IntakeJournal {
    let journal = this.journals.get(agentId);
    if (!journal) {
      journal = new IntakeJournal(intakeFile(this.stateDir, agentId), this.now);
      journal.load();
      this.journals.set(agentId, journal);
    }
    return journal;
  }

  /**
   * What to do with each run a previous process left open, in the order to do it: runs
   * whose turn had begun first (their transcript lines come first), then the rest as they
   * were accepted. Resumes of begun turns are charged (fsync'd) here; runs over the
   * budget are abandoned with a note in their transcript.
   */
  async plan(open: Array<{ agentId: string; run: OpenRun }>, redact: ConstructorParameters<typeof Transcript>[1]): Promise<Array<{ agentId: string; run: OpenRun; state: Interrupted }>> {
    const plan: Array<{ agentId: string; run: OpenRun; state: Interrupted }> = [];
    for (const { agentId, run } of open) {
      if (run.attempts >= MAX_RESUME_ATTEMPTS) {
        this.logger.error(`run ${run.id} in ${run.input.sessionKey} was interrupted ${run.attempts} times; giving up on it (send the message again, or /new)`);
        noteInterruption(run, 'abandoned', redact);
        this.journal(agentId).done(run.id, 'abandoned');
        continue;
      }
      plan.push({ agentId, run, state: interruptedState(run) });
    }
    // Only runs whose turn had begun are charged: a queued message that never ran cannot be what crashed the gateway.
    const byAgent = new Map<string, string[]>();
    for (const { agentId, run, state } of plan) if (state.kind !== 'not-started') byAgent.set(agentId, [...(byAgent.get(agentId) ?? []), run.id]);
    await Promise.all([...byAgent].map(([agentId, ids]) => this.journal(agentId).resuming(ids)));
    return plan.sort((a, b) => Number(a.state.kind === 'not-started') - Number(b.state.kind === 'not-started') || a.run.at - b.run.at);
  }

  /** Written when this returns, fsync'd when the promise resolves; throws while shutting down. */
  accept(input: DispatchInput, id: string, at: number, key?: string): Promise<void> {
    if (this.closing) throw new IntakeClosedError();
    return this.journal(input.agentId!).accept(id, intakeInput(input), at, key);
  }

  /** Queued messages run as one turn (`input`, under `id`); the `merged` ones finish with it. */
  merge(input: DispatchInput, id: string, merged: string[]): void {
    this.journal(input.agentId!).merge(id, intakeInput(input), merged);
  }

  /** The run's handle settled: finished, unless the shutdown stopped it (then it resumes at the next start). */
  track(agentId: string, id: string, done: Promise<RunResult>): void {
    const journal = this.journal(agentId);
    done.then(
      (result) => {
        if (this.closing && result.status === 'aborted') return;
        journal.done(id, result.status);
      },
      () => journal.done(id, 'error'),
    );
  }

  async close(): Promise<void> {
    for (const [agentId, journal] of this.journals) {
      if (journal.openCount > 0) this.logger.info(`agent "${agentId}": ${journal.openCount} accepted message(s) left for the next start`);
      await journal.close();
    }
    this.journals.clear();
  }
}

/** Note an interruption in the run's transcript (a non-message entry: UIs and audits see it, the model does not). */
export function noteInterruption(run: OpenRun, action: 'continued' | 'redelivered' | 'abandoned', redact?: ConstructorParameters<typeof Transcript>[1]): void {
  const file = run.starts[0]?.file;
  if (!file) return;
  new Transcript(file, redact).append({ type: 'recovery', runId: run.id, reason: 'gateway-restart', action, attempt: run.attempts });
}
