/** What every section shares: the flow's dependencies, its summary, and asking a text until it is valid. */
import type { ChannelLoginState, ChannelSetup, GatewayDaemon } from '../../sdk/index.js';
import type { ProviderSettings } from '../../sdk/agent/index.js';
import type { AnyRecord } from './raw-config.js';
import type { Prompter, WizardStep, WizardValue } from './wizard-types.js';

/** What the flow needs from the process it runs in (the CLI's or the gateway's). */
export interface OnboardDeps {
  /** openclaw.json as written (not the defaults-filled config): the current values. */
  raw(): AnyRecord;
  env: Readonly<Record<string, string | undefined>>;
  /** The workspace when none is configured. */
  defaultWorkspace: string;
  /** The models service's live test. */
  probe(
    ref: string,
    provider: ProviderSettings & { modelPath?: string },
    signal?: AbortSignal,
  ): Promise<{ text: string }>;
  /** Change openclaw.json through the config write path (validated; the gateway applies it). */
  changeConfig(purpose: string, edit: (raw: AnyRecord) => void): Promise<void>;
  /** The agent plugin's workspace templates, when it is on. */
  seedWorkspace?(dir: string): { created: string[]; kept: string[] };
  /** The gateway plugin's token generator; without that plugin there is no gateway to set up. */
  generateToken?(): string;
  /** The channels whose enabled plugins declare their setup (fields, the platform check). */
  setupChannels(): Promise<SetupChannel[]>;
  /** WhatsApp's QR login, when the channel is there. */
  whatsappLogin?: { start(): Promise<ChannelLoginState>; wait(currentQr?: string): Promise<ChannelLoginState> };
  /** The gateway plugin's OS service (systemd user unit / launchd agent); without it there is no daemon step. */
  daemon?: Pick<GatewayDaemon, 'install' | 'unavailable'>;
  /** Secrets typed into the wizard: masked from then on in every log and output. */
  redact(secret: string): void;
  signal?: AbortSignal;
}

export interface SetupChannel {
  id: string;
  label: string;
  setup: ChannelSetup;
}

/** What the run did, for the closing note and `--json`. */
export interface OnboardSummary {
  model?: string;
  workspace?: string;
  gateway?: { port: number; bind: string; auth: string };
  channels: string[];
  /** The daemon step: whether the gateway's OS service is installed now, and what it said. */
  daemon?: { installed: boolean; message: string };
  lines: string[];
}

/** A text step asked until `check` accepts the answer (it returns the problem, or nothing). */
export async function askText(
  p: Prompter,
  step: WizardStep,
  check: (value: string) => string | undefined | Promise<string | undefined>,
): Promise<string> {
  let error = step.error;
  for (;;) {
    const value = textOf(await p.ask({ ...step, type: 'text', ...(error ? { error } : {}) }));
    error = await check(value);
    if (!error) return value;
  }
}

export function textOf(value: WizardValue): string {
  return typeof value === 'string' ? value.trim() : '';
}
