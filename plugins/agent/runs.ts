/**
 * What the dispatcher knows about runs, shared by its parts: the record of every recent
 * run (`agent.wait` and retries find a message by it), the one active run per session, and
 * the intake journal while it is open. Settling a turn's messages happens here: each sender
 * gets the result, and the journal finishes them.
 */
import type { DispatchInput, RunResult, RunStatus } from '../../sdk/agent/index.js';
import type { AgentIntake } from './intake.js';
import type { Pending } from './queue.js';

const MAX_RUN_RECORDS = 500;

export interface ActiveRun {
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

export interface RunRecord {
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

export class RunBook {
  readonly records = new Map<string, RunRecord>();
  /** The run of each busy session. */
  readonly active = new Map<string, ActiveRun>();
  /** The intake journal: open in the gateway (the agent service's start), absent in CLI runs. */
  intake?: AgentIntake;
  /** Shutting down: queued follow-ups wait for the next start instead of running now. */
  closing = false;

  constructor(
    private readonly now: () => number,
    private readonly defaultAgent: () => string,
  ) {}

  /**
   * The journal of the message's agent, while the intake is open. It keeps only what was
   * accepted into it, so records naming other ids (a caller's own journal: cron,
   * heartbeats, sub-agents) change nothing.
   */
  journal(input: Pick<DispatchInput, 'agentId'>) {
    return this.intake?.journal(input.agentId ?? this.defaultAgent());
  }

  record(runId: string, sessionKey: string, status: RunRecord['status'], done: Promise<RunResult>): void {
    this.records.set(runId, { runId, sessionKey, status, done });
    while (this.records.size > MAX_RUN_RECORDS) this.records.delete(this.records.keys().next().value as string);
    done.then(
      (result) =>
        Object.assign(this.records.get(runId) ?? {}, {
          status: result.status,
          endedAt: result.endedAt,
          startedAt: result.startedAt,
          error: result.error,
        }),
      (error: unknown) =>
        Object.assign(this.records.get(runId) ?? {}, { status: 'error', endedAt: this.now(), error: String(error) }),
    );
  }

  /**
   * The turn's messages are settled: each sender gets the result, and the journal finishes
   * them — unless the reply waits in the outbox, or the shutdown stopped the turn (then they
   * resume at the next start).
   */
  settle(runId: string, members: readonly Pending[], result: RunResult, undelivered = false): void {
    const first = members[0];
    if (first && !undelivered && !(this.closing && result.status === 'aborted')) {
      this.journal(first.input)?.done(
        members.map((member) => member.id),
        result.status,
      );
    }
    for (const member of members)
      member.settle.resolve(
        member.id === runId || this.isSteered(member, runId) ? result : { ...result, runId: member.id },
      );
  }

  /** Steered senders were given the turn's runId, so they get its result as it is. */
  private isSteered(member: Pending, runId: string): boolean {
    return this.records.get(member.id)?.steeredInto === runId;
  }

  emptyResult(runId: string, sessionKey: string, status: RunStatus): RunResult {
    const now = this.now();
    return {
      runId,
      sessionKey,
      sessionId: '',
      status,
      text: '',
      payloads: [],
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      startedAt: now,
      endedAt: now,
    };
  }
}
