/**
 * `claw mcp probe` and the gateway's `mcp.probe`: connect to each selected server afresh
 * (connect.ts, as the runtime does), read what it offers, disconnect, and answer OpenClaw's
 * probe shape — tool counts, resources/prompts only when advertised, list-change support,
 * the approval mode and its hint, and a diagnostic per server that did not connect.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { PluginApi } from '../../sdk/index.js';
import { agentToolName, resolveServer, toolFilter, type McpServerConfig } from './config.js';
import { connectServer, type McpConnection } from './connect.js';
import { launchLine } from './describe.js';
import type { ServerDef } from './registry-config.js';

/** OpenClaw's words for a server whose tools all lack safety annotations while it asks by them. */
export const APPROVAL_HINT = 'tools have no safety annotations; calls require approval in prompting session postures';

/** A probe waits this long for a server that sets no connectionTimeoutMs (OpenClaw's probe default), not the runtime's 30 s. */
export const PROBE_CONNECT_TIMEOUT_MS = 5_000;

/** Servers that connect at once are probed together, a few at a time. */
const CONCURRENCY = 4;

export interface ProbedServer {
  launch: string;
  tools: number;
  codexApprovalMode: 'auto' | 'prompt' | 'approve';
  approvalHint?: string;
  requestTimeoutMs?: number;
  supportsParallelToolCalls?: boolean;
  /** How many of the server's tools its toolFilter hides. */
  filteredTools?: number;
  resources?: true;
  prompts?: true;
  listChanged?: { tools: boolean; resources: boolean; prompts: boolean };
  /** claw's: what connecting noted without failing (env entries the safety filter dropped). */
  warnings?: string[];
}

export interface ProbeResult {
  generatedAt: string;
  servers: Record<string, ProbedServer>;
  /** The agent-visible names (`<server>__<tool>`, resource/prompt tools included), sorted. */
  tools: string[];
  diagnostics: Array<{ serverName: string; message: string }>;
}

/** A server's generated resource and prompt tools, by the capability that brings them. */
const UTILITY_TOOLS = { resources: ['resources_list', 'resources_read'], prompts: ['prompts_list', 'prompts_get'] };

const hasAnnotations = (tool: Tool) => Object.keys(tool.annotations ?? {}).length > 0;

function describeServer(name: string, config: ServerDef, shown: ServerDef, connection: McpConnection) {
  const typed = config as McpServerConfig;
  const allow = toolFilter(typed.toolFilter);
  const visible = connection.tools.filter((tool) => allow(tool.name));
  const capabilities = connection.capabilities ?? {};
  const utilities = [
    ...(capabilities.resources ? UTILITY_TOOLS.resources : []),
    ...(capabilities.prompts ? UTILITY_TOOLS.prompts : []),
  ].filter(allow);
  const mode = typed.codex?.defaultToolsApprovalMode ?? 'auto';
  const listChanged = {
    tools: capabilities.tools?.listChanged === true,
    resources: capabilities.resources?.listChanged === true,
    prompts: capabilities.prompts?.listChanged === true,
  };
  const hidden = connection.tools.length - visible.length;
  const server: ProbedServer = {
    launch: launchLine(name, shown),
    tools: visible.length,
    codexApprovalMode: mode,
    ...(mode === 'auto' && visible.length > 0 && !visible.some(hasAnnotations) ? { approvalHint: APPROVAL_HINT } : {}),
    ...(typed.requestTimeoutMs ? { requestTimeoutMs: typed.requestTimeoutMs } : {}),
    ...(typed.supportsParallelToolCalls ? { supportsParallelToolCalls: true } : {}),
    ...(hidden > 0 ? { filteredTools: hidden } : {}),
    ...(capabilities.resources ? { resources: true as const } : {}),
    ...(capabilities.prompts ? { prompts: true as const } : {}),
    ...(listChanged.tools || listChanged.resources || listChanged.prompts ? { listChanged } : {}),
  };
  const names = [...visible.map((tool) => tool.name), ...utilities].map((tool) => agentToolName(name, tool));
  return { server, names };
}

/**
 * Probes `servers` (definitions with `${VAR}` references already filled; `asWritten` the same
 * before filling, for launch lines that show references rather than what they hold). Never
 * throws for a server that fails: its failure is a diagnostic, so one broken server does not
 * hide the rest.
 */
export async function probeServers(
  api: PluginApi,
  servers: Record<string, ServerDef>,
  asWritten: Record<string, ServerDef> = servers,
): Promise<ProbeResult> {
  const result: ProbeResult = { generatedAt: new Date().toISOString(), servers: {}, tools: [], diagnostics: [] };
  const queue = Object.entries(servers).sort(([a], [b]) => a.localeCompare(b));
  const found = new Map<string, { server: ProbedServer; names: string[] }>();
  const mask = (text: string) => api.kernel.redact.text(text);
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [name, config] = next;
      let connection: McpConnection | undefined;
      try {
        const resolved = resolveServer(name, config as McpServerConfig);
        if (!(config as McpServerConfig).connectionTimeoutMs) resolved.connectionTimeoutMs = PROBE_CONNECT_TIMEOUT_MS;
        // Where the runtime would start it: a stdio server without a cwd runs in the agent workspace.
        connection = await connectServer(resolved, { kernel: api.kernel, workspaceDir: api.kernel.paths.workspaceDir });
        const described = describeServer(name, config, asWritten[name] ?? config, connection);
        if (connection.diagnostics.length > 0) described.server.warnings = connection.diagnostics.map(mask);
        found.set(name, described);
      } catch (error) {
        result.diagnostics.push({ serverName: name, message: mask((error as Error).message) });
      } finally {
        await connection?.close();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
  for (const [name, probed] of [...found].sort(([a], [b]) => a.localeCompare(b))) {
    result.servers[name] = probed.server;
    result.tools.push(...probed.names);
  }
  result.tools.sort();
  result.diagnostics.sort((a, b) => a.serverName.localeCompare(b.serverName));
  return result;
}

/**
 * Why a probe counts as failed (OpenClaw's rule: any diagnostic, or a selected enabled server
 * that did not connect), as one sentence; undefined when it passed.
 */
export function probeIssue(result: ProbeResult, selected: Record<string, ServerDef>, path: string): string | undefined {
  const first = result.diagnostics[0];
  if (first) return `MCP probe failed for "${first.serverName}" in ${path}: ${first.message}`;
  for (const [name, server] of Object.entries(selected))
    if (server.enabled !== false && !result.servers[name]) return `MCP probe did not connect to "${name}" in ${path}.`;
  return undefined;
}
