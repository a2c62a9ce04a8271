/**
 * The plain logger: records at or above a level go to a sink, by default one line each on
 * stderr. The kernel takes any Logger; the CLI, the test kit and tests build theirs here.
 */
import type { Logger } from '../kernel/index.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

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
