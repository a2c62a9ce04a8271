/** Commands contributed by plugins (`cliCommands` in their manifests), e.g. `claw gateway`. */
import { Writable } from 'node:stream';
import type { Redactor } from '../../../kernel/index.js';
import type { BootedKernel, CliContext } from '../../../sdk/index.js';
import { bootKernel } from '../boot.js';
import { usageError, type Io } from '../io.js';

export async function run(command: string, args: string[], io: Io, help: boolean): Promise<number> {
  const kernel = await bootKernel(io);
  const cli = await kernel.capabilities.find('cli', command);
  if (!cli) {
    const record = kernel.plugins
      .list()
      .find((candidate) => candidate.manifest?.cliCommands?.some((declared) => declared.name === command));
    if (record) throw usageError(`"claw ${command}" comes from plugin "${record.id}", which is unavailable: ${record.error ?? record.reason}`);
    throw usageError(`unknown command "${command}" (see claw --help)`);
  }
  const argv = [...args];
  if (help) argv.push('--help');
  if (io.json) argv.push('--json');
  const ctx: CliContext = {
    stdout: io.stdout,
    stderr: masked(io.stderr, kernel.redact),
    env: io.env,
    // The kernel as the SDK types it: the same object, capabilities with their full contracts.
    boot: (options = {}) => bootKernel(io, options) as Promise<BootedKernel>,
  };
  const code = await cli.run(argv, ctx);
  return typeof code === 'number' ? code : 0;
}

/**
 * Commands report their own failures on stderr, and a failure can quote a secret (a
 * request URL with a bot token in it): each write is masked on its way through.
 */
function masked(stream: NodeJS.WritableStream, redact: Pick<Redactor, 'text'>): NodeJS.WritableStream {
  const out = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      stream.write(redact.text(chunk.toString()));
      done(); // pass-through: nothing is held back if the command exits right after writing
    },
  });
  // Progress bars redraw in place only on a terminal.
  return Object.assign(out, { isTTY: (stream as NodeJS.WriteStream).isTTY === true });
}
