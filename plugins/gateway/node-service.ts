/**
 * The "nodes" service (sdk/nodes.ts): the gateway's nodes as the pairing store and the open node
 * connections know them, and sending one a command after the command policy allowed it. The
 * node.* gateway methods go through the same functions, so an operator, a tool and the CLI meet
 * the same gates.
 */
import { randomUUID } from 'node:crypto';
import {
  NodeInvokeError,
  type KernelServices,
  type NodeInfo,
  type NodeInvokeOptions,
  type NodeService,
} from '../../sdk/index.js';
import type { Connection } from './connection.js';
import { declared } from './handshake.js';
import { effectiveCommands, nodeCommandConfig, refuseCommand, type PolicyNode } from './node-policy.js';
import type { NodeAnswer, NodeRegistry } from './node-registry.js';
import type { PairedDevice, PairingStore } from './pairing.js';

const DEFAULT_TIMEOUT_MS = 30_000;

export interface NodeView {
  nodeId: string;
  device?: PairedDevice;
  conn?: Connection;
  declaredCommands: string[];
  caps: string[];
  policy: PolicyNode;
}

export class NodeDirectory implements NodeService {
  constructor(
    private readonly kernel: KernelServices,
    private readonly pairing: PairingStore,
    readonly registry: NodeRegistry,
  ) {}

  /** One node as policy and listings see it: paired record and live connection joined. */
  view(nodeId: string): NodeView | undefined {
    const device = this.pairing.device(nodeId);
    const paired = device?.roles.node ? device : undefined;
    const conn = this.registry.get(nodeId);
    if (!paired && !conn) return undefined;
    const params = conn?.admission?.params;
    const declaredCommands = declared(params?.commands);
    return {
      nodeId,
      device: paired,
      conn,
      declaredCommands,
      caps: declared(params?.caps),
      policy: {
        nodeId,
        platform: params?.client.platform ?? paired?.platform ?? null,
        declared: declaredCommands,
        approved: paired?.surface?.commands,
      },
    };
  }

  /** Every paired node and every connected one. */
  views(): NodeView[] {
    const ids = new Set([
      ...this.pairing
        .listPaired()
        .filter((d) => d.roles.node)
        .map((d) => d.deviceId),
      ...this.registry.connected().map(([id]) => id),
    ]);
    return [...ids].map((id) => this.view(id)).filter((v): v is NodeView => v !== undefined);
  }

  effective(view: NodeView): string[] {
    return view.conn ? effectiveCommands(view.policy, nodeCommandConfig(this.kernel.config())) : [];
  }

  info(view: NodeView): NodeInfo {
    const client = view.conn?.admission?.params.client;
    return {
      nodeId: view.nodeId,
      displayName: view.device?.displayName ?? client?.displayName ?? null,
      platform: view.policy.platform,
      remoteIp: view.conn?.remoteAddress ?? view.device?.remoteAddress ?? null,
      connected: view.conn !== undefined,
      paired: view.device !== undefined,
      caps: view.caps,
      declaredCommands: view.declaredCommands,
      commands: this.effective(view),
      lastSeenAtMs: view.conn ? Date.now() : view.device?.lastSeenAt ? Date.parse(view.device.lastSeenAt) : null,
    };
  }

  async list(): Promise<NodeInfo[]> {
    await this.pairing.reload();
    return this.views().map((view) => this.info(view));
  }

  async resolve(query: string): Promise<NodeInfo> {
    const wanted = query.trim();
    if (!wanted) throw new NodeInvokeError('NOT_FOUND', 'no node named: the node query is empty');
    const nodes = await this.list();
    const lower = wanted.toLowerCase();
    const tiers = [
      nodes.filter((n) => n.nodeId === wanted),
      nodes.filter((n) => n.remoteIp === wanted || n.displayName?.toLowerCase() === lower),
      wanted.length >= 6 ? nodes.filter((n) => n.nodeId.startsWith(wanted)) : [],
    ];
    for (const matches of tiers) {
      if (matches.length === 0) continue;
      const connected = matches.filter((n) => n.connected);
      const pick = connected.length > 0 ? connected : matches;
      if (pick.length === 1) return pick[0]!;
      throw new NodeInvokeError(
        'AMBIGUOUS',
        `"${wanted}" matches ${pick.length} nodes: ${pick.map((n) => `${n.nodeId} (${n.displayName ?? 'unnamed'})`).join(', ')}`,
      );
    }
    const known = nodes.map((n) => `${n.nodeId.slice(0, 12)}… (${n.displayName ?? 'unnamed'})`).join(', ');
    throw new NodeInvokeError('NOT_FOUND', `no node matches "${wanted}"; known nodes: ${known || 'none'}`);
  }

  /** Policy, then dispatch: the one path every command to a node takes. */
  send(nodeId: string, command: string, params: unknown, options: NodeInvokeOptions = {}): Promise<NodeAnswer> {
    const view = this.view(nodeId);
    if (!view) return Promise.reject(new NodeInvokeError('NOT_FOUND', `unknown node "${nodeId}"`, nodeId));
    if (!view.conn)
      return Promise.reject(new NodeInvokeError('NOT_CONNECTED', `node "${nodeId}" is not connected`, nodeId));
    const refused = refuseCommand(view.policy, command, nodeCommandConfig(this.kernel.config()));
    if (refused)
      return Promise.reject(
        new NodeInvokeError('COMMAND_NOT_ALLOWED', `node command not allowed: ${refused.message}`, nodeId),
      );
    return this.registry.dispatch(nodeId, command, params, {
      timeoutMs: options.timeoutMs && options.timeoutMs > 0 ? options.timeoutMs : DEFAULT_TIMEOUT_MS,
      idempotencyKey: options.idempotencyKey ?? randomUUID(),
      remember: options.idempotencyKey !== undefined,
      sessionKey: options.sessionKey,
      signal: options.signal,
      onProgress: options.onProgress,
    });
  }

  async invoke(nodeId: string, command: string, params: unknown, options?: NodeInvokeOptions): Promise<unknown> {
    return answerPayload(await this.send(nodeId, command, params, options));
  }
}

/** A node's payload: the object it sent, or its JSON text parsed (kept as text when it is not JSON). */
export function answerPayload(answer: NodeAnswer): unknown {
  if (answer.payloadJSON === null || !answer.payloadJSON.trim()) return answer.payload;
  try {
    return JSON.parse(answer.payloadJSON);
  } catch {
    return { payloadJSON: answer.payloadJSON };
  }
}
