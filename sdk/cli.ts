/**
 * For plugins that add `claw` commands: flag parsing with Node's util.parseArgs, usage
 * errors (exit 2), and gateway errors (exit 1) reported the same way by every command.
 * A command reaches the running gateway through `ctx.gateway` (types/cli.ts).
 */
import { CLI_CLIENT_ID } from './protocol/constants.js';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ErrorShape } from './generated/protocol.js';
import type { CliContext } from './types/plugin.js';

/** Wrong flags or arguments: `claw: <message>`, exit 2. `typo`: the quoted word matched none of `choices` ("Did you mean …?"). */
export class UsageError extends Error {
  typo?: { word: string; choices: readonly string[] };
}

/** `claw cron ad`: "Unknown command 'cron ad'", and the CLI suggests the closest of `choices`. */
export const unknownCommand = (command: string, word: string, choices: readonly string[]) =>
  Object.assign(new UsageError(`Unknown command '${command} ${word}'`), { typo: { word, choices } });

/** A failed gateway request or handshake, carrying the gateway's error shape. */
export class GatewayRequestError extends Error {
  readonly code: string;
  readonly details?: unknown;
  readonly retryable?: boolean;
  readonly retryAfterMs?: number;
  constructor(error: ErrorShape) {
    super(error.message);
    this.name = 'GatewayRequestError';
    this.code = error.code;
    this.details = error.details;
    this.retryable = error.retryable;
    this.retryAfterMs = error.retryAfterMs;
  }
}

type FlagSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;
type Parsed<T extends FlagSpec> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
>;

/**
 * `--to -100200`: Node's parser takes a value starting with "-" for another flag and
 * refuses it, but Telegram group ids are negative. A string flag followed by "-<digit>…"
 * gets that word as its value (written `--to=-100200`, which the parser accepts).
 */
export function joinNegativeValues(argv: readonly string[], options: FlagSpec): string[] {
  const out: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index]!;
    const next = argv[index + 1];
    if (word === '--') {
      out.push(...argv.slice(index));
      break;
    }
    const long = /^--([^=]+)$/.exec(word)?.[1];
    const name =
      long ??
      (/^-([^-])$/.test(word) ? Object.keys(options).find((key) => options[key]!.short === word[1]) : undefined);
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`--${name}=${next}`);
      index++;
      continue;
    }
    out.push(word);
  }
  return out;
}

/** Strict flag parsing; unknown flags become a UsageError that names them (and carries the known ones). */
export function parseFlags<T extends FlagSpec>(argv: string[], options: T): Parsed<T> {
  try {
    return parseArgs({ args: joinNegativeValues(argv, options), options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = (error as Error).message.replace(/\. To specify.*$/s, '');
    const word = /^Unknown option '(--[^']+)'/.exec(message)?.[1];
    const choices = Object.keys(options).map((name) => `--${name}`);
    throw Object.assign(new UsageError(message), word ? { typo: { word, choices } } : {});
  }
}

/** Run a command body. Its usage (exit 2) and gateway (exit 1) errors are reported by the CLI, alike for every command. */
export async function runCliCommand(_ctx: CliContext, body: () => Promise<number> | number): Promise<number> {
  return body();
}

/** A plugin CLI command's `run`: `--help` prints `help`, anything else runs `body` through runCliCommand. */
export function cliCommand(
  help: string,
  body: (argv: string[], ctx: CliContext) => Promise<number> | number,
): (argv: string[], ctx: CliContext) => Promise<number> {
  return (argv, ctx) =>
    runCliCommand(ctx, () => {
      if (argv.includes('--help')) {
        ctx.stdout.write(`${help}\n`);
        return 0;
      }
      return body(argv, ctx);
    });
}

/** The lock a running gateway keeps in its state dir. */
export function gatewayLockPath(stateDir: string): string {
  return join(stateDir, 'gateway.lock');
}

export type * from './types/cli.js';
export { CLI_CLIENT_ID };
