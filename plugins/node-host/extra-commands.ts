/**
 * The node host's optional commands — file transfer within configured roots and the
 * browser proxy — as a map `{ [command]: handler }` the node host's dispatcher registers
 * and declares. A command that cannot work on this machine (no roots configured, no
 * browser) is left out of the map, so the node never declares what it cannot serve.
 */
import type { KernelServices } from '../../sdk/index.js';
import { browserProxyHandler, browserProxyPresent, BROWSER_PROXY_COMMAND } from './browser-proxy.js';
import { fileTransferHandlers } from './file-transfer.js';

/** The `nodeHost` config keys these commands read (the rest of the section is the node host's). */
export interface NodeHostExtrasConfig {
  fileTransfer?: { roots?: string[] };
  browserProxy?: { enabled?: boolean; allowProfiles?: string[] };
}

export interface NodeCommandContext {
  /** Aborted when the invoke is cancelled (node.invoke.cancel) or the node host stops. */
  signal: AbortSignal;
  stateDir: string;
  /** The `nodeHost` section as it is now (read per call, so a config change applies to the next one). */
  config: NodeHostExtrasConfig;
}

/** Resolves to the command's payload; a refusal is a thrown NodeCommandError (its code goes into node.invoke.result's error). */
export type NodeCommandHandler = (params: unknown, ctx: NodeCommandContext) => Promise<unknown>;

export class NodeCommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'NodeCommandError';
  }
}

/** The commands with their handlers and the caps they go with, for the node's connect params. */
export interface ExtraCommands {
  handlers: Record<string, NodeCommandHandler>;
  caps: string[];
}

/**
 * Which optional commands this node serves, from its config and what is installed here.
 * `kernel` finds the browser plugin's service; playwright-core and Chromium are not loaded
 * until a browser.proxy call needs them.
 */
export async function extraNodeCommands(
  config: NodeHostExtrasConfig,
  kernel: Pick<KernelServices, 'capabilities'>,
): Promise<ExtraCommands> {
  const handlers: Record<string, NodeCommandHandler> = {};
  const caps: string[] = [];
  if ((config.fileTransfer?.roots ?? []).length > 0) {
    Object.assign(handlers, fileTransferHandlers);
    caps.push('file');
  }
  if (config.browserProxy?.enabled !== false && (await browserProxyPresent(kernel))) {
    handlers[BROWSER_PROXY_COMMAND] = browserProxyHandler(kernel);
    caps.push('browser');
  }
  return { handlers, caps };
}
