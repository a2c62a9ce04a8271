/** Commands contributed by plugins (`cliCommands` in their manifests), e.g. `claw gateway`. */
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
  const code = await cli.run(argv, {
    stdout: io.stdout,
    stderr: io.stderr,
    env: io.env,
    boot: (options = {}) => bootKernel(io, options),
  });
  return typeof code === 'number' ? code : 0;
}
