/**
 * Contract of the "nodes" service: the gateway's paired nodes (other machines and browser tabs
 * connected with role "node"), and sending one a command. The gateway plugin provides it; tools
 * (exec with host "node", nodes, canvas) use it. Every invoke passes the gateway's command policy
 * (declared by the node, in its approved surface, allowed by gateway.nodes) before it is sent.
 */

export const NODES_SERVICE = 'nodes';

export interface NodeInfo {
  nodeId: string;
  displayName: string | null;
  platform: string | null;
  remoteIp: string | null;
  connected: boolean;
  paired: boolean;
  /** What the node declared at connect. */
  caps: string[];
  declaredCommands: string[];
  /** What may be invoked on it now: declared, approved and allowed by policy. */
  commands: string[];
  lastSeenAtMs: number | null;
}

export interface NodeInvokeOptions {
  /** How long the node has to answer (default 30 000 ms). */
  timeoutMs?: number;
  /** Sent to the node, which runs one invoke per key at most. */
  idempotencyKey?: string;
  sessionKey?: string;
  /** Aborting sends node.invoke.cancel and fails the invoke. */
  signal?: AbortSignal;
  /** Streamed text chunks (node.invoke.progress), in order. */
  onProgress?: (chunk: string) => void;
}

/** Why an invoke failed: the node's own error code (e.g. SYSTEM_RUN_DENIED), or the gateway's. */
export class NodeInvokeError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly nodeId?: string,
  ) {
    super(message);
    this.name = 'NodeInvokeError';
  }
}

export interface NodeService {
  list(): Promise<NodeInfo[]>;
  /**
   * One node by exact id, IP, display name or id prefix of six or more characters; connected nodes
   * win ties. Fails with a NodeInvokeError (NOT_FOUND, AMBIGUOUS) naming the choices.
   */
  resolve(query: string): Promise<NodeInfo>;
  /** Send a command and wait for its payload; fails with a NodeInvokeError. */
  invoke(nodeId: string, command: string, params: unknown, options?: NodeInvokeOptions): Promise<unknown>;
}
