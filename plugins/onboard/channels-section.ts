/**
 * Channels: every channel whose plugin declares its setup (ChannelPlugin.setup) — its fields
 * asked one by one (secrets masked), the whole checked with the platform through the channel
 * plugin before anything is saved, a refusal shown above the question it concerns; WhatsApp
 * linked by QR code.
 */
import type { ChannelSetupField } from '../../sdk/index.js';
import {
  mergedAccountConfig,
  parseSetupValue,
  setupFields,
  setupValue,
  writeSetupValue,
} from '../../sdk/channels/index.js';
import { askText, textOf, type OnboardDeps, type OnboardSummary, type SetupChannel } from './steps.js';
import { ensureRecord, getRecord, maskIn, maskSecret } from './raw-config.js';
import type { Prompter, WizardStep } from './wizard-types.js';

/** How long a WhatsApp linking may take before the wizard moves on. */
const WHATSAPP_TOTAL_MS = 3 * 60_000;

export async function channelsSection(p: Prompter, deps: OnboardDeps, summary: OnboardSummary): Promise<void> {
  const raw = deps.raw();
  const configured = (id: string) => (getRecord(raw, 'channels', id) ? 'configured' : undefined);
  const channels = await deps.setupChannels();
  const picked = await p.ask({
    id: 'channels.pick',
    type: 'multiselect',
    title: 'Channels',
    message: 'Which chat apps should reach the assistant? (none is fine: the web UI always works)',
    options: [
      ...channels.map((channel) => ({
        value: channel.id,
        label: channel.label,
        hint: configured(channel.id) ?? channel.setup.hint ?? 'set up',
      })),
      { value: 'whatsapp', label: 'WhatsApp', hint: configured('whatsapp') ?? 'scan a QR code' },
    ],
    initialValue: [],
  });
  const chosen = Array.isArray(picked) ? picked : [];
  if (chosen.length === 0) summary.lines.push('Channels: none added (the web UI is always there: claw dashboard)');
  for (const id of chosen) {
    const channel = channels.find((candidate) => candidate.id === id);
    if (channel) await setupChannel(p, deps, summary, channel);
    else if (id === 'whatsapp') await whatsapp(p, deps, summary);
  }
}

/** Skip the channel: its first required value was left empty and nothing is saved. */
const SKIP = Symbol('skip');

/**
 * One channel's default account: each field that applies is asked (empty keeps what is
 * saved), then the platform checks the values; a refusal sends the person back to the field
 * it concerns, with the answers before it kept.
 */
async function setupChannel(p: Prompter, deps: OnboardDeps, summary: OnboardSummary, channel: SetupChannel) {
  const { id, label, setup } = channel;
  const section = getRecord(deps.raw(), 'channels', id);
  const saved = mergedAccountConfig(section, 'default');
  const values = structuredClone(saved);
  const answered = new Set<string>();
  const secrets: string[] = [];
  let from = 0;
  let error: string | undefined;
  let who = '';
  for (;;) {
    let typed = false;
    for (const field of setup.fields.slice(from)) {
      if (!setupFields(setup, values).includes(field)) continue;
      const value = await askField(
        p,
        id,
        label,
        field,
        setupValue(answered.has(field.key) ? values : saved, field.key),
        error,
        !typed,
      );
      error = undefined;
      if (value === SKIP) {
        summary.lines.push(`${label}: skipped`);
        return;
      }
      if (value === undefined) continue;
      if (field.type !== 'boolean' && !field.choices) typed = true;
      if (field.secret && typeof value === 'string') {
        deps.redact(value);
        secrets.push(value);
      }
      writeSetupValue(values, field.key, value);
      answered.add(field.key);
    }
    const changed = [...answered].some(
      (key) => JSON.stringify(setupValue(values, key)) !== JSON.stringify(setupValue(saved, key)),
    );
    if (!changed && section) {
      summary.lines.push(`${label}: kept`);
      summary.channels.push(id);
      return;
    }
    if (!setup.verify) break;
    try {
      who = (await p.working(`Checking with ${label}…`, () => setup.verify!(values, 'default'))).name;
      break;
    } catch (failure) {
      const flag = (failure as { flag?: string }).flag;
      const applicable = setupFields(setup, values);
      from = Math.max(0, setup.fields.indexOf(applicable.find((field) => field.flag === flag) ?? applicable[0]!));
      error = maskIn((failure as Error).message, secrets);
    }
  }
  const stale = setup.fields.filter((field) => !setupFields(setup, values).includes(field));
  await deps.changeConfig(`claw onboard: ${id}`, (next) => {
    const target = ensureRecord(next, 'channels', id);
    for (const key of answered) writeSetupValue(target, key, setupValue(values, key));
    for (const field of stale) writeSetupValue(target, field.key, undefined);
    if (target.enabled === false) delete target.enabled;
  });
  summary.channels.push(id);
  summary.lines.push(`${label}: ${who ? `${who} (checked and saved)` : 'saved'}`);
}

