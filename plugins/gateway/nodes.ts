/**
 * OpenClaw's node methods over what claw has of nodes: devices paired for the `node` role (the
 * pairing store), their pending pairing requests, and the node connections open now. Nodes are
 * listed, described, approved, rejected, renamed and removed for real; claw does not yet send a
 * node commands (issue 32), so node.invoke is UNAVAILABLE and a node's results and events are
 * acknowledged as OpenClaw acknowledges ones nobody waits for. Shapes follow OpenClaw's node
 * catalog; what claw does not record (versions, host stats, presence) carries its empty value.
 */
import { ErrorCodes, ProtocolError, type GatewayMethodContext, type PluginApi } from '../../sdk/index.js';
import { lacks, registerAll, requiredString, type Params } from './absent-kit.js';
import type { Connection } from './connection.js';
import { ms, nodePairRequest, pairedNode, sorted } from './node-shapes.js';
import { PairingError, type PairedDevice, type PairingRequest } from './pairing.js';
import type { GatewayRuntime } from './runtime.js';

const NODE = 'node';

function liveNodes(runtime: GatewayRuntime): Map<string, Connection> {
  const live = new Map<string, Connection>();
  for (const conn of runtime.server?.connectionList() ?? []) {
    if (conn.state !== 'open' || conn.role !== NODE || !conn.admission) continue;
    live.set(conn.admission.deviceId ?? conn.admission.params.client.id, conn);
  }
  return live;
}

/** One node as OpenClaw's node.list shows it: pairing, pending request and live connection merged. */
function nodeEntry(nodeId: string, device?: PairedDevice, pending?: PairingRequest, live?: Connection) {
  const client = live?.admission?.params.client;
  const declared = live?.admission?.params;
  return {
    nodeId,
    displayName: device?.displayName ?? client?.displayName ?? pending?.displayName ?? null,
    platform: client?.platform ?? device?.platform ?? pending?.platform ?? null,
    version: client?.version ?? null,
    coreVersion: null,
    uiVersion: null,
    clientId: client?.id ?? device?.clientId ?? pending?.clientId ?? null,
    clientMode: client?.mode ?? null,
    deviceFamily: null,
    modelIdentifier: null,
    remoteIp: live?.remoteAddress ?? device?.remoteAddress ?? pending?.remoteAddress ?? null,
    caps: sorted(declared?.caps),
    commands: sorted(declared?.commands),
    computerUse: null,
    sessionHost: false,
    nodePluginTools: [],
    pathEnv: null,
    permissions: declared?.permissions ?? null,
    approvalState: pending ? (device ? 'pending-reapproval' : 'pending-approval') : device ? 'approved' : 'unapproved',
    pendingRequestId: pending?.requestId ?? null,
    pendingDeclaredCaps: pending ? [] : null,
    pendingDeclaredCommands: pending ? [] : null,
    pendingDeclaredPermissions: null,
    connectedAtMs: live ? live.connectedAt : null,
    lastConnectedAtMs: live ? live.connectedAt : ms(device?.lastSeenAt),
    lastDisconnectedAtMs: null,
    lastActiveAtMs: null,
    presenceUpdatedAtMs: null,
    lastSeenAtMs: ms(device?.lastSeenAt),
    lastSeenReason: device?.lastSeenAt ? 'connect' : null,
    approvedAtMs: ms(device?.approvedAt),
    paired: Boolean(device),
    connected: Boolean(live),
  };
}

type NodeEntry = ReturnType<typeof nodeEntry>;

function byConnectedThenName(a: NodeEntry, b: NodeEntry): number {
  if (a.connected !== b.connected) return a.connected ? -1 : 1;
  const name = (a.displayName ?? a.nodeId).toLowerCase().localeCompare((b.displayName ?? b.nodeId).toLowerCase());
  return name || a.nodeId.localeCompare(b.nodeId);
}

/** Node-role methods (results, progress, events) may only come from a node connection. */
function requireNode(ctx: GatewayMethodContext, method: string, params: Params): void {
  if (ctx.role !== NODE)
    throw new ProtocolError(ErrorCodes.FORBIDDEN, `${method} is for node connections (role "node")`);
  const callerId = ctx.deviceId ?? ctx.client?.id;
  if (typeof params.nodeId === 'string' && callerId && params.nodeId !== callerId)
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'nodeId mismatch');
}

