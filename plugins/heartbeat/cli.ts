/**
 * `claw system` (OpenClaw's names): queue a system event, look at or switch heartbeats, list
 * presence. Every subcommand talks to the running gateway, where the schedule lives.
 */
import { randomUUID } from 'node:crypto';
import type { CliContext } from '../../sdk/index.js';
import { parseFlags, unknownCommand, UsageError } from '../../sdk/cli.js';
import type { HeartbeatEvent } from './state.js';

export const SYSTEM_HELP = `Usage: claw system event --text <text> [--mode now|next-heartbeat] [--session-key <key>] [--agent <id>] [--json]
       claw system heartbeat last [--agent <id>]     the last heartbeat: sent, ok-token, ok-empty, skipped or failed, and why
       claw system heartbeat enable|disable          turn scheduled heartbeats on or off
       claw system presence                          clients connected to the gateway
Every command takes --json (the gateway's answer as JSON). Gateway options: --url, --token, --timeout <ms>`;

const FLAGS = {
  help: { type: 'boolean' },
  json: { type: 'boolean' },
  text: { type: 'string' },
  mode: { type: 'string' },
  'session-key': { type: 'string' },
  agent: { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  timeout: { type: 'string' },
} as const;

const print = (ctx: CliContext, value: unknown) => ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

/** The gateway's answer as JSON with --json, else `human`'s reading of it. */
function show<T>(ctx: CliContext, json: boolean | undefined, value: T, human: (value: T) => string[]): void {
  if (json) print(ctx, value);
  else ctx.stdout.write(`${human(value).join('\n')}\n`);
}

const when = (ms: number | null | undefined) => (ms ? new Date(ms).toISOString() : 'never');

const outcome = (event: HeartbeatEvent | null) =>
  event
    ? `${event.status}${event.reason ? ` (${event.reason})` : ''} at ${when(event.ts)}${event.preview ? `: ${event.preview}` : ''}`
    : 'none yet';

interface LastHeartbeat {
  enabled: boolean;
  last: HeartbeatEvent | null;
  agents: Array<{
    agentId: string;
    every: string;
    nextDueAt: number | null;
    pendingEvents: number;
    last: HeartbeatEvent | null;
  }>;
}

function lastLines(result: LastHeartbeat): string[] {
  const lines = [
    `Heartbeats: ${result.enabled ? 'on' : 'off (claw system heartbeat enable)'}`,
    `Last: ${outcome(result.last)}`,
  ];
  for (const agent of result.agents)
    lines.push(
      `  ${agent.agentId}: every ${agent.every}, next ${agent.nextDueAt ? when(agent.nextDueAt) : '-'}, ${agent.pendingEvents} pending event(s); last ${outcome(agent.last)}`,
    );
  return lines;
}

function presenceLines(entries: PresenceEntry[]): string[] {
  if (entries.length === 0) return ['No clients connected.'];
  return entries.map(
    (entry) =>
      `${entry.connected ? 'connected' : 'gone     '}  ${entry.displayName ?? entry.clientId}${entry.mode ? ` (${entry.mode})` : ''}  ${entry.roles.join(', ')}${entry.remoteAddress ? `  from ${entry.remoteAddress}` : ''}  since ${when(entry.ts)}`,
  );
}

/** The fields of the gateway's presence entries shown here. */
interface PresenceEntry {
  clientId: string;
  displayName?: string;
  mode?: string;
  roles: string[];
  remoteAddress?: string;
  connected: boolean;
  ts: number;
}

export async function systemCommand(argv: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS);
  const [action, sub, ...rest] = positionals;
  if (action === 'event') {
    if (sub !== undefined) throw new UsageError(`unexpected argument "${sub}" (give the text with --text)`);
    if (!values.text?.trim()) throw new UsageError('claw system event needs --text <text>');
    const mode = values.mode ?? 'next-heartbeat';
    if (mode !== 'now' && mode !== 'next-heartbeat')
      throw new UsageError(`--mode must be now or next-heartbeat, got "${mode}"`);
    const result = await ctx.gateway.connect(values, (client) =>
      client.request('system-event', {
        text: values.text,
        mode,
        idempotencyKey: randomUUID(),
        ...(values['session-key'] ? { sessionKey: values['session-key'] } : {}),
        ...(values.agent ? { agentId: values.agent } : {}),
      }),
    );
    if (values.json) print(ctx, result);
    else {
      const wake = (result as { wake?: { queued: boolean; reason?: string } }).wake;
      ctx.stdout.write(`ok${wake && !wake.queued && wake.reason ? ` (${wake.reason})` : ''}\n`);
    }
    return 0;
  }
  if (action === 'heartbeat') {
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
    if (sub === 'last') {
      const result = await ctx.gateway.connect(values, (client) =>
        client.request<LastHeartbeat>('last-heartbeat', values.agent ? { agentId: values.agent } : {}),
      );
      show(ctx, values.json, result, lastLines);
      return 0;
    }
    if (sub === 'enable' || sub === 'disable') {
      const result = await ctx.gateway.connect(values, (client) =>
        client.request<{ enabled: boolean }>('set-heartbeats', {
          enabled: sub === 'enable',
          idempotencyKey: randomUUID(),
        }),
      );
      show(ctx, values.json, result, ({ enabled }) => [`Scheduled heartbeats are ${enabled ? 'on' : 'off'}.`]);
      return 0;
    }
    if (sub) throw unknownCommand('system heartbeat', sub, ['last', 'enable', 'disable']);
    throw new UsageError('claw system heartbeat takes last, enable or disable');
  }
  if (action === 'presence') {
    if (sub !== undefined) throw new UsageError(`unexpected argument "${sub}"`);
    const entries = await ctx.gateway.connect(values, (client) =>
      client.request<PresenceEntry[]>('system-presence', {}),
    );
    show(ctx, values.json, entries, presenceLines);
    return 0;
  }
  if (action) throw unknownCommand('system', action, ['event', 'heartbeat', 'presence']);
  throw new UsageError('claw system needs a subcommand: event, heartbeat or presence (see --help)');
}
