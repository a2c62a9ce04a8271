/**
 * The gateway's MCP methods (claw's; OpenClaw has none of these names): `mcp.status` — the
 * saved servers as `claw mcp status --json` shows them plus each one's live runtime state;
 * `mcp.probe` — connect afresh and answer `claw mcp probe --json`'s shape; `mcp.reload` —
 * retire the running runtimes so the next use starts them from the saved config. The web
 * UI's MCP page and `claw mcp reload` call them.
 */
import { ErrorCodes, ProtocolError, type PluginApi } from '../../sdk/index.js';
import { probeIssue, probeServers, type ProbeResult } from './probe.js';
import { McpCliError, readRegistry } from './registry-config.js';
import { statusEntries, type StatusEntry } from './registry-cli.js';
import type { ServerStatus } from './runtime/manager.js';

/** What the runtime reports of one server. */
export type LiveServer = Omit<ServerStatus, 'transport' | 'enabled'>;

/** The part of the gateway's MCP runtime these methods use. */
export interface LiveRuntime {
  status(): LiveServer[];
  /** Retires every running server; how many there were. */
  reload(): Promise<number>;
}

export interface McpStatusEntry extends StatusEntry {
  runtime: Omit<LiveServer, 'name'> & { toolCount: number };
}

export interface McpStatusAnswer {
  path: string;
  servers: McpStatusEntry[];
}

const IDLE: McpStatusEntry['runtime'] = { state: 'idle', tools: [], toolCount: 0, restarts: 0, sandboxInstances: 0 };

function registryOrError(api: PluginApi) {
  try {
    return readRegistry(api);
  } catch (error) {
    if (error instanceof McpCliError) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message);
    throw error;
  }
}

export function mcpStatus(api: PluginApi, runtime: LiveRuntime | undefined): McpStatusAnswer {
  const registry = registryOrError(api);
  const live = new Map((runtime?.status() ?? []).map((server) => [server.name, server]));
  return {
    path: registry.path,
    servers: statusEntries(registry.servers).map((entry) => {
      const found = live.get(entry.name);
      if (!found) return { ...entry, runtime: { ...IDLE, state: entry.enabled ? 'idle' : 'disabled' } };
      const { state, tools, restarts, lastError, pid, connectedAt, sandboxInstances } = found;
      const optional = {
        ...(lastError ? { lastError } : {}),
        ...(pid !== undefined ? { pid } : {}),
        ...(connectedAt !== undefined ? { connectedAt } : {}),
      };
      return {
        ...entry,
        runtime: { state, tools, toolCount: tools.length, restarts, ...optional, sandboxInstances },
      };
    }),
  };
}

export async function mcpProbe(api: PluginApi, name: string | undefined): Promise<ProbeResult> {
  const registry = registryOrError(api);
  if (name !== undefined && !Object.hasOwn(registry.servers, name))
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `no MCP server named "${name}" in ${registry.path}`);
  if (name !== undefined && registry.servers[name]!.enabled === false)
    throw new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      `MCP server "${name}" is disabled; enable it (claw mcp configure ${name} --enable) before probing it`,
    );
  const names = Object.keys(registry.servers).filter((key) =>
    name === undefined ? registry.servers[key]!.enabled !== false : key === name,
  );
  return probeServers(
    api,
    Object.fromEntries(names.map((key) => [key, registry.resolved[key] ?? registry.servers[key]!])),
    registry.servers,
  );
}

const NAME_PARAMS = {
  type: 'object',
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1 } },
} as const;

/** `runtime()`: the gateway's MCP runtime, or undefined before it exists (nothing is running then). */
export function registerMcpMethods(api: PluginApi, runtime: () => LiveRuntime | undefined): void {
  api.registerGatewayMethod('mcp.status', {
    scope: 'operator.read',
    description:
      'Saved MCP servers ({path, servers: [claw mcp status --json entry + runtime: {state, tools, toolCount, restarts, lastError?, connectedAt?, pid?, sandboxInstances}]}); connects to nothing.',
    params: { type: 'object', additionalProperties: false, properties: {} },
    handler: () => mcpStatus(api, runtime()),
  });
  api.registerGatewayMethod('mcp.probe', {
    scope: 'operator.admin',
    description:
      'Connect to one saved server ({name}) or every enabled one, list what it offers, disconnect: claw mcp probe --json shape plus ok and issue.',
    params: NAME_PARAMS,
    handler: async (params: { name?: string }) => {
      const result = await mcpProbe(api, params.name);
      const registry = registryOrError(api);
      const issue = probeIssue(
        result,
        params.name ? { [params.name]: registry.servers[params.name] ?? {} } : registry.servers,
        registry.path,
      );
      return { ...result, ok: issue === undefined, ...(issue ? { issue } : {}) };
    },
  });
  api.registerGatewayMethod('mcp.reload', {
    scope: 'operator.admin',
    description:
      'Retire every running MCP server runtime; each starts again from the saved config on next use. {ok, retired}.',
    params: { type: 'object', additionalProperties: false, properties: {} },
    handler: async () => ({ ok: true, retired: (await runtime()?.reload()) ?? 0 }),
  });
}
