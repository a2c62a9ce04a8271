/**
 * `claw node <subcommand>`. `run` is the node host in the foreground; each subcommand is an
 * entry of NODE_SUBCOMMANDS (the service commands — install, status, stop, … — are added there).
 */
import type { CliContext, KernelServices } from '../../sdk/index.js';
import { parseFlags, unknownCommand, UsageError } from '../../sdk/cli.js';
import { runNodeHost, type NodeRunFlags } from './node-run.js';
import { NODE_SERVICE_SUBCOMMANDS } from './service-cli.js';

export const NODE_RUN_HELP = `Usage: claw node run [--host <host>] [--port <port>] [--tls] [--tls-fingerprint <sha256>]
                     [--context-path <path>] [--pair <setup code>] [--display-name <name>]
                     [--node-id <id>] [--commands <a,b,…>]
  Connect this machine to a gateway as a node and run what it sends (system.run, system.which,
  exec approvals) under this state dir's exec approvals, until stopped (Ctrl-C); files inside
  nodeHost.fileTransfer.roots and the browser (browser.proxy) too when configured.
  Auth: --pair's bootstrap token, else OPENCLAW_GATEWAY_TOKEN / _PASSWORD, else config
  gateway.auth.*, else the device token the gateway issued before (kept in <stateDir>/node/).`;

const RUN_FLAGS = {
  help: { type: 'boolean' },
  host: { type: 'string' },
  port: { type: 'string' },
  tls: { type: 'boolean' },
  'no-tls': { type: 'boolean' },
  'tls-fingerprint': { type: 'string' },
  'context-path': { type: 'string' },
  pair: { type: 'string' },
  'display-name': { type: 'string' },
  'node-id': { type: 'string' },
  commands: { type: 'string' },
} as const;

function nonEmpty(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!value.trim()) throw new UsageError(`--${flag} needs a value`);
  return value.trim();
}

export function runFlags(argv: string[]): NodeRunFlags {
  const { values, positionals } = parseFlags(argv, RUN_FLAGS);
  if (positionals.length > 0) throw new UsageError(`claw node run takes no arguments (got "${positionals[0]}")`);
  if (values.tls && values['no-tls']) throw new UsageError('--tls and --no-tls contradict each other');
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new UsageError(`--port must be a port number (1-65535), got "${values.port}"`);
  }
  const commands = nonEmpty('commands', values.commands)
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return {
    host: nonEmpty('host', values.host),
    port,
    tls: values.tls ? true : values['no-tls'] ? false : undefined,
    tlsFingerprint: nonEmpty('tls-fingerprint', values['tls-fingerprint']),
    contextPath: nonEmpty('context-path', values['context-path']),
    pair: nonEmpty('pair', values.pair),
    displayName: nonEmpty('display-name', values['display-name']),
    nodeId: nonEmpty('node-id', values['node-id']),
    ...(commands ? { commands } : {}),
  };
}

type Subcommand = (argv: string[], ctx: CliContext, kernel: KernelServices) => Promise<number>;

export const NODE_SUBCOMMANDS: Record<string, { help: string; run: Subcommand }> = {
  run: {
    help: NODE_RUN_HELP,
    run: async (argv, ctx, kernel) => {
      const flags = runFlags(argv);
      try {
        return await runNodeHost(kernel, ctx, flags);
      } catch (error) {
        // Bad input found once the flags met the state dir (a setup code, --commands): a usage error.
        if (error instanceof Error && /^--/.test(error.message)) throw new UsageError(error.message);
        throw error;
      }
    },
  },
  ...NODE_SERVICE_SUBCOMMANDS,
};

export const NODE_HELP = `Usage: claw node <${Object.keys(NODE_SUBCOMMANDS).join('|')}> [options]
${Object.values(NODE_SUBCOMMANDS)
  .map((entry) => entry.help)
  .join('\n')}`;

export async function nodeCommand(argv: string[], ctx: CliContext, kernel: KernelServices): Promise<number> {
  const [name, ...rest] = argv;
  const subcommand = name ? NODE_SUBCOMMANDS[name] : undefined;
  if (!name) throw new UsageError(NODE_HELP);
  if (!subcommand) throw unknownCommand('node', name, Object.keys(NODE_SUBCOMMANDS));
  return subcommand.run(rest, ctx, kernel);
}
