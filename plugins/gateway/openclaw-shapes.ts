/**
 * claw's answers in the shapes OpenClaw's clients read: `channels.status` keyed by channel
 * (channelOrder / channelLabels / channelAccounts) next to claw's own list, and the one line
 * per account that `status {includeChannelSummary}` carries.
 */
import { ErrorCodes, ProtocolError } from '../../sdk/index.js';
import type { ChannelInfo } from '../../sdk/channels/index.js';

export function openClawChannelStatus(channels: ChannelInfo[]) {
  const entries = channels.map((channel) => {
    const accounts = channel.accounts.map((account) => ({ ...account, enabled: channel.enabled, configured: channel.configured }));
    return { channel, accounts };
  });
  return {
    ts: Date.now(),
    // claw's own list (claw channels status reads it).
    channels,
    channelOrder: channels.map((channel) => channel.id),
    channelLabels: Object.fromEntries(channels.map((channel) => [channel.id, channel.id])),
    channelAccounts: Object.fromEntries(entries.map(({ channel, accounts }) => [channel.id, accounts])),
    channelDefaultAccountId: Object.fromEntries(entries.map(({ channel, accounts }) => [channel.id, accounts[0]?.accountId ?? 'default'])),
  };
}

export function channelSummaryLines(channels: ChannelInfo[]): string[] {
  const lines: string[] = [];
  for (const channel of channels) {
    if (!channel.configured) continue;
    if (channel.accounts.length === 0) lines.push(`${channel.id}: ${channel.enabled ? 'configured' : 'disabled'}`);
    for (const account of channel.accounts) {
      const state = [channel.enabled ? 'enabled' : 'disabled', account.running ? 'running' : 'stopped', account.connected ? 'connected' : 'disconnected'];
      if (account.lastError) state.push(`error: ${account.lastError}`);
      // Replies the agent could not deliver yet (retried later) or gave up on.
      if (typeof account.undeliveredReplies === 'number' && account.undeliveredReplies > 0) state.push(`${account.undeliveredReplies} repl${account.undeliveredReplies === 1 ? 'y' : 'ies'} waiting to be delivered again`);
      if (typeof account.failedDeliveries === 'number' && account.failedDeliveries > 0) state.push(`${account.failedDeliveries} repl${account.failedDeliveries === 1 ? 'y' : 'ies'} never delivered`);
      if (account.lastDeliveryError) state.push(`last delivery error: ${String(account.lastDeliveryError)}`);
      lines.push(`${channel.id} ${account.accountId}: ${state.join(', ')}`);
    }
  }
  return lines;
}

/** `work`, or an UNAVAILABLE error naming `what` once `ms` have passed. */
export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ProtocolError(ErrorCodes.UNAVAILABLE, `${what} took longer than timeoutMs (${ms} ms)`, undefined, true)), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

const PINO_LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/**
 * A pino log line with the fields OpenClaw's log readers look for added (`message`, and
 * `_meta` with the level name, ISO date and the plugin): `openclaw logs` and its Control UI
 * then show formatted lines, while claw's web UI keeps reading the pino fields.
 */
export function withOpenClawLogFields(line: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return line;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return line;
  const record = parsed as Record<string, unknown>;
  if (record._meta !== undefined || typeof record.level !== 'number') return line;
  const { level, time, msg, plugin } = record as { level: number; time?: unknown; msg?: unknown; plugin?: unknown };
  const meta = {
    logLevelName: PINO_LEVELS[level] ?? 'INFO',
    ...(typeof time === 'number' ? { date: new Date(time).toISOString() } : {}),
    ...(typeof plugin === 'string' ? { name: JSON.stringify({ plugin }) } : {}),
  };
  return JSON.stringify({ ...record, message: typeof msg === 'string' ? msg : '', _meta: meta });
}
