/**
 * `claw cron` (alias `claw automations`): add|create, list, status, edit, rm|remove|delete,
 * enable, disable, run, runs, with OpenClaw's flags. Every subcommand talks to the running
 * gateway (cron.* methods), which owns the scheduler and jobs.json.
 */
import { randomUUID } from 'node:crypto';
import type { CliContext } from '../../sdk/index.js';
import { parseFlags, unknownCommand, UsageError } from '../../sdk/cli.js';
import { describeSchedule, parseDurationMs } from './schedule.js';
import type { CronJob, RunLogEntry } from './types.js';

export const CRON_HELP = `Usage: claw cron <command> [options]      (alias: claw automations)
  add|create   --name <name> (--at <ISO|20m> | --every <10m> | --cron "<5 fields>" [--tz <IANA>] [--exact | --stagger <dur>])
               (--system-event <text> | --message <text> | --command <shell> [--command-cwd <dir>])
               [--session main|isolated] [--wake now|next-heartbeat] [--model <ref>] [--thinking <level>]
               [--timeout-seconds <n>] [--announce [--channel <id>] [--to <target>] [--account <id>] [--thread-id <id>]
               | --webhook <url> | --no-deliver] [--delete-after-run | --keep-after-run] [--agent <id>] [--description <text>] [--disabled]
  list [--all] [--json]                 jobs, soonest first
  status [--json]                       scheduler status: next wake, running jobs, last errors
  edit <id> [the add flags] [--enable | --disable]
  rm|remove|delete <id>                 delete a job (run history stays)
  enable|disable <id>
  run <id> [--due]                      run now (or only if due)
  runs <id> [--limit <n>] [--json]      run history, newest first
Every command: --json prints the gateway's answer as JSON. Gateway options: --url <ws-url>, --token <token>, --timeout <ms>`;

