/**
 * OpenClaw's node methods: nodes listed and described from the pairing store and the node
 * connections open now; their device pairing and their command surface approved, rejected and
 * removed; commands sent to them (node.invoke, through the command policy and the node registry)
 * and their answers, progress and events taken in.
 */
import {
  ErrorCodes,
  NodeInvokeError,
  ProtocolError,
  type GatewayMethodContext,
  type PluginApi,
  registerMethodTable,
  requiredMethodString,
  type MethodParams,
} from '../../sdk/index.js';
import { hasScope } from './handshake.js';
import { ADMIN_INVOKE_COMMANDS, approveScopes } from './node-policy.js';
import { answerPayload, type NodeView } from './node-service.js';
import { ms, nodePairRequest, nodeSurfaceRequest, pairedNode, sorted } from './node-shapes.js';
import { PairingError, type PairingRequest } from './pairing.js';
import type { GatewayRuntime } from './runtime.js';
import { registerNodeEvents } from './node-events.js';

const NODE = 'node';

/** One node as OpenClaw's node.list shows it: pairing, pending requests and live connection merged. */
function nodeEntry(nodeId: string, view: NodeView | undefined, effective: string[], pending?: PairingRequest) {
  const device = view?.device;
  const live = view?.conn;
  const client = live?.admission?.params.client;
  const params = live?.admission?.params;
  const surfacePending = device?.surfaceRequest;
  const hostStats = device?.lastHostStats;
  const awaiting = pending !== undefined || surfacePending !== undefined;
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
    caps: live ? (view?.caps ?? []) : sorted(device?.surface?.caps),
    commands: live ? effective : sorted(device?.surface?.commands),
    /** claw's: what the node declared at connect, effective or not. */
    declaredCommands: view?.declaredCommands ?? [],
    computerUse: null,
    sessionHost: false,
    ...(hostStats ? { hostStats } : {}),
    nodePluginTools: [],
    pathEnv: typeof params?.pathEnv === 'string' ? params.pathEnv : null,
    permissions: params?.permissions ?? null,
    approvalState: awaiting
      ? device?.surface
        ? 'pending-reapproval'
        : 'pending-approval'
      : device?.surface
        ? 'approved'
        : 'unapproved',
    pendingRequestId: surfacePending?.requestId ?? pending?.requestId ?? null,
    pendingDeclaredCaps: surfacePending ? surfacePending.caps : pending ? [] : null,
    pendingDeclaredCommands: surfacePending ? surfacePending.commands : pending ? [] : null,
    pendingDeclaredPermissions: null,
    connectedAtMs: live ? live.connectedAt : null,
    lastConnectedAtMs: live ? live.connectedAt : ms(device?.lastSeenAt),
    lastDisconnectedAtMs: null,
    lastActiveAtMs: null,
    presenceUpdatedAtMs: null,
    lastSeenAtMs: live ? Date.now() : ms(device?.lastSeenAt),
    lastSeenReason: live || device?.lastSeenAt ? 'connect' : null,
    approvedAtMs: ms(device?.surface?.approvedAt ?? device?.approvedAt),
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
function requireNode(ctx: GatewayMethodContext, method: string, params: MethodParams): string {
  if (ctx.role !== NODE)
    throw new ProtocolError(ErrorCodes.FORBIDDEN, `${method} is for node connections (role "node")`);
  const callerId = ctx.deviceId ?? ctx.client?.id ?? '';
  if (typeof params.nodeId === 'string' && callerId && params.nodeId !== callerId)
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'nodeId mismatch');
  return callerId;
}

/** A failed invoke as OpenClaw answers it: the gateway's refusals as INVALID_REQUEST, the rest UNAVAILABLE with the node's error. */
function invokeFailure(error: unknown, command: string): ProtocolError {
  if (!(error instanceof NodeInvokeError)) return new ProtocolError(ErrorCodes.UNAVAILABLE, String(error));
  if (error.code === 'COMMAND_NOT_ALLOWED' || error.code === 'INVALID_REQUEST')
    return new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message, { code: error.code, command });
  const nodeError = { code: error.code, message: error.message };
  return new ProtocolError(ErrorCodes.UNAVAILABLE, `${error.code}: ${error.message}`, {
    code: error.code,
    nodeError,
  });
}

const optionalString = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

