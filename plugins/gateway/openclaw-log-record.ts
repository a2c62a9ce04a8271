/**
 * OpenClaw's gateway logs with tslog, not pino: its `logs.tail` lines carry the level in
 * `_meta.logLevelName`, an ISO `time`, the logger's bindings (`{"subsystem":…}`) as argument
 * "0" and the message and its fields as the later numbered arguments. `claw logs` against an
 * OpenClaw gateway reads them as the pino-shaped records claw writes, so one printer and one
 * `--level` filter serve both.
 */
const TSLOG_LEVELS: Record<string, number> = {
  SILLY: 10,
  TRACE: 10,
  DEBUG: 20,
  INFO: 30,
  WARN: 40,
  ERROR: 50,
  FATAL: 60,
};

/** `record` as claw's own shape when it is an OpenClaw (tslog) record; otherwise `record` unchanged. */
export function fromOpenclawRecord(record: Record<string, unknown>): Record<string, unknown> {
  const meta = record._meta as { logLevelName?: unknown; date?: unknown } | undefined;
  if (typeof record.level === 'number' || typeof meta?.logLevelName !== 'string') return record;
  const out: Record<string, unknown> = {
    level: TSLOG_LEVELS[meta.logLevelName.toUpperCase()] ?? 30,
    time: Date.parse(String(record.time ?? meta.date)) || Date.now(),
  };
  const texts: string[] = [];
  for (let index = 0; String(index) in record; index++) {
    const arg = record[String(index)];
    const bindings = index === 0 && typeof arg === 'string' ? parseObject(arg) : undefined;
    if (bindings) {
      const scope = bindings.subsystem ?? bindings.module;
      if (typeof scope === 'string') out.plugin = scope;
    } else if (arg !== null && typeof arg === 'object' && !Array.isArray(arg)) Object.assign(out, arg);
    else if (arg !== '' && arg !== undefined) texts.push(typeof arg === 'string' ? arg : JSON.stringify(arg));
  }
  out.msg = texts.join(' ') || (typeof record.message === 'string' ? record.message : '');
  return out;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
