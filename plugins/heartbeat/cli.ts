/**
 * `claw system` (OpenClaw's names): queue a system event, look at or switch heartbeats, list
 * presence. Every subcommand talks to the running gateway, where the schedule lives.
 */
import { randomUUID } from 'node:crypto';
import type { CliContext } from '../../sdk/index.js';
import { parseFlags, UsageError } from '../../sdk/cli.js';

export const SYSTEM_HELP = `Usage: claw system event --text <text> [--mode now|next-heartbeat] [--session-key <key>] [--agent <id>] [--json]
       claw system heartbeat last [--agent <id>]     the last heartbeat: sent, ok-token, ok-empty, skipped or failed, and why
       claw system heartbeat enable|disable          turn scheduled heartbeats on or off
       claw system presence                          clients connected to the gateway
Gateway options: --url, --token, --timeout <ms>`;

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
      print(
        ctx,
        await ctx.gateway.connect(values, (client) =>
          client.request('last-heartbeat', values.agent ? { agentId: values.agent } : {}),
        ),
      );
      return 0;
    }
    if (sub === 'enable' || sub === 'disable') {
      print(
        ctx,
        await ctx.gateway.connect(values, (client) =>
          client.request('set-heartbeats', { enabled: sub === 'enable', idempotencyKey: randomUUID() }),
        ),
      );
      return 0;
    }
    throw new UsageError(`claw system heartbeat takes last, enable or disable${sub ? `, not "${sub}"` : ''}`);
  }
  if (action === 'presence') {
    if (sub !== undefined) throw new UsageError(`unexpected argument "${sub}"`);
    print(ctx, await ctx.gateway.connect(values, (client) => client.request('system-presence', {})));
    return 0;
  }
  throw new UsageError(
    action
      ? `unknown subcommand "claw system ${action}" (event, heartbeat, presence)`
      : 'claw system needs a subcommand: event, heartbeat or presence (see --help)',
  );
}
