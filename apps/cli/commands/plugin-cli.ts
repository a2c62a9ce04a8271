/** Commands contributed by plugins (`cliCommands` in their manifests), e.g. `claw gateway`. */
import { Writable } from 'node:stream';
import type { Kernel, Redactor } from '../../../kernel/index.js';
import type { BootedKernel, CliContext } from '../../../sdk/index.js';
import { bootKernel, commandLogger } from '../boot.js';
import { relayLogger } from '../relay-logger.js';
import { cliGateway } from '../operator.js';
import { usageError, type Io } from '../io.js';
import { UsageError } from '../../../sdk/cli.js';
import { withProgress, writeAbove } from '../progress.js';

export async function run(command: string, args: string[], io: Io, help: boolean): Promise<number> {
  const log = relayLogger(commandLogger(io));
  const kernel = await bootKernel(io, { logger: log });
  const cli = await kernel.capabilities.find('cli', command);
  if (!cli) {
    const record = kernel.plugins
      .list()
      .find((candidate) => candidate.manifest?.cliCommands?.some((declared) => declared.name === command));
    if (record)
      throw usageError(
        `"claw ${command}" comes from plugin "${record.id}", which is unavailable: ${record.error ?? record.reason}`,
      );
    throw await unknownCommand(command, kernel);
  }
  // Set when the command takes this kernel over (the gateway runs in it): then it is the command's to stop.
  let adopted = false;
  const argv = [...args];
  // The global flags go before a `--`: what follows it is the command's own (claw nodes run -- ls).
  const end = argv.includes('--') ? argv.indexOf('--') : argv.length;
  const globals = [...(help ? ['--help'] : []), ...(io.json ? ['--json'] : [])];
  argv.splice(end, 0, ...globals);
  const ctx: CliContext = {
    stdout: io.stdout,
    stderr: masked(io.stderr, kernel.redact),
    env: io.env,
    // The kernel as the SDK types it: the same object, capabilities with their full contracts.
    boot: async ({ logger, reuse } = {}) => {
      if (!reuse || adopted) return (await bootKernel(io, { logger })) as unknown as BootedKernel;
      adopted = true;
      if (logger) {
        log.retarget(logger);
        // Said on stderr at boot; the command's own log (the gateway's file) should have them too.
        for (const diagnostic of kernel.plugins.diagnostics)
          kernel.logger.warn(diagnostic.message, { plugin: diagnostic.pluginId });
      }
      return kernel as unknown as BootedKernel;
    },
    gateway: cliGateway(kernel.plugins.kernelServices, io.env),
    progress: (label, work, options) => withProgress(io.stderr, label, work, options),
  };
  try {
    const code = await cli.run(argv, ctx);
    return typeof code === 'number' ? code : 0;
  } finally {
    if (!adopted) await releaseServices(kernel);
  }
}

/**
 * A command no built-in and no enabled plugin offers; the CLI suggests the closest one. The
 * help module (the built-in command list) loads only on this path, not for every command.
 */
async function unknownCommand(command: string, kernel: Kernel): Promise<UsageError> {
  const { BUILTIN_COMMANDS } = await import('../help.js');
  const offered = kernel.plugins
    .list()
    .filter((record) => record.enabled)
    .flatMap((record) => record.manifest?.cliCommands?.map((declared) => declared.name) ?? []);
  const choices = [...BUILTIN_COMMANDS.map(([name]) => name), ...offered];
  return Object.assign(new UsageError(`Unknown command '${command}'`), {
    typo: { word: command, choices },
  });
}

/**
 * Only the gateway starts services, so this kernel's stop() would have nothing to stop — yet
 * what the command's plugins took on lives on: a browser a tool call launched (`claw agent
 * --local`) kept the process alive until its idle timeout, minutes after the answer. So when
 * the command is done, the services of every plugin it loaded are stopped, as at a gateway
 * shutdown; a failure is logged, never the command's result.
 */
async function releaseServices(kernel: Kernel): Promise<void> {
  const loaded = kernel.plugins.list().filter((record) => record.status === 'active');
  for (const record of loaded.reverse()) {
    for (const id of record.manifest?.services ?? []) {
      try {
        await (await kernel.capabilities.find('service', id))?.stop?.();
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        kernel.logger.warn(`service "${id}" failed to stop: ${reason}`, { plugin: record.id });
      }
    }
  }
}

/**
 * Commands report their own failures on stderr, and a failure can quote a secret (a
 * request URL with a bot token in it): each write is masked on its way through.
 */
function masked(stream: NodeJS.WritableStream, redact: Pick<Redactor, 'text'>): NodeJS.WritableStream {
  const out = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      writeAbove(stream, redact.text(chunk.toString()));
      done(); // pass-through: nothing is held back if the command exits right after writing
    },
  });
  // Progress bars redraw in place only on a terminal.
  return Object.assign(out, { isTTY: (stream as NodeJS.WriteStream).isTTY === true });
}
