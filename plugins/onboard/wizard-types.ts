/**
 * The wizard contract: one onboarding flow, asked step by step, whoever asks. `claw onboard`
 * answers in the terminal; the gateway's `wizard.*` methods let the Control UI answer (its
 * Setup view is built against exactly these shapes). Modelled on OpenClaw's `wizard.*`.
 *
 *   wizard.start  {flow?: "quickstart" | "manual", section?: WizardSection}       → WizardResponse
 *       scope operator.admin. `section` runs only that part ("Set up a model", "Add a
 *       channel", "daemon": install the gateway as an OS service — a `confirm`
 *       `daemon.install`, then a `note` `daemon.result`; offered only where the gateway
 *       plugin's `gateway-daemon` service is); without either, the first step asks
 *       quickstart or manual, and the daemon step closes either. One wizard runs per
 *       gateway: a second start while one runs is refused (cancel the first).
 *   wizard.next   {sessionId, answer?: {stepId, value?}}                          → WizardResponse
 *       answers the current step: a string (select, text), a boolean (confirm) or a
 *       string[] (multiselect). A `note` or `progress` step is acknowledged with no value
 *       (or no answer at all); `false` on a WhatsApp QR `progress` step skips the linking.
 *       Without an answer any other step is simply returned again (a client reconnecting).
 *   wizard.cancel {sessionId}                                                     → {status: "cancelled"}
 *   wizard.status {sessionId}                                                     → {status, error?}
 *
 * Sessions end after 15 minutes without a call. A step asked again carries `error` (a
 * failed live test, a refused token, a bad value). Secrets are never sent back: a step
 * after a key was typed shows it masked (`sk-…abcd`) in its placeholder, never as a value.
 */

export type WizardSection = 'model' | 'workspace' | 'gateway' | 'channels' | 'daemon';
export type WizardFlow = 'quickstart' | 'manual';

export interface WizardOption {
  value: string;
  label: string;
  hint?: string;
}

export interface WizardStep {
  id: string;
  type: 'note' | 'select' | 'text' | 'confirm' | 'multiselect' | 'progress';
  title?: string;
  message?: string;
  options?: WizardOption[];
  initialValue?: string | boolean | string[];
  placeholder?: string;
  /** Mask the input (API keys, tokens, passwords). */
  sensitive?: boolean;
  /** Why the step is asked again ("the live test failed: 401 …"). */
  error?: string;
  /** The raw QR payload to show (WhatsApp linking); the client renders it. */
  qr?: string;
}

export type WizardStatus = 'running' | 'done' | 'cancelled' | 'error';

export interface WizardResponse {
  sessionId: string;
  done: boolean;
  status: WizardStatus;
  step?: WizardStep;
  error?: string;
}

export type WizardValue = string | boolean | string[] | undefined;

/** Whoever answers the steps: the terminal, a gateway client, or the non-interactive flags. */
export interface Prompter {
  /** Ask one step; resolves with its answer. Throws WizardCancelled when the person gives up. */
  ask(step: WizardStep): Promise<WizardValue>;
  /** Something that takes a while (the live test, a token check): a terminal shows a spinner. */
  working<T>(message: string, work: () => Promise<T>): Promise<T>;
}

export class WizardCancelled extends Error {
  constructor(message = 'the wizard was cancelled') {
    super(message);
    this.name = 'WizardCancelled';
  }
}
