/**
 * Resources and prompts as tools: a server that advertises them gets `<server>__resources_list`,
 * `<server>__resources_read`, `<server>__prompts_list` and `<server>__prompts_get`, filtered by
 * its toolFilter like its own tools. Reading is read-only, so these ask no approval.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { errorResult, textResult, type ToolContext, type ToolDefinition, type ToolResult } from '../../../sdk/index.js';
import { toolFilter } from '../config.js';
import { toToolResult } from './results.js';
import type { Live, ServerRuntime } from './server.js';

type Connect = (ctx: ToolContext) => Promise<Live>;

export function utilityTools(
  server: ServerRuntime,
  capabilities: ServerCapabilities | undefined,
  connect: Connect,
): ToolDefinition[] {
  const timeout = server.resolved.requestTimeoutMs;
  const run =
    (what: string, body: (live: Live, params: Record<string, unknown>) => Promise<ToolResult>) =>
    async (params: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> => {
      try {
        return await body(await connect(ctx), params);
      } catch (error) {
        return errorResult(`MCP server "${server.name}": ${what} failed: ${(error as Error).message}`);
      }
    };
  const json = (value: unknown) => textResult(JSON.stringify(value, null, 2), { server: server.name });
  const tools: Array<[string, ToolDefinition]> = [];
  const add = (suffix: string, tool: Omit<ToolDefinition, 'name'>) =>
    tools.push([
      suffix,
      { name: `${server.name}__${suffix}`, runsInSandbox: server.resolved.transport === 'stdio', ...tool },
    ]);
  if (capabilities?.resources) {
    add('resources_list', {
      description: `List the resources MCP server ${server.name} offers (uri, name, mimeType).`,
      parameters: { type: 'object', properties: { cursor: { type: 'string' } }, additionalProperties: false },
      execute: run('resources/list', async (live, params) => {
        const cursor = typeof params.cursor === 'string' ? { cursor: params.cursor } : {};
        const page = await live.connection.client.listResources(cursor, { timeout });
        return json({ resources: page.resources, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
      }),
    });
    add('resources_read', {
      description: `Read one resource of MCP server ${server.name} by its uri.`,
      parameters: {
        type: 'object',
        properties: { uri: { type: 'string', minLength: 1 } },
        required: ['uri'],
        additionalProperties: false,
      },
      execute: run('resources/read', async (live, params) => {
        const read = await live.connection.client.readResource({ uri: String(params.uri) }, { timeout });
        const content = read.contents.map((item) => ({ type: 'resource', resource: item }));
        return toToolResult(server.name, 'resources_read', { content });
      }),
    });
  }
  if (capabilities?.prompts) {
    add('prompts_list', {
      description: `List the prompts MCP server ${server.name} offers, with their arguments.`,
      parameters: { type: 'object', properties: { cursor: { type: 'string' } }, additionalProperties: false },
      execute: run('prompts/list', async (live, params) => {
        const cursor = typeof params.cursor === 'string' ? { cursor: params.cursor } : {};
        const page = await live.connection.client.listPrompts(cursor, { timeout });
        return json({ prompts: page.prompts, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
      }),
    });
    add('prompts_get', {
      description: `Get one prompt of MCP server ${server.name}, filled in with its arguments.`,
      parameters: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1 },
          arguments: { type: 'object', additionalProperties: { type: 'string' } },
        },
        required: ['name'],
        additionalProperties: false,
      },
      execute: run('prompts/get', async (live, params) => {
        const args = (params.arguments as Record<string, string> | undefined) ?? {};
        const prompt = await live.connection.client.getPrompt(
          { name: String(params.name), arguments: args },
          { timeout },
        );
        return json(prompt);
      }),
    });
  }
  const allow = toolFilter(server.config.toolFilter);
  return tools.filter(([suffix]) => allow(suffix)).map(([, tool]) => tool);
}
