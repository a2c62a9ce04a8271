/**
 * Channels: Telegram and Discord bot tokens, each checked with the platform (getMe,
 * /users/@me) through its channel plugin before it is saved; WhatsApp linked by QR code.
 */
import { askText, type OnboardDeps, type OnboardSummary } from './steps.js';
import { ensureRecord, getRecord, getString, maskIn, maskSecret } from './raw-config.js';
import type { Prompter } from './wizard-types.js';

const TOKEN_CHANNELS = {
  telegram: { label: 'Telegram', key: 'botToken', where: 'from @BotFather' },
  discord: { label: 'Discord', key: 'token', where: 'Developer Portal → your application → Bot' },
} as const;

/** How long a WhatsApp linking may take before the wizard moves on. */
const WHATSAPP_TOTAL_MS = 3 * 60_000;

export async function channelsSection(p: Prompter, deps: OnboardDeps, summary: OnboardSummary): Promise<void> {
  const raw = deps.raw();
  const configured = (id: string) => (getRecord(raw, 'channels', id) ? 'configured' : undefined);
  const picked = await p.ask({
    id: 'channels.pick',
    type: 'multiselect',
    title: 'Channels',
    message: 'Which chat apps should reach the assistant? (none is fine: the web UI always works)',
    options: [
      { value: 'telegram', label: 'Telegram', hint: configured('telegram') ?? 'bot token' },
      { value: 'discord', label: 'Discord', hint: configured('discord') ?? 'bot token' },
      { value: 'whatsapp', label: 'WhatsApp', hint: configured('whatsapp') ?? 'scan a QR code' },
    ],
    initialValue: [],
  });
  const chosen = Array.isArray(picked) ? picked : [];
  if (chosen.length === 0) summary.lines.push('Channels: none added (the web UI is always there: claw dashboard)');
  for (const id of chosen) {
    if (id === 'telegram' || id === 'discord') await tokenChannel(p, deps, summary, id);
    else if (id === 'whatsapp') await whatsapp(p, deps, summary);
  }
}

async function tokenChannel(
  p: Prompter,
  deps: OnboardDeps,
  summary: OnboardSummary,
  id: keyof typeof TOKEN_CHANNELS,
): Promise<void> {
  const channel = TOKEN_CHANNELS[id];
  const saved = getString(getRecord(deps.raw(), 'channels', id), channel.key);
  let who = '';
  const token = await askText(
    p,
    {
      id: `channels.${id}.token`,
      type: 'text',
      title: channel.label,
      message: `${channel.label} bot token (${channel.where})`,
      sensitive: true,
      placeholder: saved ? `leave empty to keep ${maskSecret(saved)}` : 'leave empty to skip',
    },
    async (value) => {
      if (!value) return undefined;
      deps.redact(value);
      try {
        who = (await p.working(`Checking the token with ${channel.label}…`, () => deps.checkToken(id, value))).name;
        return undefined;
      } catch (error) {
        return maskIn((error as Error).message, [value]);
      }
    },
  );
  if (!token) {
    summary.lines.push(`${channel.label}: ${saved ? 'kept' : 'skipped'}`);
    if (saved) summary.channels.push(id);
    return;
  }
  await deps.changeConfig(`claw onboard: ${id} token`, (next) => {
    const section = ensureRecord(next, 'channels', id);
    section[channel.key] = token;
    if (section.enabled === false) delete section.enabled;
  });
  summary.channels.push(id);
  summary.lines.push(`${channel.label}: ${who} (token checked and saved)`);
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
