/**
 * The node host's optional commands — file transfer within configured roots and the
 * browser proxy — as a command map `{ [command]: {cap, once?, run} }` for the node host's
 * dispatcher (the shape of NodeCommands in dispatcher.ts). A command that cannot work on this
 * machine (no roots configured, no browser) is left out, so the node never declares what it
 * cannot serve. Handlers read the `nodeHost` section on every call, so a narrower config
 * applies to the next call without a reconnect.
 */
import type { KernelServices } from '../../sdk/index.js';
import { browserPresent, browserProxy, BROWSER_PROXY_COMMAND } from './browser-proxy.js';
import {
  CommandRefusal,
  type ExtrasKernel,
  type NodeCommandHandler,
  type NodeHostExtrasConfig,
} from './extra-command-types.js';
import { fileTransferHandlers } from './file-transfer.js';

export * from './extra-command-types.js';

type Answer = { ok: true; payload: unknown } | { ok: false; error: { code: string; message: string } };

/** One entry of the dispatcher's map. */
export interface ExtraNodeCommand {
  cap: string;
  /** It changes something: the dispatcher runs it at most once per idempotencyKey. */
  once?: boolean;
  run(params: unknown, ctx: { signal: AbortSignal }): Promise<Answer>;
}

export function nodeHostSection(kernel: Pick<KernelServices, 'config'>): NodeHostExtrasConfig {
  return ((kernel.config() as { nodeHost?: NodeHostExtrasConfig }).nodeHost ?? {}) as NodeHostExtrasConfig;
}

function entry(
  cap: string,
  handler: NodeCommandHandler,
  context: { kernel: ExtrasKernel; stateDir: string },
  once = false,
): ExtraNodeCommand {
  return {
    cap,
    ...(once ? { once } : {}),
    async run(params, { signal }) {
      try {
        const payload = await handler(params, {
          signal,
          stateDir: context.stateDir,
          config: nodeHostSection(context.kernel),
        });
        return { ok: true, payload };
      } catch (error) {
        if (error instanceof CommandRefusal) return { ok: false, error: { code: error.code, message: error.message } };
        return { ok: false, error: { code: 'UNAVAILABLE', message: (error as Error).message } };
      }
    },
  };
}

/** The optional commands this node serves, from its config and what is installed here. */
export function extraNodeCommands(context: {
  kernel: ExtrasKernel;
  stateDir: string;
}): Record<string, ExtraNodeCommand> {
  const config = nodeHostSection(context.kernel);
  const commands: Record<string, ExtraNodeCommand> = {};
  if ((config.fileTransfer?.roots ?? []).length > 0)
    for (const [name, handler] of Object.entries(fileTransferHandlers))
      commands[name] = entry('file', handler, context, name === 'file.write');
  if (config.browserProxy?.enabled !== false && browserPresent(context.kernel))
    commands[BROWSER_PROXY_COMMAND] = entry('browser', browserProxy(context.kernel), context);
  return commands;
}
