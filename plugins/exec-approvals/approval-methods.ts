/**
 * OpenClaw's kind-agnostic approval methods (approval.get, approval.history,
 * approval.resolve) over claw's one kind of approval, exec; its cron standing grants
 * (exec.approval.grants.*), which claw does not have (allow-always adds to the allowlist in
 * exec-approvals.json instead); and a node's own approvals document (exec.approvals.node.*),
 * read and written on the node through the gateway's "nodes" service.
 */
import {
  ErrorCodes,
  NODES_SERVICE,
  ProtocolError,
  type JsonSchema,
  type NodeInfo,
  type NodeService,
  type PluginApi,
} from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import {
  DECISIONS,
  type Decision,
  type ExecApprovalService,
  type PendingApproval,
  type SettledApproval,
} from './service.js';

const ID_PARAMS: JsonSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1 } },
};

/** How long a node has to read or write its approvals document. */
const NODE_DOCUMENT_TIMEOUT_MS = 10_000;

function notFound(): never {
  throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'approval not found', { reason: 'APPROVAL_NOT_FOUND' });
}

/** OpenClaw's reviewer-safe view of an exec request: the command, never its env or cwd. */
function presentation(request: PendingApproval['request']) {
  return {
    kind: 'exec',
    commandText: request.command,
    commandPreview: null,
    warningText: request.warnings?.length ? request.warnings.join('\n') : null,
    host: request.host,
    nodeId: request.nodeId ?? null,
    agentId: request.agentId,
    allowedDecisions: [...DECISIONS],
  };
}

/** How OpenClaw words an ending: its status, the decision that made it, and why. */
function terminal(record: SettledApproval) {
  if (record.reason === 'run-aborted' || record.reason === 'gateway-restart')
    return { status: 'cancelled', reason: record.reason };
  if (record.decision === null)
    return record.reason === 'timeout'
      ? { status: 'expired', reason: 'timeout' }
      : { status: 'denied', decision: 'deny', reason: 'no-route' };
  return record.decision === 'deny'
    ? { status: 'denied', decision: 'deny', reason: 'user' }
    : { status: 'allowed', decision: record.decision, reason: 'user' };
}

