/** `claw sessions`: the sessions of every agent, newest first (`--json`, `--active <minutes>`, `--agent`). */
import type { CliContext } from '../../sdk/index.js';
import { parseFlags as parse, UsageError, type GatewayFlags } from '../../sdk/cli.js';
import { normalizeAgentId } from '../../sdk/agent/index.js';
import { archiveCommand } from './archive-cli.js';
import { importSessions } from './import.js';
import { listSessions, type SessionsDeps } from './methods.js';

export const SESSIONS_HELP = `Usage: claw sessions [--json] [--active <minutes>] [--agent <id>]
                     [--url <ws> [--token <t> | --password <p>] [--timeout <ms>]]
           --url lists another gateway's sessions (claw's or OpenClaw's) through sessions.list.
       claw sessions import [--from <openclaw state dir>] [--agent <id>] [--json]
           Sessions from OpenClaw: its SQLite store (agents/<id>/agent/openclaw-agent.sqlite)
           and legacy JSONL files (agents/<id>/sessions/); --from defaults to this state dir.
           Keys claw already has are never overwritten.
       claw sessions archive <key>... [--agent <id>] [--dry-run] [--json] [--url <ws>] [--token <t>]
           Through the running gateway: keeps the transcript, leaves the session out of lists
           (sessions.list {archived: true} shows them; sessions.patch {archived: false} restores).`;

const COMMON = { help: { type: 'boolean' }, json: { type: 'boolean' } } as const;

export async function sessionsCommand(
  argv: string[],
  ctx: CliContext,
  deps: SessionsDeps,
  stateDir: string,
): Promise<number> {
  if (argv[0] === 'import') return importCommand(argv.slice(1), ctx, deps, stateDir);
  if (argv[0] === 'archive') return archiveCommand(argv.slice(1), ctx, (agentId) => deps.sessions.mainKey(agentId));
  const { values, positionals } = parse(argv, {
    ...COMMON,
    active: { type: 'string' },
    agent: { type: 'string' },
    url: { type: 'string' },
    token: { type: 'string' },
    password: { type: 'string' },
    timeout: { type: 'string' },
  });
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${positionals[0]}" (see claw sessions --help)`);
  const active = values.active === undefined ? undefined : Number(values.active);
  if (active !== undefined && !(Number.isFinite(active) && active > 0))
    throw new UsageError(`--active must be minutes, got "${String(values.active)}"`);
  if (values.url !== undefined) {
    // Another gateway's sessions (claw's or OpenClaw's): its store, its agents, its check of --agent.
    const flags: GatewayFlags = {
      url: values.url as string,
      token: values.token as string | undefined,
      password: values.password as string | undefined,
      timeout: values.timeout as string | undefined,
    };
    const listed = await ctx.gateway.connect(flags, (gateway) =>
      gateway.request<{ sessions: ListedRow[] }>('sessions.list', {
        ...(active ? { activeMinutes: active } : {}),
        ...(values.agent !== undefined ? { agentId: normalizeAgentId(values.agent as string) } : {}),
      }),
    );
    return printRows(ctx, listed.sessions, active, Date.now(), values.json === true);
  }
  // Agents in the config, and those only left on disk (their sessions can still be listed).
  const known = [...new Set(deps.sessions.knownAgents().map((id) => normalizeAgentId(id)))];
  if (values.agent !== undefined && !known.includes(normalizeAgentId(values.agent as string))) {
    throw new UsageError(`unknown agent "${String(values.agent)}": the agents are ${known.join(', ')}`);
  }
  const rows = await listSessions(deps, {
    agentId: values.agent === undefined ? undefined : normalizeAgentId(values.agent as string),
    activeMinutes: active,
  });
  return printRows(ctx, rows, active, deps.sessions.now(), values.json === true);
}

/** What the listing prints of a sessions.list row (OpenClaw's rows may lack tokens and model). */
interface ListedRow {
  key: string;
  updatedAt: number;
  totalTokens?: number | null;
  model?: string | null;
  lastModel?: string | null;
}

function printRows(ctx: CliContext, rows: ListedRow[], active: number | undefined, now: number, json: boolean) {
  if (json) {
    ctx.stdout.write(
      `${JSON.stringify({ count: rows.length, activeMinutes: active ?? null, sessions: rows }, null, 2)}\n`,
    );
    return 0;
  }
  if (rows.length === 0) {
    ctx.stdout.write(active ? `No sessions active in the last ${active} minutes.\n` : 'No sessions yet.\n');
    return 0;
  }
  const age = (ms: number) =>
    ms < 60_000
      ? `${Math.round(ms / 1000)}s`
      : ms < 3_600_000
        ? `${Math.round(ms / 60_000)}m`
        : ms < 86_400_000
          ? `${Math.round(ms / 3_600_000)}h`
          : `${Math.round(ms / 86_400_000)}d`;
  const lines = rows.map(
    (row) =>
      `${row.key.padEnd(40)} ${age(Math.max(0, now - row.updatedAt)).padStart(4)} ago  ${String(row.totalTokens ?? 0).padStart(7)} tok  ${row.lastModel ?? row.model ?? '-'}`,
  );
  ctx.stdout.write(
    `${'KEY'.padEnd(40)} ${'UPDATED'.padStart(8)}  ${'TOKENS'.padStart(11)}  MODEL\n${lines.join('\n')}\n`,
  );
  return 0;
}

async function importCommand(argv: string[], ctx: CliContext, deps: SessionsDeps, stateDir: string): Promise<number> {
  const { values, positionals } = parse(argv, { ...COMMON, from: { type: 'string' }, agent: { type: 'string' } });
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${positionals[0]}" (see claw sessions --help)`);
  const agentId = values.agent === undefined ? undefined : normalizeAgentId(values.agent as string);
  const report = await importSessions(deps.sessions, stateDir, {
    from: (values.from as string | undefined) ?? stateDir,
    agentId,
  });
  if (values.json) {
    ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return report.conflicts.length > 0 ? 1 : 0;
  }
  const lines = [
    `Imported ${report.imported.length} ${report.imported.length === 1 ? 'session' : 'sessions'} from ${report.from}${report.unchanged ? ` (${report.unchanged} already here)` : ''}.`,
  ];
  for (const row of report.imported)
    lines.push(`  ${row.agentId} ${row.key} → ${row.sessionId} (${row.entries} entries, ${row.source})`);
  for (const conflict of report.conflicts) lines.push(`  ! ${conflict.agentId} ${conflict.key}: ${conflict.reason}`);
  if (report.skippedEntries > 0) lines.push(`  ! ${report.skippedEntries} transcript entries could not be read`);
  if (report.abandonedEntries > 0)
    lines.push(
      `  ${report.abandonedEntries} entries on abandoned branches left out (only the active branch is imported)`,
    );
  for (const note of report.notes) lines.push(`  ${note}`);
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return report.conflicts.length > 0 ? 1 : 0;
}
