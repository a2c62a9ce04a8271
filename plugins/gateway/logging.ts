/**
 * Gateway logs: pino, JSON lines into <stateDir>/logs/gateway.log (what `logs.tail` reads)
 * and to stdout — as JSON when stdout is a pipe, as short readable lines on a terminal.
 *
 * Secrets: the kernel masks what plugins log before it gets here; every serialized record
 * is masked once more on its way to the file and stdout, so a line logged through the pino
 * instance directly cannot leak either. The log folder is 0700 and the files 0600.
 */
import { chmodSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger, LogLevel, Redactor } from '../../sdk/index.js';
import { logFile } from './log-file.js';
import { prettyLine } from './pretty-line.js';

export { prettyLine };

export interface GatewayLogging {
  logger: Logger;
  file: string;
  flush(): void;
  /** Mask with this redactor from now on (the kernel's, once one has booted with the config). */
  setRedactor(redact: Pick<Redactor, 'text'>): void;
}

// pino is bundled into this plugin's build (scripts/bundle-plugins.mjs): one file to load, not fifteen.
type Pino = pino.Logger;

function prettyStream(out: NodeJS.WritableStream, color: boolean): Writable {
  let carry = '';
  return new Writable({
    write(chunk, _encoding, done) {
      const text = carry + chunk.toString();
      const lines = text.split('\n');
      carry = lines.pop() ?? '';
      for (const line of lines) {
        if (!line) continue;
        try {
          out.write(prettyLine(JSON.parse(line) as Record<string, unknown>, color));
        } catch {
          out.write(`${line}\n`);
        }
      }
      done();
    },
  });
}

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

export function createGatewayLogging(options: {
  stateDir: string;
  level: Exclude<LogLevel, 'silent'>;
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
  const fileStream = pino.destination({ dest: file, sync: false, mkdir: true, mode: 0o600 });
  const console = options.stdout.isTTY
    ? prettyStream(options.stdout, !process.env.NO_COLOR)
    : (options.stdout as NodeJS.WritableStream);
  const root = pino(
    {
      level: options.level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.epochTime,
      hooks: { streamWrite: (line) => redact.text(line) },
    },
    pino.multistream([
      { stream: console, level: options.level },
      { stream: fileStream, level: options.level },
    ]),
  );
  const flush = () => {
    try {
      fileStream.flushSync();
    } catch {
      // The file was never opened (we failed very early): nothing to flush.
    }
  };
  return {
    logger: adapt(root),
    file,
    flush,
    setRedactor: (next) => {
      redact = next;
    },
  };
}

/** The kernel's Logger shape over a pino logger. */
export function adapt(base: Pino): Logger {
  return {
    debug: (message, data) => base.debug(data ?? {}, message),
    info: (message, data) => base.info(data ?? {}, message),
    warn: (message, data) => base.warn(data ?? {}, message),
    error: (message, data) => base.error(data ?? {}, message),
    child: (bindings) => adapt(base.child(bindings)),
  };
}
