/**
 * A gateway log record as one readable line, for the gateway's terminal output and for
 * `claw logs`. Kept apart from logging.ts so reading the log loads no writer.
 */
export const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
const COLORS: Record<number, string> = {
  20: '\x1b[90m',
  30: '\x1b[36m',
  40: '\x1b[33m',
  50: '\x1b[31m',
  60: '\x1b[31m',
};

/** One readable line per record: `12:03:04 INFO  [plugin] message key=value`. */
export function prettyLine(record: Record<string, unknown>, color: boolean): string {
  const { level, time, msg, pid: _pid, hostname: _host, plugin, ...rest } = record;
  const clock = new Date(Number(time)).toTimeString().slice(0, 8);
  const name = (LEVEL_NAMES[Number(level)] ?? String(level)).padEnd(5);
  const scope = typeof plugin === 'string' ? `[${plugin}] ` : '';
  const extra = Object.entries(rest)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  const head = color ? `${COLORS[Number(level)] ?? ''}${name}\x1b[0m` : name;
  return `${clock} ${head} ${scope}${String(msg ?? '')}${extra ? ` ${extra}` : ''}\n`;
}
