/**
 * The wizard over the gateway: each session runs the flow with a Prompter whose `ask` waits
 * for `wizard.next`. A call returns once the flow has moved on to its next step (or ended),
 * so a client always gets the step to show. One session runs at a time; idle ones expire.
 */
import { randomUUID } from 'node:crypto';
import type { Prompter, WizardResponse, WizardStatus, WizardStep, WizardValue } from './wizard-types.js';
import { WizardCancelled } from './wizard-types.js';

export const WIZARD_IDLE_MS = 15 * 60_000;

export class WizardInputError extends Error {}

class WizardSession implements Prompter {
  readonly id = randomUUID();
  status: WizardStatus = 'running';
  error?: string;
  private current?: { step: WizardStep; answer: (value: WizardValue) => void; fail: (error: Error) => void };
  private readonly controller = new AbortController();
  /** Settled at the next change of state (a new step, or the end). */
  private changed!: Promise<void>;
  private announce!: () => void;

  constructor() {
    this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private arm(): void {
    this.changed = new Promise((resolve) => (this.announce = resolve));
  }

  private moved(): void {
    const announce = this.announce;
    this.arm();
    announce();
  }

  ask(step: WizardStep): Promise<WizardValue> {
    if (this.status !== 'running') return Promise.reject(new WizardCancelled());
    return new Promise((answer, fail) => {
      this.current = { step, answer, fail };
      this.moved();
    });
  }

  working<T>(_message: string, work: () => Promise<T>): Promise<T> {
    // The client is waiting on its wizard.next; the answer comes when the work is done.
    return work();
  }

  run(flow: (session: WizardSession) => Promise<unknown>): void {
    void flow(this).then(
      () => this.finish('done'),
      (error: Error) =>
        error instanceof WizardCancelled || this.status === 'cancelled'
          ? this.finish('cancelled')
          : this.finish('error', error.message),
    );
  }

  private finish(status: WizardStatus, error?: string): void {
    if (this.status !== 'running') return;
    this.status = status;
    if (error) this.error = error;
    this.current = undefined;
    this.moved();
  }

  cancel(reason = 'the wizard was cancelled'): void {
    if (this.status !== 'running') return;
    const pending = this.current;
    this.finish('cancelled');
    this.controller.abort(new WizardCancelled(reason));
    pending?.fail(new WizardCancelled(reason));
  }

  /** Resolves at the first step (or the end). */
  async first(): Promise<WizardResponse> {
    if (!this.current && this.status === 'running') await this.changed;
    return this.response();
  }

  async next(answer: { stepId?: string; value?: WizardValue } | undefined): Promise<WizardResponse> {
    const pending = this.current;
    if (this.status !== 'running' || !pending) return this.response();
    const { step } = pending;
    const acknowledges = step.type === 'note' || step.type === 'progress';
    if (!answer && !acknowledges) return this.response();
    if (answer?.stepId !== undefined && answer.stepId !== step.id)
      throw new WizardInputError(`the current step is "${step.id}", not "${answer.stepId}"`);
    const value = checkValue(step, answer?.value);
    const moved = this.changed;
    this.current = undefined;
    pending.answer(value);
    await moved;
    return this.response();
  }

  response(): WizardResponse {
    return {
      sessionId: this.id,
      done: this.status !== 'running',
      status: this.status,
      ...(this.current && this.status === 'running' ? { step: this.current.step } : {}),
      ...(this.error ? { error: this.error } : {}),
    };
  }
}

/** The answer's value, as the step's type wants it; a WizardInputError naming what is wrong otherwise. */
function checkValue(step: WizardStep, value: unknown): WizardValue {
  const allowed = new Set((step.options ?? []).map((option) => option.value));
  switch (step.type) {
    case 'note':
      return undefined;
    case 'progress':
      if (value === undefined || typeof value === 'boolean') return value;
      throw new WizardInputError(`step "${step.id}" is acknowledged with no value (or false to skip)`);
    case 'confirm':
      if (typeof value === 'boolean') return value;
      throw new WizardInputError(`step "${step.id}" wants true or false`);
    case 'text':
      if (typeof value === 'string') return value;
      throw new WizardInputError(`step "${step.id}" wants a string`);
    case 'select':
      if (typeof value === 'string' && allowed.has(value)) return value;
      throw new WizardInputError(`step "${step.id}" wants one of: ${[...allowed].join(', ')}`);
    case 'multiselect':
      if (Array.isArray(value) && value.every((item) => typeof item === 'string' && allowed.has(item))) return value;
      throw new WizardInputError(`step "${step.id}" wants a list drawn from: ${[...allowed].join(', ')}`);
  }
}

export class WizardSessions {
  private readonly sessions = new Map<string, { session: WizardSession; timer: NodeJS.Timeout }>();

  constructor(private readonly idleMs = WIZARD_IDLE_MS) {}

  /** Start a session running `flow`; refused while another one runs. */
  start(flow: (prompter: Prompter, signal: AbortSignal) => Promise<unknown>): Promise<WizardResponse> {
    const running = [...this.sessions.values()].find(({ session }) => session.status === 'running');
    if (running)
      throw new WizardInputError(
        `a setup wizard is already running (session ${running.session.id}); finish it or end it with wizard.cancel`,
      );
    const session = new WizardSession();
    this.sessions.set(session.id, { session, timer: this.expiry(session) });
    session.run((prompter) => flow(prompter, prompter.signal));
    return session.first();
  }

  async next(sessionId: string, answer?: { stepId?: string; value?: WizardValue }): Promise<WizardResponse> {
    const session = this.touch(sessionId);
    return session.next(answer);
  }

  cancel(sessionId: string): { status: 'cancelled' } {
    this.touch(sessionId).cancel();
    return { status: 'cancelled' };
  }

  status(sessionId: string): { status: WizardStatus; error?: string } {
    const session = this.touch(sessionId);
    return { status: session.status, ...(session.error ? { error: session.error } : {}) };
  }

  /** The gateway is stopping: every running wizard ends. */
  close(): void {
    for (const { session, timer } of this.sessions.values()) {
      clearTimeout(timer);
      session.cancel('the gateway stopped');
    }
    this.sessions.clear();
  }

  private touch(sessionId: string): WizardSession {
    const entry = this.sessions.get(sessionId);
    if (!entry) throw new WizardInputError(`no wizard session "${sessionId}" (it ended or expired; start a new one)`);
    clearTimeout(entry.timer);
    entry.timer = this.expiry(entry.session);
    return entry.session;
  }

  private expiry(session: WizardSession): NodeJS.Timeout {
    const timer = setTimeout(() => {
      session.cancel('the wizard expired after 15 minutes without an answer');
      this.sessions.delete(session.id);
    }, this.idleMs);
    timer.unref();
    return timer;
  }
}
