/**
 * node.event: what a node reports on its own. node.host.stats (CPU, load, memory, disk) is kept
 * on the node's paired record, so node.list shows it while the node is away too, and is passed
 * to operators as node.hostStats; other events are acknowledged as OpenClaw acknowledges events
 * it has no use for. What OpenClaw's node host publishes at connect for features claw lacks (its
 * skills, plugin tools, worker runner inventory) is refused as unavailable, naming what is missing.
 */
import {
  type GatewayMethodContext,
  type PluginApi,
  lacks,
  registerMethodTable,
  requiredMethodString,
  type MethodParams,
} from '../../sdk/index.js';
import type { GatewayRuntime } from './runtime.js';

const HOST_STATS_EVENT = 'node.host.stats';

const int = (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

/** OpenClaw's node.host.stats payload: free never above total, disk numbers in pairs. */
function hostStats(payload: unknown): Record<string, unknown> | undefined {
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const stats = payload as Record<string, unknown>;
  const known = [
    'cpuCount',
    'loadAverage',
    'memoryTotalBytes',
    'memoryFreeBytes',
    'diskTotalBytes',
    'diskAvailableBytes',
  ];
  if (Object.keys(stats).some((key) => !known.includes(key))) return undefined;
  if (!int(stats.cpuCount, 1, 4096) || !int(stats.memoryTotalBytes, 0) || !int(stats.memoryFreeBytes, 0))
    return undefined;
  if (stats.memoryFreeBytes > stats.memoryTotalBytes) return undefined;
  const load = stats.loadAverage;
  if (
    load !== undefined &&
    !(Array.isArray(load) && load.length === 3 && load.every((n) => typeof n === 'number' && n >= 0 && n <= 1e5))
  )
    return undefined;
  const { diskTotalBytes: total, diskAvailableBytes: available } = stats;
  if (total === undefined ? available !== undefined : !int(total, 0) || !int(available, 0) || available > total)
    return undefined;
  return stats;
}

function eventPayload(params: MethodParams): unknown {
  if (typeof params.payloadJSON === 'string') {
    try {
      return JSON.parse(params.payloadJSON);
    } catch {
      return undefined;
    }
  }
  return params.payload;
}

export function registerNodeEvents(
  api: PluginApi,
  runtime: GatewayRuntime,
  requireNode: (ctx: GatewayMethodContext, method: string, params: MethodParams) => string,
): void {
  const { pairing, nodes } = runtime;
  registerMethodTable(api, {
    'node.event': {
      description: 'An event a node reports (node.host.stats is kept and passed to operators; others acknowledged).',
      handler: (params, ctx, method) => {
        const nodeId = requireNode(ctx, method, params);
        const event = requiredMethodString(method, params, 'event');
        if (event !== HOST_STATS_EVENT) return { ok: true };
        const stats = hostStats(eventPayload(params));
        if (!stats) return { ok: true, event, handled: false, reason: 'invalid_payload' };
        if (nodes.registry.get(nodeId)?.id !== ctx.connId)
          return { ok: true, event, handled: false, reason: 'stale_connection' };
        const recorded = { ...stats, updatedAtMs: Date.now() };
        pairing.recordHostStats(nodeId, recorded);
        void pairing
          .flush()
          .catch((error: Error) => api.logger.warn(`could not keep host stats of node ${nodeId}: ${error.message}`));
        api.kernel.protocol.emit('node.hostStats', { nodeId, hostStats: recorded });
        return { ok: true, event, handled: true, reason: 'updated' };
      },
    },
    'node.skills.update': {
      description: "A node's skills for agents to use: claw has no node skills.",
      handler: (params, ctx, method) => {
        requireNode(ctx, method, params);
        return lacks('node skills: a node cannot publish skills to agents');
      },
    },
    'node.pluginTools.update': {
      description: "A node's plugin and MCP tools for agents: claw has no node plugin tools.",
      handler: (params, ctx, method) => {
        requireNode(ctx, method, params);
        return lacks('node plugin tools: a node cannot publish tools to agents');
      },
    },
    'node.runnerInventory.update': {
      description: "A node's worker runner inventory: claw runs no workers on nodes.",
      handler: (params, ctx, method) => {
        requireNode(ctx, method, params);
        return lacks('node workers: a node cannot offer a worker runner');
      },
    },
  });
}
