/**
 * What reset, uninstall and update share: asking before they remove anything, reaching the
 * gateway's OS service (through the gateway plugin's `gateway-daemon` service), and strict
 * flag parsing.
 */
import { parseArgs } from 'node:util';
import { parseFlags, type GatewayDaemon } from '../../../../sdk/cli.js';
import { CliError, usageError, type Io } from '../../io.js';

type FlagSpec = Record<string, { type: 'string' | 'boolean' }>;
type Parsed<T extends FlagSpec> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
>;

export function flags<T extends FlagSpec>(args: string[], options: T): Parsed<T> {
  return parseFlags(args, options);
}

export function interactive(io: Io): boolean {
  return process.stdin.isTTY === true && (io.stdout as { isTTY?: boolean }).isTTY === true;
}

/** Go on when `yes`, else ask on the terminal; with no terminal, say to pass --yes. */
export async function confirmOrStop(io: Io, question: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!interactive(io)) throw usageError(`${question} Pass --yes to confirm (there is no terminal to ask on).`);
  const { confirm, isCancel } = await import('@clack/prompts');
  const answer = await confirm({ message: question, initialValue: false });
  if (isCancel(answer) || answer !== true) throw new CliError('cancelled: nothing was changed', 1);
}

/** The gateway plugin's OS-service control, or why it cannot be had (the plugin off, a config it cannot load with). */
export async function gatewayDaemon(io: Io): Promise<GatewayDaemon | string> {
  try {
    const { bootKernel } = await import('../../boot.js');
    const kernel = await bootKernel(io, { strictConfig: false });
    const service = await kernel.capabilities.find('service', 'gateway-daemon');
    if (!service?.api) return 'the gateway plugin is not enabled, so its service cannot be reached';
    return service.api as GatewayDaemon;
  } catch (error) {
    return `the gateway plugin could not be loaded: ${(error as Error).message}`;
  }
}