export function registerNodeMethods(api: PluginApi, runtime: GatewayRuntime): void {
  const kernel = api.kernel;
  const pairing = runtime.pairing;
  const nodes = runtime.nodes;

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
    const views = new Map(nodes.views().map((view) => [view.nodeId, view]));
    const pending = new Map(
      pairing
        .listPending()
        .filter((r) => r.role === NODE)
        .map((r) => [r.deviceId, r]),
    );
    const ids = new Set([...views.keys(), ...pending.keys()]);
    return [...ids]
      .map((id) => {
        const view = views.get(id);
        return nodeEntry(id, view, view ? nodes.effective(view) : [], pending.get(id));
      })
      .sort(byConnectedThenName);
  };

  const resolved = (requestId: string, nodeId: string, decision: string) => {
    const payload = { requestId, nodeId, decision, ts: Date.now() };
    kernel.protocol.emit('node.pair.resolved', payload);
    // The node hears of its own surface decision: its effective commands changed without a reconnect.
    nodes.registry.notify(nodeId, 'node.pair.resolved', payload);
  };

  /** OpenClaw's approver rule: wider surfaces need wider operator scopes. */
  const requireApprover = (ctx: GatewayMethodContext, commands: string[]) => {
    const scopes = ctx.scopes ?? [];
    const missing = approveScopes(commands).find((scope) => !hasScope(scopes, scope));
    if (missing)
      throw new ProtocolError(
        ErrorCodes.FORBIDDEN,
        `missing scope: ${missing} (approving a node that declares ${commands.length ? commands.join(', ') : 'no commands'} needs ${approveScopes(commands).join(' + ')})`,
        { missingScope: missing, requiredScopes: approveScopes(commands) },
      );
  };

  registerMethodTable(api, {
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
        const nodeId = requiredMethodString(method, params, 'nodeId');
        await pairing.reload();
        const node = catalog().find((entry) => entry.nodeId === nodeId);
        if (!node) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'unknown nodeId');
        return { ts: Date.now(), ...node };
      },
    },
    'node.pair.list': {
      scope: 'operator.pairing',
      description: 'Node pairing requests (devices and command surfaces) waiting for approval, and nodes paired.',
      handler: async () => {
        await pairing.reload();
        const paired = pairing.listPaired().filter((d) => d.roles[NODE]);
        return {
          pending: [
            ...pairing
              .listPending()
              .filter((r) => r.role === NODE)
              .map(nodePairRequest),
            ...paired.flatMap((d) => (d.surfaceRequest ? [nodeSurfaceRequest(d, d.surfaceRequest)] : [])),
          ].sort((a, b) => b.ts - a.ts),
          paired: paired.map(pairedNode).sort((a, b) => (b.approvedAtMs ?? 0) - (a.approvedAtMs ?? 0)),
        };
      },
    },
    'node.pair.approve': {
      scope: 'operator.pairing',
      description: "Approve a node's pairing request or the command surface it declared; it takes effect at once.",
      handler: (params, ctx, method) => {
        const requestId = requiredMethodString(method, params, 'requestId');
        return change(() => {
          const owner = pairing.surfaceRequestOwner(requestId);
          if (owner?.surfaceRequest) {
            requireApprover(ctx, owner.surfaceRequest.commands);
            const device = pairing.approveSurface(requestId, ctx.deviceId ?? 'operator');
            resolved(requestId, device.deviceId, 'approved');
            return { requestId, node: pairedNode(device) };
          }
          const request = pairing.listPending().find((r) => r.requestId === requestId && r.role === NODE);
          if (!request) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'unknown requestId');
          const device = pairing.approve(requestId, ctx.deviceId ?? 'operator');
          resolved(requestId, device.deviceId, 'approved');
          return { requestId, node: pairedNode(device) };
        });
      },
    },
    'node.pair.reject': {
      scope: 'operator.pairing',
      description: "Reject a node's pairing request or the command surface it declared.",
      handler: (params, _ctx, method) => {
        const requestId = requiredMethodString(method, params, 'requestId');
        return change(() => {
          if (pairing.surfaceRequestOwner(requestId)) {
            const device = pairing.rejectSurface(requestId);
            resolved(requestId, device.deviceId, 'rejected');
            return { requestId, nodeId: device.deviceId };
          }
          const request = pairing.listPending().find((r) => r.requestId === requestId && r.role === NODE);
          if (!request) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'unknown requestId');
          pairing.reject(requestId);
          resolved(requestId, request.deviceId, 'rejected');
          return { requestId, nodeId: request.deviceId };
        });
      },
    },
    'node.pair.remove': {
      scope: 'operator.pairing',
      description: "Take a device's node pairing (and its command surface) away and close its node connections.",
      handler: (params, _ctx, method) => {
        const nodeId = requiredMethodString(method, params, 'nodeId');
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
        const nodeId = requiredMethodString(method, params, 'nodeId');
        const displayName = requiredMethodString(method, params, 'displayName');
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
      description:
        'Run a command on a connected node (its declared, approved and allowed commands); system.run goes through the exec tool instead.',
      handler: async (params, ctx, method) => {
        const nodeId = requiredMethodString(method, params, 'nodeId');
        const command = requiredMethodString(method, params, 'command');
        const idempotencyKey = requiredMethodString(method, params, 'idempotencyKey');
        if (command === 'system.run' || command === 'system.run.prepare')
          throw new ProtocolError(
            ErrorCodes.INVALID_REQUEST,
            `node.invoke does not run ${command}: commands run on a node through the exec tool (host "node"), under exec approvals`,
            { command },
          );
        if (command === 'system.execApprovals.get' || command === 'system.execApprovals.set')
          throw new ProtocolError(
            ErrorCodes.INVALID_REQUEST,
            'node.invoke does not allow system.execApprovals.*; use exec.approvals.node.*',
            { command },
          );
        if (ADMIN_INVOKE_COMMANDS.has(command) && !hasScope(ctx.scopes ?? [], 'operator.admin'))
          throw new ProtocolError(ErrorCodes.FORBIDDEN, 'missing scope: operator.admin', {
            missingScope: 'operator.admin',
            requiredScopes: ['operator.admin'],
          });
        const timeoutMs = typeof params.timeoutMs === 'number' && params.timeoutMs > 0 ? params.timeoutMs : undefined;
        try {
          const answer = await nodes.send(nodeId, command, params.params, {
            timeoutMs,
            idempotencyKey,
            sessionKey: optionalString(params.sessionKey),
            signal: ctx.signal,
          });
          return { ok: true, nodeId, command, payload: answerPayload(answer), payloadJSON: answer.payloadJSON };
        } catch (error) {
          throw invokeFailure(error, command);
        }
      },
    },
    'node.invoke.result': {
      description: "A node's answer to a command it was sent.",
      handler: (raw, ctx, method) => {
        const params = { ...raw };
        // As OpenClaw: null fields are absent, a non-string payloadJSON is the payload.
        if (params.payloadJSON === null) delete params.payloadJSON;
        else if (params.payloadJSON !== undefined && typeof params.payloadJSON !== 'string') {
          params.payload ??= params.payloadJSON;
          delete params.payloadJSON;
        }
        if (params.error === null) delete params.error;
        requireNode(ctx, method, params);
        const id = requiredMethodString(method, params, 'id');
        const nodeId = requiredMethodString(method, params, 'nodeId');
        if (typeof params.ok !== 'boolean')
          throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `${method} requires ok (a boolean)`);
        const error = params.error as { code?: unknown; message?: unknown } | undefined;
        const taken = nodes.registry.result(ctx.connId, {
          id,
          nodeId,
          ok: params.ok,
          payload: params.payload,
          payloadJSON: params.payloadJSON as string | undefined,
          error: error ? { code: optionalString(error.code), message: optionalString(error.message) } : undefined,
        });
        return taken ? { ok: true } : { ok: true, ignored: true };
      },
    },
    'node.invoke.progress': {
      description: "A node's output so far on a command it was sent (ordered chunks).",
      handler: (params, ctx, method) => {
        requireNode(ctx, method, params);
        const invokeId = requiredMethodString(method, params, 'invokeId');
        const nodeId = requiredMethodString(method, params, 'nodeId');
        if (typeof params.seq !== 'number' || !Number.isInteger(params.seq) || params.seq < 0)
          throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `${method} requires seq (an integer ≥ 0)`);
        if (typeof params.chunk !== 'string')
          throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `${method} requires chunk (a string)`);
        if (Buffer.byteLength(params.chunk) > 16_384)
          throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'progress chunk too large');
        const taken = nodes.registry.progress(ctx.connId, { invokeId, nodeId, seq: params.seq, chunk: params.chunk });
        return { ok: true, ignored: !taken };
      },
    },
  });
  registerNodeEvents(api, runtime, requireNode);
}
