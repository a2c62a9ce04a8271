/**
 * OpenClaw's kind-agnostic approval methods (approval.get, approval.history,
 * approval.resolve) over claw's one kind of approval, exec; its cron standing grants
 * (exec.approval.grants.*), which claw does not have (allow-always adds to the allowlist in
 * exec-approvals.json instead); and the per-node approvals documents (exec.approvals.node.*),
 * which need a connected node, and claw has no nodes yet.
 */
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
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

  for (const method of ['exec.approvals.node.get', 'exec.approvals.node.set'])
    api.registerGatewayMethod(method, {
      params: { type: 'object', required: ['nodeId'], properties: { nodeId: { type: 'string', minLength: 1 } } },
      scope: 'operator.admin',
      description: "A node's exec approvals document: unavailable, no node is connected (claw has no nodes yet).",
      handler: (params: { nodeId: string }) => {
        throw new ProtocolError(ErrorCodes.UNAVAILABLE, `node not connected: ${params.nodeId} (claw has no nodes yet)`);
      },
    });
}
