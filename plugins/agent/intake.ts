/**
 * Durable intake for the dispatcher: one IntakeJournal per agent (journal.ts), opened when
 * the gateway starts the agent service, and what a restart makes of the messages a
 * previous process left open (OpenClaw's restart recovery). Each message is judged by the
 * last turn it belonged to:
 *
 *   - never in a turn, or its turn wrote nothing yet: sent through the queue again, as sent;
 *   - its turn answered (killed while the reply went out), or the reply failed to send: the
 *     answer is delivered again, from the transcript or the journal, no new model call;
 *   - its turn was cut off mid-way: the turn continues, with a note telling the agent it
 *     was interrupted and quoting every message it answers.
 *
 * The resume budget counts per message: every continuation charges each message of the
 * turn (fsync'd before it runs). A turn whose messages are out of budget is given up
 * without losing any of them: a batch hands each message back to be answered alone, and a
 * message alone is answered with an error naming it.
 */
import { readFileSync } from 'node:fs';
import type { ChatMessage, Logger } from '../../sdk/index.js';
import { type DispatchInput, IntakeClosedError, type Transcript } from '../../sdk/agent/index.js';
import {
  intakeFile,
  type IntakeInput,
  IntakeJournal,
  journaledAgents,
  type OpenMessage,
  type TurnRecord,
  type UndeliveredReply,
} from './journal.js';

/** OpenClaw's budget: three charged automatic dispatch attempts per interrupted message. */
export const MAX_RESUME_ATTEMPTS = 3;

/** Starts every synthetic message a continued turn runs with. */
export const RESTART_NOTE_PREFIX = '[System] The gateway restarted';

function quoted(messages: readonly string[]): string {
  return messages.length === 1
    ? `The message:\n${messages[0]}`
    : `The messages, oldest first:\n${messages.map((text) => `---\n${text}`).join('\n')}`;
}

/** The synthetic message a turn interrupted mid-way continues with; it quotes its messages, since other turns may have been written since. */
export function restartNote(messages: readonly string[]): string {
  return `${RESTART_NOTE_PREFIX} while you were working on ${messages.length === 1 ? 'a message' : `${messages.length} messages`}, so your turn was interrupted. Continue from the transcript as it stands: finish the task and answer ${messages.length === 1 ? 'the message' : 'every one of them'}. Do not repeat tool calls whose results are already there; check the state of anything whose outcome is unknown.\n\n${quoted(messages)}`;
}

/** A message handed back from a batch that kept being interrupted: answered on its own now. */
export function handBackNote(message: string, attempts: number): string {
  return `${RESTART_NOTE_PREFIX} ${attempts} times while you were answering several messages together, so they are now answered one at a time. Continue from the transcript as it stands and answer this one.\n\n${quoted([message])}`;
}

/** What the sender reads when their message is given up on. */
export function abandonNotice(message: string, attempts: number): string {
  const snippet = message.replace(/\s+/g, ' ').trim();
  return `⚠️ I could not finish your message "${snippet.length > 120 ? `${snippet.slice(0, 117)}…` : snippet}": the gateway restarted ${attempts} times while I was working on it, so I stopped. Send it again if you still need an answer.`;
}

export type TurnState = { kind: 'not-started' } | { kind: 'answered'; text: string } | { kind: 'mid-turn' };

