/**
 * `claw usage`: tokens and cost of past runs, read from the usage ledgers under the state
 * dir (no gateway needed), grouped by model, agent, day, session or channel. Days are this
 * machine's calendar days; costs are what each call cost when it was made.
 */
import type { CliContext } from '../../sdk/index.js';
import { parseFlags, UsageError } from '../../sdk/cli.js';
import { addCost, emptyCost, readAllLedgers, type LedgerEntry, type UsageCost } from './usage-ledger.js';
import { formatTokens, formatUsd } from './usage-footer.js';

export const USAGE_HELP = `Usage: claw usage [--since <YYYY-MM-DD|7d|30d|all>] [--by model|agent|day|session|channel] [--agent <id>] [--json]
Tokens and cost of past runs from the usage ledger (<stateDir>/agents/<id>/usage/ledger.jsonl).
  --since   first day counted: a date, the last N days (today included) or all (default 30d)
  --by      how rows are grouped (default day)
  --agent   only this agent's runs
  --json    machine-readable: {since, by, totals, rows}`;

const FLAGS = {
  help: { type: 'boolean' },
  json: { type: 'boolean' },
  since: { type: 'string' },
  by: { type: 'string' },
  agent: { type: 'string' },
} as const;

const GROUPS = ['model', 'agent', 'day', 'session', 'channel'] as const;
type Group = (typeof GROUPS)[number];

export interface UsageTotals {
  runs: number;
  calls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  totalCost: number;
  inputCost: number;
  outputCost: number;
  cacheReadCost: number;
  cacheWriteCost: number;
  missingCostEntries: number;
}

