/**
 * Where one exec call runs: the sandbox, the gateway host or a paired node. OpenClaw's rules:
 * the call's `host` may only repeat the configured host, or pick gateway/node when the
 * configured host is auto and the session has no sandbox; auto never chooses a node by itself.
 */
import { sandboxOf, type ToolContext } from '../../sdk/index.js';

export type ExecHost = 'auto' | 'sandbox' | 'gateway' | 'node';
export const EXEC_HOSTS: readonly ExecHost[] = ['auto', 'sandbox', 'gateway', 'node'];

export interface ExecPlacementConfig {
  host?: ExecHost;
  node?: string;
}

/** `tools.exec` with the agent's own `agents.list[].tools.exec` over it (host and node binding). */
export function execPlacementConfig(config: Readonly<Record<string, unknown>>, agentId: string): ExecPlacementConfig {
  const global = (config.tools as { exec?: ExecPlacementConfig } | undefined)?.exec ?? {};
  const list =
    (config.agents as { list?: Array<{ id?: string; tools?: { exec?: ExecPlacementConfig } }> } | undefined)?.list ??
    [];
  const own = list.find((agent) => agent.id === agentId)?.tools?.exec ?? {};
  return {
    ...((own.host ?? global.host) ? { host: own.host ?? global.host } : {}),
    ...((own.node ?? global.node) ? { node: own.node ?? global.node } : {}),
  };
}

export interface ExecTarget {
  host: 'sandbox' | 'gateway' | 'node';
  /** The node the call names (host node only). */
  node?: string;
  /** The node named by the configured binding: a call may not pick another one. */
  boundNode?: string;
}

/** The call's target, or why it may not run where it asked. */
export function resolveExecTarget(
  params: Readonly<Record<string, unknown>>,
  ctx: ToolContext,
  placement: ExecPlacementConfig,
): ExecTarget | string {
  const raw = params.host;
  if (raw !== undefined && !EXEC_HOSTS.includes(raw as ExecHost))
    return `exec: host must be one of ${EXEC_HOSTS.join(', ')} (it names where exec runs, not a machine: use node for that)`;
  const sandboxActive = sandboxOf(ctx) !== undefined;
  const configured = placement.host ?? 'auto';
  const requested = raw === undefined || raw === 'auto' ? undefined : (raw as ExecHost);
  if (requested && requested !== configured) {
    const fromAuto = configured === 'auto';
    if (!fromAuto || (sandboxActive && (requested === 'gateway' || requested === 'node')))
      return (
        `exec: host=${requested} is not allowed here (configured host is ${configured}` +
        `${fromAuto ? ' and this session runs in a sandbox' : ''}); set tools.exec.host=${requested} to run there`
      );
  }
  let selected = requested ?? configured;
  // elevated leaves the sandbox for the configured host path: the node when that is the node.
  if (params.elevated === true && sandboxActive) selected = selected === 'node' ? 'node' : 'gateway';
  const host = selected === 'auto' ? (sandboxActive ? 'sandbox' : 'gateway') : selected;
  if (host === 'sandbox' && !sandboxActive)
    return 'exec: host=sandbox, but this session has no sandbox runtime; the command was not run on the gateway instead';
  if (host !== 'node') {
    if (typeof params.node === 'string' && params.node.trim())
      return `exec: node is only used with host=node (this call runs on the ${host})`;
    return { host };
  }
  const node = typeof params.node === 'string' && params.node.trim() ? params.node.trim() : undefined;
  return {
    host,
    ...(node ? { node } : {}),
    ...(placement.node ? { boundNode: placement.node } : {}),
  };
}
