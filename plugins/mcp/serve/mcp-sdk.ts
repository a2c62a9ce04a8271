/**
 * The MCP SDK's server side, imported through the host's "runtime-deps" service when
 * `claw mcp serve` runs: the SDK (express, hono, zod …) is far too heavy for claw's
 * start-up path, and a user who never serves MCP never needs it. The package's main entry
 * is not importable, so each module is named by its subpath export.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { runtimeDeps, type KernelServices } from '../../../sdk/index.js';
import { MCP_SDK } from '../sdk-loader.js';

export interface ServerSdk {
  Server: typeof Server;
  StdioServerTransport: typeof StdioServerTransport;
  ListToolsRequestSchema: typeof ListToolsRequestSchema;
  CallToolRequestSchema: typeof CallToolRequestSchema;
}

export async function loadServerSdk(kernel: Pick<KernelServices, 'capabilities' | 'plugins'>): Promise<ServerSdk> {
  const deps = runtimeDeps(kernel, 'claw mcp serve');
  const module = async <T>(path: string): Promise<T> => {
    const loaded = await deps.import<T & { default?: T }>(
      { ...MCP_SDK, name: `${MCP_SDK.name}/${path}` },
      { retryCommand: 'claw plugins enable mcp' },
    );
    // Resolved as CommonJS, the exports may arrive under `default`.
    return (loaded as { default?: T }).default ?? loaded;
  };
  const [server, stdio, types] = await Promise.all([
    module<{ Server: typeof Server }>('server/index.js'),
    module<{ StdioServerTransport: typeof StdioServerTransport }>('server/stdio.js'),
    module<{
      ListToolsRequestSchema: typeof ListToolsRequestSchema;
      CallToolRequestSchema: typeof CallToolRequestSchema;
    }>('types.js'),
  ]);
  return {
    Server: server.Server,
    StdioServerTransport: stdio.StdioServerTransport,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    CallToolRequestSchema: types.CallToolRequestSchema,
  };
}
