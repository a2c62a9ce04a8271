/**
 * The MCP SDK, imported through the host's "runtime-deps" service on first use (it is heavy:
 * express, hono, zod …; nothing on the start-up path may load it). The package's main entry
 * is not importable, so each module is named by its subpath export.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as Types from '@modelcontextprotocol/sdk/types.js';
import { runtimeDeps, type KernelServices, type RuntimeDependency } from '../../sdk/index.js';

/** Same entry as the manifest's `runtimeDependencies`. */
export const MCP_SDK: RuntimeDependency = { name: '@modelcontextprotocol/sdk', version: '^1.32.2', approxSizeMb: 18 };

export interface McpSdk {
  Client: typeof Client;
  SSEClientTransport: typeof SSEClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  ToolListChangedNotificationSchema: typeof Types.ToolListChangedNotificationSchema;
}

let loading: Promise<McpSdk> | undefined;

/** The SDK's client modules, loaded once per process (installed first when claw was installed without it). */
export function loadMcpSdk(kernel: Pick<KernelServices, 'capabilities' | 'plugins'>): Promise<McpSdk> {
  loading ??= (async () => {
    const deps = runtimeDeps(kernel, 'MCP servers');
    const options = { retryCommand: 'claw plugins enable mcp' };
    const module = <T>(path: string) => deps.import<T>({ ...MCP_SDK, name: `${MCP_SDK.name}/${path}` }, options);
    const [client, sse, http, types] = await Promise.all([
      module<{ Client: typeof Client }>('client/index.js'),
      module<{ SSEClientTransport: typeof SSEClientTransport }>('client/sse.js'),
      module<{ StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport }>('client/streamableHttp.js'),
      module<typeof Types>('types.js'),
    ]);
    return {
      Client: client.Client,
      SSEClientTransport: sse.SSEClientTransport,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    };
  })();
  // A failed install may succeed on the next try (the network came back).
  loading.catch(() => (loading = undefined));
  return loading;
}
