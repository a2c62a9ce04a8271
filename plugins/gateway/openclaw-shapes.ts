/**
 * claw's answers in the shapes OpenClaw's clients read: the one line per channel account
 * that `status {includeChannelSummary}` carries, and log lines with OpenClaw's fields.
 */
import type { ChannelInfo } from '../../sdk/channels/index.js';

export function channelSummaryLines(channels: ChannelInfo[]): string[] {
  const lines: string[] = [];
  for (const channel of channels) {
    if (!channel.configured) continue;
    if (channel.accounts.length === 0) lines.push(`${channel.id}: ${channel.enabled ? 'configured' : 'disabled'}`);
    for (const account of channel.accounts) {
      const state = [
        channel.enabled ? 'enabled' : 'disabled',
        account.running ? 'running' : 'stopped',
        account.connected ? 'connected' : 'disconnected',
      ];
      if (account.lastError) state.push(`error: ${account.lastError}`);
      // Replies the agent could not deliver yet (retried later) or gave up on.
      if (typeof account.undeliveredReplies === 'number' && account.undeliveredReplies > 0)
        state.push(
          `${account.undeliveredReplies} repl${account.undeliveredReplies === 1 ? 'y' : 'ies'} waiting to be delivered again`,
        );
      if (typeof account.failedDeliveries === 'number' && account.failedDeliveries > 0)
        state.push(`${account.failedDeliveries} repl${account.failedDeliveries === 1 ? 'y' : 'ies'} never delivered`);
      if (account.lastDeliveryError) state.push(`last delivery error: ${String(account.lastDeliveryError)}`);
      lines.push(`${channel.id} ${account.accountId}: ${state.join(', ')}`);
    }
  }
  return lines;
}

const PINO_LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

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
