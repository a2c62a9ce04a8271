/**
 * For plugins that add `claw` commands: flag parsing with Node's util.parseArgs, usage
 * errors (exit 2), and gateway errors (exit 1) reported the same way by every command.
 */
import { parseArgs } from 'node:util';
import type { CliContext } from './types/plugin.js';
import { GatewayRequestError } from './client.js';

/** Wrong flags or arguments: printed as `claw: <message>`, exit code 2. */
export class UsageError extends Error {}

type FlagSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;
type Parsed<T extends FlagSpec> = ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>>;

/** Strict flag parsing; unknown flags become a UsageError that names them. */
export function parseFlags<T extends FlagSpec>(argv: string[], options: T): Parsed<T> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify.*$/s, ''));
  }
}

/** Run a command body; usage and gateway errors become a message on stderr and an exit code. */
export async function runCliCommand(ctx: CliContext, body: () => Promise<number> | number): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof UsageError) {
      ctx.stderr.write(`claw: ${error.message}\n`);
      return 2;
    }
    if (error instanceof GatewayRequestError) {
      ctx.stderr.write(`claw: ${error.code}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

/** A plugin CLI command's `run`: `--help` prints `help`, anything else runs `body` through runCliCommand. */
export function cliCommand(help: string, body: (argv: string[], ctx: CliContext) => Promise<number> | number): (argv: string[], ctx: CliContext) => Promise<number> {
  return (argv, ctx) =>
    runCliCommand(ctx, () => {
      if (argv.includes('--help')) {
        ctx.stdout.write(`${help}\n`);
        return 0;
      }
      return body(argv, ctx);
    });
}