export function registerNodeMethods(api: PluginApi, runtime: GatewayRuntime): void {
  const kernel = api.kernel;
  const pairing = runtime.pairing;

  /** A pairing change made against the store as it is on disk, answered once it is written. */
  const change = async <T>(work: () => T): Promise<T> => {
    try {
      await pairing.reload();
      const result = work();
      await pairing.flush();
      return result;
    } catch (error) {
      if (error instanceof PairingError) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message);
      throw error;
    }
  };

  const catalog = (): NodeEntry[] => {
    const devices = new Map(
      pairing
        .listPaired()
        .filter((d) => d.roles[NODE])
        .map((d) => [d.deviceId, d]),
    );
    const pending = new Map(
      pairing
        .listPending()
        .filter((r) => r.role === NODE)
        .map((r) => [r.deviceId, r]),
    );
    const live = liveNodes(runtime);
    const ids = new Set([...devices.keys(), ...pending.keys(), ...live.keys()]);
    return [...ids]
      .map((id) => nodeEntry(id, devices.get(id), pending.get(id), live.get(id)))
      .sort(byConnectedThenName);
  };

  const nodeRequest = (requestId: string): PairingRequest => {
    const request = pairing.listPending().find((r) => r.requestId === requestId && r.role === NODE);
    if (!request) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'unknown requestId');
    return request;
  };

  const resolved = (requestId: string, nodeId: string, decision: string) =>
    kernel.protocol.emit('node.pair.resolved', { requestId, nodeId, decision, ts: Date.now() });

  registerAll(api, {
    'node.list': {
      scope: 'operator.read',
      description: 'Known nodes: paired for the node role, waiting for approval, or connected now.',
      handler: async () => {
        await pairing.reload();
        return { ts: Date.now(), activeNodeId: null, nodes: catalog() };
      },
    },
    'node.describe': {
      scope: 'operator.read',
      description: 'One known node, as node.list shows it.',
      handler: async (params, _ctx, method) => {
        const nodeId = requiredString(method, params, 'nodeId');
        await pairing.reload();
        const node = catalog().find((entry) => entry.nodeId === nodeId);
        if (!node) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'unknown nodeId');
        return { ts: Date.now(), ...node };
      },
    },
    'node.pair.list': {
      scope: 'operator.pairing',
      description: 'Node pairing requests waiting for approval, and nodes paired.',
      handler: async () => {
        await pairing.reload();
        return {
          pending: pairing
            .listPending()
            .filter((r) => r.role === NODE)
            .map(nodePairRequest)
            .sort((a, b) => b.ts - a.ts),
          paired: pairing
            .listPaired()
            .filter((d) => d.roles[NODE])
            .map(pairedNode)
            .sort((a, b) => (b.approvedAtMs ?? 0) - (a.approvedAtMs ?? 0)),
        };
      },
    },
    'node.pair.approve': {
      scope: 'operator.pairing',
      description: "Approve a node's pairing request; it may then connect as a node.",
      handler: (params, ctx, method) => {
        const requestId = requiredString(method, params, 'requestId');
        return change(() => {
          nodeRequest(requestId);
          const device = pairing.approve(requestId, ctx.deviceId ?? 'operator');
          resolved(requestId, device.deviceId, 'approved');
          return { requestId, node: pairedNode(device) };
        });
      },
    },
    'node.pair.reject': {
      scope: 'operator.pairing',
      description: "Reject a node's pairing request.",
      handler: (params, _ctx, method) => {
        const requestId = requiredString(method, params, 'requestId');
        return change(() => {
          const request = pairing.reject(nodeRequest(requestId).requestId);
          resolved(requestId, request.deviceId, 'rejected');
          return { requestId, nodeId: request.deviceId };
        });
      },
    },
    'node.pair.remove': {
      scope: 'operator.pairing',
      description: "Take a device's node pairing away and close its node connections.",
      handler: (params, _ctx, method) => {
        const nodeId = requiredString(method, params, 'nodeId');
        return change(() => {
          if (!pairing.device(nodeId)?.roles[NODE])
            throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'unknown nodeId');
          pairing.removeRole(nodeId, NODE);
          runtime.disconnectDevice(nodeId, NODE, 'node pairing removed');
          resolved('', nodeId, 'removed');
          kernel.protocol.emit('device.pair.changed', {});
          return { nodeId };
        });
      },
    },
    'node.rename': {
      scope: 'operator.pairing',
      description: "Change a paired node's display name.",
      handler: (params, _ctx, method) => {
        const nodeId = requiredString(method, params, 'nodeId');
        const displayName = requiredString(method, params, 'displayName');
        return change(() => {
          if (!pairing.device(nodeId)?.roles[NODE])
            throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'unknown nodeId');
          pairing.rename(nodeId, displayName);
          kernel.protocol.emit('device.pair.changed', {});
          return { nodeId, displayName };
        });
      },
    },
    'node.invoke': {
      scope: 'operator.write',
      description: 'Run a command on a node: not yet, claw sends nodes no commands.',
      handler: (params) => {
        if (
          typeof params.nodeId !== 'string' ||
          !params.nodeId ||
          typeof params.command !== 'string' ||
          !params.command
        )
          throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'nodeId and command required');
        return lacks(`node command dispatch yet: cannot run "${params.command}" on node "${params.nodeId}"`);
      },
    },
    'node.invoke.result': {
      description: "A node's answer to an invocation: claw sends none, so it is acknowledged and ignored.",
      handler: (params, ctx, method) => {
        requireNode(ctx, method, params);
        requiredString(method, params, 'id');
        return { ok: true, ignored: true };
      },
    },
    'node.invoke.progress': {
      description: "A node's progress on an invocation: claw sends none, so it is acknowledged and ignored.",
      handler: (params, ctx, method) => {
        requireNode(ctx, method, params);
        requiredString(method, params, 'id');
        return { ok: true, ignored: true };
      },
    },
    'node.event': {
      description: 'An event a node reports: acknowledged; claw acts on no node events yet.',
      handler: (params, ctx, method) => {
        requireNode(ctx, method, params);
        requiredString(method, params, 'event');
        return { ok: true };
      },
    },
  });
}
