/**
 * The contract between the node host's optional commands (file transfer, browser.proxy) and
 * the map that offers them to the dispatcher (extra-commands.ts): the config they read, what
 * a handler gets, and how it refuses.
 */
import type { KernelServices } from '../../sdk/index.js';

/** The `nodeHost` config keys these commands read (the rest of the section is the node host's). */
export interface NodeHostExtrasConfig {
  fileTransfer?: { roots?: string[] };
  browserProxy?: { enabled?: boolean; allowProfiles?: string[] };
}

export type ExtrasKernel = Pick<KernelServices, 'capabilities' | 'config' | 'plugins'>;

export interface NodeCommandContext {
  /** Aborted when the invoke is cancelled (node.invoke.cancel) or the node host stops. */
  signal: AbortSignal;
  stateDir: string;
  /** The `nodeHost` section as it is now. */
  config: NodeHostExtrasConfig;
}

/** Resolves to the command's payload; a refusal is a thrown CommandRefusal (its code goes into node.invoke.result's error). */
export type NodeCommandHandler = (params: unknown, ctx: NodeCommandContext) => Promise<unknown>;

export class CommandRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CommandRefusal';
  }
}
