/**
 * `mcp.servers.<name>` as OpenClaw writes it, resolved into what connecting needs: the
 * transport (stdio with a command, SSE by default with a url, as OpenClaw), the timeouts with
 * their defaults, and the tool filter. The manifest's schema has already checked the shape;
 * this adds what a schema cannot say (a server needs a command or a url, not both).
 */

export type McpApprovalMode = 'auto' | 'prompt' | 'approve';

/** One server entry as it stands in the config file. */
export interface McpServerConfig {
  enabled?: boolean;
  command?: string;
  args?: string[];
  env?: Record<string, string | number | boolean>;
  cwd?: string;
  workingDirectory?: string;
  url?: string;
  transport?: 'stdio' | 'sse' | 'streamable-http';
  headers?: Record<string, string | number | boolean>;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  toolFilter?: { include?: string[]; exclude?: string[] };
  supportsParallelToolCalls?: boolean;
  codex?: { agents?: string[]; defaultToolsApprovalMode?: McpApprovalMode };
}

export interface McpSection {
  sessionIdleTtlMs?: number;
  servers?: Record<string, McpServerConfig>;
}

export const DEFAULT_CONNECTION_TIMEOUT_MS = 30_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** A server ready to connect: one transport, strings only, defaults filled in. */
export type ResolvedServer = {
  name: string;
  connectionTimeoutMs: number;
  requestTimeoutMs: number;
  approvalMode?: McpApprovalMode;
} & (
  | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { transport: 'sse' | 'streamable-http'; url: string; headers: Record<string, string> }
);

export const SERVER_NAME = /^[A-Za-z0-9_-]+$/;

/** Why `name` cannot name a server, or undefined. */
export function serverNameProblem(name: string): string | undefined {
  if (!SERVER_NAME.test(name)) return `MCP server name "${name}" may use only letters, digits, "_" and "-"`;
  if (name.includes('__')) return `MCP server name "${name}" may not contain "__" (it separates server and tool)`;
  return undefined;
}

const strings = (record: Record<string, string | number | boolean> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [key, String(value)]));

/** The `mcp` section of a config object (raw or resolved). */
export function mcpSection(config: unknown): McpSection {
  const section = (config as { mcp?: unknown } | undefined)?.mcp;
  return section && typeof section === 'object' ? (section as McpSection) : {};
}

/** `server` resolved for connecting; throws a message naming the server and the problem. */
export function resolveServer(name: string, server: McpServerConfig): ResolvedServer {
  const problem = serverNameProblem(name);
  if (problem) throw new Error(problem);
  const common = {
    name,
    connectionTimeoutMs: server.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    requestTimeoutMs: server.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    ...(server.codex?.defaultToolsApprovalMode ? { approvalMode: server.codex.defaultToolsApprovalMode } : {}),
  };
  if (server.command && server.url)
    throw new Error(`MCP server "${name}" has both command and url: keep one (stdio or HTTP)`);
  if (!server.command && !server.url) throw new Error(`MCP server "${name}" needs a command (stdio) or a url (HTTP)`);
  const transport = server.transport ?? (server.command ? 'stdio' : 'sse');
  if (transport === 'stdio') {
    if (!server.command) throw new Error(`MCP server "${name}" needs a command (stdio) or a url (HTTP)`);
    const cwd = server.cwd ?? server.workingDirectory;
    return {
      ...common,
      transport,
      command: server.command,
      args: server.args ?? [],
      env: strings(server.env),
      ...(cwd ? { cwd } : {}),
    };
  }
  if (!server.url) throw new Error(`MCP server "${name}" uses transport ${transport} but has no url`);
  return { ...common, transport, url: server.url, headers: strings(server.headers) };
}

function globMatcher(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`);
}

/** `toolFilter` as a predicate over the server's own tool names (exclude wins). */
export function toolFilter(filter: McpServerConfig['toolFilter']): (tool: string) => boolean {
  const include = filter?.include?.map(globMatcher);
  const exclude = (filter?.exclude ?? []).map(globMatcher);
  return (tool) =>
    !exclude.some((pattern) => pattern.test(tool)) && (!include || include.some((pattern) => pattern.test(tool)));
}

/** The agent-visible name of a server's tool (OpenClaw's): characters a model API refuses become "_". */
export function agentToolName(server: string, tool: string): string {
  return `${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 128);
}

/** Whether `agentId` gets this server's tools (codex.agents narrows; absent: every agent). */
export function serverServesAgent(server: McpServerConfig, agentId: string | undefined): boolean {
  const agents = server.codex?.agents;
  return !agents || agents.some((agent) => agent.toLowerCase() === (agentId ?? 'main').toLowerCase());
}
