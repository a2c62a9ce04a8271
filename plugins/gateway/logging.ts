/**
 * Gateway logs: JSON lines into <stateDir>/logs/gateway.log (what `logs.tail` reads) and to
 * stdout — as JSON when stdout is a pipe, as short readable lines on a terminal. A record
 * is pino's shape (`level` 20–50, `time` in epoch ms, `pid`, the bindings, the data, `msg`),
 * which claw's and OpenClaw's log readers expect.
 *
 * Written here rather than through pino: the gateway logs a few lines a second, and pino's
 * load and set-up were ≈ 10 ms of every gateway start.
 *
 * Secrets: the kernel masks what plugins log before it gets here; every serialized line is
 * masked once more on its way to the file and stdout, so a line logged through this logger
 * directly cannot leak either. The log folder is 0700 and the files 0600.
 */
import { chmodSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger, LogLevel, Redactor } from '../../sdk/index.js';
import { logFile } from './log-file.js';
import { prettyLine } from './pretty-line.js';

export { prettyLine };

export interface GatewayLogging {
  logger: Logger;
  file: string;
  /** Write what is still buffered for the file now (before the process exits). */
  flush(): void;
  /** Mask with this redactor from now on (the kernel's, once one has booted with the config). */
  setRedactor(redact: Pick<Redactor, 'text'>): void;
}

type Level = Exclude<LogLevel, 'silent'>;
const LEVEL_NUMBERS: Record<Level, number> = { debug: 20, info: 30, warn: 40, error: 50 };

/** Keep one previous file when the log grows past `maxBytes` (checked at start); it keeps its 0600. */
function rotate(file: string, maxBytes: number): void {
  try {
    if (statSync(file).size > maxBytes) renameSync(file, `${file}.1`);
  } catch {
    // No log yet.
  }
}

/** Owner-only, also for a folder or file an older version created with the default umask. */
function restrict(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch {
    // Not there (yet), or not ours to change: the open below reports real problems.
  }
}

/**
 * Lines logged in one event-loop turn reach the file in one write, after the turn, so a
 * burst of lines costs one system call; writes are synchronous, so they keep their order
 * and `flush()` can finish the job before an exit.
 */
function appender(file: string): { push(line: string): void; flush(): void } {
  const fd = openSync(file, 'a', 0o600);
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const chunk = Buffer.from(pending.join(''));
    pending = [];
    try {
      for (let at = 0; at < chunk.length;) at += writeSync(fd, chunk, at);
    } catch {
      // A full disk or a closed descriptor: the console copy still has the line.
    }
  };
  return {
    push(line) {
      pending.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

/** JSON that cannot throw: cycles become "[Circular]", bigints strings, errors their name, message and stack. */
function serialize(record: Record<string, unknown>): string {
  try {
    return JSON.stringify(record);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(record, (_key, value: unknown) => {
      if (typeof value === 'bigint') return value.toString();
      if (value instanceof Error) return { type: value.name, message: value.message, stack: value.stack };
      if (value !== null && typeof value === 'object') {
        if (seen.has(value)) return '[Circular]';
        seen.add(value);
      }
      return value;
    });
  }
}

function readable(line: string, color: boolean): string {
  try {
    return prettyLine(JSON.parse(line) as Record<string, unknown>, color);
  } catch {
    return line; // masking made it invalid JSON: show it as it is
  }
}

export function createGatewayLogging(options: {
  stateDir: string;
  level: Level;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  maxFileBytes: number;
  /** Until setRedactor() is called: the redactor of the kernel that runs the command. */
  redact: Pick<Redactor, 'text'>;
}): GatewayLogging {
  const file = logFile(options.stateDir);
  const dir = join(options.stateDir, 'logs');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  restrict(dir, 0o700);
  rotate(file, options.maxFileBytes);
  restrict(file, 0o600);
  let redact = options.redact;
  const out = appender(file);
  const pretty = options.stdout.isTTY === true;
  const color = pretty && !process.env.NO_COLOR;
  const threshold = LEVEL_NUMBERS[options.level];

  const write = (level: Level, bindings: Record<string, unknown>, message: string, data?: Record<string, unknown>) => {
    const number = LEVEL_NUMBERS[level];
    if (number < threshold) return;
    const record = { level: number, time: Date.now(), pid: process.pid, ...bindings, ...data, msg: message };
    const line = `${redact.text(serialize(record))}\n`;
    out.push(line);
    options.stdout.write(pretty ? readable(line, color) : line);
  };
  const logger = (bindings: Record<string, unknown>): Logger => ({
    debug: (message, data) => write('debug', bindings, message, data),
    info: (message, data) => write('info', bindings, message, data),
    warn: (message, data) => write('warn', bindings, message, data),
    error: (message, data) => write('error', bindings, message, data),
    child: (more) => logger({ ...bindings, ...more }),
  });
  return {
    logger: logger({}),
    file,
    flush: out.flush,
    setRedactor: (next) => {
      redact = next;
    },
  };
}
