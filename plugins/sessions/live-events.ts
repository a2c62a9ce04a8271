/**
 * OpenClaw's live session events beyond session.message: `session.tool` (a run's tool calls,
 * to sessions.subscribe connections, so a sidebar shows tools of runs it did not start),
 * `session.approval` (exec approvals of a session, to sessions.messages.subscribe
 * connections that asked for includeApprovals) and `session.operation` (sessions.compact
 * starting and ending, to sessions.subscribe connections). claw learns of tool calls and
 * approvals from the `agent` and `exec.approval.*` events the agent and exec-approvals
 * plugins emit through the protocol registry.
 */
import type { EmittedEvent, PluginApi } from '../../sdk/index.js';

/** Pending approvals remembered for their terminal event; the exec-approvals plugin times them out. */
const MAX_TRACKED_APPROVALS = 1000;

interface AgentEvent {
  runId?: string;
  sessionKey?: string;
  stream?: string;
}

interface RequestedApproval {
  id: string;
  request: { command: string; host?: string; agentId?: string; sessionKey?: string; warnings?: string[] };
  createdAtMs: number;
  expiresAtMs: number;
}

interface ResolvedApproval {
  id: string;
  decision?: string;
  reason?: string;
  ts?: number;
}

/** Who hears what: both lists are owned by the subscription methods. */
export interface SessionAudiences {
  /** Connections of sessions.subscribe. */
  index(): string[];
  /** Connections of sessions.messages.subscribe {key, includeApprovals: true}. */
  approvals(sessionKey: string): string[];
}

export interface SessionOperation {
  operationId: string;
  operation: 'compact';
  phase: 'start' | 'end';
  sessionKey: string;
  agentId: string;
  completed?: boolean;
  reason?: string;
}

function agentOf(sessionKey: string): string | undefined {
  return /^agent:([^:]+):/.exec(sessionKey)?.[1];
}

/** OpenClaw's reviewer-safe approval snapshot: the command, never its env or cwd. */
function approvalSnapshot(approval: RequestedApproval, resolved?: ResolvedApproval) {
  const { request } = approval;
  const common = {
    id: approval.id,
    status: 'pending' as string,
    presentation: {
      kind: 'exec',
      commandText: request.command,
      commandPreview: null,
      warningText: request.warnings?.length ? request.warnings.join('\n') : null,
      host: request.host ?? null,
      nodeId: null,
      agentId: request.agentId ?? null,
      allowedDecisions: ['allow-once', 'allow-always', 'deny'],
    },
    urlPath: `/approve/${encodeURIComponent(approval.id)}`,
    createdAtMs: approval.createdAtMs,
    expiresAtMs: approval.expiresAtMs,
  };
  if (!resolved) return common;
  const resolvedAtMs = resolved.ts ?? Date.now();
  if (resolved.reason === 'timeout' || resolved.reason === 'no-approver')
    return {
      ...common,
      status: 'expired',
      resolvedAtMs,
      reason: resolved.reason === 'timeout' ? 'timeout' : 'no-route',
    };
  const denied = resolved.decision !== 'allow-once' && resolved.decision !== 'allow-always';
  return {
    ...common,
    status: denied ? 'denied' : 'allowed',
    resolvedAtMs,
    reason: 'user',
    decision: denied ? 'deny' : resolved.decision,
  };
}

export function registerLiveSessionEvents(api: PluginApi, audiences: SessionAudiences): (op: SessionOperation) => void {
  const protocol = api.kernel.protocol;
  protocol.registerEvent('session.tool', api.id, {
    scope: 'operator.read',
    description: 'A run’s tool call (the agent tool event plus sessionKey, agentId) to sessions.subscribe connections.',
  });
  protocol.registerEvent('session.approval', api.id, {
    scope: 'operator.approvals',
    description:
      '{sessionKey, updatedAtMs, phase: pending|terminal, approval} to sessions.messages.subscribe {includeApprovals} connections.',
  });
  protocol.registerEvent('session.operation', api.id, {
    scope: 'operator.read',
    description:
      '{operationId, operation: compact, phase: start|end, sessionKey, agentId, ts} to sessions.subscribe connections.',
  });

  const approvals = new Map<string, RequestedApproval>();
  const publishApproval = (approval: RequestedApproval, resolved?: ResolvedApproval): void => {
    const sessionKey = approval.request.sessionKey;
    const connIds = sessionKey ? audiences.approvals(sessionKey) : [];
    if (!sessionKey || connIds.length === 0) return;
    protocol.emit(
      'session.approval',
      {
        sessionKey,
        updatedAtMs: resolved?.ts ?? approval.createdAtMs,
        phase: resolved ? 'terminal' : 'pending',
        approval: approvalSnapshot(approval, resolved),
      },
      { connIds },
    );
  };

  protocol.onEmit((event: EmittedEvent) => {
    if (event.event === 'agent') {
      const agent = (event.payload ?? {}) as AgentEvent;
      const connIds = audiences.index();
      if (agent.stream !== 'tool' || !agent.sessionKey || connIds.length === 0) return 0;
      const agentId = agentOf(agent.sessionKey);
      protocol.emit('session.tool', { ...agent, ...(agentId ? { agentId } : {}) }, { connIds, droppable: true });
      return 0;
    }
    if (event.event === 'exec.approval.requested') {
      const approval = event.payload as RequestedApproval;
      if (!approval?.request?.sessionKey) return 0;
      approvals.set(approval.id, approval);
      if (approvals.size > MAX_TRACKED_APPROVALS) approvals.delete(approvals.keys().next().value!);
      publishApproval(approval);
      return 0; // reaching a session viewer must not count as reaching an approver
    }
    if (event.event === 'exec.approval.resolved') {
      const resolved = event.payload as ResolvedApproval;
      const approval = approvals.get(resolved?.id);
      if (!approval) return 0;
      approvals.delete(resolved.id);
      publishApproval(approval, resolved);
      return 0;
    }
    return 0;
  });

  return (op) => {
    const connIds = audiences.index();
    if (connIds.length > 0) protocol.emit('session.operation', { ...op, ts: Date.now() }, { connIds, droppable: true });
  };
}
