/**
 * `claw logs`: the gateway's log file read through its `logs.tail` method, so it works the
 * same for a gateway on this machine or elsewhere. Readable lines on a terminal, the JSON
 * records with `--json`; `--follow` polls from the last cursor until Ctrl-C, reconnecting
 * (with backoff) when the gateway restarts.
 */
import type { CliContext, GatewayConnection, GatewayFlags } from '../../sdk/index.js';
import { GatewayRequestError, parseFlags as parse, UsageError } from '../../sdk/cli.js';
import { prettyLine } from './pretty-line.js';
import { fromOpenclawRecord } from './openclaw-log-record.js';
import type { TailResult } from './tail.js';

export const LOGS_HELP = `Usage: claw logs [--follow] [--json] [--limit <n>] [--level <level>] [options]

Shows the gateway's log (<state dir>/logs/gateway.log) through the running gateway.

Options:
  --follow, -f         keep showing new lines until Ctrl-C
  --limit <n>          lines to show first (default 200, at most 5000)
  --max-bytes <n>      read at most this much of the file per request (default 250000)
  --interval <ms>      how often --follow asks for new lines (default 1000)
  --level <level>      only lines at this level or above: debug | info | warn | error
  --json               one JSON record per line (as in the log file)
  --plain              no colors (also NO_COLOR, or when the output is not a terminal)
  --url <ws://…>, --port <n>, --token <t>, --password <p>, --timeout <ms>
                       reach a gateway other than this state dir's`;

const LEVELS: Record<string, number> = { debug: 20, info: 30, warn: 40, error: 50 };
const MAX_RETRIES = 8;

export async function logs(argv: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parse(argv, {
    follow: { type: 'boolean', short: 'f' },
    limit: { type: 'string' },
    'max-bytes': { type: 'string' },
    interval: { type: 'string' },
    level: { type: 'string' },
    json: { type: 'boolean' },
    plain: { type: 'boolean' },
    url: { type: 'string' },
    port: { type: 'string' },
    token: { type: 'string' },
    password: { type: 'string' },
    timeout: { type: 'string' },
    help: { type: 'boolean' },
  });
  if (values.help) {
    ctx.stdout.write(`${LOGS_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}" (see claw logs --help)`);
  if (values.url !== undefined && values.port !== undefined)
    throw new UsageError('--url and --port cannot be combined');
  const limit = integer('--limit', values.limit, 200, 1, 5000);
  const maxBytes = integer('--max-bytes', values['max-bytes'], 250_000, 1024, 4 * 1024 * 1024);
  const interval = integer('--interval', values.interval, 1000, 100, 3_600_000);
  const port = values.port === undefined ? undefined : integer('--port', values.port, 0, 1, 65535);
  let minLevel = 0;
  if (values.level !== undefined) {
    const level = LEVELS[values.level];
    if (level === undefined) throw new UsageError(`--level must be debug, info, warn or error, got "${values.level}"`);
    minLevel = level;
  }
  const flags: GatewayFlags = {
    url: port !== undefined ? `ws://127.0.0.1:${port}` : values.url,
    token: values.token,
    password: values.password,
    timeout: values.timeout,
  };
  const color =
    !values.plain && !values.json && (ctx.stdout as { isTTY?: boolean }).isTTY === true && !ctx.env.NO_COLOR;
  const print = (line: string) => {
    const record = parseRecord(line);
    if (record && typeof record.level === 'number' && record.level < minLevel) return;
    if (!record) {
      if (minLevel === 0) ctx.stdout.write(values.json ? `${JSON.stringify({ type: 'raw', line })}\n` : `${line}\n`);
      return;
    }
    if (values.json) ctx.stdout.write(`${line}\n`);
    else {
      // The fields logs.tail adds for OpenClaw's readers repeat what the line already says.
      const { message: _message, _meta, ...own } = record;
      ctx.stdout.write(prettyLine(own, color));
    }
  };
  const notice = (text: string) =>
    ctx.stderr.write(values.json ? `${JSON.stringify({ type: 'notice', message: text })}\n` : `[logs] ${text}\n`);

  let cursor: number | undefined;
  let retries = 0;
  let stopped = false;
  let wake: (() => void) | undefined;
  const stop = () => {
    stopped = true;
    wake?.();
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => (clearTimeout(timer), resolve());
    });
  const read = async (client: GatewayConnection) => {
    do {
      const tail = await client.request<TailResult>('logs.tail', {
        ...(cursor === undefined ? { limit } : { cursor }),
        maxBytes,
      });
      if (cursor !== undefined && tail.reset) notice('the log was rotated; reading the new file from its start');
      cursor = tail.cursor;
      for (const line of tail.lines) if (line) print(line);
      if (retries > 0) notice('gateway reconnected');
      retries = 0;
      if (values.follow && !stopped && !tail.truncated) await pause(interval);
    } while (values.follow && !stopped);
  };

  if (values.follow) {
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  try {
    for (;;) {
      try {
        await ctx.gateway.connect(flags, read);
        return 0;
      } catch (error) {
        // A gateway that restarts mid-follow comes back; anything else (auth, a bad flag) ends it.
        const transient = error instanceof GatewayRequestError && error.code === 'UNAVAILABLE';
        if (!values.follow || stopped || !transient || retries >= MAX_RETRIES) throw error;
        retries++;
        const delay = Math.min(1000 * 2 ** (retries - 1), 30_000);
        notice(`${(error as Error).message}; retrying in ${Math.round(delay / 1000)} s (${retries}/${MAX_RETRIES})`);
        await pause(delay);
        if (stopped) return 0;
      }
    }
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}

function parseRecord(line: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? fromOpenclawRecord(value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function integer(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || number < min || number > max)
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got "${value}"`);
  return number;
}
