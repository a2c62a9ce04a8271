/**
 * `models.snapshot`: OpenClaw's Control UI asks in its connect params for the model catalogue
 * of the agent or session it opens (`caps: ["model-catalog-snapshot"]`, `modelCatalog`), so
 * its model picker fills without a round trip. Right after hello-ok claw answers
 * models.list {…scope, view: "configured"} as that connection (its own scopes apply) and sends
 * the result as {target, scope, catalog}. A catalogue that cannot be read sends nothing: the
 * UI then asks models.list itself.
 */
import { agentIds, defaultAgentId } from '../../sdk/agent/index.js';
import { normalizeAgentId, type KernelConfig, type KernelServices } from '../../sdk/index.js';
import type { Connection } from './connection.js';
import type { GatewayEvents } from './events.js';
import type { GatewayRpc } from './rpc.js';

const CONTROL_UI_CLIENT_ID = 'openclaw-control-ui';
const SNAPSHOT_CAP = 'model-catalog-snapshot';

type RequestedScope =
  { agentId?: string; sessionKey?: string } | { agentId?: string; shortId: string; slugHint?: string };

function requestedScope(value: unknown): RequestedScope | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { agentId, sessionKey, shortId, slugHint } = value as Record<string, unknown>;
  const text = (field: unknown) => (typeof field === 'string' && field.trim() ? field : undefined);
  if (text(shortId))
    return {
      ...(text(agentId) ? { agentId: text(agentId) } : {}),
      shortId: text(shortId)!,
      ...(text(slugHint) ? { slugHint: text(slugHint) } : {}),
    };
  return {
    ...(text(agentId) ? { agentId: text(agentId) } : {}),
    ...(text(sessionKey) ? { sessionKey: text(sessionKey) } : {}),
  };
}

export async function publishConnectModelCatalog(
  kernel: KernelServices,
  rpc: GatewayRpc,
  events: GatewayEvents,
  conn: Connection,
): Promise<void> {
  const params = conn.admission?.params;
  if (params?.client.id !== CONTROL_UI_CLIENT_ID || !params.caps?.includes(SNAPSHOT_CAP)) return;
  const target = requestedScope(params.modelCatalog);
  if (!target) return;
  const ctx = {
    connId: conn.id,
    role: conn.role,
    scopes: conn.scopes,
    deviceId: conn.admission?.deviceId,
    client: params.client,
    signal: conn.abort.signal,
  };
  let scope: { agentId?: string; sessionKey?: string };
  if ('shortId' in target) {
    const resolved = await rpc.invoke('sessions.resolve', target, ctx);
    if (!resolved.ok) return;
    const { agentId, key } = resolved.payload as { agentId?: string; key?: string };
    scope = { ...(agentId ? { agentId } : {}), ...(key ? { sessionKey: key } : {}) };
  } else if (target.sessionKey) scope = target;
  else {
    const config = kernel.config() as KernelConfig;
    const wanted = target.agentId ? normalizeAgentId(target.agentId) : undefined;
    const known = agentIds(config).map((id) => normalizeAgentId(id));
    scope = { agentId: wanted && known.includes(wanted) ? wanted : defaultAgentId(config) };
  }
  const catalog = await rpc.invoke('models.list', { ...scope, view: 'configured' }, ctx);
  if (!catalog.ok || conn.state !== 'open') return;
  events.sendEvent(conn, 'models.snapshot', { target, scope, catalog: catalog.payload });
}