function localDay(ms: number): string {
  const date = new Date(ms);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

/** The first instant counted, from `--since`; undefined for all. */
export function sinceStart(since: string | undefined, now: number): number | undefined {
  const value = since ?? '30d';
  if (value === 'all') return undefined;
  const days = /^(\d+)d$/.exec(value);
  const start = new Date(now);
  start.setHours(0, 0, 0, 0);
  if (days) {
    const count = Number(days[1]);
    if (count < 1) throw new UsageError(`--since ${value}: count at least one day`);
    start.setDate(start.getDate() - (count - 1));
    return start.getTime();
  }
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (date) {
    const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const at = new Date(year, month - 1, day);
    if (at.getFullYear() === year && at.getMonth() === month - 1 && at.getDate() === day) return at.getTime();
  }
  throw new UsageError(`--since "${value}": expected a date (YYYY-MM-DD), a number of days (7d, 30d) or all`);
}

function keyOf(entry: LedgerEntry, by: Group): Record<string, string> {
  switch (by) {
    case 'model':
      return { provider: entry.provider, model: entry.model };
    case 'agent':
      return { agentId: entry.agentId };
    case 'day':
      return { date: localDay(entry.ts) };
    case 'session':
      return { agentId: entry.agentId, sessionKey: entry.sessionKey };
    case 'channel':
      return { channel: entry.channel ?? 'unknown' };
  }
}

function emptyTotals(): UsageTotals & { cost: UsageCost; runIds: Set<string> } {
  return {
    runs: 0,
    calls: 0,
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    totalCost: 0,
    inputCost: 0,
    outputCost: 0,
    cacheReadCost: 0,
    cacheWriteCost: 0,
    missingCostEntries: 0,
    cost: emptyCost(),
    runIds: new Set(),
  };
}

function add(into: ReturnType<typeof emptyTotals>, entry: LedgerEntry): void {
  into.runIds.add(entry.runId);
  into.calls += entry.calls;
  into.input += entry.input;
  into.output += entry.output;
  into.cacheRead += entry.cacheRead;
  into.cacheWrite += entry.cacheWrite;
  into.totalTokens += entry.totalTokens;
  into.missingCostEntries += entry.missingCostEntries;
  addCost(into.cost, entry.cost);
}

/** OpenClaw's totals field names (usage.cost's), plus runs and calls. */
function finish(sum: ReturnType<typeof emptyTotals>): UsageTotals {
  const { cost, runIds, ...rest } = sum;
  return {
    ...rest,
    runs: runIds.size,
    totalCost: cost.total,
    inputCost: cost.input,
    outputCost: cost.output,
    cacheReadCost: cost.cacheRead,
    cacheWriteCost: cost.cacheWrite,
  };
}

export function usageReport(
  entries: readonly LedgerEntry[],
  options: { since?: string; by: Group; agent?: string; now: number },
) {
  const start = sinceStart(options.since, options.now);
  const counted = entries.filter(
    (entry) => (start === undefined || entry.ts >= start) && (!options.agent || entry.agentId === options.agent),
  );
  const total = emptyTotals();
  const groups = new Map<string, { key: Record<string, string>; sum: ReturnType<typeof emptyTotals> }>();
  for (const entry of counted) {
    add(total, entry);
    const key = keyOf(entry, options.by);
    const id = JSON.stringify(key);
    const group = groups.get(id) ?? { key, sum: emptyTotals() };
    add(group.sum, entry);
    groups.set(id, group);
  }
  const rows: Array<UsageTotals & Record<string, unknown> & { date?: string }> = [...groups.values()].map(
    ({ key, sum }) => ({
      ...key,
      ...finish(sum),
    }),
  );
  if (options.by === 'day') rows.sort((a, b) => a.date!.localeCompare(b.date!));
  else rows.sort((a, b) => b.totalCost - a.totalCost || b.totalTokens - a.totalTokens);
  return {
    since: start === undefined ? null : localDay(start),
    until: localDay(options.now),
    by: options.by,
    ...(options.agent ? { agentId: options.agent } : {}),
    totals: finish(total),
    rows,
  };
}

function label(row: Record<string, unknown>, by: Group): string {
  switch (by) {
    case 'model':
      return `${row.provider}/${row.model}`;
    case 'session':
      return `${row.sessionKey}`;
    case 'agent':
      return `${row.agentId}`;
    case 'day':
      return `${row.date}`;
    case 'channel':
      return `${row.channel}`;
  }
}

function costText(totals: UsageTotals): string {
  if (totals.calls > 0 && totals.missingCostEntries === totals.calls) return 'unpriced';
  return `${formatUsd(totals.totalCost)}${totals.missingCostEntries ? ` + ${totals.missingCostEntries} unpriced` : ''}`;
}

export function usageCli(argv: string[], ctx: CliContext, stateDir: string, now = Date.now()): number {
  const { values, positionals } = parseFlags(argv, FLAGS);
  if (positionals.length > 0) throw new UsageError(`claw usage takes no arguments (got "${positionals[0]}")`);
  const by = (values.by ?? 'day') as Group;
  if (!GROUPS.includes(by)) throw new UsageError(`--by "${values.by}": expected one of ${GROUPS.join(', ')}`);
  const report = usageReport(readAllLedgers(stateDir), {
    since: values.since,
    by,
    ...(values.agent ? { agent: values.agent } : {}),
    now,
  });
  if (values.json) {
    ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const range = report.since ? `${report.since} – ${report.until}` : `everything until ${report.until}`;
  const lines = [`Usage ${range} (by ${by})`];
  if (report.rows.length === 0) lines.push('No runs recorded in this range.');
  const width = Math.max(0, ...report.rows.map((row) => label(row, by).length));
  for (const row of report.rows)
    lines.push(
      `  ${label(row, by).padEnd(width)}  ${costText(row).padStart(9)}  ${formatTokens(row.totalTokens).padStart(7)} tokens  (${formatTokens(row.input)} in / ${formatTokens(row.output)} out${row.cacheRead || row.cacheWrite ? ` / ${formatTokens(row.cacheRead)} cached / ${formatTokens(row.cacheWrite)} cache write` : ''})  ${row.runs} run${row.runs === 1 ? '' : 's'}`,
    );
  lines.push(
    `Total: ${costText(report.totals)} · ${formatTokens(report.totals.totalTokens)} tokens · ${report.totals.runs} run${report.totals.runs === 1 ? '' : 's'}`,
  );
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
