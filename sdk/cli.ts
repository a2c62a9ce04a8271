/**
 * For plugins that add `claw` commands: flag parsing with Node's util.parseArgs, usage
 * errors (exit 2), and gateway errors (exit 1) reported the same way by every command.
 */
import { CLI_CLIENT_ID } from './protocol/constants.js';
import { parseArgs } from 'node:util';
import type { CliContext, PluginApi } from './types/plugin.js';
import { GatewayRequestError, type GatewayClient, type GatewayClientOptions } from './client.js';
import { operatorClientOptions, withGatewayClient } from './operator.js';

/** Wrong flags or arguments: printed as `claw: <message>`, exit code 2. */
export class UsageError extends Error {}

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

/** Strict flag parsing; unknown flags become a UsageError that names them. */
export function parseFlags<T extends FlagSpec>(argv: string[], options: T): Parsed<T> {
  try {
    return parseArgs({ args: joinNegativeValues(argv, options), options, allowPositionals: true, strict: true });
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

/** The flags every gateway-backed plugin command takes: `--url`, `--token`, `--timeout <ms>`. */
export interface GatewayFlags {
  url?: string;
  token?: string;
  password?: string;
  timeout?: string;
}

/** Client options from those flags, the state dir's running gateway and `gateway.*` config (or the given section). */
export function cliClientOptions(
  flags: GatewayFlags,
  ctx: CliContext,
  api: Pick<PluginApi, 'kernel' | 'version'>,
  gateway = (api.kernel.config() as { gateway?: Parameters<typeof operatorClientOptions>[0]['gateway'] }).gateway,
): GatewayClientOptions {
  const timeout = flags.timeout === undefined ? undefined : Number(flags.timeout);
  if (timeout !== undefined && (!Number.isFinite(timeout) || timeout <= 0))
    throw new UsageError(`--timeout must be milliseconds, got "${flags.timeout}"`);
  return operatorClientOptions({
    stateDir: api.kernel.paths.stateDir,
    env: ctx.env,
    gateway,
    url: flags.url,
    token: flags.token,
    password: flags.password,
    timeoutMs: timeout,
    client: { id: CLI_CLIENT_ID, version: api.version ?? '0', mode: 'cli' },
  });
}

/** Connect with those flags, run `work`, close. */
export function withCliGateway<T>(
  flags: GatewayFlags,
  ctx: CliContext,
  api: Pick<PluginApi, 'kernel' | 'version'>,
  work: (client: GatewayClient) => Promise<T>,
): Promise<T> {
  return withGatewayClient(cliClientOptions(flags, ctx, api), work);
}

/** Finding and talking to the running gateway of a state dir, as every `claw` command does. */
export {
  DEFAULT_GATEWAY_PORT,
  gatewayLockPath,
  lockHolderAlive,
  operatorClientOptions,
  runningGateway,
  withGatewayClient,
  type GatewayLockInfo,
  type OperatorConnection,
} from './operator.js';
/** Changing config from a command: through the running gateway, or under the config lock without one. */
export * from './config-change.js';
export { CLI_CLIENT_ID };