const FLAGS = {
  help: { type: 'boolean' },
  json: { type: 'boolean' },
  name: { type: 'string' },
  description: { type: 'string' },
  at: { type: 'string' },
  every: { type: 'string' },
  cron: { type: 'string' },
  tz: { type: 'string' },
  exact: { type: 'boolean' },
  stagger: { type: 'string' },
  session: { type: 'string' },
  'system-event': { type: 'string' },
  message: { type: 'string' },
  command: { type: 'string' },
  'command-cwd': { type: 'string' },
  model: { type: 'string' },
  thinking: { type: 'string' },
  'timeout-seconds': { type: 'string' },
  wake: { type: 'string' },
  announce: { type: 'boolean' },
  deliver: { type: 'boolean' },
  'no-deliver': { type: 'boolean' },
  channel: { type: 'string' },
  to: { type: 'string' },
  account: { type: 'string' },
  'thread-id': { type: 'string' },
  webhook: { type: 'string' },
  'delete-after-run': { type: 'boolean' },
  'keep-after-run': { type: 'boolean' },
  agent: { type: 'string' },
  disabled: { type: 'boolean' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
  all: { type: 'boolean' },
  due: { type: 'boolean' },
  limit: { type: 'string' },
  id: { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  timeout: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseFlags<typeof FLAGS>>['values'];

function one(values: Values, names: Array<keyof Values>, what: string, required: boolean): keyof Values | undefined {
  const given = names.filter((name) => values[name] !== undefined);
  if (given.length > 1)
    throw new UsageError(`use only one of ${given.map((name) => `--${String(name)}`).join(', ')} (${what})`);
  if (required && given.length === 0)
    throw new UsageError(`${what}: one of ${names.map((name) => `--${String(name)}`).join(', ')} is required`);
  return given[0];
}

function duration(text: string, flag: string): number {
  const ms = parseDurationMs(text);
  if (ms === undefined) throw new UsageError(`${flag} must be a duration such as 90s, 10m, 1h or 1d, got "${text}"`);
  return ms;
}

function schedule(values: Values): Record<string, unknown> | undefined {
  const kind = one(values, ['at', 'every', 'cron'], 'schedule', false);
  if (values.tz !== undefined && kind !== 'cron' && kind !== 'at')
    throw new UsageError('--tz applies to --cron and --at only');
  if ((values.exact || values.stagger !== undefined) && kind !== 'cron')
    throw new UsageError('--exact and --stagger apply to --cron only');
  if (values.exact && values.stagger !== undefined) throw new UsageError('use --exact or --stagger, not both');
  if (kind === 'at') return { kind: 'at', at: values.at, ...(values.tz ? { tz: values.tz } : {}) };
  if (kind === 'every') return { kind: 'every', everyMs: duration(values.every!, '--every') };
  if (kind === 'cron') {
    const staggerMs = values.exact
      ? 0
      : values.stagger !== undefined
        ? duration(values.stagger, '--stagger')
        : undefined;
    return {
      kind: 'cron',
      expr: values.cron,
      ...(values.tz ? { tz: values.tz } : {}),
      ...(staggerMs !== undefined ? { staggerMs } : {}),
    };
  }
  return undefined;
}

function payloadFields(values: Values): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (values.model !== undefined) out.model = values.model;
  if (values.thinking !== undefined) out.thinking = values.thinking;
  if (values['timeout-seconds'] !== undefined) {
    const seconds = Number(values['timeout-seconds']);
    if (!Number.isInteger(seconds) || seconds < 0)
      throw new UsageError(
        `--timeout-seconds must be a whole number >= 0 (0 = no timeout), got "${values['timeout-seconds']}"`,
      );
    out.timeoutSeconds = seconds;
  }
  if (values['command-cwd'] !== undefined) {
    if (!values['command-cwd'].trim()) throw new UsageError('--command-cwd must not be empty');
    out.cwd = values['command-cwd'];
  }
  return out;
}

function payload(values: Values): Record<string, unknown> | undefined {
  const kind = one(values, ['system-event', 'message', 'command'], 'payload', false);
  const extra = payloadFields(values);
  if (kind === 'system-event') {
    if (Object.keys(extra).length)
      throw new UsageError(
        '--model, --thinking, --timeout-seconds and --command-cwd do not apply to --system-event jobs',
      );
    return { kind: 'systemEvent', text: values['system-event'] };
  }
  if (kind === 'message') return { kind: 'agentTurn', message: values.message, ...extra };
  if (kind === 'command') return { kind: 'command', command: values.command, ...extra };
  return Object.keys(extra).length ? extra : undefined;
}

function delivery(values: Values): Record<string, unknown> | undefined {
  const chat =
    values.announce ||
    values.deliver ||
    values.channel !== undefined ||
    values.to !== undefined ||
    values.account !== undefined ||
    values['thread-id'] !== undefined;
  const modes = [chat && 'announce', values.webhook !== undefined && 'webhook', values['no-deliver'] && 'none'].filter(
    Boolean,
  );
  if (modes.length > 1)
    throw new UsageError('--webhook, --no-deliver and chat delivery (--announce/--channel/--to) are exclusive');
  if (values.webhook !== undefined) return { mode: 'webhook', to: values.webhook };
  if (values['no-deliver']) return { mode: 'none' };
  if (chat) {
    return {
      mode: 'announce',
      ...(values.channel ? { channel: values.channel } : {}),
      ...(values.to ? { to: values.to } : {}),
      ...(values.account ? { accountId: values.account } : {}),
      ...(values['thread-id'] ? { threadId: values['thread-id'] } : {}),
    };
  }
  return undefined;
}

function sessionTarget(values: Values): string | undefined {
  if (values.session === undefined) return undefined;
  if (values.session !== 'main' && values.session !== 'isolated')
    throw new UsageError(`--session must be main or isolated, got "${values.session}"`);
  return values.session;
}

function common(values: Values): Record<string, unknown> {
  if (values.wake !== undefined && values.wake !== 'now' && values.wake !== 'next-heartbeat')
    throw new UsageError(`--wake must be now or next-heartbeat, got "${values.wake}"`);
  if (values['delete-after-run'] && values['keep-after-run'])
    throw new UsageError('use --delete-after-run or --keep-after-run, not both');
  const fields: Record<string, unknown> = {};
  if (values.name !== undefined) fields.name = values.name;
  if (values.description !== undefined) fields.description = values.description;
  if (values.agent !== undefined) fields.agentId = values.agent;
  if (values.wake !== undefined) fields.wakeMode = values.wake;
  const target = sessionTarget(values);
  if (target) fields.sessionTarget = target;
  if (values['delete-after-run']) fields.deleteAfterRun = true;
  if (values['keep-after-run']) fields.deleteAfterRun = false;
  const route = delivery(values);
  if (route) fields.delivery = route;
  return fields;
}

function ago(ms: number | undefined, now: number): string {
  if (ms === undefined) return '-';
  const delta = ms - now;
  const abs = Math.abs(delta);
  const text =
    abs < 60_000
      ? `${Math.round(abs / 1000)}s`
      : abs < 3_600_000
        ? `${Math.round(abs / 60_000)}m`
        : abs < 86_400_000
          ? `${Math.round(abs / 3_600_000)}h`
          : `${Math.round(abs / 86_400_000)}d`;
  return delta >= 0 ? `in ${text}` : `${text} ago`;
}

function table(jobs: CronJob[]): string {
  if (jobs.length === 0) return 'No cron jobs.';
  const now = Date.now();
  const rows = jobs.map((job) => [
    job.id.slice(0, 8),
    job.name.slice(0, 28),
    describeSchedule(job.schedule).slice(0, 34),
    job.sessionTarget,
    job.state.runningAtMs !== undefined ? 'running' : !job.enabled ? 'disabled' : (job.state.lastStatus ?? 'idle'),
    ago(job.state.nextRunAtMs, now),
    ago(job.state.lastRunAtMs, now),
  ]);
  const head = ['ID', 'NAME', 'SCHEDULE', 'TARGET', 'STATUS', 'NEXT', 'LAST'];
  const widths = head.map((title, index) => Math.max(title.length, ...rows.map((row) => row[index]!.length)));
  return [head, ...rows]
    .map((row) =>
      row
        .map((cell, index) => cell.padEnd(widths[index]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function runsText(entries: RunLogEntry[]): string {
  if (entries.length === 0) return 'No runs yet.';
  return entries
    .map((entry) => {
      const when = new Date(entry.runAtMs ?? entry.ts).toISOString();
      const catchUp = entry.catchUp ? ` catch-up(missed ${entry.catchUp.missed}, ${entry.catchUp.policy})` : '';
      const detail = entry.error
        ? ` error: ${entry.error}`
        : entry.summary
          ? ` ${entry.summary.replace(/\s+/g, ' ').slice(0, 80)}`
          : '';
      return `${when}  ${entry.status.padEnd(7)} ${entry.trigger.padEnd(8)} ${entry.durationMs ?? 0}ms${entry.deliveryStatus ? ` ${entry.deliveryStatus}` : ''}${catchUp}${detail}`;
    })
    .join('\n');
}

interface RunResult {
  ran: boolean;
  runId?: string;
  reason?: string;
}

const RUN_REASONS: Record<string, string> = {
  'already-running': 'it is already running',
  'not-due': 'it is not due (--due runs only a due job)',
  skipped: 'it was skipped',
};

/** What cron.status answers (the fields the human view reads). */
interface CronStatus {
  enabled: boolean;
  schedulerRunning: boolean;
  storePath: string;
  jobs: number;
  enabledJobs: number;
  nextWakeAtMs: number | null;
  running: Array<{ jobId: string; name?: string; phase: string; runningAtMs: number }>;
  errors: Array<{ jobId: string; name: string; lastError: string; consecutiveErrors: number }>;
}

/** `job 1a2b3c4d "daily" (every 1h), next run in 59m` */
function jobLine(job: CronJob): string {
  const next = job.state?.nextRunAtMs;
  const when = !job.enabled ? 'disabled' : next === undefined ? 'no next run' : `next run ${ago(next, Date.now())}`;
  return `job ${job.id} "${job.name}" (${describeSchedule(job.schedule)}), ${when}.`;
}

function statusText(status: CronStatus): string {
  const now = Date.now();
  const scheduler = !status.enabled ? 'off (cron.enabled is false)' : status.schedulerRunning ? 'running' : 'stopped';
  const lines = [
    `Scheduler: ${scheduler}`,
    `Jobs:      ${status.jobs} (${status.enabledJobs} enabled) in ${status.storePath}`,
    `Next wake: ${status.nextWakeAtMs === null ? 'none' : `${ago(status.nextWakeAtMs, now)} (${new Date(status.nextWakeAtMs).toISOString()})`}`,
  ];
  if (status.running.length) lines.push(`Running (${status.running.length}):`);
  for (const run of status.running)
    lines.push(`  ${run.jobId.slice(0, 8)}  ${run.name ?? ''}  ${run.phase}, started ${ago(run.runningAtMs, now)}`);
  if (status.errors.length) lines.push(`Failing (${status.errors.length}):`);
  for (const error of status.errors)
    lines.push(`  ${error.jobId.slice(0, 8)}  ${error.name}: ${error.lastError} (${error.consecutiveErrors} in a row)`);
  return lines.join('\n');
}

export async function cronCommand(argv: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS);
  const [action, ...rest] = positionals;
  const write = (text: string) => ctx.stdout.write(`${text}\n`);
  /** The gateway's answer as JSON with --json, else `human`'s reading of it. */
  const show = <T>(result: T, human: (value: T) => string) =>
    write(values.json ? JSON.stringify(result, null, 2) : human(result));
  const idArg = (): string => {
    const id = rest[0] ?? values.id;
    if (!id) throw new UsageError(`claw cron ${action} needs a job id (see claw cron list --all)`);
    if (rest.length > 1) throw new UsageError(`unexpected argument "${rest[1]}"`);
    return id;
  };
  // State-changing methods carry an idempotency key, so a retried request acts once.
  const call = (method: string, params: Record<string, unknown>) =>
    ctx.gateway.connect(values, (client) =>
      client.request(
        method,
        ['cron.add', 'cron.update', 'cron.remove', 'cron.run'].includes(method)
          ? { ...params, idempotencyKey: randomUUID() }
          : params,
      ),
    );

  switch (action) {
    case 'add':
    case 'create': {
      if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}" (flags: see claw cron --help)`);
      if (values.name === undefined) throw new UsageError('--name is required');
      const job = {
        ...common(values),
        schedule: schedule(values) ?? one(values, ['at', 'every', 'cron'], 'schedule', true),
        payload: payload(values) ?? one(values, ['system-event', 'message', 'command'], 'payload', true),
        ...(values.disabled ? { enabled: false } : {}),
      };
      show((await call('cron.add', { job })) as CronJob, (added) => `Added ${jobLine(added)}`);
      return 0;
    }
    case 'list':
    case 'ls': {
      const result = (await call('cron.list', { includeDisabled: values.all === true })) as { jobs: CronJob[] };
      show(result, (listed) => table(listed.jobs));
      return 0;
    }
    case 'status':
      show((await call('cron.status', {})) as CronStatus, statusText);
      return 0;
    case 'edit':
    case 'update': {
      const id = idArg();
      if (values.enable && values.disable) throw new UsageError('use --enable or --disable, not both');
      const patch: Record<string, unknown> = { ...common(values) };
      const when = schedule(values);
      if (when) patch.schedule = when;
      const what = payload(values);
      if (what) patch.payload = what;
      if (values.enable) patch.enabled = true;
      if (values.disable || values.disabled) patch.enabled = false;
      if (Object.keys(patch).length === 0)
        throw new UsageError('nothing to change: give at least one flag (see claw cron --help)');
      show((await call('cron.update', { jobId: id, patch })) as CronJob, (job) => `Updated ${jobLine(job)}`);
      return 0;
    }
    case 'enable':
    case 'disable': {
      const patch = { enabled: action === 'enable' };
      const job = (await call('cron.update', { jobId: idArg(), patch })) as CronJob;
      show(job, () => `${action === 'enable' ? 'Enabled' : 'Disabled'} ${jobLine(job)}`);
      return 0;
    }
    case 'rm':
    case 'remove':
    case 'delete': {
      const id = idArg();
      const result = (await call('cron.remove', { jobId: id })) as { removed: boolean };
      show(result, ({ removed }) => (removed ? `Removed job ${id} (its run history stays).` : `No job ${id}.`));
      return result.removed ? 0 : 1;
    }
    case 'run': {
      const id = idArg();
      const result = (await call('cron.run', { jobId: id, mode: values.due ? 'due' : 'force' })) as RunResult;
      show(result, ({ ran, runId, reason }) =>
        ran
          ? `Started job ${id} (run ${runId}); see claw cron runs ${id}.`
          : `Job ${id} did not run: ${RUN_REASONS[reason ?? ''] ?? reason}.`,
      );
      return 0;
    }
    case 'runs': {
      const limit = values.limit === undefined ? undefined : Number(values.limit);
      if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
        throw new UsageError(`--limit must be a positive whole number, got "${values.limit}"`);
      const result = (await call('cron.runs', { jobId: idArg(), ...(limit ? { limit } : {}) })) as {
        entries: RunLogEntry[];
      };
      show(result, ({ entries }) => runsText(entries));
      return 0;
    }
    case undefined:
      write(CRON_HELP);
      return 0;
    default:
      throw unknownCommand('cron', action, ['add', 'list', 'status', 'edit', 'rm', 'enable', 'disable', 'run', 'runs']);
  }
}
