/**
 * OpenClaw's session subscriptions: `sessions.subscribe` (the connection gets
 * `sessions.changed` whenever a session's index entry may have changed) and
 * `sessions.messages.subscribe {key}` (it gets `session.message` for each final message of
 * that session). claw learns of changes from the agent's `chat` events, which every run
 * emits through the protocol registry; a subscription ends when its connection does (the
 * transport skips connections that are gone, and the lists are bounded).
 */
import { type EmittedEvent, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { KEY, listSessions, sessionListResult, type SessionListOptions, type SessionsDeps } from './methods.js';
import { registerLiveSessionEvents, type SessionOperation } from './live-events.js';

/** Connections remembered per list: a client that reconnects often leaves old ids behind. */
const MAX_SUBSCRIBERS = 1000;

interface ChatEvent {
  runId?: string;
  sessionKey?: string;
  state?: string;
  message?: unknown;
}

function remember(list: string[], connId: string): void {
  if (!list.includes(connId)) list.push(connId);
  if (list.length > MAX_SUBSCRIBERS) list.splice(0, list.length - MAX_SUBSCRIBERS);
}

function forget(list: string[], connId: string): void {
  const at = list.indexOf(connId);
  if (at >= 0) list.splice(at, 1);
}

export function registerSessionSubscriptions(
  api: PluginApi,
  deps: SessionsDeps,
  listParams: JsonSchema,
): (op: SessionOperation) => void {
  const protocol = api.kernel.protocol;
  const index: string[] = [];
  const bySession = new Map<string, string[]>();
  const approvalsBySession = new Map<string, string[]>();
  const emitOperation = registerLiveSessionEvents(api, {
    index: () => [...index],
    approvals: (sessionKey) => [...(approvalsBySession.get(sessionKey) ?? [])],
  });
  protocol.registerEvent('sessions.changed', api.id, {
    scope: 'operator.read',
    description: '{sessionKey, reason, ts} to sessions.subscribe connections.',
  });
  protocol.registerEvent('session.message', api.id, {
    scope: 'operator.read',
    description: '{sessionKey, message, runId?, ts} to sessions.messages.subscribe connections of that session.',
  });

  protocol.onEmit((event: EmittedEvent) => {
    if (event.event !== 'chat') return 0;
    const chat = (event.payload ?? {}) as ChatEvent;
    if (!chat.sessionKey || chat.state === 'delta') return 0;
    const ts = Date.now();
    let reached = 0;
    if (index.length > 0)
      reached += protocol.emit(
        'sessions.changed',
        { sessionKey: chat.sessionKey, reason: chat.state ?? 'message', ts },
        { connIds: [...index] },
      );
    const watchers = bySession.get(chat.sessionKey);
    if (watchers?.length && chat.state === 'final' && chat.message !== undefined) {
      reached += protocol.emit(
        'session.message',
        { sessionKey: chat.sessionKey, runId: chat.runId, message: chat.message, ts },
        { connIds: [...watchers] },
      );
    }
    return reached;
  });

  const needConnection = (connId: string | undefined): string => {
    if (!connId) throw new Error('subscriptions need a WebSocket connection');
    return connId;
  };

  api.registerGatewayMethod('sessions.subscribe', {
    scope: 'operator.read',
    params: listParams,
    description:
      'Receive sessions.changed on this connection; with sessions.list params, also the first list ({subscribed, list}).',
    handler: async (params: SessionListOptions, ctx) => {
      remember(index, needConnection(ctx.connId));
      if (Object.keys(params).length === 0) return { subscribed: true };
      return { subscribed: true, list: sessionListResult(deps, await listSessions(deps, params)) };
    },
  });

  api.registerGatewayMethod('sessions.unsubscribe', {
    scope: 'operator.read',
    params: { type: 'object', additionalProperties: false, properties: {} },
    handler: (_params, ctx) => {
      forget(index, needConnection(ctx.connId));
      return { subscribed: false };
    },
  });

  const messageParams: JsonSchema = {
    type: 'object',
    required: ['key'],
    additionalProperties: false,
    properties: { key: KEY, agentId: KEY, includeApprovals: { type: 'boolean' } },
  };
  api.registerGatewayMethod('sessions.messages.subscribe', {
    scope: 'operator.read',
    params: messageParams,
    description: 'Receive session.message for each final message of one session on this connection.',
    handler: (params: { key: string; agentId?: string; includeApprovals?: boolean }, ctx) => {
      const { sessionKey } = deps.sessions.resolveTarget({
        sessionKey: params.key,
        ...(params.agentId ? { agentId: params.agentId } : {}),
      });
      const connId = needConnection(ctx.connId);
      const list = bySession.get(sessionKey) ?? [];
      remember(list, connId);
      bySession.set(sessionKey, list);
      // session.approval goes only to connections that opted in, as in OpenClaw.
      const approvals = approvalsBySession.get(sessionKey) ?? [];
      if (params.includeApprovals) remember(approvals, connId);
      else forget(approvals, connId);
      if (approvals.length > 0) approvalsBySession.set(sessionKey, approvals);
      else approvalsBySession.delete(sessionKey);
      return { subscribed: true, key: sessionKey };
    },
  });

  api.registerGatewayMethod('sessions.messages.unsubscribe', {
    scope: 'operator.read',
    params: messageParams,
    handler: (params: { key: string; agentId?: string }, ctx) => {
      const { sessionKey } = deps.sessions.resolveTarget({
        sessionKey: params.key,
        ...(params.agentId ? { agentId: params.agentId } : {}),
      });
      const connId = needConnection(ctx.connId);
      for (const lists of [bySession, approvalsBySession]) {
        const list = lists.get(sessionKey) ?? [];
        forget(list, connId);
        if (list.length === 0) lists.delete(sessionKey);
      }
      return { subscribed: false, key: sessionKey };
    },
  });

  // The Control UI reports which sessions it renders; claw keeps no viewer presence, so the
  // answer is the canonical keys it would track.
  api.registerGatewayMethod('sessions.viewers.set', {
    scope: 'operator.read',
    params: {
      type: 'object',
      required: ['sessionKeys'],
      additionalProperties: false,
      properties: { agentId: KEY, sessionKeys: { type: 'array', items: KEY, maxItems: 32 } },
    },
    description: 'The sessions this connection renders: {sessionKeys} (canonical keys).',
    handler: (params: { agentId?: string; sessionKeys: string[] }, ctx) => {
      needConnection(ctx.connId);
      const sessionKeys = params.sessionKeys.map(
        (key) =>
          deps.sessions.resolveTarget({ sessionKey: key, ...(params.agentId ? { agentId: params.agentId } : {}) })
            .sessionKey,
      );
      return { sessionKeys: [...new Set(sessionKeys)] };
    },
  });

  // OpenClaw's session observer writes running digests of a turn while a tab is in view, and
  // the Control UI reports on every page whether it is. claw writes no digests, so there is
  // nothing to pause or resume: the report is acknowledged and changes nothing.
  api.registerGatewayMethod('sessions.observer.visibility', {
    scope: 'operator.read',
    params: { type: 'object', required: ['visible'], properties: { visible: { type: 'boolean' } } },
    description: 'A tab reports whether it is in view; claw writes no running digests, so this only acknowledges.',
    handler: (_params: { visible: boolean }, ctx) => {
      needConnection(ctx.connId);
      return { ok: true };
    },
  });
  return emitOperation;
}
