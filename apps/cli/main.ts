/**
 * `claw`: the command line. Start-up imports only what the command needs: `--help` and
 * `--version` touch no kernel code, and each command module is loaded on demand.
 */
import { fileURLToPath } from 'node:url';
import { CliError, type Io } from './io.js';
import type { UsageError } from '../../sdk/cli.js';
import { trace } from '../../kernel/util/trace.js';

interface Globals {
  json: boolean;
  help: boolean;
  version: boolean;
  rest: string[];
}

/** Global flags may appear anywhere before `--`; everything else is passed on in order. */
function parseGlobals(argv: readonly string[], env: Record<string, string | undefined>): Globals {
  const out: Globals = { json: false, help: false, version: false, rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.rest.push(...argv.slice(i));
      break;
    }
    if (arg === '--json') out.json = true;
    else if (arg === '--help' || arg === '-h') out.help = true;
    else if ((arg === '--version' || arg === '-V') && out.rest.length === 0) out.version = true;
    else if (arg === '--profile' || arg.startsWith('--profile=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (!value) throw new CliError('--profile needs a name', 2);
      env.OPENCLAW_PROFILE = value;
    } else out.rest.push(arg);
  }
  return out;
}

export async function main(argv: readonly string[], io: Omit<Io, 'json'>): Promise<number> {
  trace('cli: main');
  let globals: Globals;
  try {
    globals = parseGlobals(argv, io.env);
  } catch (error) {
    return await report({ ...io, json: false }, error);
  }
  const ctx: Io = { ...io, json: globals.json };
  try {
    if (globals.version) {
      const { clawVersion } = await import('../../sdk/version.js');
      ctx.stdout.write(`claw ${clawVersion()}\n`);
      return 0;
    }
    const [command, ...args] = globals.rest;
    if (!command || command === 'help') {
      const { printHelp } = await import('./help.js');
      printHelp(ctx, args[0], fileURLToPath(new URL('../../plugins/', import.meta.url)));
      return 0;
    }
    if (!globals.help && !leavesStateDirMode(command, args)) await tightenState(ctx);
    switch (command) {
      case 'plugins':
        return await (await import('./commands/plugins.js')).run(args, ctx, globals.help);
      case 'config':
        return await (await import('./commands/config.js')).run(args, ctx, globals.help);
      case 'agents':
        return await (await import('./commands/agents.js')).run(args, ctx, globals.help);
      case 'sandbox':
        return await (await import('./commands/sandbox.js')).run(args, ctx, globals.help);
      case 'security':
        return await (await import('./commands/security/index.js')).run(args, ctx, globals.help);
      case 'doctor':
        return await (await import('./commands/doctor/index.js')).run(args, ctx, globals.help);
      case 'backup':
        return await (await import('./commands/backup/index.js')).run(args, ctx, globals.help);
      case 'reset':
        return await (await import('./commands/maintenance/reset.js')).run(args, ctx, globals.help);
      case 'uninstall':
        return await (await import('./commands/maintenance/uninstall.js')).run(args, ctx, globals.help);
      case 'update':
        return await (await import('./commands/maintenance/update.js')).run(args, ctx, globals.help);
      default:
        return await (await import('./commands/plugin-cli.js')).run(command, args, ctx, globals.help);
    }
  } catch (error) {
    return await report(ctx, error);
  }
}

/**
 * `claw security audit` and `claw doctor` report a loose state dir (and fix it when asked), so
 * they must see it as it is; `claw gateway` tightens it itself and says so in the gateway's log.
 */
function leavesStateDirMode(command: string, args: readonly string[]): boolean {
  return command === 'security' || command === 'doctor' || (command === 'gateway' && args[0] !== 'call');
}

/** Every other command opens the state dir: one other users can read is made 0700 first, with a warning. */
async function tightenState(io: Io): Promise<void> {
  const [{ stateDirTightenedMessage, tightenStateDir }, { resolveStateDir }] = await Promise.all([
    import('../../sdk/fs.js'),
    import('../../kernel/config/paths.js'),
  ]);
  let dir: string;
  try {
    dir = resolveStateDir(io.env);
  } catch {
    return; // an invalid OPENCLAW_PROFILE: the command reports it
  }
  const was = tightenStateDir(dir);
  if (was !== undefined) io.stderr.write(`warning: ${stateDirTightenedMessage(dir, was)}\n`);
}

async function report(io: Io, error: unknown): Promise<number> {
  const { GatewayRequestError, UsageError } = await import('../../sdk/cli.js');
  const usage = error instanceof UsageError ? error : undefined;
  const gateway = error instanceof GatewayRequestError ? error : undefined;
  const known = usage !== undefined || error instanceof CliError || (error instanceof Error && 'code' in error);
  const mask = await secretMask(io.env);
  const text = error instanceof Error ? error.message : String(error);
  const message = mask(usage?.typo ? `${text}${await typoHint(text, usage.typo)}` : text);
  if (io.json) {
    const shape = gateway ? { code: gateway.code, message } : { message };
    io.stdout.write(`${JSON.stringify({ ok: false, error: shape }, null, 2)}\n`);
  } else {
    io.stderr.write(`claw: ${gateway ? `${gateway.code}: ` : ''}${message}\n`);
    if (!known && error instanceof Error && io.env.CLAW_DEBUG) io.stderr.write(`${mask(String(error.stack))}\n`);
  }
  return usage ? 2 : error instanceof CliError ? error.exitCode : 1;
}

/**
 * ". Did you mean 'plugins install'?", or where the right words are listed. The words before
 * the typo come from the message's quote: "Unknown command 'plugins instal'".
 */
async function typoHint(message: string, typo: NonNullable<UsageError['typo']>): Promise<string> {
  const { closest } = await import('./suggest.js');
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? typo.word;
  const before = quoted.endsWith(typo.word) ? quoted.slice(0, quoted.length - typo.word.length) : '';
  const near = closest(typo.word, typo.choices);
  if (near) return `. Did you mean '${before}${near}'?`;
  return typo.word.startsWith('-') ? '' : ` (see claw ${before}--help)`;
}

/**
 * Error messages can quote secrets (a request URL with a bot token, a rejected key), so
 * they are masked with what the config file and environment know. Loaded on this error
 * path only: `--help` and `--version` stay free of kernel code.
 */
async function secretMask(env: Record<string, string | undefined>): Promise<(text: string) => string> {
  const { createRedactor } = await import('../../host/redact.js');
  let config: Record<string, unknown> = {};
  try {
    const [{ readConfigFile }, { resolveConfigPath }] = await Promise.all([
      import('../../kernel/config/store.js'),
      import('../../kernel/config/paths.js'),
    ]);
    config = readConfigFile(resolveConfigPath(env), env).resolved;
  } catch {
    // No readable config: built-in shapes and secret-named environment variables still apply.
  }
  const redactor = createRedactor({ config, env });
  return (text) => redactor.text(text);
}
