/**
 * The kernel's logging interface. The kernel only needs levels and child loggers; the
 * gateway plugs pino in behind the same shape, tests capture lines, the CLI prints warnings.
 */
import type { Redactor } from './redact.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

export interface LogRecord {
  level: Exclude<LogLevel, 'silent'>;
  time: number;
  message: string;
  [key: string]: unknown;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface SimpleLoggerOptions {
  level?: LogLevel;
  /** Receives every record at or above `level`. Default: one line on stderr. */
  sink?: (record: LogRecord) => void;
  bindings?: Record<string, unknown>;
}

export function createLogger(options: SimpleLoggerOptions = {}): Logger {
  const threshold = RANK[options.level ?? 'info'];
  const sink = options.sink ?? stderrSink;
  const bindings = options.bindings ?? {};
  const emit = (level: Exclude<LogLevel, 'silent'>) => (message: string, data?: Record<string, unknown>) => {
    if (RANK[level] < threshold) return;
    sink({ ...bindings, ...data, level, time: Date.now(), message });
  };
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (more) => createLogger({ ...options, bindings: { ...bindings, ...more } }),
  };
}

function stderrSink(record: LogRecord): void {
  const scope = typeof record.plugin === 'string' ? `[${record.plugin}] ` : '';
  process.stderr.write(`${record.level}: ${scope}${record.message}\n`);
}

export const silentLogger: Logger = createLogger({ level: 'silent' });

/**
 * `base` behind a redactor: every message, every string in `data` and every binding is
 * masked before the sink sees it, so no plugin can log a secret by accident.
 */
export function redactingLogger(base: Logger, redact: Pick<Redactor, 'text' | 'value'>): Logger {
  const data = (value: Record<string, unknown> | undefined) => (value === undefined ? undefined : redact.value(value));
  return {
    debug: (message, more) => base.debug(redact.text(message), data(more)),
    info: (message, more) => base.info(redact.text(message), data(more)),
    warn: (message, more) => base.warn(redact.text(message), data(more)),
    error: (message, more) => base.error(redact.text(message), data(more)),
    child: (bindings) => redactingLogger(base.child(redact.value(bindings)), redact),
  };
}
