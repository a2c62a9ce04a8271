/** `claw sessions`: the sessions of every agent, newest first (`--json`, `--active <minutes>`, `--agent`). */
import type { CliContext } from '../../sdk/index.js';
import { parseFlags as parse, UsageError } from '../../sdk/cli.js';
import { normalizeAgentId } from '../../sdk/agent/index.js';
import { listSessions, type SessionsDeps } from './methods.js';

export const SESSIONS_HELP = `Usage: claw sessions [--json] [--active <minutes>] [--agent <id>]`;

const COMMON = { help: { type: 'boolean' }, json: { type: 'boolean' } } as const;

export async function sessionsCommand(argv: string[], ctx: CliContext, deps: SessionsDeps): Promise<number> {
  const { values, positionals } = parse(argv, { ...COMMON, active: { type: 'string' }, agent: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}" (see claw sessions --help)`);
  const active = values.active === undefined ? undefined : Number(values.active);
  if (active !== undefined && !(Number.isFinite(active) && active > 0)) throw new UsageError(`--active must be minutes, got "${String(values.active)}"`);
  // Agents in the config, and those only left on disk (their sessions can still be listed).
  const known = [...new Set(deps.sessions.knownAgents().map((id) => normalizeAgentId(id)))];
  if (values.agent !== undefined && !known.includes(normalizeAgentId(values.agent as string))) {
    throw new UsageError(`unknown agent "${String(values.agent)}": the agents are ${known.join(', ')}`);
  }
  const rows = await listSessions(deps, { agentId: values.agent === undefined ? undefined : normalizeAgentId(values.agent as string), activeMinutes: active });
  if (values.json) {
    ctx.stdout.write(`${JSON.stringify({ count: rows.length, activeMinutes: active ?? null, sessions: rows }, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    ctx.stdout.write(active ? `No sessions active in the last ${active} minutes.\n` : 'No sessions yet.\n');
    return 0;
  }
  const now = deps.sessions.now();
  const age = (ms: number) => (ms < 60_000 ? `${Math.round(ms / 1000)}s` : ms < 3_600_000 ? `${Math.round(ms / 60_000)}m` : ms < 86_400_000 ? `${Math.round(ms / 3_600_000)}h` : `${Math.round(ms / 86_400_000)}d`);
  const lines = rows.map(
    (row) => `${row.key.padEnd(40)} ${age(now - row.updatedAt).padStart(4)} ago  ${String(row.totalTokens).padStart(7)} tok  ${row.lastModel ?? row.model ?? '-'}`,
  );
  ctx.stdout.write(`${'KEY'.padEnd(40)} ${'UPDATED'.padStart(8)}  ${'TOKENS'.padStart(11)}  MODEL\n${lines.join('\n')}\n`);
  return 0;
}