/** What a turn had done when the process went away, read from its transcript. */
export function turnState(turn: TurnRecord | undefined): TurnState {
  if (!turn) return { kind: 'not-started' };
  let data: Buffer;
  try {
    data = readFileSync(turn.file);
  } catch {
    return { kind: 'not-started' };
  }
  // Shorter than when the turn began: rewritten since, so nothing can be told apart safely.
  if (data.length < turn.offset) return { kind: 'mid-turn' };
  const messages: ChatMessage[] = [];
  for (const line of data.subarray(turn.offset).toString('utf8').split('\n')) {
    try {
      const entry = JSON.parse(line) as { type?: string; message?: ChatMessage; runId?: string };
      // Only this turn's lines: later turns of the session (other messages) may follow them.
      if (
        entry?.type === 'message' &&
        entry.message &&
        (entry.runId === turn.id || (turn.legacy && entry.runId === undefined))
      )
        messages.push(entry.message);
    } catch {
      // A torn line.
    }
  }
  if (!messages.some((message) => message.role === 'user')) return { kind: 'not-started' };
  const last = messages[messages.length - 1]!;
  if (
    last.role === 'assistant' &&
    last.stopReason !== 'error' &&
    last.stopReason !== 'aborted' &&
    !last.content.some((part) => part.type === 'toolCall')
  ) {
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

/** One step of a restart's recovery. */
export type Recovery =
  /** The reply is written: deliver it (`reply`), then the messages are done. */
  | { kind: 'deliver'; agentId: string; turn: string; messages: OpenMessage[]; reply: Omit<UndeliveredReply, 'turn'> }
  /** Continue the turn with `note` as its message (mid-turn, or one message handed back from a batch). */
  | {
      kind: 'continue';
      agentId: string;
      turn: string;
      messages: OpenMessage[];
      note: string;
      file?: string;
      handedBack?: boolean;
    }
  /** Never started: through the queue again, as it was sent. */
  | { kind: 'redispatch'; agentId: string; message: OpenMessage }
  /** Out of budget on its own: answered with `notice`. */
  | { kind: 'abandon'; agentId: string; message: OpenMessage; notice: string; file?: string };

export class AgentIntake {
  private readonly journals = new Map<string, IntakeJournal>();
  /** Shutting down: nothing new is accepted, and turns stopped now stay open for the next start. */
  closing = false;

  constructor(
    private readonly stateDir: string,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** Open every agent's journal; returns what previous processes left open, and the recent dedupe keys. */
  load(): {
    open: Array<{ agentId: string; messages: OpenMessage[]; turns: Map<string, TurnRecord> }>;
    seen: Map<string, number>;
  } {
    const open: Array<{ agentId: string; messages: OpenMessage[]; turns: Map<string, TurnRecord> }> = [];
    const seen = new Map<string, number>();
    for (const agentId of journaledAgents(this.stateDir)) {
      const journal = new IntakeJournal(intakeFile(this.stateDir, agentId), this.now);
      const read = journal.load();
      this.journals.set(agentId, journal);
      if (read.skippedLines > 0)
        this.logger.warn(
          `intake journal of agent "${agentId}": skipped ${read.skippedLines} damaged line(s) (a torn write from a crash)`,
        );
      if (read.open.length > 0) open.push({ agentId, messages: read.open, turns: read.turns });
      for (const [key, at] of read.seen) seen.set(key, at);
    }
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
   * What to do with the messages a previous process left open, in the order to do it:
   * continued turns first (their transcript lines come first), then replies to deliver,
   * then everything else as it was accepted. Continuations are charged (fsync'd) here.
   */
  async plan(
    open: Array<{ agentId: string; messages: OpenMessage[]; turns: Map<string, TurnRecord> }>,
  ): Promise<Recovery[]> {
    const continued: Recovery[] = [];
    const delivered: Recovery[] = [];
    const rest: Array<Extract<Recovery, { kind: 'redispatch' | 'abandon' }>> = [];
    for (const { agentId, messages, turns } of open) {
      const charge: string[] = [];
      const byTurn = new Map<string, OpenMessage[]>();
      for (const message of messages) {
        if (message.undelivered) {
          const { turn, ...reply } = message.undelivered;
          const existing = delivered.find(
            (step) => step.kind === 'deliver' && step.agentId === agentId && step.turn === turn,
          );
          if (existing && existing.kind === 'deliver') existing.messages.push(message);
          else delivered.push({ kind: 'deliver', agentId, turn, messages: [message], reply });
          continue;
        }
        const turn = message.turn ? turns.get(message.turn) : undefined;
        if (!turn) {
          rest.push({ kind: 'redispatch', agentId, message });
          continue;
        }
        byTurn.set(turn.id, [...(byTurn.get(turn.id) ?? []), message]);
      }
      for (const [turnId, members] of byTurn) {
        const turn = turns.get(turnId)!;
        let state = turnState(turn);
        // A message charged a resume before was already in a turn's transcript lines: it is never sent again as new,
        // even when the turn that was to continue it was cut off before it wrote anything.
        if (state.kind === 'not-started' && members.some((message) => message.attempts > 0))
          state = { kind: 'mid-turn' };
        if (state.kind === 'not-started') {
          for (const message of members) rest.push({ kind: 'redispatch', agentId, message });
        } else if (state.kind === 'answered') {
          delivered.push({
            kind: 'deliver',
            agentId,
            turn: turnId,
            messages: members,
            reply: { reply: { text: state.text, media: [] }, attempt: 0, next: 0 },
          });
        } else if (members.some((message) => message.attempts >= MAX_RESUME_ATTEMPTS)) {
          const attempts = Math.max(...members.map((message) => message.attempts));
          if (members.length === 1) {
            const message = members[0]!;
            this.logger.error(
              `message ${message.id} in ${message.input.sessionKey} was interrupted ${attempts} times; giving up on it and telling the sender`,
            );
            rest.push({
              kind: 'abandon',
              agentId,
              message,
              notice: abandonNotice(message.input.message, attempts),
              file: turn.file,
            });
          } else {
            this.logger.warn(
              `a turn of ${members.length} messages in ${members[0]!.input.sessionKey} was interrupted ${attempts} times; answering each message on its own`,
            );
            for (const message of members)
              continued.push({
                kind: 'continue',
                agentId,
                turn: message.id,
                messages: [message],
                note: handBackNote(message.input.message, attempts),
                file: turn.file,
                handedBack: true,
              });
          }
        } else {
          charge.push(...members.map((message) => message.id));
          continued.push({
            kind: 'continue',
            agentId,
            turn: turnId,
            messages: members,
            note: restartNote(members.map((message) => message.input.message)),
            file: turn.file,
          });
        }
      }
      await this.journal(agentId).resuming(charge);
    }
    rest.sort((a, b) => a.message.at - b.message.at);
    return [...continued, ...delivered, ...rest];
  }

  /** Written when this returns, fsync'd when the promise resolves; throws while shutting down. */
  accept(input: DispatchInput, id: string, at: number, key?: string): Promise<void> {
    if (this.closing) throw new IntakeClosedError();
    return this.journal(input.agentId!).accept(id, intakeInput(input), at, key, input.requestKey);
  }

  /** The message a gateway request brought (any agent): open, recently finished, or unknown to every journal. */
  request(requestKey: string): ReturnType<IntakeJournal['request']> {
    for (const journal of this.journals.values()) {
      const found = journal.request(requestKey);
      if (found) return found;
    }
    return undefined;
  }

  async close(): Promise<void> {
    for (const [agentId, journal] of this.journals) {
      if (journal.openCount > 0)
        this.logger.info(`agent "${agentId}": ${journal.openCount} accepted message(s) left for the next start`);
      await journal.close();
    }
    this.journals.clear();
  }
}

/**
 * Note a recovery step in a transcript (a non-message entry: UIs and audits see it, the model does not).
 * `open` is the sessions service's transcript for a file, so the note is masked like every other line.
 */
export function noteRecovery(
  file: string | undefined,
  entry: {
    runId: string;
    action: 'continued' | 'redelivered' | 'abandoned' | 'handed-back' | 'undelivered';
    attempt?: number;
    error?: string;
  },
  open: (file: string) => Transcript,
): void {
  if (!file) return;
  open(file).append({ type: 'recovery', reason: 'gateway-restart', ...entry });
}