/** One field's step; undefined keeps what is saved (or leaves an optional value unset). */
async function askField(
  p: Prompter,
  id: string,
  label: string,
  field: ChannelSetupField,
  saved: unknown,
  error: string | undefined,
  mayskip: boolean,
): Promise<unknown> {
  const step: WizardStep = {
    id: `channels.${id}.${field.flag}`,
    type: 'text',
    title: label,
    message: field.label,
    ...(error ? { error } : {}),
  };
  // Unset means the first choice, or on: answering that keeps the key unset.
  if (field.choices) {
    const options = field.choices.map((choice) => ({ value: choice, label: choice }));
    const initial = String(saved ?? field.choices[0]);
    const answer = textOf(await p.ask({ ...step, type: 'select', options, initialValue: initial }));
    return field.choices.includes(answer) && (saved !== undefined || answer !== field.choices[0]) ? answer : undefined;
  }
  if (field.type === 'boolean') {
    const answer = await p.ask({ ...step, type: 'confirm', initialValue: saved !== false });
    return typeof answer === 'boolean' && (saved !== undefined || !answer) ? answer : undefined;
  }
  const shown = Array.isArray(saved) ? saved.join(',') : saved === undefined ? undefined : String(saved);
  const placeholder = shown
    ? `leave empty to keep ${field.secret ? maskSecret(shown) : shown}`
    : field.required
      ? mayskip
        ? 'leave empty to skip'
        : 'required'
      : 'optional: leave empty for none';
  let value: unknown;
  const text = await askText(p, { ...step, ...(field.secret ? { sensitive: true } : {}), placeholder }, (answer) => {
    if (!answer) return field.required && shown === undefined && !mayskip ? 'this is needed' : undefined;
    try {
      value = parseSetupValue(field, answer);
      return undefined;
    } catch (problem) {
      return (problem as Error).message.replace(`--${field.flag} `, '');
    }
  });
  if (!text) return field.required && shown === undefined ? SKIP : undefined;
  return value;
}

async function whatsapp(p: Prompter, deps: OnboardDeps, summary: OnboardSummary): Promise<void> {
  const login = deps.whatsappLogin;
  if (!login) {
    summary.lines.push('WhatsApp: the channel-whatsapp plugin is off (claw plugins enable channel-whatsapp)');
    return;
  }
  const deadline = Date.now() + WHATSAPP_TOTAL_MS;
  let state = await p.working('Starting WhatsApp linking…', () => login.start());
  while (!state.connected) {
    const ack = await p.ask({
      id: 'channels.whatsapp.qr',
      type: 'progress',
      title: 'WhatsApp',
      message: `${state.message}\nOpen WhatsApp → Settings → Linked devices → Link a device, and scan this code.`,
      ...(state.qr ? { qr: state.qr } : {}),
    });
    if (ack === false || Date.now() > deadline) {
      summary.lines.push(
        `WhatsApp: ${ack === false ? 'skipped' : 'not linked in time'} (link later: claw channels login --channel whatsapp)`,
      );
      return;
    }
    state = await login.wait(state.qr);
  }
  await deps.changeConfig('claw onboard: whatsapp', (next) => {
    const section = ensureRecord(next, 'channels', 'whatsapp');
    if (section.enabled === false) delete section.enabled;
  });
  summary.channels.push('whatsapp');
  summary.lines.push(`WhatsApp: linked (${state.message})`);
}