export function registerApprovalMethods(api: PluginApi, service: ExecApprovalService): void {
  const basePath = () => {
    const gateway = api.kernel.config().gateway as { controlUi?: { basePath?: string } } | undefined;
    return (gateway?.controlUi?.basePath ?? '').replace(/\/+$/, '');
  };
  const common = (approval: PendingApproval) => ({
    id: approval.id,
    urlPath: `${basePath()}/approve/${encodeURIComponent(approval.id)}`,
    createdAtMs: approval.createdAtMs,
    expiresAtMs: approval.expiresAtMs,
    presentation: presentation(approval.request),
  });
  const settledSnapshot = (record: SettledApproval) => ({
    ...common(record),
    ...terminal(record),
    resolvedAtMs: record.resolvedAtMs,
    source: {
      agentId: record.request.agentId,
      ...(record.request.sessionKey ? { sessionKey: record.request.sessionKey } : {}),
    },
  });
  const snapshot = (id: string) => {
    const pending = service.get(id);
    if (pending) return { ...common(pending), status: 'pending' };
    const settled = service.settledRecord(id);
    return settled ? settledSnapshot(settled) : undefined;
  };

  api.registerGatewayMethod('approval.get', {
    params: ID_PARAMS,
    scope: 'operator.approvals',
    description: "One exec approval, pending or settled, in OpenClaw's approval snapshot shape.",
    handler: (params: { id: string }) => ({ approval: snapshot(params.id) ?? notFound() }),
  });

  api.registerGatewayMethod('approval.history', {
    params: {
      type: 'object',
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: 100 },
        cursor: { type: 'string', minLength: 1 },
        kind: { enum: ['exec', 'plugin', 'system-agent'] },
      },
    },
    scope: 'operator.approvals',
    description: 'Settled exec approvals, newest first (the last ones this gateway process saw): {items, nextCursor?}.',
    handler: (params: { limit?: number; cursor?: string; kind?: string }) => {
      if (params.kind !== undefined && params.kind !== 'exec') return { items: [] };
      const offset = params.cursor === undefined ? 0 : Number(params.cursor);
      if (!Number.isSafeInteger(offset) || offset < 0)
        throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'invalid approval.history cursor');
      const all = service.history();
      const limit = params.limit ?? 50;
      const items = all.slice(offset, offset + limit).map(settledSnapshot);
      const next = offset + items.length;
      return { items, ...(next < all.length ? { nextCursor: String(next) } : {}) };
    },
  });

  api.registerGatewayMethod('approval.resolve', {
    params: {
      type: 'object',
      required: ['id', 'kind', 'decision'],
      properties: {
        id: { type: 'string', minLength: 1 },
        kind: { enum: ['exec', 'plugin', 'system-agent'] },
        decision: { enum: [...DECISIONS] },
        reviewer: { type: 'object' },
        grantExpiresInDays: { type: 'integer', minimum: 1, maximum: 3650 },
      },
    },
    scope: 'operator.approvals',
    sideEffect: 'optional',
    description: 'Decide an exec approval: {applied, approval}; a settled one answers applied false with how it ended.',
    handler: (params: {
      id: string;
      kind: string;
      decision: Decision;
      reviewer?: unknown;
      grantExpiresInDays?: number;
    }) => {
      // Deciding on a channel sender's behalf needs channel reviewers, which claw does not have.
      if (params.reviewer !== undefined) notFound();
      const before = snapshot(params.id) ?? notFound();
      if (before.status !== 'pending') return { applied: false, approval: before };
      if (params.kind !== 'exec')
        throw new ProtocolError(
          ErrorCodes.INVALID_REQUEST,
          `approval ${params.id} is an exec approval, not ${params.kind}`,
        );
      if (params.grantExpiresInDays !== undefined)
        throw new ProtocolError(
          ErrorCodes.INVALID_REQUEST,
          "grantExpiresInDays: claw's allow-always entries do not expire (remove one with claw approvals allowlist remove)",
        );
      const outcome = service.resolve(params.id, params.decision);
      const after = service.settledRecord(params.id);
      if (!after) notFound();
      return { applied: outcome === 'resolved', approval: settledSnapshot(after) };
    },
  });

  api.registerGatewayMethod('exec.approval.grants.list', {
    params: { type: 'object', properties: { limit: { type: 'integer', minimum: 1 } } },
    scope: 'operator.approvals',
    description:
      "Standing exec grants of cron jobs, empty: claw has none (allow-always entries are in exec.approvals.get's allowlist).",
    handler: () => ({ grants: [] }),
  });

  api.registerGatewayMethod('exec.approval.grants.revoke', {
    params: { type: 'object', required: ['grantId'], properties: { grantId: { type: 'string', minLength: 1 } } },
    scope: 'operator.approvals',
    description: 'Revoke a standing grant: {outcome: "not-found"}, claw has none.',
    handler: () => ({ outcome: 'not-found' }),
  });

  // OpenClaw's: the node answers system.execApprovals.get / .set, and its payload is the answer.
  const nodeDocument = async (query: string, command: string, params: Record<string, unknown>) => {
    const nodes = await useService<NodeService>(api.kernel, NODES_SERVICE);
    const unavailable = (why: string) =>
      new ProtocolError(ErrorCodes.UNAVAILABLE, `node not connected: ${query} (${why})`);
    if (!nodes) throw unavailable('the gateway has no node support enabled');
    let node: NodeInfo;
    try {
      node = await nodes.resolve(query);
    } catch (error) {
      throw unavailable((error as Error).message);
    }
    if (!node.connected) throw unavailable('it is offline');
    try {
      return await nodes.invoke(node.nodeId, command, params, { timeoutMs: NODE_DOCUMENT_TIMEOUT_MS });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new ProtocolError(
        code === 'COMMAND_NOT_ALLOWED' || code === 'INVALID_REQUEST'
          ? ErrorCodes.INVALID_REQUEST
          : ErrorCodes.UNAVAILABLE,
        `node ${node.displayName ?? node.nodeId}: ${(error as Error).message}`,
      );
    }
  };
  api.registerGatewayMethod('exec.approvals.node.get', {
    params: { type: 'object', required: ['nodeId'], properties: { nodeId: { type: 'string', minLength: 1 } } },
    scope: 'operator.admin',
    description: "A node's own exec approvals document, from the node (system.execApprovals.get).",
    handler: (params: { nodeId: string }) => nodeDocument(params.nodeId, 'system.execApprovals.get', {}),
  });
  api.registerGatewayMethod('exec.approvals.node.set', {
    params: {
      type: 'object',
      required: ['nodeId', 'file'],
      properties: {
        nodeId: { type: 'string', minLength: 1 },
        file: { type: 'object' },
        baseHash: { type: 'string', minLength: 1 },
      },
    },
    scope: 'operator.admin',
    sideEffect: 'optional',
    description:
      "Replace a node's own exec approvals document on the node (system.execApprovals.set; baseHash as exec.approvals.set).",
    handler: (params: { nodeId: string; file: unknown; baseHash?: string }) =>
      nodeDocument(params.nodeId, 'system.execApprovals.set', {
        file: params.file,
        ...(params.baseHash ? { baseHash: params.baseHash } : {}),
      }),
  });
}
